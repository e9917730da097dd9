// One drive of a node: a local log-structured store of stripe units in one backing file.
//
// Format (little-endian; cluster/scaleout/README.md has the table):
//   [0, 4096)  drive header: magic "NASDUNT1", volume id, node id, drive index, CRC32C
//   then records, appended: 48-byte header {magic, kind put|delete, key (file, group, version,
//   index), payload length, payload CRC32C, header CRC32C} followed by the payload (put only).
//
// Invariants:
//   * the index (key -> newest put not followed by a delete) is rebuilt at open by scanning the
//     log; a record whose header is torn ends the log there (the file is truncated to it);
//   * every payload carries its CRC32C: a read that finds a mismatch answers Corrupt, never
//     wrong data (the scrub then rebuilds the unit from the group's other units);
//   * put() appends without syncing; sync() makes every earlier put/delete durable. The
//     write-behind syncs before it lets the journal trim what the units hold;
//   * a drive whose backing file was deleted or replaced, or whose header no longer matches,
//     is Failed: every call answers DriveFailed until the drive is replaced.
// Thread safety: all methods may be called concurrently.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cluster/scaleout/drive_compaction.h"

namespace nasd::scaleout {

enum class UnitStatus : uint8_t { Ok = 0, NotFound, Corrupt, DriveFailed, IoError, Invalid, Unreachable };
const char* unit_status_name(UnitStatus s);

struct UnitKey {
  uint64_t file = 0;
  uint64_t group = 0;
  uint64_t version = 0;  // a rewritten group gets a new version; the old one is deleted after
  uint16_t index = 0;    // unit within the group: 0..N-1 data, N..N+M-1 parity
  auto tie() const { return std::tie(file, group, version, index); }
  bool operator<(const UnitKey& o) const { return tie() < o.tie(); }
  bool operator==(const UnitKey& o) const { return tie() == o.tie(); }
};

struct DriveIdentity {
  uint64_t volume = 0;
  uint32_t node = 0;
  uint32_t drive = 0;
  bool operator==(const DriveIdentity& o) const {
    return volume == o.volume && node == o.node && drive == o.drive;
  }
};

constexpr uint32_t kMaxUnitBytes = 128 * 1024;
// The most keys one listing answers (the orphan sweep pages through a drive with it).
constexpr uint32_t kMaxListKeys = 2048;
// The key right after `k` in key order (the next listing starts there).
UnitKey next_key(const UnitKey& k);
constexpr uint64_t kDriveHeaderBytes = 4096;
constexpr size_t kUnitRecordHeaderBytes = 48;

class DriveStore {
 public:
  ~DriveStore();
  // Opens (or with `create`, formats when absent) the drive at `path`. Fails when the file is
  // missing (unless create), its header is damaged, or it belongs to another identity.
  static UnitStatus open(const std::string& path, const DriveIdentity& id, bool create,
                         std::unique_ptr<DriveStore>* out, std::string* error);

  UnitStatus put(const UnitKey& key, const uint8_t* data, uint32_t len);
  UnitStatus get(const UnitKey& key, std::vector<uint8_t>* out);
  UnitStatus remove(const UnitKey& key);
  UnitStatus sync();
  // Keys of every unit held (including ones known to be corrupt).
  std::vector<UnitKey> keys() const;
  // At most `max` keys (<= kMaxListKeys) from `from` on, in key order; *more when keys are
  // left after them. One page under the lock: a listing never holds a drive for long.
  UnitStatus list(const UnitKey& from, uint32_t max, std::vector<UnitKey>* out, bool* more) const;
  // Re-checks that the backing file is still the one opened (not deleted or replaced).
  // With `at_most_every_ms`, the check (three system calls) runs at most that often and the
  // last answer stands in between: unit I/O uses this, a health query forces it.
  bool check_alive(int64_t at_most_every_ms = 0);
  bool failed() const;
  // Rewrites the live records into a fresh file (drops deleted and replaced units). Holds the
  // drive's lock only to copy what changed while it copied (see unit_store.cc): reads, puts
  // and deletes go on meanwhile. With max_bytes_per_sec, copies no faster than that. One
  // compaction at a time per drive.
  UnitStatus compact(uint64_t max_bytes_per_sec = 0);
  uint64_t log_bytes() const;
  uint64_t live_bytes() const;
  // Bytes of the log held by deleted or replaced units (and their records): what compact()
  // gives back.
  uint64_t garbage_bytes() const;
  uint64_t compactions() const;  // since open

 private:
  struct Entry {
    uint64_t offset = 0;  // of the payload
    uint32_t len = 0;
    uint32_t crc = 0;
  };
  // The backing file, closed when the last holder lets go: a read or sync that took it keeps
  // it open across a compaction that replaces it.
  struct OpenFile {
    explicit OpenFile(int f) : fd(f) {}
    ~OpenFile();
    OpenFile(const OpenFile&) = delete;
    OpenFile& operator=(const OpenFile&) = delete;
    const int fd;
  };
  DriveStore(std::string path, DriveIdentity id, int fd);
  UnitStatus scan(std::string* error);
  UnitStatus append(uint8_t kind, const UnitKey& key, const uint8_t* data, uint32_t len,
                    uint64_t* payload_at, uint32_t* crc);

  const std::string path_;
  const DriveIdentity id_;
  mutable std::mutex mu_;
  std::mutex compact_mu_;  // one compaction at a time
  std::shared_ptr<const OpenFile> file_;
  uint64_t dev_ = 0, ino_ = 0;
  bool failed_ = false;
  int64_t checked_at_ms_ = 0;
  uint64_t end_ = kDriveHeaderBytes;
  uint64_t live_ = 0;
  uint64_t compactions_ = 0;
  std::map<UnitKey, Entry> index_;
};

// The drives of one node: `<dir>/drive-<i>.units`, i in [0, drives). A drive whose file is
// missing or damaged at open is Failed (the others still serve); replace_drive formats a new,
// empty one in its place (re-protect then refills it).
class NodeUnits {
 public:
  static bool open(const std::string& dir, uint64_t volume, uint32_t node, uint32_t drives,
                   std::unique_ptr<NodeUnits>* out, std::string* error);

  uint32_t node() const { return node_; }
  uint32_t drive_count() const { return static_cast<uint32_t>(drives_.size()); }
  // Null when the drive is failed (checked again at most every kAliveCheckMs; a unit read from
  // a just-deleted drive is still checked against its CRC). Shared: a replacement never pulls
  // a drive from under a call in flight.
  std::shared_ptr<DriveStore> drive(uint32_t i);
  static constexpr int64_t kAliveCheckMs = 100;
  bool drive_healthy(uint32_t i);
  bool replace_drive(uint32_t i, std::string* error);

  UnitStatus put(uint32_t drive, const UnitKey& key, const uint8_t* data, uint32_t len);
  UnitStatus get(uint32_t drive, const UnitKey& key, std::vector<uint8_t>* out);
  UnitStatus remove(uint32_t drive, const UnitKey& key);
  UnitStatus sync(uint32_t drive);
  UnitStatus list(uint32_t drive, const UnitKey& from, uint32_t max, std::vector<UnitKey>* out,
                  bool* more);
  // Compacts the drive pick_drive_to_compact names under `policy` (drive_compaction.h), if
  // any; returns it (-1: none was due, or the compaction failed).
  int compact_if_due(const CompactionPolicy& policy);
  uint64_t compactions();        // drives compacted by compact_if_due since open
  uint64_t bytes_reclaimed();    // ... and the garbage they gave back

 private:
  std::string path(uint32_t i) const;
  std::shared_ptr<DriveStore> checked(uint32_t i, int64_t at_most_every_ms);
  std::string dir_;
  uint64_t volume_ = 0;
  uint32_t node_ = 0;
  std::mutex mu_;  // guards drives_ (replacement)
  std::vector<std::shared_ptr<DriveStore>> drives_;
  std::atomic<uint64_t> compactions_{0}, reclaimed_{0};
};

}  // namespace nasd::scaleout
