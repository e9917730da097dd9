// The emulated battery-backed NVRAM: a file mapped MAP_SHARED. Page 0 is a header; the rest is
// the circular log area. What "durable" means depends on the mode:
//   process: stores into the mapping are durable once made (the page cache outlives a killed
//            process), so persist() does nothing;
//   host:    persist() msyncs the range so it also outlives a host crash.
// Opening a writable region (create, or open of a file allocated in full) maps every page
// writable and stores into each the byte it already holds, so that no record's copy takes a
// page fault later (region.cc says why): the contents never change, but no other process may
// write the file while it opens (none does: a node's region, a mirror's copy and a takeover's
// copy each have one writer).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace nasd::nvram {

enum class DurabilityMode { Process, Host };

const char* durability_mode_name(DurabilityMode m);

constexpr uint64_t kRegionMagic = 0x4d5256444453414eull;  // "NASDDVRM" little-endian
constexpr uint32_t kRegionVersion = 1;
constexpr uint64_t kRegionHeaderSize = 4096;
constexpr uint64_t kMinRegionSize = 2 * kRegionHeaderSize;
// Keeps a log below 2^32 records (JournalVolume::kOwnerGap, 2^40, relies on it, with room to
// tell a previous owner's records from the new owner's); 128 GiB is far more than any NVRAM
// card this emulates.
constexpr uint64_t kMaxRegionSize = uint64_t{128} << 30;

// On-media header (page 0). head/tail are logical log positions and are updated in place with
// aligned 8-byte stores, which never tear.
struct RegionHeader {
  uint64_t magic;
  uint32_t version;
  uint32_t header_size;
  uint64_t region_size;
  uint64_t log_offset;
  uint64_t log_size;
  uint64_t uuid;       // random identity of this region, so a mirror knows which log it copies
  uint32_t static_crc; // CRC32C of the fields above (with this field zero)
  uint32_t pad0;
  uint64_t epoch;      // incremented at every open
  uint64_t head;       // oldest live record
  uint64_t tail;       // commit marker: every record before it is committed
};

class Region {
 public:
  // Opens `path`, creating it (sparse, `size` bytes) when it is missing or empty. An existing
  // region must carry a valid header and exactly `size` bytes; `size` 0 accepts any size.
  // Throws std::runtime_error with a message naming the file on any problem.
  static std::unique_ptr<Region> open(const std::string& path, uint64_t size, DurabilityMode mode);
  // Recreates `path` from scratch with the given identity (a mirror copying a primary), empty
  // at log position `start` (head = tail = start).
  static std::unique_ptr<Region> create(const std::string& path, uint64_t size,
                                        DurabilityMode mode, uint64_t uuid, uint64_t start = 0);
  // Read-only view of an existing region for inspection tools; no epoch bump, no writes.
  static std::unique_ptr<Region> open_read_only(const std::string& path);
  ~Region();

  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;

  const std::string& path() const { return path_; }
  DurabilityMode mode() const { return mode_; }
  bool created() const { return created_; }
  RegionHeader* header() { return reinterpret_cast<RegionHeader*>(base_); }
  const RegionHeader* header() const { return reinterpret_cast<const RegionHeader*>(base_); }
  uint64_t log_size() const { return header()->log_size; }
  // Physical address of logical position `pos` inside the log area.
  uint8_t* at(uint64_t pos) { return base_ + header()->log_offset + pos % header()->log_size; }
  const uint8_t* at(uint64_t pos) const {
    return base_ + header()->log_offset + pos % header()->log_size;
  }

  // Makes log positions [from, to) durable for the mode (wraps around the log as needed).
  // False (errno kept) when msync failed.
  bool persist_log(uint64_t from, uint64_t to);
  // Makes the header durable for the mode.
  bool persist_header();

 private:
  Region(std::string path, int fd, uint8_t* base, uint64_t size, DurabilityMode mode, bool created,
         bool writable);
  bool persist_bytes(uint64_t offset, uint64_t length);

  std::string path_;
  int fd_;
  uint8_t* base_;
  uint64_t size_;
  DurabilityMode mode_;
  bool created_;
  bool writable_;
};

}  // namespace nasd::nvram
