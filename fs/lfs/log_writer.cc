#include "fs/lfs/log_writer.h"

#include <cstring>

#include "fs/lfs/checksum.h"

namespace nasd::fs::lfs {

LogWriter::LogWriter(BlockDevice* dev, const Superblock& sb, SegmentTable* sut)
    : dev_(dev), sb_(sb), sut_(sut) {}

void LogWriter::ensure_next_segment() {
  if (pos_.next_seg < sb_.nsegments && pos_.next_seg != pos_.seg) return;
  uint32_t s = sut_->take_free();
  if (s < sb_.nsegments) pos_.next_seg = s;
}

// Starts a unit at the write position, moving to the announced next segment when fewer than two
// blocks (summary + one) are left in this one.
bool LogWriter::open_unit() {
  uint32_t seg = pos_.seg, off = pos_.off;
  if (!units_.empty()) {
    const Unit& last = units_.back();
    seg = last.seg;
    off = last.off + 1 + uint32_t(last.blocks.size());
  }
  uint32_t next = pos_.next_seg;
  if (!units_.empty()) next = units_.back().summary.next_seg;
  if (off + 2 > sb_.segment_blocks) {
    if (next >= sb_.nsegments || next == seg) return false;
    seg = next;
    off = 0;
    next = sut_->take_free();
    if (next >= sb_.nsegments) next = sb_.nsegments;  // announced as "none"; see FORMAT.md
  }
  Unit u;
  u.seg = seg;
  u.off = off;
  u.summary.next_seg = next;
  u.capacity = std::min<uint32_t>(uint32_t(kMaxRecords), sb_.segment_blocks - off - 1);
  units_.push_back(std::move(u));
  open_ = true;
  inode_block_ = -1;
  return true;
}

uint64_t LogWriter::add_block(const SummaryRecord& rec, const uint8_t* data, AlignedBlock owned) {
  if (!open_ || current().blocks.size() >= current().capacity ||
      current().summary.records.size() >= kMaxRecords) {
    open_ = false;
    if (!open_unit()) return kNoAddr;
  }
  Unit& u = current();
  uint64_t addr = sb_.segment_start(u.seg) + u.off + 1 + u.blocks.size();
  u.summary.records.push_back(rec);
  u.blocks.push_back(PendingBlock{owned ? owned.get() : data, std::move(owned)});
  return addr;
}

uint64_t LogWriter::append(const SummaryRecord& rec, const uint8_t* data) {
  return add_block(rec, data, nullptr);
}

uint64_t LogWriter::append_copy(const SummaryRecord& rec, const uint8_t* data) {
  AlignedBlock copy = make_aligned_block();
  std::memcpy(copy.get(), data, kBlockSize);
  return add_block(rec, nullptr, std::move(copy));
}

bool LogWriter::append_inode(const Inode& in, uint64_t* addr, uint16_t* slot) {
  bool need_block = !open_ || inode_block_ < 0;
  if (!need_block) {
    Unit& u = current();
    need_block = u.summary.records[inode_record_].offset >= kInodesPerBlock;
  }
  if (need_block) {
    AlignedBlock blk = make_aligned_block();
    std::memset(blk.get(), 0, kBlockSize);
    SummaryRecord rec;
    rec.kind = RecordKind::InodeBlock;
    rec.offset = 0;
    if (add_block(rec, nullptr, std::move(blk)) == kNoAddr) return false;
    inode_block_ = int(current().blocks.size() - 1);
    inode_record_ = int(current().summary.records.size() - 1);
  }
  Unit& u = current();
  SummaryRecord& rec = u.summary.records[inode_record_];
  uint8_t* blk = u.blocks[inode_block_].owned.get();
  *slot = uint16_t(rec.offset);
  encode_inode(in, blk + rec.offset * kInodeBytes);
  rec.offset++;
  *addr = sb_.segment_start(u.seg) + u.off + 1 + uint64_t(inode_block_);
  return true;
}

void LogWriter::append_record(const SummaryRecord& rec) {
  if (!open_ || current().summary.records.size() >= kMaxRecords) {
    open_ = false;
    if (!open_unit()) return;
  }
  current().summary.records.push_back(rec);
}

bool LogWriter::commit_group(uint64_t journal_seq, int64_t now) {
  if (units_.empty()) return true;
  seal_group(journal_seq, now);
  std::unique_lock<std::mutex> reserved = dev_->reserve_for_log();
  return write_sealed(reserved);
}

void LogWriter::seal_group(uint64_t journal_seq, int64_t now) {
  if (units_.empty()) return;
  for (size_t i = 0; i < units_.size(); i++) {
    Unit& u = units_[i];
    Summary& s = u.summary;
    s.lsn = pos_.lsn++;
    s.journal_seq = journal_seq;
    s.time = now;
    s.flags = (i + 1 == units_.size()) ? kUnitGroupEnd : 0;
    sut_->add_live(sb_.segment_start(u.seg) + u.off, 0, now);  // segment age: newest write
    blocks_written_ += 1 + u.blocks.size();
  }
  const Unit& last = units_.back();
  pos_.seg = last.seg;
  pos_.off = last.off + 1 + uint32_t(last.blocks.size());
  pos_.next_seg = last.summary.next_seg;
  units_written_ += units_.size();
  sealed_ = std::move(units_);
  units_.clear();
  open_ = false;
  inode_block_ = -1;
}

bool LogWriter::write_sealed(std::unique_lock<std::mutex>& reserved) {
  if (sealed_.empty()) return true;
  std::vector<AlignedBlock> summaries;
  std::vector<BlockDevice::Write> writes;
  uint32_t prev_crc = pos_.prev_crc;
  for (Unit& u : sealed_) {
    Summary& s = u.summary;
    s.prev_crc = prev_crc;
    size_t bi = 0;
    for (SummaryRecord& r : s.records) {
      if (r.has_block()) r.block_crc = crc32c(u.blocks[bi++].data, kBlockSize);
    }
    summaries.push_back(make_aligned_block());
    encode_summary(&s, summaries.back().get());
    prev_crc = s.crc;
    BlockDevice::Write w;
    w.block = sb_.segment_start(u.seg) + u.off;
    w.iov.push_back({summaries.back().get(), kBlockSize});
    for (auto& b : u.blocks) w.iov.push_back({const_cast<uint8_t*>(b.data), kBlockSize});
    writes.push_back(std::move(w));
  }
  // The units own inode and imap block buffers: keep them until the writes completed.
  bool ok = dev_->write_log(writes, reserved);
  pos_.prev_crc = prev_crc;
  sealed_.clear();
  return ok;
}

uint64_t LogWriter::blocks_available() const {
  uint64_t here = sb_.segment_blocks > pos_.off ? sb_.segment_blocks - pos_.off : 0;
  // Past this segment the log can only go to the one it announced: with none announced (none
  // was free when it was due), free segments are out of reach until a checkpoint announces
  // one (Store::checkpoint), however many there are.
  if (pos_.next_seg >= sb_.nsegments || pos_.next_seg == pos_.seg) return here;
  return here + sb_.segment_blocks + uint64_t(sut_->free_count()) * sb_.segment_blocks;
}

}  // namespace nasd::fs::lfs
