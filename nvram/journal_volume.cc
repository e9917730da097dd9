#include "nvram/journal_volume.h"

#include <algorithm>
#include <array>
#include <atomic>

#include "nvram/log.h"

namespace nasd::nvram {

JournalVolume::JournalVolume(std::shared_ptr<Journal> journal,
                             std::shared_ptr<fs::JournalTarget> target,
                             std::function<bool()> acknowledge_gate)
    : journal_(std::move(journal)),
      target_(std::move(target)),
      id_(target_->id()),
      acknowledge_gate_(std::move(acknowledge_gate)) {
  journal_->attach(id_, target_);
}

JournalVolume::~JournalVolume() { journal_->detach(id_, target_.get()); }

ReplayReport JournalVolume::recover() {
  std::lock_guard lk(mutation_mu_);
  const std::vector<RecordView> records = journal_->recovered(id_);
  ReplayReport rep = replay_records(*target_, id_, records);
  next_seq_ = std::max({next_seq_, target_->durable_seq(), journal_->max_recovered_seq(id_)}) + 1;
  if (rep.applied > 0 || rep.failed > 0) {
    uint64_t durable = 0;
    fs::Status st = target_->flush(&durable);
    if (st != fs::Status::Ok)
      log_line("volume " + std::to_string(id_) + ": flush after replay failed: " +
               fs::status_name(st) + " (records stay in NVRAM)");
    rep.durable_seq_after = target_->durable_seq();
    log_line("volume " + std::to_string(id_) + ": replayed " + std::to_string(rep.applied) +
             " records (" + std::to_string(rep.skipped) + " already durable, " +
             std::to_string(rep.failed) + " failed), durable seq " +
             std::to_string(rep.durable_seq_before) + " -> " +
             std::to_string(rep.durable_seq_after));
  }
  journal_->release_recovered(id_, rep.applied, rep.failed);
  journal_->trim();
  accepting_ = true;
  return rep;
}

void JournalVolume::seal() {
  // A mutation holds the lock from running on the fs until its record is appended.
  std::lock_guard lk(mutation_mu_);
  accepting_ = false;
}

template <typename Execute>
fs::Status JournalVolume::journalled(const fs::OpContext& ctx, JournalOp& op, bool wait,
                                     Execute&& execute) {
  if (!journal_->accepts_mutations(id_)) return fs::Status::Jukebox;
  thread_local std::vector<uint8_t> prefix;
  op.cred = ctx.cred;
  encode_op_prefix(op, &prefix);
  // Refuse before touching the fs: an operation that cannot be journalled must not happen.
  if (prefix.size() + op.data.size() > journal_->max_payload()) return fs::Status::Io;

  uint64_t ticket = 0;
  {
    std::lock_guard lk(mutation_mu_);
    if (!accepting_) return fs::Status::Jukebox;
    const uint64_t seq = next_seq_++;
    fs::OpContext fs_ctx;
    fs_ctx.cred = ctx.cred;
    fs_ctx.journal_seq = seq;
    std::optional<fs::InodeId> created;
    fs::Status st = execute(fs_ctx, &created);
    if (st != fs::Status::Ok) return st;
    if (created) patch_created(&prefix, *created);
    const std::array<std::span<const uint8_t>, 2> parts{std::span<const uint8_t>(prefix),
                                                        op.data};
    st = journal_->append(id_, seq, op.type, parts, &ticket);
    if (st != fs::Status::Ok) return acknowledged(write_through(seq));
    last_ticket_ = ticket;
  }
  return wait ? acknowledged(journal_->wait_committed(ticket)) : fs::Status::Ok;
}

fs::Status JournalVolume::acknowledged(fs::Status committed) const {
  if (committed == fs::Status::Ok && acknowledge_gate_ && !acknowledge_gate_())
    return fs::Status::Jukebox;
  return committed;
}

fs::Status JournalVolume::write_through(uint64_t seq) {
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true))
    log_line("volume " + std::to_string(id_) +
             ": NVRAM stayed full, writing operations through to the file system");
  uint64_t durable = 0;
  fs::Status st = target_->flush(&durable);
  if (st != fs::Status::Ok) return fs::Status::Io;
  return durable >= seq ? fs::Status::Ok : fs::Status::Io;
}

// --- reads pass through -------------------------------------------------------------------

fs::Status JournalVolume::getattr(const fs::OpContext& ctx, fs::InodeId id, fs::Attr* out) {
  return target_->getattr(ctx, id, out);
}

fs::Status JournalVolume::lookup(const fs::OpContext& ctx, fs::InodeId dir,
                                 std::string_view name, fs::InodeId* out,
                                 std::optional<fs::Attr>* obj_attr,
                                 std::optional<fs::Attr>* dir_attr) {
  return target_->lookup(ctx, dir, name, out, obj_attr, dir_attr);
}

fs::Status JournalVolume::access(const fs::OpContext& ctx, fs::InodeId id, uint32_t requested,
                                 uint32_t* granted, std::optional<fs::Attr>* attr) {
  return target_->access(ctx, id, requested, granted, attr);
}

fs::Status JournalVolume::readlink(const fs::OpContext& ctx, fs::InodeId id, std::string* target,
                                   std::optional<fs::Attr>* attr) {
  return target_->readlink(ctx, id, target, attr);
}

fs::Status JournalVolume::read(const fs::OpContext& ctx, fs::InodeId id, uint64_t offset,
                               uint32_t count, std::vector<uint8_t>* data, bool* eof,
                               std::optional<fs::Attr>* attr) {
  return target_->read(ctx, id, offset, count, data, eof, attr);
}

fs::Status JournalVolume::readdir(const fs::OpContext& ctx, fs::InodeId dir, uint64_t cookie,
                                  uint64_t cookieverf, uint32_t max_entries, bool with_attrs,
                                  fs::ReaddirResult* out) {
  return target_->readdir(ctx, dir, cookie, cookieverf, max_entries, with_attrs, out);
}

fs::Status JournalVolume::fsstat(const fs::OpContext& ctx, fs::InodeId id, fs::FsStat* out,
                                 std::optional<fs::Attr>* attr) {
  return target_->fsstat(ctx, id, out, attr);
}

// --- mutations ----------------------------------------------------------------------------

fs::Status JournalVolume::write(const fs::OpContext& ctx, fs::InodeId id, uint64_t offset,
                                std::span<const uint8_t> data, fs::Stability stable,
                                fs::Stability* committed, fs::Wcc* wcc) {
  JournalOp op;
  op.type = RecordType::Write;
  op.object = id;
  op.offset = offset;
  op.data = data;
  const bool stable_write = stable != fs::Stability::Unstable;
  fs::Status st = journalled(ctx, op, stable_write, [&](const fs::OpContext& c, auto*) {
    // NVRAM provides the stability, so the fs never has to sync for the client.
    fs::Stability fs_committed;
    return target_->write(c, id, offset, data, fs::Stability::Unstable, &fs_committed, wcc);
  });
  if (st == fs::Status::Ok)
    *committed = stable_write ? fs::Stability::FileSync : fs::Stability::Unstable;
  return st;
}

fs::Status JournalVolume::commit(const fs::OpContext& ctx, fs::InodeId id, uint64_t offset,
                                 uint32_t count, fs::Wcc* wcc) {
  fs::Attr attr;
  fs::Status st = target_->getattr(ctx, id, &attr);
  if (st != fs::Status::Ok) return st;
  uint64_t ticket;
  {
    std::lock_guard lk(mutation_mu_);
    ticket = last_ticket_;
  }
  st = acknowledged(journal_->wait_committed(ticket));
  if (st != fs::Status::Ok) return st;
  // COMMIT changes no attribute, so the sample taken before waiting is both pre- and post-op.
  wcc->before = fs::PreAttr{attr.size, attr.mtime, attr.ctime};
  wcc->after = attr;
  return fs::Status::Ok;
}

fs::Status JournalVolume::setattr(const fs::OpContext& ctx, fs::InodeId id, const fs::SetAttr& sa,
                                  std::optional<fs::Time> guard_ctime, fs::Wcc* wcc) {
  JournalOp op;
  op.type = RecordType::Setattr;
  op.object = id;
  op.sattr = sa;
  return journalled(ctx, op, true, [&](const fs::OpContext& c, auto*) {
    return target_->setattr(c, id, sa, guard_ctime, wcc);
  });
}

fs::Status JournalVolume::create(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                                 fs::CreateMode mode, const fs::SetAttr& sa, uint64_t verifier,
                                 fs::InodeId* out, std::optional<fs::Attr>* obj_attr,
                                 fs::Wcc* dir_wcc) {
  JournalOp op;
  op.type = RecordType::Create;
  op.object = dir;
  op.name = name;
  op.create_mode = mode;
  op.sattr = sa;
  op.verifier = verifier;
  return journalled(ctx, op, true, [&](const fs::OpContext& c, std::optional<fs::InodeId>* made) {
    fs::Status st = target_->create(c, dir, name, mode, sa, verifier, out, obj_attr, dir_wcc);
    if (st == fs::Status::Ok) *made = *out;
    return st;
  });
}

fs::Status JournalVolume::mkdir(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                                const fs::SetAttr& sa, fs::InodeId* out,
                                std::optional<fs::Attr>* obj_attr, fs::Wcc* dir_wcc) {
  JournalOp op;
  op.type = RecordType::Mkdir;
  op.object = dir;
  op.name = name;
  op.sattr = sa;
  return journalled(ctx, op, true, [&](const fs::OpContext& c, std::optional<fs::InodeId>* made) {
    fs::Status st = target_->mkdir(c, dir, name, sa, out, obj_attr, dir_wcc);
    if (st == fs::Status::Ok) *made = *out;
    return st;
  });
}

fs::Status JournalVolume::symlink(const fs::OpContext& ctx, fs::InodeId dir,
                                  std::string_view name, std::string_view target,
                                  const fs::SetAttr& sa, fs::InodeId* out,
                                  std::optional<fs::Attr>* obj_attr, fs::Wcc* dir_wcc) {
  JournalOp op;
  op.type = RecordType::Symlink;
  op.object = dir;
  op.name = name;
  op.name2 = target;
  op.sattr = sa;
  return journalled(ctx, op, true, [&](const fs::OpContext& c, std::optional<fs::InodeId>* made) {
    fs::Status st = target_->symlink(c, dir, name, target, sa, out, obj_attr, dir_wcc);
    if (st == fs::Status::Ok) *made = *out;
    return st;
  });
}

fs::Status JournalVolume::mknod(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                                fs::FileType type, const fs::SetAttr& sa, uint32_t rdev_major,
                                uint32_t rdev_minor, fs::InodeId* out,
                                std::optional<fs::Attr>* obj_attr, fs::Wcc* dir_wcc) {
  JournalOp op;
  op.type = RecordType::Mknod;
  op.object = dir;
  op.name = name;
  op.node_type = type;
  op.sattr = sa;
  op.rdev_major = rdev_major;
  op.rdev_minor = rdev_minor;
  return journalled(ctx, op, true, [&](const fs::OpContext& c, std::optional<fs::InodeId>* made) {
    fs::Status st =
        target_->mknod(c, dir, name, type, sa, rdev_major, rdev_minor, out, obj_attr, dir_wcc);
    if (st == fs::Status::Ok) *made = *out;
    return st;
  });
}

fs::Status JournalVolume::remove(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                                 fs::Wcc* dir_wcc) {
  JournalOp op;
  op.type = RecordType::Remove;
  op.object = dir;
  op.name = name;
  return journalled(ctx, op, true, [&](const fs::OpContext& c, auto*) {
    return target_->remove(c, dir, name, dir_wcc);
  });
}

fs::Status JournalVolume::rmdir(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                                fs::Wcc* dir_wcc) {
  JournalOp op;
  op.type = RecordType::Rmdir;
  op.object = dir;
  op.name = name;
  return journalled(ctx, op, true, [&](const fs::OpContext& c, auto*) {
    return target_->rmdir(c, dir, name, dir_wcc);
  });
}

fs::Status JournalVolume::rename(const fs::OpContext& ctx, fs::InodeId from_dir,
                                 std::string_view from_name, fs::InodeId to_dir,
                                 std::string_view to_name, fs::Wcc* from_wcc, fs::Wcc* to_wcc) {
  JournalOp op;
  op.type = RecordType::Rename;
  op.object = from_dir;
  op.name = from_name;
  op.object2 = to_dir;
  op.name2 = to_name;
  return journalled(ctx, op, true, [&](const fs::OpContext& c, auto*) {
    return target_->rename(c, from_dir, from_name, to_dir, to_name, from_wcc, to_wcc);
  });
}

fs::Status JournalVolume::link(const fs::OpContext& ctx, fs::InodeId file, fs::InodeId dir,
                               std::string_view name, std::optional<fs::Attr>* file_attr,
                               fs::Wcc* dir_wcc) {
  JournalOp op;
  op.type = RecordType::Link;
  op.object = file;
  op.object2 = dir;
  op.name = name;
  return journalled(ctx, op, true, [&](const fs::OpContext& c, auto*) {
    return target_->link(c, file, dir, name, file_attr, dir_wcc);
  });
}

}  // namespace nasd::nvram
