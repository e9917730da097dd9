// Replaying journal records through a file system after a restart.
#pragma once

#include <cstdint>
#include <vector>

#include "fs/volume.h"
#include "nvram/op_codec.h"
#include "nvram/record.h"

namespace nasd::nvram {

// Repeats one journalled operation on `target` with the OpContext the original call had:
// the same credential, `journal_seq` = seq, and the created inode forced. SETATTR's ctime guard
// is not repeated (it was checked when the client's call ran, and timestamps differ on replay).
fs::Status apply_op(fs::Volume& target, const JournalOp& op, uint64_t seq);

struct ReplayReport {
  uint64_t records = 0;   // records of the volume found in the journal
  uint64_t skipped = 0;   // already durable in the fs (seq <= durable_seq)
  uint64_t applied = 0;   // replayed successfully
  uint64_t failed = 0;    // undecodable or rejected by the fs (logged)
  uint64_t durable_seq_before = 0;
  uint64_t durable_seq_after = 0;
};

// Replays, in sequence order, every record with seq > target.durable_seq(); records at or below
// it are already part of the fs's stable state. Returns what happened; never throws.
ReplayReport replay_records(fs::JournalTarget& target, uint32_t volume,
                            const std::vector<RecordView>& records);

}  // namespace nasd::nvram
