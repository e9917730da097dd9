#include "nvram/replay.h"

#include "fs/call/codec.h"
#include "nvram/call_record.h"
#include "util/log.h"

namespace nasd::nvram {
namespace {

// Runs one decoded record; an empty string when it did what the client was told.
std::string apply(const fs::JournalPass& pass, fs::JournalTarget& target, uint32_t volume,
                  const CallRecord& rec, uint64_t seq) {
  if (rec.request.volume_id != volume)
    return "record of volume " + std::to_string(rec.request.volume_id) + " in volume " +
           std::to_string(volume) + "'s journal";
  fs::JournalTag tag;
  tag.seq = seq;
  tag.created = rec.created();
  tag.replay = true;
  fs::call::VolumeReply got = target.apply_journalled(pass, tag, rec.request);
  if (got.status != fs::Status::Ok) return fs::status_name(got.status);
  if (tag.created) {
    const auto* r = std::get_if<fs::call::CreatedResult>(&got.result);
    if (!r || r->id != *tag.created)
      return "made inode " + (r ? std::to_string(r->id.ino) + "/" + std::to_string(r->id.gen)
                                : std::string("?")) +
             ", the client was given " + std::to_string(tag.created->ino) + "/" +
             std::to_string(tag.created->gen);
  }
  return {};
}

}  // namespace

ReplayReport replay_records(const fs::JournalPass& pass, fs::JournalTarget& target,
                            uint32_t volume, const std::vector<RecordView>& records) {
  ReplayReport rep;
  rep.records = records.size();
  rep.durable_seq_before = target.durable_seq();
  for (const RecordView& view : records) {
    if (view.seq <= rep.durable_seq_before) {
      ++rep.skipped;
      continue;
    }
    CallRecord rec;
    std::string error;
    if (view.type != RecordType::Call) {
      error = std::string("unexpected record type ") + record_type_name(view.type);
    } else if (decode_call_record(view.payload, &rec, &error)) {
      try {
        error = apply(pass, target, volume, rec, view.seq);
      } catch (const std::exception& e) {
        error = std::string("exception: ") + e.what();
      }
      if (!error.empty()) error = fs::call::describe_request(rec.request) + ": " + error;
    }
    if (error.empty()) {
      ++rep.applied;
    } else {
      ++rep.failed;
      util::log("nvram").error("replay of volume " + std::to_string(volume) + " record seq " +
               std::to_string(view.seq) + " failed: " + error);
    }
  }
  rep.durable_seq_after = target.durable_seq();
  return rep;
}

}  // namespace nasd::nvram
