// How records are laid out in the circular log, shared by the journal and by its mirror so that
// both place every record at the same logical position.
//
// A record never straddles the end of the log area. When the next record does not fit in what
// is left of the current lap, the rest of the lap is skipped: a Pad record marks the skip when
// there is room for a header, and a remainder smaller than a header is skipped implicitly
// (no record could start there). Scanning follows the same rules.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "nvram/record.h"
#include "nvram/region.h"

namespace nasd::nvram {

// Where a record of `footprint` bytes goes when the log ends at `tail`.
uint64_t place_record(uint64_t tail, uint64_t footprint, uint64_t log_size);

// Marks [from, to) as skipped (to is a lap start). Writes a Pad record when one fits.
void write_skip(Region& region, uint64_t from, uint64_t to, uint32_t epoch);

// The largest payload a record may carry in a log of this size. Half the log guarantees that an
// empty log can always take it, wherever the tail happens to be in its lap.
uint64_t max_payload(uint64_t log_size);

// Calls `visit` for each operation record header in [from, to), skipping Pad records and lap
// remainders, until `visit` returns false. The records must be complete (no CRC is checked).
// Returns the position of the record `visit` refused, or the position where the walk ended.
uint64_t walk_headers(const Region& region, uint64_t from, uint64_t to,
                      const std::function<bool(const RecordHeader&)>& visit);

struct ScanResult {
  std::vector<RecordView> records;  // operation records, in log order (Pad records are skipped)
  uint64_t end = 0;                 // position after the last valid record
  DecodeResult stop = DecodeResult::NoRecord;  // why the scan stopped (Ok: reached `limit`)
};

// Reads the valid records from `from` up to `limit` (at most one log size past `from`). A record
// from an older epoch after a newer one is a leftover of an earlier run that happens to sit at
// the right position, and ends the scan like any invalid record.
ScanResult scan_log(const Region& region, uint64_t from, uint64_t limit);

}  // namespace nasd::nvram
