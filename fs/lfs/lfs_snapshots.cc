// LfsVolume: snapshots. The admin calls (create, delete, list, schedule) and the read-only
// name space under `.snapshot` (ids per snapshot_ids.h). A snapshot is served by a read-only
// Store over the snapshot's inode map, sharing the device, so the same directory and block
// map code reads it as reads the live file system.
#include <sstream>

#include "fs/lfs/lfs_volume.h"
#include "fs/lfs/snapshot_schedule.h"

namespace nasd::fs::lfs {

namespace {
constexpr uint32_t kReaddirMax = 4096;
// Snapshot stores kept open at once; each holds its inode map and a small cache.
constexpr size_t kOpenSnapshotStores = 4;
// What a client may do under .snapshot: never change anything.
constexpr uint32_t kReadOnlyAccess = kAccessRead | kAccessLookup | kAccessExecute;
constexpr uint64_t kSnapshotDirVerifier = 0x736e617073686f74ull;  // "snapshot"
}  // namespace

// --- Admin ---------------------------------------------------------------------------------

Status LfsVolume::snapshot_create(const std::string& name, SnapshotInfo* out) {
  Lock lk(mu_);
  if (Status u = usable(); u != Status::Ok) return u;
  return store_->create_snapshot(name, now_time().sec, out);
}

Status LfsVolume::snapshot_delete(const std::string& name) {
  Lock lk(mu_);
  if (Status u = usable(); u != Status::Ok) return u;
  const SnapshotInfo* s = store_->snapshot_catalog().find(name);
  if (!s) return Status::NoEnt;
  snap_stores_.erase(s->id);
  return store_->delete_snapshot(name);
}

Status LfsVolume::snapshot_list(std::vector<SnapshotListing>* out) {
  Lock lk(mu_);
  if (Status u = usable(); u != Status::Ok) return u;
  std::vector<uint64_t> excl;
  Status st = store_->snapshot_exclusive_bytes(&excl);
  if (st != Status::Ok) return st;
  out->clear();
  const auto& snaps = store_->snapshot_catalog().snapshots;
  for (size_t i = 0; i < snaps.size(); i++) out->push_back(SnapshotListing{snaps[i], excl[i]});
  return Status::Ok;
}

uint64_t LfsVolume::snapshot_held_bytes() {
  Lock lk(mu_);
  return store_->segments().snapshot_held_bytes();
}

std::string LfsVolume::run_snapshot_schedule(int64_t now) {
  if (opts_.snapshot_schedule.empty()) return "";
  SnapshotSchedule schedule = SnapshotSchedule::parse(opts_.snapshot_schedule);  // checked at load
  std::vector<SnapshotInfo> existing;
  {
    Lock lk(mu_);
    if (usable() != Status::Ok) return "";
    existing = store_->snapshot_catalog().snapshots;
  }
  SnapshotPlan plan = plan_snapshots(schedule, existing, now);
  std::ostringstream done;
  for (const std::string& name : plan.create) {
    SnapshotInfo info;
    Status st = snapshot_create(name, &info);
    done << "create " << name << ": " << status_name(st) << "\n";
    if (st != Status::Ok) return done.str();  // expire nothing when the new one is missing
  }
  for (const std::string& name : plan.remove)
    done << "delete " << name << ": " << status_name(snapshot_delete(name)) << "\n";
  return done.str();
}

// --- Name space ----------------------------------------------------------------------------

// At the start of a call only: trimming drops cached inodes and blocks others point at.
void LfsVolume::trim_all() {
  store_->trim();
  for (auto& [id, s] : snap_stores_) s->trim();
}

Status LfsVolume::snap_store(uint32_t sid, Store** out) {
  const SnapshotInfo* info = store_->snapshot_catalog().find_id(sid);
  if (!info) return Status::Stale;
  auto it = snap_stores_.find(sid);
  if (it == snap_stores_.end()) {
    if (snap_stores_.size() >= kOpenSnapshotStores) snap_stores_.erase(snap_stores_.begin());
    std::string err;
    auto s = store_->open_snapshot(*info, &err);
    if (!s) return Status::Io;
    it = snap_stores_.emplace(sid, std::move(s)).first;
  }
  *out = it->second.get();
  return Status::Ok;
}

Status LfsVolume::snap_get(InodeId id, Store** s, CachedInode** c) {
  uint32_t sid = snapshot_of(id.ino);
  InodeId base{base_ino_of(id.ino), id.gen};
  if (sid == 0) {
    // A .snapshot directory: valid while the live directory holding it is.
    *s = store_.get();
    Status st = get_dir(base, c);
    return st == Status::NotDir ? Status::Stale : st;
  }
  Status st = snap_store(sid, s);
  if (st != Status::Ok) return st;
  return (*s)->get(base, c);
}

Attr LfsVolume::snap_attr(InodeId id, const CachedInode* c) {
  Attr a = attr_of(c);
  if (snapshot_of(id.ino) == 0) {
    // What appliances show: a directory nobody may change, with one entry per snapshot.
    a.mode = 0555;
    a.uid = a.gid = 0;
    a.nlink = 2 + uint32_t(store_->snapshot_catalog().snapshots.size());
    a.size = kBlockSize;
    a.used = 0;
    const auto& snaps = store_->snapshot_catalog().snapshots;
    Time t{snaps.empty() ? c->inode.ctime.sec : snaps.back().time, 0};
    a.atime = a.mtime = a.ctime = t;
  }
  a.fileid = id.ino;
  return a;
}

Status LfsVolume::snap_getattr(InodeId id, Attr* out) {
  Lock lk(mu_);
  if (Status u = usable(); u != Status::Ok) return u;
  trim_all();
  Store* s;
  CachedInode* c;
  if (Status st = snap_get(id, &s, &c); st != Status::Ok) return st;
  *out = snap_attr(id, c);
  return Status::Ok;
}

Status LfsVolume::snap_lookup(const OpContext& ctx, InodeId dir, std::string_view name,
                              InodeId* out, std::optional<Attr>* obj_attr,
                              std::optional<Attr>* dir_attr) {
  Lock lk(mu_);
  if (Status u = usable(); u != Status::Ok) return u;
  trim_all();
  Store* s;
  CachedInode* d;
  Status st;
  if (!in_snapshot_space(dir.ino)) {
    // `.snapshot` in a live directory.
    if ((st = get_dir(dir, &d)) != Status::Ok) return st;
    if (dir_attr) *dir_attr = attr_of(d);
    if (!may(ctx.cred, subject_of(d), kWantExec)) return Status::Access;
    *out = snapshot_dir_id(dir);
    if (obj_attr) *obj_attr = snap_attr(*out, d);
    return Status::Ok;
  }
  if ((st = snap_get(dir, &s, &d)) != Status::Ok) return st;
  if (d->inode.type != FileType::Dir) return Status::NotDir;
  if (dir_attr) *dir_attr = snap_attr(dir, d);
  if (name.size() > limits().name_max) return Status::NameTooLong;
  if (name.empty()) return Status::NoEnt;
  uint32_t sid = snapshot_of(dir.ino);
  if (sid == 0) {
    InodeId live{base_ino_of(dir.ino), dir.gen};
    if (name == ".") {
      *out = dir;
      if (obj_attr) *obj_attr = snap_attr(dir, d);
      return Status::Ok;
    }
    if (name == "..") {
      *out = live;
      if (obj_attr) *obj_attr = attr_of(d);
      return Status::Ok;
    }
    const SnapshotInfo* info = store_->snapshot_catalog().find(std::string(name));
    if (!info) return Status::NoEnt;
    // The same directory as it was in that snapshot (absent if it did not exist then).
    InodeId id{snapshot_ino(info->id, live.ino), live.gen};
    if ((st = snap_get(id, &s, &d)) != Status::Ok) return st == Status::Stale ? Status::NoEnt : st;
    *out = id;
    if (obj_attr) *obj_attr = snap_attr(id, d);
    return Status::Ok;
  }
  if (!may(ctx.cred, subject_of(d), kWantExec)) return Status::Access;
  uint64_t ino;
  if (name == ".") {
    ino = d->inode.ino;
  } else if (name == "..") {
    ino = d->inode.parent ? d->inode.parent : d->inode.ino;
  } else {
    DirRecord rec;
    bool found;
    if ((st = Directory(s, d).lookup(name, &rec, &found)) != Status::Ok) return st;
    if (!found) return Status::NoEnt;
    ino = rec.ino;
  }
  CachedInode* c;
  if ((st = s->load(ino, &c)) != Status::Ok) return st == Status::NoEnt ? Status::Io : st;
  *out = InodeId{snapshot_ino(sid, c->inode.ino), c->inode.gen};
  if (obj_attr) *obj_attr = snap_attr(*out, c);
  return Status::Ok;
}

Status LfsVolume::snap_access(const OpContext& ctx, InodeId id, uint32_t requested,
                              uint32_t* granted, std::optional<Attr>* attr) {
  Lock lk(mu_);
  if (Status u = usable(); u != Status::Ok) return u;
  trim_all();
  Store* s;
  CachedInode* c;
  if (Status st = snap_get(id, &s, &c); st != Status::Ok) return st;
  Attr a = snap_attr(id, c);
  *granted = access_granted(ctx.cred, Subject{a.type, a.mode, a.uid, a.gid}, requested) &
             kReadOnlyAccess;
  if (attr) *attr = a;
  return Status::Ok;
}

Status LfsVolume::snap_readlink(InodeId id, std::string* target, std::optional<Attr>* attr) {
  Lock lk(mu_);
  if (Status u = usable(); u != Status::Ok) return u;
  trim_all();
  Store* s;
  CachedInode* c;
  if (Status st = snap_get(id, &s, &c); st != Status::Ok) return st;
  if (attr) *attr = snap_attr(id, c);
  if (snapshot_of(id.ino) == 0 || c->inode.type != FileType::Lnk) return Status::Inval;
  const uint8_t* d;
  if (Status st = s->read_block(c, 0, &d); st != Status::Ok) return st;
  size_t n = std::min<uint64_t>(c->inode.size, 1024);
  target->assign(d ? reinterpret_cast<const char*>(d) : "", d ? n : 0);
  return Status::Ok;
}

Status LfsVolume::snap_read(const OpContext& ctx, InodeId id, uint64_t offset, uint32_t count,
                            std::vector<uint8_t>* data, bool* eof, std::optional<Attr>* attr) {
  Lock lk(mu_);
  if (Status u = usable(); u != Status::Ok) return u;
  trim_all();
  Store* s;
  CachedInode* c;
  if (Status st = snap_get(id, &s, &c); st != Status::Ok) return st;
  if (attr) *attr = snap_attr(id, c);
  if (snapshot_of(id.ino) == 0 || c->inode.type == FileType::Dir) return Status::IsDir;
  if (c->inode.type != FileType::Reg) return Status::Inval;
  if (!may(ctx.cred, subject_of(c), kWantRead)) return Status::Access;
  data->clear();
  uint64_t size = c->inode.size;
  if (offset >= size || count == 0) {
    *eof = offset >= size;
    return Status::Ok;
  }
  uint64_t n = std::min<uint64_t>({uint64_t(count), size - offset, 64u << 20});
  data->resize(n);
  if (Status st = read_range(*s, c, offset, n, data->data()); st != Status::Ok) return st;
  *eof = offset + n >= size;
  return Status::Ok;
}

Status LfsVolume::snap_readdir(const OpContext& ctx, InodeId dir, uint64_t cookie,
                               uint64_t cookieverf, uint32_t max_entries, bool with_attrs,
                               ReaddirResult* out) {
  Lock lk(mu_);
  if (Status u = usable(); u != Status::Ok) return u;
  trim_all();
  Store* s;
  CachedInode* d;
  Status st;
  if ((st = snap_get(dir, &s, &d)) != Status::Ok) return st;
  if (d->inode.type != FileType::Dir) return Status::NotDir;
  out->dir_attr = snap_attr(dir, d);
  uint32_t sid = snapshot_of(dir.ino);
  out->cookieverf = kSnapshotDirVerifier ^ dir.ino ^ (uint64_t(dir.gen) << 1);
  if (!may(ctx.cred, Subject{FileType::Dir, out->dir_attr->mode, out->dir_attr->uid,
                             out->dir_attr->gid}, kWantRead))
    return Status::Access;
  if (cookie != 0 && cookieverf != 0 && cookieverf != out->cookieverf) return Status::BadCookie;
  if (max_entries == 0) return Status::TooSmall;
  max_entries = std::min(max_entries, kReaddirMax);
  out->entries.clear();
  out->eof = false;
  uint64_t dot = dir.ino;
  InodeId dotdot = sid == 0 ? InodeId{base_ino_of(dir.ino), dir.gen} : dir;
  if (sid != 0 && d->inode.parent) {
    const ImapEntry* pe = s->imap().find(d->inode.parent);
    if (pe && pe->live) dotdot = InodeId{snapshot_ino(sid, d->inode.parent), pe->gen};
  }
  auto add = [&](std::string name, InodeId id, uint64_t ck) -> Status {
    DirEntry e;
    e.name = std::move(name);
    e.fileid = id.ino;
    e.cookie = ck;
    e.id = id;
    if (with_attrs) {
      Store* es;
      CachedInode* c;
      Status r = in_snapshot_space(id.ino) ? snap_get(id, &es, &c) : store_->get(id, &c);
      if (r != Status::Ok) return Status::Io;
      e.attr = in_snapshot_space(id.ino) ? snap_attr(id, c) : attr_of(c);
    }
    out->entries.push_back(std::move(e));
    return Status::Ok;
  };
  if (cookie == 0 && (st = add(".", InodeId{dot, dir.gen}, 1)) != Status::Ok) return st;
  if (cookie <= 1 && out->entries.size() < max_entries && (st = add("..", dotdot, 2)) != Status::Ok)
    return st;
  if (out->entries.size() >= max_entries) return Status::Ok;
  if (sid == 0) {
    // One entry per snapshot in which this directory existed; cookie = id + 2 (ids only grow).
    InodeId live{base_ino_of(dir.ino), dir.gen};
    std::vector<SnapshotInfo> snaps = store_->snapshot_catalog().snapshots;
    for (const SnapshotInfo& info : snaps) {
      if (info.id + 2ull <= cookie) continue;
      if (out->entries.size() >= max_entries) return Status::Ok;
      InodeId id{snapshot_ino(info.id, live.ino), live.gen};
      Store* ss;
      CachedInode* c;
      Status r = snap_get(id, &ss, &c);
      if (r == Status::Stale) continue;
      if (r != Status::Ok) return r;
      if ((st = add(info.name, id, info.id + 2ull)) != Status::Ok) return st;
    }
    out->eof = true;
    return Status::Ok;
  }
  if (cookie > 2 && !is_entry_cookie(cookie)) return Status::BadCookie;
  std::vector<DirRecord> recs;
  bool eof;
  uint64_t after = cookie <= 2 ? 0 : cookie;
  st = Directory(s, d).list(after, max_entries - uint32_t(out->entries.size()), &recs, &eof);
  if (st != Status::Ok) return st;
  for (DirRecord& r : recs) {
    InodeId id{snapshot_ino(sid, r.ino), r.gen};
    if ((st = add(std::move(r.name), id, r.cookie)) != Status::Ok) return st;
  }
  out->eof = eof;
  return Status::Ok;
}

Status LfsVolume::snap_fsstat(const OpContext& ctx, InodeId id, FsStat* out,
                              std::optional<Attr>* attr) {
  {
    Lock lk(mu_);
    if (Status u = usable(); u != Status::Ok) return u;
    trim_all();
    Store* s;
    CachedInode* c;
    if (Status st = snap_get(id, &s, &c); st != Status::Ok) return st;
    if (attr) *attr = snap_attr(id, c);
  }
  std::optional<Attr> ignored;
  Status st = fsstat(ctx, root_, out, &ignored);
  return st;
}

}  // namespace nasd::fs::lfs
