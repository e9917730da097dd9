// Replaying journal records through a file system after a restart or a takeover.
//
// Every record is one encoded Volume call (call_record.h) and replays through the one dispatch
// (fs/call/dispatch.h) via fs::JournalTarget::apply_journalled, the same path the live call
// took: same credential, the record's sequence as the journal tag, and for a create-type call
// the inode and generation the client was given. SETATTR's ctime guard is not part of a record
// (see call_record.h). Exactly once: records at or below the target's durable_seq are part of
// its stable state and skipped; each record above it is applied once, in sequence order.
#pragma once

#include <cstdint>
#include <vector>

#include "fs/journal_target.h"
#include "nvram/record.h"

namespace nasd::nvram {

struct ReplayReport {
  uint64_t records = 0;   // records of the volume found in the journal
  uint64_t skipped = 0;   // already durable in the fs (seq <= durable_seq)
  uint64_t applied = 0;   // replayed successfully
  uint64_t failed = 0;    // undecodable, rejected by the fs, or not the recorded outcome (logged)
  uint64_t durable_seq_before = 0;
  uint64_t durable_seq_after = 0;
};

// Replays, in sequence order, every record with seq > target.durable_seq(). Returns what
// happened; never throws. Needs the journal's pass (only JournalVolume has one).
ReplayReport replay_records(const fs::JournalPass& pass, fs::JournalTarget& target,
                            uint32_t volume, const std::vector<RecordView>& records);

}  // namespace nasd::nvram
