// Record marking for ONC RPC over TCP (RFC 5531 section 11): a record is a sequence of
// fragments, each preceded by a 4-byte big-endian header whose top bit marks the last fragment
// and whose low 31 bits give the fragment length.
//
// The reassembler is fed whatever bytes a recv() returned and queues the records it completes.
// It enforces a bound on the record size so that a client cannot make the server buffer an
// arbitrarily large record; once the bound is crossed the stream is unusable (there is no way to
// resynchronise on a byte stream) and the reassembler stays failed.
//
// Receiving in place: once a fragment's header has arrived, the record's buffer is sized for the
// whole fragment, and a transport may recv() the rest of a large body straight into it
// (body_window / body_received) instead of into a staging buffer that feed() then copies from.
// A 1 MiB WRITE is then copied once, by the kernel, between the socket and its record.
//
// Placing a bulk payload: given a PayloadLocator, a large single-fragment record whose first
// bytes tell where its bulk payload starts (a WRITE's data) is assembled in a util::PageRun,
// placed so that the payload starts on a page boundary: the volume may then keep the payload's
// pages as its cache blocks instead of copying them (record.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>

#include "server/rpc/record.h"
#include "util/reusing_fifo.h"

namespace nasd::rpc {

inline constexpr uint32_t kLastFragmentBit = 0x80000000u;
inline constexpr size_t kRecordMarkSize = 4;

// Where a record's bulk payload starts, as an offset into the record, given its first bytes
// (all that arrived with the fragment's header, perhaps not the whole record); nullopt when it
// has none or the bytes do not tell. Runs on the transport thread: cheap, never blocks, any
// bytes.
using PayloadLocator = std::function<std::optional<size_t>(std::span<const uint8_t> head)>;
// Smaller records are not worth a page run: they go to the thread's spare buffer.
inline constexpr size_t kMinPageRunRecord = 64 * 1024;

// A thread's spare record buffer. A call answered on the event loop that received it gives its
// record's buffer back here, and the next record that loop assembles fills it instead of
// allocating one: most calls then cost no allocation for their record. One buffer per thread,
// and none above kMaxSpareRecordBytes (a 1 MiB WRITE's record fits).
inline constexpr size_t kMaxSpareRecordBytes = (1u << 20) + (64u << 10);
void recycle_record(Record&& record);
// The spare buffer (emptied, its capacity kept), or an empty record when there is none.
Record spare_record();

// The 4-byte header of a single, last fragment holding `length` bytes (length < 2^31).
void write_record_mark(uint8_t* out, uint32_t length);

class RecordReassembler {
 public:
  // Records of at least `min_run_record` bytes (one fragment) are offered to `locator`.
  explicit RecordReassembler(size_t max_record_bytes, PayloadLocator locator = {},
                             size_t min_run_record = kMinPageRunRecord);

  // Consumes all of `bytes`. Returns false when a record exceeded the bound, now or earlier.
  bool feed(std::span<const uint8_t> bytes);
  // Receiving in place: the not yet received rest of the current fragment's body, when at least
  // `min_bytes` of it are still to come (empty otherwise, and always when failed). The caller
  // may write up to its size there and must then call body_received() with the count; nothing
  // else may be called in between.
  std::span<uint8_t> body_window(size_t min_bytes);
  void body_received(size_t n);

  bool failed() const { return failed_; }
  bool has_record() const { return !ready_.empty(); }
  size_t ready_count() const { return ready_.size(); }
  // Oldest completed record. Precondition: has_record().
  Record pop_record();
  // True when bytes of an unfinished record (or fragment header) are held.
  bool mid_record() const { return header_filled_ > 0 || in_fragment_ || filled_ > 0; }

 private:
  size_t max_record_;
  PayloadLocator locator_;
  size_t min_run_record_;
  bool failed_ = false;
  uint8_t header_[kRecordMarkSize]{};
  size_t header_filled_ = 0;
  bool in_fragment_ = false;      // header parsed, fragment body still arriving
  bool last_fragment_ = false;    // the fragment being read ends the record
  size_t fragment_left_ = 0;      // body bytes of the current fragment not yet received
  // The record being assembled: sized for every fragment announced so far, of which the first
  // `filled_` bytes have arrived.
  Record partial_;
  size_t filled_ = 0;
  util::ReusingFifo<Record> ready_;

  // `following`: the bytes that arrived after the fragment's header (for the locator).
  bool start_fragment(std::span<const uint8_t> following);
  // Sizes partial_ for the fragment announced: in a page run when the locator places a bulk
  // payload, otherwise in the spare buffer.
  void size_for_fragment(std::span<const uint8_t> following);
  void finish_fragment();
};

}  // namespace nasd::rpc
