#include "server/rpc/record_marking.h"

#include <algorithm>
#include <cassert>

namespace nasd::rpc {

namespace {
thread_local Record::Bytes t_spare_record;
}  // namespace

void recycle_record(Record&& record) {
  if (record.pages() != nullptr) return;  // a page run goes back to its own pool
  if (record.capacity() == 0 || record.capacity() > kMaxSpareRecordBytes) return;
  if (record.capacity() <= t_spare_record.capacity()) return;  // keep the larger one
  t_spare_record = record.take_bytes();
  t_spare_record.clear();
}

Record spare_record() { return Record(std::move(t_spare_record)); }

void write_record_mark(uint8_t* out, uint32_t length) {
  uint32_t mark = kLastFragmentBit | length;
  out[0] = static_cast<uint8_t>(mark >> 24);
  out[1] = static_cast<uint8_t>(mark >> 16);
  out[2] = static_cast<uint8_t>(mark >> 8);
  out[3] = static_cast<uint8_t>(mark);
}

RecordReassembler::RecordReassembler(size_t max_record_bytes, PayloadLocator locator,
                                     size_t min_run_record)
    : max_record_(max_record_bytes),
      locator_(std::move(locator)),
      min_run_record_(std::max<size_t>(min_run_record, 1)) {}

void RecordReassembler::size_for_fragment(std::span<const uint8_t> following) {
  if (locator_ && filled_ == 0 && last_fragment_ && fragment_left_ >= min_run_record_) {
    const std::optional<size_t> payload =
        locator_(following.first(std::min(following.size(), fragment_left_)));
    if (payload && *payload < fragment_left_) {
      constexpr size_t kPage = util::PageRun::kPageSize;
      const size_t lead = (kPage - *payload % kPage) % kPage;
      partial_ = Record(util::PageRunRef(util::PageRun::acquire(lead + fragment_left_)), lead,
                        fragment_left_);
      return;
    }
  }
  if (partial_.capacity() == 0) partial_ = spare_record();
  partial_.resize(filled_ + fragment_left_);
}

bool RecordReassembler::start_fragment(std::span<const uint8_t> following) {
  uint32_t mark = (uint32_t{header_[0]} << 24) | (uint32_t{header_[1]} << 16) |
                  (uint32_t{header_[2]} << 8) | uint32_t{header_[3]};
  header_filled_ = 0;
  last_fragment_ = (mark & kLastFragmentBit) != 0;
  fragment_left_ = mark & ~kLastFragmentBit;
  // Checked against the announced length, before any body byte is buffered.
  if (filled_ + fragment_left_ > max_record_) {
    failed_ = true;
    partial_ = {};
    filled_ = 0;
    return false;
  }
  in_fragment_ = true;
  // The announced length is within the bound, so size the record for it now (uninitialised):
  // the body is then written once, by feed() or by a recv() into body_window(), never moved
  // again at a doubling.
  size_for_fragment(following);
  if (fragment_left_ == 0) finish_fragment();
  return true;
}

void RecordReassembler::finish_fragment() {
  in_fragment_ = false;
  if (!last_fragment_) return;
  partial_.resize(filled_);
  ready_.push_back(std::move(partial_));
  partial_ = {};
  filled_ = 0;
}

bool RecordReassembler::feed(std::span<const uint8_t> bytes) {
  if (failed_) return false;
  size_t pos = 0;
  while (pos < bytes.size()) {
    if (!in_fragment_) {
      size_t take = std::min(kRecordMarkSize - header_filled_, bytes.size() - pos);
      std::copy_n(bytes.data() + pos, take, header_ + header_filled_);
      header_filled_ += take;
      pos += take;
      if (header_filled_ == kRecordMarkSize && !start_fragment(bytes.subspan(pos))) return false;
      continue;
    }
    size_t take = std::min(fragment_left_, bytes.size() - pos);
    std::copy_n(bytes.data() + pos, take, partial_.data() + filled_);
    body_received(take);
    pos += take;
  }
  return true;
}

std::span<uint8_t> RecordReassembler::body_window(size_t min_bytes) {
  if (failed_ || !in_fragment_ || fragment_left_ == 0 || fragment_left_ < min_bytes) return {};
  return {partial_.data() + filled_, fragment_left_};
}

void RecordReassembler::body_received(size_t n) {
  assert(in_fragment_ && n <= fragment_left_);
  filled_ += n;
  fragment_left_ -= n;
  if (fragment_left_ == 0) finish_fragment();
}

Record RecordReassembler::pop_record() {
  assert(!ready_.empty());
  Record record = std::move(ready_.front());
  ready_.pop_front();
  return record;
}

}  // namespace nasd::rpc
