// Appends blocks to the log. Blocks are gathered into units (a summary block followed by up to
// kMaxRecords blocks, never crossing a segment); a group of units is written with one batch of
// io_uring writes by commit_group(), whose last unit carries kUnitGroupEnd. Addresses are final
// the moment a block is appended, so callers can update pointers before the write happens.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "fs/lfs/block_device.h"
#include "fs/lfs/checkpoint.h"
#include "fs/lfs/inode.h"
#include "fs/lfs/segment_table.h"
#include "fs/lfs/summary.h"

namespace nasd::fs::lfs {

class LogWriter {
 public:
  LogWriter(BlockDevice* dev, const Superblock& sb, SegmentTable* sut);

  void set_position(const LogPosition& pos) { pos_ = pos; }
  // Where the next unit goes; valid between groups (what a checkpoint records).
  const LogPosition& position() const { return pos_; }
  // Picks a next segment when none could be reserved before (call before a checkpoint).
  void ensure_next_segment();

  // Appends a block whose bytes stay unchanged until commit_group(); kNoAddr when the log has
  // no segment left to go to.
  uint64_t append(const SummaryRecord& rec, const uint8_t* data);
  // Same, for a block the writer keeps (imap blocks).
  uint64_t append_copy(const SummaryRecord& rec, const uint8_t* data);
  // Packs the inode into the current inode block; returns its block address and slot.
  bool append_inode(const Inode& in, uint64_t* addr, uint16_t* slot);
  void append_record(const SummaryRecord& rec);  // a record without a block (InodeFree)

  bool group_empty() const { return units_.empty() && !open_; }
  // Writes every pending unit; the last one ends the group and carries `journal_seq`. On
  // false the position has advanced anyway: the device holds the group (see write_log()).
  // seal_group() + write_sealed() in one go.
  bool commit_group(uint64_t journal_seq, int64_t now);

  // The two halves of commit_group(), so a flush can let the volume go on between them.
  // seal_group() closes the group: every unit gets its place, sequence number and journal
  // sequence, the position moves past the group and segment ages are updated; afterwards
  // appends start the next group. It touches only the writer's and the segment table's state
  // (call it with the volume locked). write_sealed() computes the checksums, chains the
  // summaries and writes the sealed group through `reserved` (BlockDevice::reserve_for_log);
  // it touches only the sealed group and the chain's last checksum, so it may run without the
  // volume's lock, provided the appended blocks' bytes stay unchanged until it returns and no
  // other group is sealed or written meanwhile. Returns what commit_group() returns.
  void seal_group(uint64_t journal_seq, int64_t now);
  bool has_sealed() const { return !sealed_.empty(); }
  bool write_sealed(std::unique_lock<std::mutex>& reserved);

  // Blocks the log can still take before it runs out of segments.
  uint64_t blocks_available() const;
  uint64_t units_written() const { return units_written_; }
  uint64_t blocks_written() const { return blocks_written_; }

 private:
  struct PendingBlock {
    const uint8_t* data;
    AlignedBlock owned;  // block aligned, so the unit goes to the device with O_DIRECT
  };
  struct Unit {
    uint32_t seg = 0, off = 0;  // where its summary goes
    Summary summary;
    std::vector<PendingBlock> blocks;
    uint32_t capacity = 0;      // blocks that fit after the summary
  };

  bool open_unit();
  Unit& current() { return units_.back(); }
  uint64_t add_block(const SummaryRecord& rec, const uint8_t* data, AlignedBlock owned);

  BlockDevice* dev_;
  Superblock sb_;
  SegmentTable* sut_;
  LogPosition pos_;
  std::vector<Unit> units_;  // the group being built; the last one may still take blocks
  std::vector<Unit> sealed_;  // the group between seal_group() and write_sealed()
  bool open_ = false;
  // The inode block being filled: its index among current().blocks and among its records
  // (they differ once the unit holds records without blocks).
  int inode_block_ = -1;
  int inode_record_ = -1;
  uint64_t units_written_ = 0, blocks_written_ = 0;
};

}  // namespace nasd::fs::lfs
