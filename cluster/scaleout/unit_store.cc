#include "cluster/scaleout/unit_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "util/crc32c.h"

namespace nasd::scaleout {
namespace {

constexpr char kDriveMagic[8] = {'N', 'A', 'S', 'D', 'U', 'N', 'T', '1'};
constexpr uint32_t kRecordMagic = 0x54494e55;  // "UNIT"
constexpr uint8_t kPut = 1, kDelete = 2;

uint32_t crc(const void* p, size_t n) {
  return util::crc32c_register(0, p, n);
}

template <typename T>
void put_le(uint8_t* p, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
template <typename T>
T get_le(const uint8_t* p) {
  T v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) v |= static_cast<T>(p[i]) << (8 * i);
  return v;
}

bool pwrite_all(int fd, const uint8_t* p, size_t n, uint64_t off) {
  while (n > 0) {
    ssize_t w = ::pwrite(fd, p, n, static_cast<off_t>(off));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
    off += static_cast<uint64_t>(w);
  }
  return true;
}

// Reads n bytes; false on error or end of file.
bool pread_all(int fd, uint8_t* p, size_t n, uint64_t off) {
  while (n > 0) {
    ssize_t r = ::pread(fd, p, n, static_cast<off_t>(off));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
    off += static_cast<uint64_t>(r);
  }
  return true;
}

void encode_drive_header(const DriveIdentity& id, uint8_t* h) {
  std::memset(h, 0, kDriveHeaderBytes);
  std::memcpy(h, kDriveMagic, 8);
  put_le<uint64_t>(h + 8, id.volume);
  put_le<uint32_t>(h + 16, id.node);
  put_le<uint32_t>(h + 20, id.drive);
  put_le<uint32_t>(h + 24, crc(h, 24));
}

void encode_record_header(uint8_t kind, const UnitKey& k, uint32_t len, uint32_t data_crc,
                          uint8_t* h) {
  std::memset(h, 0, kUnitRecordHeaderBytes);
  put_le<uint32_t>(h, kRecordMagic);
  h[4] = kind;
  put_le<uint64_t>(h + 8, k.file);
  put_le<uint64_t>(h + 16, k.group);
  put_le<uint64_t>(h + 24, k.version);
  put_le<uint16_t>(h + 32, k.index);
  put_le<uint32_t>(h + 36, len);
  put_le<uint32_t>(h + 40, data_crc);
  put_le<uint32_t>(h + 44, crc(h, 44));
}

}  // namespace

const char* unit_status_name(UnitStatus s) {
  switch (s) {
    case UnitStatus::Ok: return "ok";
    case UnitStatus::NotFound: return "not-found";
    case UnitStatus::Corrupt: return "corrupt";
    case UnitStatus::DriveFailed: return "drive-failed";
    case UnitStatus::IoError: return "io-error";
    case UnitStatus::Invalid: return "invalid";
    case UnitStatus::Unreachable: return "unreachable";
  }
  return "?";
}

DriveStore::DriveStore(std::string path, DriveIdentity id, int fd)
    : path_(std::move(path)), id_(id), file_(std::make_shared<const OpenFile>(fd)) {
  struct stat st {};
  if (::fstat(fd, &st) == 0) {
    dev_ = st.st_dev;
    ino_ = st.st_ino;
  }
}

DriveStore::OpenFile::~OpenFile() {
  if (fd >= 0) ::close(fd);
}

DriveStore::~DriveStore() = default;  // file_ closes the backing file once no call holds it

UnitStatus DriveStore::open(const std::string& path, const DriveIdentity& id, bool create,
                            std::unique_ptr<DriveStore>* out, std::string* error) {
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  bool fresh = false;
  if (fd < 0 && errno == ENOENT && create) {
    fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    fresh = true;
  }
  if (fd < 0) {
    *error = path + ": " + std::strerror(errno);
    return errno == ENOENT ? UnitStatus::DriveFailed : UnitStatus::IoError;
  }
  std::vector<uint8_t> h(kDriveHeaderBytes);
  if (fresh) {
    encode_drive_header(id, h.data());
    if (!pwrite_all(fd, h.data(), h.size(), 0) || ::fdatasync(fd) != 0) {
      *error = path + ": cannot format: " + std::strerror(errno);
      ::close(fd);
      return UnitStatus::IoError;
    }
  }
  std::vector<uint8_t> want(kDriveHeaderBytes);
  encode_drive_header(id, want.data());
  if (!pread_all(fd, h.data(), 28, 0) || std::memcmp(h.data(), want.data(), 28) != 0) {
    *error = path + ": drive header damaged or of another volume, node or drive";
    ::close(fd);
    return UnitStatus::DriveFailed;
  }
  std::unique_ptr<DriveStore> d(new DriveStore(path, id, fd));
  UnitStatus s = d->scan(error);
  if (s != UnitStatus::Ok) return s;
  *out = std::move(d);
  return UnitStatus::Ok;
}

UnitStatus DriveStore::scan(std::string* error) {
  struct stat st {};
  if (::fstat(file_->fd, &st) != 0) {
    *error = path_ + ": " + std::strerror(errno);
    return UnitStatus::IoError;
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  uint64_t at = kDriveHeaderBytes;
  uint8_t h[kUnitRecordHeaderBytes];
  std::vector<uint8_t> payload;
  while (at + kUnitRecordHeaderBytes <= size) {
    if (!pread_all(file_->fd, h, sizeof h, at)) break;
    if (get_le<uint32_t>(h) != kRecordMagic || get_le<uint32_t>(h + 44) != crc(h, 44)) break;
    const uint8_t kind = h[4];
    const uint32_t len = get_le<uint32_t>(h + 36);
    if ((kind != kPut && kind != kDelete) || len > kMaxUnitBytes ||
        (kind == kDelete && len != 0)) {
      break;
    }
    if (at + kUnitRecordHeaderBytes + len > size) break;  // torn: the payload never landed
    UnitKey k;
    k.file = get_le<uint64_t>(h + 8);
    k.group = get_le<uint64_t>(h + 16);
    k.version = get_le<uint64_t>(h + 24);
    k.index = get_le<uint16_t>(h + 32);
    const uint64_t payload_at = at + kUnitRecordHeaderBytes;
    at = payload_at + len;
    auto old = index_.find(k);
    if (old != index_.end()) {
      live_ -= old->second.len;
      index_.erase(old);
    }
    if (kind == kPut) {
      // The payload CRC is checked on every read and by the scrub, not here: a bad payload in
      // the middle of the log is a corrupt unit to repair, not the end of the log.
      index_[k] = Entry{payload_at, len, get_le<uint32_t>(h + 40)};
      live_ += len;
    }
  }
  if (at < size && ::ftruncate(file_->fd, static_cast<off_t>(at)) != 0) {
    *error = path_ + ": cannot cut the torn tail: " + std::strerror(errno);
    return UnitStatus::IoError;
  }
  end_ = at;
  return UnitStatus::Ok;
}

UnitStatus DriveStore::append(uint8_t kind, const UnitKey& key, const uint8_t* data,
                              uint32_t len, uint64_t* payload_at, uint32_t* data_crc) {
  std::vector<uint8_t> buf(kUnitRecordHeaderBytes + len);
  *data_crc = len ? crc(data, len) : 0;
  encode_record_header(kind, key, len, *data_crc, buf.data());
  if (len) std::memcpy(buf.data() + kUnitRecordHeaderBytes, data, len);
  const uint64_t at = end_;
  if (!pwrite_all(file_->fd, buf.data(), buf.size(), at)) {
    // Nothing after `at` is trusted: a later append overwrites it, and a scan stops there.
    return UnitStatus::IoError;
  }
  end_ = at + buf.size();
  *payload_at = at + kUnitRecordHeaderBytes;
  return UnitStatus::Ok;
}

UnitStatus DriveStore::put(const UnitKey& key, const uint8_t* data, uint32_t len) {
  if (len > kMaxUnitBytes) return UnitStatus::Invalid;
  std::lock_guard<std::mutex> lock(mu_);
  if (failed_) return UnitStatus::DriveFailed;
  uint64_t at = 0;
  uint32_t c = 0;
  UnitStatus s = append(kPut, key, data, len, &at, &c);
  if (s != UnitStatus::Ok) return s;
  auto old = index_.find(key);
  if (old != index_.end()) live_ -= old->second.len;
  index_[key] = Entry{at, len, c};
  live_ += len;
  return UnitStatus::Ok;
}

UnitStatus DriveStore::get(const UnitKey& key, std::vector<uint8_t>* out) {
  Entry e;
  std::shared_ptr<const OpenFile> file;  // kept open even if a compaction replaces it now
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (failed_) return UnitStatus::DriveFailed;
    auto it = index_.find(key);
    if (it == index_.end()) return UnitStatus::NotFound;
    e = it->second;
    file = file_;
  }
  const int fd = file->fd;
  out->resize(e.len);
  if (e.len && !pread_all(fd, out->data(), e.len, e.offset)) return UnitStatus::IoError;
  if ((e.len ? crc(out->data(), e.len) : 0) != e.crc) return UnitStatus::Corrupt;
  return UnitStatus::Ok;
}

UnitStatus DriveStore::remove(const UnitKey& key) {
  std::lock_guard<std::mutex> lock(mu_);
  if (failed_) return UnitStatus::DriveFailed;
  auto it = index_.find(key);
  if (it == index_.end()) return UnitStatus::NotFound;
  uint64_t at = 0;
  uint32_t c = 0;
  UnitStatus s = append(kDelete, key, nullptr, 0, &at, &c);
  if (s != UnitStatus::Ok) return s;
  live_ -= it->second.len;
  index_.erase(it);
  return UnitStatus::Ok;
}

UnitStatus DriveStore::sync() {
  std::shared_ptr<const OpenFile> file;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (failed_) return UnitStatus::DriveFailed;
    file = file_;
  }
  // A compaction that replaced the file meanwhile synced everything put before it itself.
  return ::fdatasync(file->fd) == 0 ? UnitStatus::Ok : UnitStatus::IoError;
}

std::vector<UnitKey> DriveStore::keys() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<UnitKey> out;
  out.reserve(index_.size());
  for (const auto& [k, e] : index_) out.push_back(k);
  return out;
}

UnitStatus DriveStore::list(const UnitKey& from, uint32_t max, std::vector<UnitKey>* out,
                            bool* more) const {
  out->clear();
  *more = false;
  if (max == 0 || max > kMaxListKeys) return UnitStatus::Invalid;
  std::lock_guard<std::mutex> lock(mu_);
  if (failed_) return UnitStatus::DriveFailed;
  for (auto it = index_.lower_bound(from); it != index_.end(); ++it) {
    if (out->size() == max) {
      *more = true;
      break;
    }
    out->push_back(it->first);
  }
  return UnitStatus::Ok;
}

UnitKey next_key(const UnitKey& k) {
  UnitKey n = k;
  if (++n.index != 0) return n;
  if (++n.version != 0) return n;
  if (++n.group != 0) return n;
  ++n.file;
  return n;
}

bool DriveStore::check_alive(int64_t at_most_every_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  if (failed_) return false;
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count();
  if (at_most_every_ms > 0 && now - checked_at_ms_ < at_most_every_ms) return true;
  checked_at_ms_ = now;
  struct stat fst {}, pst {};
  uint8_t h[28];
  std::vector<uint8_t> want(kDriveHeaderBytes);
  encode_drive_header(id_, want.data());
  if (::fstat(file_->fd, &fst) != 0 || fst.st_nlink == 0 || ::stat(path_.c_str(), &pst) != 0 ||
      pst.st_dev != dev_ || pst.st_ino != ino_ || !pread_all(file_->fd, h, sizeof h, 0) ||
      std::memcmp(h, want.data(), sizeof h) != 0) {
    failed_ = true;
  }
  return !failed_;
}

bool DriveStore::failed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failed_;
}

uint64_t DriveStore::log_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return end_;
}

uint64_t DriveStore::live_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return live_;
}

// Two phases, so that the drive's lock is held only for what changed while copying:
//   1. without the lock: the live units of a snapshot of the index are copied, as stored (CRC
//      included: a corrupt unit stays detectably corrupt), into `<path>.compact`, which is
//      synced; reads, puts and deletes go on against the old file meanwhile;
//   2. under the lock: the units put since the snapshot are copied too, a delete record is
//      appended for every copied unit deleted since, the new file is synced and renamed over
//      the old one, and the index points into it. Only that delta is written under the lock.
// The old file stays open until the last read or sync that took it ends (shared ownership).
// With max_bytes_per_sec, phase 1 sleeps so as to copy no faster than that.
UnitStatus DriveStore::compact(uint64_t max_bytes_per_sec) {
  std::lock_guard<std::mutex> one(compact_mu_);
  std::map<UnitKey, Entry> snap;
  std::shared_ptr<const OpenFile> src;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (failed_) return UnitStatus::DriveFailed;
    snap = index_;
    src = file_;
  }
  const std::string tmp = path_ + ".compact";
  ::unlink(tmp.c_str());
  int fd = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return UnitStatus::IoError;
  auto fresh = std::make_shared<const OpenFile>(fd);
  std::vector<uint8_t> h(kDriveHeaderBytes);
  encode_drive_header(id_, h.data());
  bool ok = pwrite_all(fd, h.data(), h.size(), 0);
  uint64_t at = kDriveHeaderBytes;
  std::map<UnitKey, Entry> moved;
  std::vector<uint8_t> buf;
  auto copy = [&](int from, const UnitKey& k, const Entry& e) {
    buf.resize(kUnitRecordHeaderBytes + e.len);
    ok = ok && pread_all(from, buf.data() + kUnitRecordHeaderBytes, e.len, e.offset);
    encode_record_header(kPut, k, e.len, e.crc, buf.data());
    ok = ok && pwrite_all(fd, buf.data(), buf.size(), at);
    moved[k] = Entry{at + kUnitRecordHeaderBytes, e.len, e.crc};
    at += buf.size();
  };
  const auto started = std::chrono::steady_clock::now();
  for (const auto& [k, e] : snap) {
    if (!ok) break;
    copy(src->fd, k, e);
    if (max_bytes_per_sec > 0) {
      const auto due = started + std::chrono::microseconds((at - kDriveHeaderBytes) * 1000000 / max_bytes_per_sec);
      std::this_thread::sleep_until(due);
    }
  }
  ok = ok && ::fdatasync(fd) == 0;
  if (!ok) {
    ::unlink(tmp.c_str());
    return UnitStatus::IoError;
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (failed_) {
    ::unlink(tmp.c_str());
    return UnitStatus::DriveFailed;
  }
  for (const auto& [k, e] : index_) {
    auto was = snap.find(k);
    if (was == snap.end() || was->second.offset != e.offset) copy(file_->fd, k, e);  // put since
  }
  for (const auto& [k, e] : snap) {
    if (index_.count(k)) continue;
    // Deleted since the snapshot: its copy must not come back when the drive is scanned.
    buf.assign(kUnitRecordHeaderBytes, 0);
    encode_record_header(kDelete, k, 0, 0, buf.data());
    ok = ok && pwrite_all(fd, buf.data(), buf.size(), at);
    at += buf.size();
    moved.erase(k);
  }
  // The backing file must still be the one opened (a deleted or replaced drive is not
  // resurrected by a rename).
  struct stat pst {};
  ok = ok && ::fdatasync(fd) == 0 && ::stat(path_.c_str(), &pst) == 0 && pst.st_dev == dev_ &&
       pst.st_ino == ino_ && ::rename(tmp.c_str(), path_.c_str()) == 0;
  if (!ok) {
    ::unlink(tmp.c_str());
    return UnitStatus::IoError;
  }
  int dfd = ::open(std::filesystem::path(path_).parent_path().c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  file_ = fresh;
  struct stat st {};
  if (::fstat(file_->fd, &st) == 0) {
    dev_ = st.st_dev;
    ino_ = st.st_ino;
  }
  index_ = std::move(moved);
  end_ = at;
  ++compactions_;
  return UnitStatus::Ok;
}

uint64_t DriveStore::garbage_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t held = kDriveHeaderBytes + live_ + index_.size() * kUnitRecordHeaderBytes;
  return end_ > held ? end_ - held : 0;
}

uint64_t DriveStore::compactions() const {
  std::lock_guard<std::mutex> lock(mu_);
  return compactions_;
}

// ---- NodeUnits ----

std::string NodeUnits::path(uint32_t i) const {
  return dir_ + "/drive-" + std::to_string(i) + ".units";
}

bool NodeUnits::open(const std::string& dir, uint64_t volume, uint32_t node, uint32_t drives,
                     std::unique_ptr<NodeUnits>* out, std::string* error) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    *error = dir + ": " + ec.message();
    return false;
  }
  std::unique_ptr<NodeUnits> n(new NodeUnits);
  n->dir_ = dir;
  n->volume_ = volume;
  n->node_ = node;
  // The manifest says the drives were formatted once: from then on a missing drive file is a
  // lost drive, never silently re-created empty.
  const std::string manifest = dir + "/units.manifest";
  const bool formatted = std::filesystem::exists(manifest, ec);
  const std::string want = "volume " + std::to_string(volume) + " node " + std::to_string(node) +
                           " drives " + std::to_string(drives) + "\n";
  if (formatted) {
    std::ifstream in(manifest);
    std::string have((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (have != want) {
      *error = manifest + ": belongs to another volume, node or drive count";
      return false;
    }
  }
  n->drives_.resize(drives);
  for (uint32_t i = 0; i < drives; ++i) {
    std::string why;
    std::unique_ptr<DriveStore> d;
    if (DriveStore::open(n->path(i), DriveIdentity{volume, node, i}, !formatted, &d, &why) ==
        UnitStatus::Ok) {
      n->drives_[i] = std::move(d);
    }
  }
  if (!formatted) {
    const std::string tmp = manifest + ".tmp";
    {
      std::ofstream o(tmp, std::ios::trunc);
      o << want;
      if (!o.flush()) {
        *error = tmp + ": cannot write";
        return false;
      }
    }
    std::filesystem::rename(tmp, manifest, ec);
    if (ec) {
      *error = manifest + ": " + ec.message();
      return false;
    }
  }
  *out = std::move(n);
  return true;
}

std::shared_ptr<DriveStore> NodeUnits::checked(uint32_t i, int64_t at_most_every_ms) {
  std::shared_ptr<DriveStore> d;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (i >= drives_.size()) return nullptr;
    d = drives_[i];
  }
  if (!d || !d->check_alive(at_most_every_ms)) return nullptr;
  return d;
}

std::shared_ptr<DriveStore> NodeUnits::drive(uint32_t i) { return checked(i, kAliveCheckMs); }

bool NodeUnits::drive_healthy(uint32_t i) { return checked(i, 0) != nullptr; }

int NodeUnits::compact_if_due(const CompactionPolicy& policy) {
  std::vector<DriveUsage> usage;
  for (uint32_t i = 0; i < drive_count(); i++) {
    std::shared_ptr<DriveStore> d = drive(i);
    usage.push_back(d ? DriveUsage{i, d->log_bytes(), d->garbage_bytes(), true} : DriveUsage{i, 0, 0, false});
  }
  const int pick = pick_drive_to_compact(usage, policy);
  if (pick < 0) return -1;
  std::shared_ptr<DriveStore> d = drive(uint32_t(pick));
  if (!d) return -1;
  const uint64_t before = d->log_bytes();
  if (d->compact(policy.max_bytes_per_sec) != UnitStatus::Ok) return -1;
  const uint64_t after = d->log_bytes();
  compactions_ += 1;
  reclaimed_ += before > after ? before - after : 0;
  return pick;
}

uint64_t NodeUnits::compactions() { return compactions_; }
uint64_t NodeUnits::bytes_reclaimed() { return reclaimed_; }

bool NodeUnits::replace_drive(uint32_t i, std::string* error) {
  std::lock_guard<std::mutex> lock(mu_);
  if (i >= drives_.size()) {
    *error = "no drive " + std::to_string(i);
    return false;
  }
  drives_[i].reset();
  const std::string p = path(i);
  std::error_code ec;  // a damaged drive file is kept aside for analysis; a deleted one is gone
  std::filesystem::rename(p, p + ".failed." + std::to_string(::time(nullptr)), ec);
  std::unique_ptr<DriveStore> d;
  if (DriveStore::open(p, DriveIdentity{volume_, node_, i}, true, &d, error) != UnitStatus::Ok) {
    return false;
  }
  drives_[i] = std::move(d);
  return true;
}

UnitStatus NodeUnits::put(uint32_t i, const UnitKey& key, const uint8_t* data, uint32_t len) {
  std::shared_ptr<DriveStore> d = drive(i);
  return d ? d->put(key, data, len) : UnitStatus::DriveFailed;
}

UnitStatus NodeUnits::get(uint32_t i, const UnitKey& key, std::vector<uint8_t>* out) {
  std::shared_ptr<DriveStore> d = drive(i);
  return d ? d->get(key, out) : UnitStatus::DriveFailed;
}

UnitStatus NodeUnits::remove(uint32_t i, const UnitKey& key) {
  std::shared_ptr<DriveStore> d = drive(i);
  return d ? d->remove(key) : UnitStatus::DriveFailed;
}

UnitStatus NodeUnits::sync(uint32_t i) {
  std::shared_ptr<DriveStore> d = drive(i);
  return d ? d->sync() : UnitStatus::DriveFailed;
}

UnitStatus NodeUnits::list(uint32_t i, const UnitKey& from, uint32_t max, std::vector<UnitKey>* out,
                           bool* more) {
  out->clear();
  *more = false;
  std::shared_ptr<DriveStore> d = drive(i);
  return d ? d->list(from, max, out, more) : UnitStatus::DriveFailed;
}

}  // namespace nasd::scaleout
