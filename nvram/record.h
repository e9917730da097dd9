// One NVRAM journal record: a fixed header followed by an operation payload. Records live in a
// circular log and are addressed by their *logical position*, a byte counter that only grows
// (physical offset = position modulo the log size). The header repeats its own position, so a
// stale record left over from an earlier lap of the log can never pass for a current one, and
// its CRC32C covers header and payload, so a record torn by a crash is recognised and dropped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace nasd::nvram {

// What the payload describes. Values are on-media; never renumber.
//
// Record version 1 had one type per operation (10 WRITE ... 19 SETATTR) and the journal's own
// flat payload. Version 2 has a single operation type, Call, whose payload is the
// project-wide encoding of a Volume call (nvram/call_record.h), so the procedure is named inside
// the payload and 10-19 are retired. A region that still holds version-1 records is refused at
// open with an error that says so (decode_record reports OldVersion). Version 3 (this one) adds
// the client call's identity to a Call payload (fs/call/codec.h version 3), so the reply cache
// is rebuilt from the journal; version-2 records are refused the same way: they are never silently
// taken for the end of the log, and never replayed by this build. Drain such a journal with the
// build that wrote it (a clean stop flushes every volume and empties the journal) before
// upgrading.
enum class RecordType : uint16_t {
  Pad = 1,   // filler up to the end of a lap; carries no operation
  Call = 2,  // one journalled Volume call (nvram/call_record.h)
};

const char* record_type_name(RecordType t);

constexpr uint32_t kRecordMagic = 0x4e565243;  // "NVRC"
constexpr uint16_t kRecordVersion = 3;
constexpr size_t kRecordAlign = 8;

// Little-endian on media (the appliance is x86-64 only; a static_assert guards it).
struct RecordHeader {
  uint32_t magic;
  uint32_t crc;      // CRC32C of the header (with crc = 0) followed by the payload
  uint64_t pos;      // logical position of this header
  uint64_t seq;      // per-volume journal sequence number (fs::JournalTag::seq)
  uint32_t length;   // payload bytes
  uint32_t volume;   // fs::Volume::id()
  uint16_t type;     // RecordType
  uint16_t version;  // kRecordVersion
  uint32_t epoch;    // region epoch of the run that wrote it; never decreases along the log
};
static_assert(sizeof(RecordHeader) == 40);

// Bytes a record with `payload` bytes occupies in the log (header + payload, aligned).
inline uint64_t record_footprint(uint64_t payload) {
  return (sizeof(RecordHeader) + payload + kRecordAlign - 1) & ~uint64_t(kRecordAlign - 1);
}

// A validated record inside some mapped memory; valid while that memory is.
struct RecordView {
  uint64_t pos = 0;
  uint64_t seq = 0;
  uint32_t volume = 0;
  uint32_t epoch = 0;
  RecordType type = RecordType::Pad;
  std::span<const uint8_t> payload;
  // The whole record as stored (header + payload, without alignment padding), e.g. to mirror it.
  std::span<const uint8_t> bytes;

  uint64_t end() const { return pos + record_footprint(payload.size()); }
};

// Writes a complete record (header and the concatenation of `parts` as payload) to `dst`, which
// must hold record_footprint(total payload) bytes.
struct RecordKey {
  uint64_t pos = 0;
  uint64_t seq = 0;
  uint32_t volume = 0;
  uint32_t epoch = 0;
  RecordType type = RecordType::Pad;
};
void encode_record(uint8_t* dst, const RecordKey& key, std::span<const std::span<const uint8_t>> parts);

enum class DecodeResult {
  Ok,
  NoRecord,     // not a record header at all (never written, or a stale lap's bytes)
  Torn,         // looks like a record of this lap but the CRC does not match
  TooLong,      // the length runs past `avail`
  OldVersion,   // a record of this lap written in another record format (see RecordType)
};

// Validates the record that should start at logical position `pos`, given `avail` readable
// bytes at `src` (header and payload must fit; the alignment tail need not).
DecodeResult decode_record(const uint8_t* src, size_t avail, uint64_t pos, RecordView* out);

}  // namespace nasd::nvram
