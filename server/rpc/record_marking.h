// Record marking for ONC RPC over TCP (RFC 5531 section 11): a record is a sequence of
// fragments, each preceded by a 4-byte big-endian header whose top bit marks the last fragment
// and whose low 31 bits give the fragment length.
//
// The reassembler is fed whatever bytes a recv() returned and queues the records it completes.
// It enforces a bound on the record size so that a client cannot make the server buffer an
// arbitrarily large record; once the bound is crossed the stream is unusable (there is no way to
// resynchronise on a byte stream) and the reassembler stays failed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

namespace nasd::rpc {

inline constexpr uint32_t kLastFragmentBit = 0x80000000u;
inline constexpr size_t kRecordMarkSize = 4;

// The 4-byte header of a single, last fragment holding `length` bytes (length < 2^31).
void write_record_mark(uint8_t* out, uint32_t length);

class RecordReassembler {
 public:
  explicit RecordReassembler(size_t max_record_bytes);

  // Consumes all of `bytes`. Returns false when a record exceeded the bound, now or earlier.
  bool feed(std::span<const uint8_t> bytes);

  bool failed() const { return failed_; }
  bool has_record() const { return !ready_.empty(); }
  size_t ready_count() const { return ready_.size(); }
  // Oldest completed record. Precondition: has_record().
  std::vector<uint8_t> pop_record();
  // True when bytes of an unfinished record (or fragment header) are held.
  bool mid_record() const { return header_filled_ > 0 || in_fragment_ || !partial_.empty(); }

 private:
  size_t max_record_;
  bool failed_ = false;
  uint8_t header_[kRecordMarkSize]{};
  size_t header_filled_ = 0;
  bool in_fragment_ = false;      // header parsed, fragment body still arriving
  bool last_fragment_ = false;    // the fragment being read ends the record
  size_t fragment_left_ = 0;      // body bytes of the current fragment not yet received
  std::vector<uint8_t> partial_;  // the record being assembled
  std::deque<std::vector<uint8_t>> ready_;

  bool start_fragment();
  void finish_fragment();
};

}  // namespace nasd::rpc
