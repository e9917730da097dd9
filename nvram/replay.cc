#include "nvram/replay.h"

#include "util/log.h"

namespace nasd::nvram {

fs::Status apply_op(fs::Volume& target, const JournalOp& op, uint64_t seq) {
  fs::OpContext ctx;
  ctx.cred = op.cred;
  ctx.journal_seq = seq;
  ctx.forced_inode = op.created;
  fs::Wcc wcc, wcc2;
  fs::InodeId out;
  std::optional<fs::Attr> attr;
  switch (op.type) {
    case RecordType::Write: {
      fs::Stability committed;
      return target.write(ctx, op.object, op.offset, op.data, fs::Stability::Unstable, &committed,
                          &wcc);
    }
    case RecordType::Setattr:
      return target.setattr(ctx, op.object, op.sattr, std::nullopt, &wcc);
    case RecordType::Create:
      return target.create(ctx, op.object, op.name, op.create_mode, op.sattr, op.verifier, &out,
                           &attr, &wcc);
    case RecordType::Mkdir:
      return target.mkdir(ctx, op.object, op.name, op.sattr, &out, &attr, &wcc);
    case RecordType::Symlink:
      return target.symlink(ctx, op.object, op.name, op.name2, op.sattr, &out, &attr, &wcc);
    case RecordType::Mknod:
      return target.mknod(ctx, op.object, op.name, op.node_type, op.sattr, op.rdev_major,
                          op.rdev_minor, &out, &attr, &wcc);
    case RecordType::Remove:
      return target.remove(ctx, op.object, op.name, &wcc);
    case RecordType::Rmdir:
      return target.rmdir(ctx, op.object, op.name, &wcc);
    case RecordType::Rename:
      return target.rename(ctx, op.object, op.name, op.object2, op.name2, &wcc, &wcc2);
    case RecordType::Link:
      return target.link(ctx, op.object, op.object2, op.name, &attr, &wcc);
    case RecordType::Pad:
      break;
  }
  return fs::Status::Inval;
}

ReplayReport replay_records(fs::JournalTarget& target, uint32_t volume,
                            const std::vector<RecordView>& records) {
  ReplayReport rep;
  rep.records = records.size();
  rep.durable_seq_before = target.durable_seq();
  for (const RecordView& rec : records) {
    if (rec.seq <= rep.durable_seq_before) {
      ++rep.skipped;
      continue;
    }
    JournalOp op;
    std::string error;
    fs::Status st = fs::Status::Inval;
    if (decode_op(rec.type, rec.payload, &op, &error)) {
      st = apply_op(target, op, rec.seq);
      if (st != fs::Status::Ok) error = describe_op(op) + ": " + fs::status_name(st);
    }
    if (st == fs::Status::Ok) {
      ++rep.applied;
    } else {
      ++rep.failed;
      util::log("nvram").error("replay of volume " + std::to_string(volume) + " record seq " +
               std::to_string(rec.seq) + " failed: " + error);
    }
  }
  rep.durable_seq_after = target.durable_seq();
  return rep;
}

}  // namespace nasd::nvram
