// LfsVolume: how GETATTR, LOOKUP, ACCESS, READ, READLINK, READDIR(PLUS) and FSSTAT take the
// volume lock.
//
// Each first runs under the shared side of the lock inside a CacheOnlyReads scope, so readers
// of cached state run at once with each other; one that finds something uncached (its body
// then changed nothing) runs again under the exclusive side, which may read the disk into the
// caches. The try_* attempts make only the first step and do not wait for the lock either:
// they are what the NFS server runs on its network event loop (fs/volume.h).
#include "fs/lfs/lfs_volume.h"

namespace nasd::fs::lfs {

template <typename Body>
Status LfsVolume::shared_read(Body body) {
  {
    std::shared_lock<VolumeLock> lk(mu_);
    CacheOnlyReads cache_only;
    Status st = body();
    if (!cache_only.refused()) return st;
  }
  Lock lk(mu_);
  store_->trim();
  return body();
}

template <typename Body>
std::optional<Status> LfsVolume::try_shared_read(Body body) {
  std::shared_lock<VolumeLock> lk(mu_, std::try_to_lock);
  if (!lk.owns_lock()) return std::nullopt;
  CacheOnlyReads cache_only;
  Status st = body();
  if (cache_only.refused()) return std::nullopt;
  return st;
}

Status LfsVolume::getattr(const OpContext& ctx, InodeId id, Attr* out) {
  if (in_snapshot_space(id.ino)) return snap_getattr(id, out);
  return shared_read([&] { return getattr_locked(id, out); });
}

std::optional<Status> LfsVolume::try_getattr(const OpContext& ctx, InodeId id, Attr* out) {
  if (in_snapshot_space(id.ino)) return std::nullopt;
  return try_shared_read([&] { return getattr_locked(id, out); });
}

Status LfsVolume::lookup(const OpContext& ctx, InodeId dir, std::string_view name, InodeId* out,
                         std::optional<Attr>* obj_attr, std::optional<Attr>* dir_attr) {
  if (in_snapshot_space(dir.ino) || name == kSnapshotDirName)
    return snap_lookup(ctx, dir, name, out, obj_attr, dir_attr);
  return shared_read([&] { return lookup_locked(ctx, dir, name, out, obj_attr, dir_attr); });
}

std::optional<Status> LfsVolume::try_lookup(const OpContext& ctx, InodeId dir,
                                            std::string_view name, InodeId* out,
                                            std::optional<Attr>* obj_attr,
                                            std::optional<Attr>* dir_attr) {
  if (in_snapshot_space(dir.ino) || name == kSnapshotDirName) return std::nullopt;
  return try_shared_read([&] { return lookup_locked(ctx, dir, name, out, obj_attr, dir_attr); });
}

Status LfsVolume::access(const OpContext& ctx, InodeId id, uint32_t requested, uint32_t* granted,
                         std::optional<Attr>* attr) {
  if (in_snapshot_space(id.ino)) return snap_access(ctx, id, requested, granted, attr);
  return shared_read([&] { return access_locked(ctx, id, requested, granted, attr); });
}

std::optional<Status> LfsVolume::try_access(const OpContext& ctx, InodeId id, uint32_t requested,
                                            uint32_t* granted, std::optional<Attr>* attr) {
  if (in_snapshot_space(id.ino)) return std::nullopt;
  return try_shared_read([&] { return access_locked(ctx, id, requested, granted, attr); });
}

Status LfsVolume::read(const OpContext& ctx, InodeId id, uint64_t offset, uint32_t count,
                       std::vector<uint8_t>* data, bool* eof, std::optional<Attr>* attr) {
  if (in_snapshot_space(id.ino)) return snap_read(ctx, id, offset, count, data, eof, attr);
  auto body = [&] { return read_locked(ctx, id, offset, count, data, eof, attr); };
  if (opts_.atime) {  // the READ changes the inode's atime
    Lock lk(mu_);
    store_->trim();
    return body();
  }
  return shared_read(body);
}

std::optional<Status> LfsVolume::try_read(const OpContext& ctx, InodeId id, uint64_t offset,
                                          uint32_t count, std::vector<uint8_t>* data, bool* eof,
                                          std::optional<Attr>* attr) {
  if (in_snapshot_space(id.ino) || opts_.atime) return std::nullopt;
  return try_shared_read([&] { return read_locked(ctx, id, offset, count, data, eof, attr); });
}

std::optional<Status> LfsVolume::try_read_shared(const OpContext& ctx, InodeId id,
                                                 uint64_t offset, uint32_t count,
                                                 util::ByteSlices* data, bool* eof,
                                                 std::optional<Attr>* attr) {
  if (in_snapshot_space(id.ino) || opts_.atime) return std::nullopt;
  auto st = try_shared_read(
      [&] { return read_pinned_locked(ctx, id, offset, count, data, eof, attr); });
  if (!st) data->clear();  // a refused attempt keeps no pins
  return st;
}

Status LfsVolume::readlink(const OpContext& ctx, InodeId id, std::string* target,
                           std::optional<Attr>* attr) {
  if (in_snapshot_space(id.ino)) return snap_readlink(id, target, attr);
  return shared_read([&] { return readlink_locked(id, target, attr); });
}

std::optional<Status> LfsVolume::try_readlink(const OpContext& ctx, InodeId id,
                                              std::string* target, std::optional<Attr>* attr) {
  if (in_snapshot_space(id.ino)) return std::nullopt;
  return try_shared_read([&] { return readlink_locked(id, target, attr); });
}

Status LfsVolume::readdir(const OpContext& ctx, InodeId dir, uint64_t cookie, uint64_t cookieverf,
                          uint32_t max_entries, bool with_attrs, ReaddirResult* out) {
  if (in_snapshot_space(dir.ino))
    return snap_readdir(ctx, dir, cookie, cookieverf, max_entries, with_attrs, out);
  return shared_read([&] {
    return readdir_locked(ctx, dir, cookie, cookieverf, max_entries, with_attrs, out);
  });
}

std::optional<Status> LfsVolume::try_readdir(const OpContext& ctx, InodeId dir, uint64_t cookie,
                                             uint64_t cookieverf, uint32_t max_entries,
                                             bool with_attrs, ReaddirResult* out) {
  if (in_snapshot_space(dir.ino)) return std::nullopt;
  return try_shared_read([&] {
    return readdir_locked(ctx, dir, cookie, cookieverf, max_entries, with_attrs, out);
  });
}

// FSSTAT reads the space and inode counts, which only the exclusive side changes.
Status LfsVolume::fsstat(const OpContext& ctx, InodeId id, FsStat* out,
                         std::optional<Attr>* attr) {
  if (in_snapshot_space(id.ino)) return snap_fsstat(ctx, id, out, attr);
  return shared_read([&] { return fsstat_locked(id, out, attr); });
}

std::optional<Status> LfsVolume::try_fsstat(const OpContext& ctx, InodeId id, FsStat* out,
                                            std::optional<Attr>* attr) {
  if (in_snapshot_space(id.ino)) return std::nullopt;
  return try_shared_read([&] { return fsstat_locked(id, out, attr); });
}

}  // namespace nasd::fs::lfs
