// LfsVolume: the name space calls (lookup, create family, remove, rename, link, readdir).
#include <cstring>

#include "fs/lfs/lfs_volume.h"

namespace nasd::fs::lfs {

namespace {
constexpr size_t kMaxSymlink = 1024;
constexpr uint32_t kReaddirMax = 4096;

uint32_t default_mode(FileType t) {
  switch (t) {
    case FileType::Dir: return 0755;
    case FileType::Lnk: return 0777;
    default: return 0644;
  }
}

// The cookie verifier of a directory: its cookies never go stale (they are positions in hash
// order), so it only has to tell this directory apart from a reused inode number.
uint64_t cookie_verifier(const Inode& dir) { return (dir.ino << 20) ^ (uint64_t(dir.gen) << 1) ^ 1; }
}  // namespace

Status LfsVolume::lookup_locked(const OpContext& ctx, InodeId dir, std::string_view name,
                                InodeId* out, std::optional<Attr>* obj_attr,
                                std::optional<Attr>* dir_attr) {
  if (Status u = readable(); u != Status::Ok) return u;
  CachedInode* d;
  Status st = get_dir(dir, &d);
  if (st != Status::Ok) return st;
  if (dir_attr) *dir_attr = attr_of(d);
  if (!may(ctx.cred, subject_of(d), kWantExec)) return Status::Access;
  if (name.size() > limits().name_max) return Status::NameTooLong;
  if (name.empty()) return Status::NoEnt;
  uint64_t ino;
  if (name == ".") {
    ino = d->inode.ino;
  } else if (name == "..") {
    ino = d->inode.parent ? d->inode.parent : d->inode.ino;
  } else {
    DirRecord rec;
    bool found;
    if ((st = Directory(store_.get(), d).lookup(name, &rec, &found)) != Status::Ok) return st;
    if (!found) return Status::NoEnt;
    ino = rec.ino;
  }
  CachedInode* c;
  if ((st = store_->load(ino, &c)) != Status::Ok) return st == Status::NoEnt ? Status::Io : st;
  *out = InodeId{c->inode.ino, c->inode.gen};
  if (obj_attr) *obj_attr = attr_of(c);
  return Status::Ok;
}

Status LfsVolume::readlink_locked(InodeId id, std::string* target, std::optional<Attr>* attr) {
  if (Status u = readable(); u != Status::Ok) return u;
  CachedInode* c;
  Status st = store_->get(id, &c);
  if (st != Status::Ok) return st;
  if (attr) *attr = attr_of(c);
  if (c->inode.type != FileType::Lnk) return Status::Inval;
  const uint8_t* d;
  if ((st = store_->read_block(c, 0, &d)) != Status::Ok) return st;
  size_t n = std::min<uint64_t>(c->inode.size, kMaxSymlink);
  target->assign(d ? reinterpret_cast<const char*>(d) : "", d ? n : 0);
  return Status::Ok;
}

// Allocates and links a new object of `type` named `name` in `dir`. The caller checked the
// directory, the name, permissions and that the name is free.
Status LfsVolume::new_object(const OpContext& ctx, CachedInode* dir, std::string_view name,
                             FileType type, const SetAttr& sa, CachedInode** out) {
  Status st = store_->reserve(type == FileType::Dir ? 3 : 2, 0, claim());
  if (st != Status::Ok) return st;
  CachedInode* c;
  // A replayed journal record brings the inode (and generation) the client was given.
  const JournalTag* tag = journal_tag();
  if ((st = store_->allocate(tag ? tag->created : std::nullopt, &c)) != Status::Ok) return st;
  Inode& in = c->inode;
  const Inode& d = dir->inode;
  bool root = ctx.cred.uid == 0;
  in.type = type;
  in.mode = (sa.mode ? *sa.mode : default_mode(type)) & kModeMask;
  in.uid = (sa.uid && root) ? *sa.uid : ctx.cred.uid;
  in.gid = (d.mode & kModeSetgid) ? d.gid : ctx.cred.gid;
  if (sa.gid && (root || cred_in_group(ctx.cred, *sa.gid))) in.gid = *sa.gid;
  if (type == FileType::Dir && (d.mode & kModeSetgid)) in.mode |= kModeSetgid;
  in.nlink = type == FileType::Dir ? 2 : 1;
  in.parent = type == FileType::Dir ? d.ino : 0;
  Time now = now_time();
  in.atime = sa.atime_how == TimeHow::ClientTime ? sa.atime : now;
  in.mtime = sa.mtime_how == TimeHow::ClientTime ? sa.mtime : now;
  in.ctime = now;
  if (type == FileType::Dir) st = Directory(store_.get(), c).init();
  if (st == Status::Ok) st = Directory(store_.get(), dir).insert(name, in.ino, in.gen, type);
  if (st != Status::Ok) {
    store_->release(c);
    return st;
  }
  dir->inode.mtime = dir->inode.ctime = now;
  if (type == FileType::Dir) dir->inode.nlink++;
  store_->mark_dirty(dir);
  *out = c;
  return Status::Ok;
}

Status LfsVolume::create(const OpContext& ctx, InodeId dir, std::string_view name, CreateMode mode,
                         const SetAttr& sa, uint64_t verifier, InodeId* out,
                         std::optional<Attr>* obj_attr, Wcc* dir_wcc) {
  if (in_snapshot_space(dir.ino)) return Status::RoFs;
  Lock lk(mu_);
  DirChange change(this, dir_wcc);
  Status st = begin_dir_change(dir, &change);
  if (st != Status::Ok) return st;
  CachedInode* d = change.dir;
  DirRecord rec;
  bool found;
  if ((st = find_new_name(ctx, d, name, &rec, &found)) != Status::Ok) return change.reply(st);
  CachedInode* c = nullptr;
  if (found) {
    if ((st = store_->load(rec.ino, &c)) != Status::Ok) return change.reply(Status::Io);
    // A replayed record meets the state its original call met (the fs is a prefix of the
    // journal, and records at or below durable_seq are not replayed), so it takes this same
    // branch again: no replay special case.
    if (mode == CreateMode::Guarded) return change.reply(Status::Exist);
    if (mode == CreateMode::Exclusive) {
      if (c->inode.type != FileType::Reg || !c->inode.has_verifier ||
          c->inode.verifier != verifier)
        return change.reply(Status::Exist);
    } else {
      if (c->inode.type != FileType::Reg) return change.reply(Status::Exist);
      SetAttr size_only;
      size_only.size = sa.size;
      if (sa.size && (st = apply_setattr(ctx, c, size_only)) != Status::Ok) return change.reply(st);
    }
  } else {
    if ((st = new_object(ctx, d, name, FileType::Reg, mode == CreateMode::Exclusive ? SetAttr{} : sa,
                         &c)) != Status::Ok)
      return change.reply(st);
    if (mode == CreateMode::Exclusive) {
      c->inode.has_verifier = true;
      c->inode.verifier = verifier;
    }
  }
  return reply_created(ctx, lk, c, change, out, obj_attr);
}

Status LfsVolume::mkdir(const OpContext& ctx, InodeId dir, std::string_view name,
                        const SetAttr& sa, InodeId* out, std::optional<Attr>* obj_attr,
                        Wcc* dir_wcc) {
  if (in_snapshot_space(dir.ino)) return Status::RoFs;
  Lock lk(mu_);
  DirChange change(this, dir_wcc);
  Status st = begin_dir_change(dir, &change);
  if (st != Status::Ok) return st;
  CachedInode* d = change.dir;
  DirRecord rec;
  bool found;
  if ((st = find_new_name(ctx, d, name, &rec, &found)) != Status::Ok) return change.reply(st);
  if (found) return change.reply(Status::Exist);
  if (d->inode.nlink >= limits().link_max) return change.reply(Status::MLink);
  CachedInode* c;
  if ((st = new_object(ctx, d, name, FileType::Dir, sa, &c)) != Status::Ok) return change.reply(st);
  return reply_created(ctx, lk, c, change, out, obj_attr);
}

Status LfsVolume::symlink(const OpContext& ctx, InodeId dir, std::string_view name,
                          std::string_view target, const SetAttr& sa, InodeId* out,
                          std::optional<Attr>* obj_attr, Wcc* dir_wcc) {
  if (in_snapshot_space(dir.ino)) return Status::RoFs;
  Lock lk(mu_);
  DirChange change(this, dir_wcc);
  Status st = begin_dir_change(dir, &change);
  if (st != Status::Ok) return st;
  CachedInode* d = change.dir;
  if (name == "." || name == "..") return change.reply(Status::Exist);
  if ((st = check_name(name)) != Status::Ok) return change.reply(st);
  if (target.empty()) return change.reply(Status::Inval);
  if (target.size() > kMaxSymlink) return change.reply(Status::NameTooLong);
  if (!may(ctx.cred, subject_of(d), kWantWrite | kWantExec)) return change.reply(Status::Access);
  DirRecord rec;
  bool found;
  if ((st = Directory(store_.get(), d).lookup(name, &rec, &found)) != Status::Ok)
    return change.reply(st);
  if (found) return change.reply(Status::Exist);
  SetAttr link_sa = sa;
  link_sa.mode = 0777;
  CachedInode* c;
  if ((st = new_object(ctx, d, name, FileType::Lnk, link_sa, &c)) != Status::Ok)
    return change.reply(st);
  uint8_t* blk;
  if ((st = store_->modify_block(c, 0, true, &blk)) != Status::Ok) return change.reply(st);
  std::memset(blk, 0, kBlockSize);
  std::memcpy(blk, target.data(), target.size());
  c->inode.size = target.size();
  return reply_created(ctx, lk, c, change, out, obj_attr);
}

Status LfsVolume::mknod(const OpContext& ctx, InodeId dir, std::string_view name, FileType type,
                        const SetAttr& sa, uint32_t rdev_major, uint32_t rdev_minor, InodeId* out,
                        std::optional<Attr>* obj_attr, Wcc* dir_wcc) {
  if (in_snapshot_space(dir.ino)) return Status::RoFs;
  Lock lk(mu_);
  DirChange change(this, dir_wcc);
  Status st = begin_dir_change(dir, &change);
  if (st != Status::Ok) return st;
  CachedInode* d = change.dir;
  bool device = type == FileType::Chr || type == FileType::Blk;
  if (!device && type != FileType::Sock && type != FileType::Fifo)
    return change.reply(Status::BadType);
  DirRecord rec;
  bool found;
  if ((st = find_new_name(ctx, d, name, &rec, &found)) != Status::Ok) return change.reply(st);
  if (device && ctx.cred.uid != 0) return change.reply(Status::Perm);
  if (found) return change.reply(Status::Exist);
  CachedInode* c;
  if ((st = new_object(ctx, d, name, type, sa, &c)) != Status::Ok) return change.reply(st);
  if (device) {
    c->inode.rdev_major = rdev_major;
    c->inode.rdev_minor = rdev_minor;
  }
  return reply_created(ctx, lk, c, change, out, obj_attr);
}

// One link to `c` is gone; frees it when it was the last.
Status LfsVolume::drop_link(CachedInode* c) {
  Inode& in = c->inode;
  bool last = in.type == FileType::Dir || in.nlink <= 1;
  if (last) return store_->release(c);
  in.nlink--;
  in.ctime = now_time();
  store_->mark_dirty(c);
  return Status::Ok;
}

Status LfsVolume::remove(const OpContext& ctx, InodeId dir, std::string_view name, Wcc* dir_wcc) {
  if (in_snapshot_space(dir.ino) || name == kSnapshotDirName) return Status::RoFs;
  Lock lk(mu_);
  DirChange change(this, dir_wcc);
  Status st = begin_dir_change(dir, &change);
  if (st != Status::Ok) return st;
  CachedInode* d = change.dir;
  if (name == "." || name == "..") return change.reply(Status::IsDir);
  if ((st = check_name(name)) != Status::Ok)
    return change.reply(st == Status::Inval ? Status::NoEnt : st);
  if (!may(ctx.cred, subject_of(d), kWantWrite | kWantExec)) return change.reply(Status::Access);
  Directory dirobj(store_.get(), d);
  DirRecord rec;
  bool found;
  if ((st = dirobj.lookup(name, &rec, &found)) != Status::Ok) return change.reply(st);
  if (!found) return change.reply(Status::NoEnt);
  CachedInode* c;
  if ((st = store_->load(rec.ino, &c)) != Status::Ok) return change.reply(Status::Io);
  if (c->inode.type == FileType::Dir) return change.reply(Status::IsDir);
  if (!may_delete(ctx.cred, subject_of(d), c->inode.uid)) return change.reply(Status::Access);
  // A delete may use the room kept from other calls: deletes go on on a full volume.
  if ((st = store_->make_log_room(0, claim(Store::Claim::Delete))) != Status::Ok)
    return change.reply(st);
  if ((st = dirobj.remove(name, &found)) != Status::Ok) return change.reply(st);
  d->inode.mtime = d->inode.ctime = now_time();
  store_->mark_dirty(d);
  if ((st = drop_link(c)) != Status::Ok) return change.reply(st);
  return finish(lk, change.reply(Status::Ok), true);
}

Status LfsVolume::rmdir(const OpContext& ctx, InodeId dir, std::string_view name, Wcc* dir_wcc) {
  if (in_snapshot_space(dir.ino) || name == kSnapshotDirName) return Status::RoFs;
  Lock lk(mu_);
  DirChange change(this, dir_wcc);
  Status st = begin_dir_change(dir, &change);
  if (st != Status::Ok) return st;
  CachedInode* d = change.dir;
  if (name == ".") return change.reply(Status::Inval);
  if (name == "..") return change.reply(Status::NotEmpty);
  if ((st = check_name(name)) != Status::Ok)
    return change.reply(st == Status::Inval ? Status::NoEnt : st);
  if (!may(ctx.cred, subject_of(d), kWantWrite | kWantExec)) return change.reply(Status::Access);
  Directory dirobj(store_.get(), d);
  DirRecord rec;
  bool found;
  if ((st = dirobj.lookup(name, &rec, &found)) != Status::Ok) return change.reply(st);
  if (!found) return change.reply(Status::NoEnt);
  CachedInode* c;
  if ((st = store_->load(rec.ino, &c)) != Status::Ok) return change.reply(Status::Io);
  if (c->inode.type != FileType::Dir) return change.reply(Status::NotDir);
  if (c->inode.dir_entries > 0) return change.reply(Status::NotEmpty);
  if (!may_delete(ctx.cred, subject_of(d), c->inode.uid)) return change.reply(Status::Access);
  // A delete may use the room kept from other calls: deletes go on on a full volume.
  if ((st = store_->make_log_room(0, claim(Store::Claim::Delete))) != Status::Ok)
    return change.reply(st);
  if ((st = dirobj.remove(name, &found)) != Status::Ok) return change.reply(st);
  d->inode.mtime = d->inode.ctime = now_time();
  if (d->inode.nlink > 2) d->inode.nlink--;
  store_->mark_dirty(d);
  if ((st = store_->release(c)) != Status::Ok) return change.reply(st);
  return finish(lk, change.reply(Status::Ok), true);
}

Status LfsVolume::is_ancestor(uint64_t maybe_ancestor, uint64_t dir, bool* result) {
  *result = false;
  uint64_t cur = dir;
  for (uint64_t steps = 0; steps <= store_->imap().live_count(); steps++) {
    if (cur == maybe_ancestor) {
      *result = true;
      return Status::Ok;
    }
    if (cur == kRootIno) return Status::Ok;
    CachedInode* c;
    Status st = store_->load(cur, &c);
    if (st != Status::Ok) return Status::Io;
    cur = c->inode.parent;
  }
  return Status::Io;  // a loop in ".." links: corruption
}

Status LfsVolume::rename(const OpContext& ctx, InodeId from_dir, std::string_view from_name,
                         InodeId to_dir, std::string_view to_name, Wcc* from_wcc, Wcc* to_wcc) {
  if (in_snapshot_space(from_dir.ino) || in_snapshot_space(to_dir.ino) ||
      from_name == kSnapshotDirName || to_name == kSnapshotDirName)
    return Status::RoFs;
  Lock lk(mu_);
  if (Status u = usable(); u != Status::Ok) return u;
  store_->trim();
  CachedInode *fd, *td;
  Status st = get_dir(from_dir, &fd);
  if (st != Status::Ok) return st;
  PreAttr fpre = pre_of(fd);
  if ((st = get_dir(to_dir, &td)) != Status::Ok) {
    fill_wcc(from_wcc, fpre, fd);
    return st;
  }
  PreAttr tpre = pre_of(td);
  auto done = [&](Status s) {
    fill_wcc(from_wcc, fpre, fd);
    fill_wcc(to_wcc, tpre, td);
    return s;
  };
  for (std::string_view n : {from_name, to_name}) {
    if (n == "." || n == "..") return done(Status::Inval);
    if ((st = check_name(n)) != Status::Ok) return done(st);
  }
  if (!may(ctx.cred, subject_of(fd), kWantWrite | kWantExec) ||
      !may(ctx.cred, subject_of(td), kWantWrite | kWantExec))
    return done(Status::Access);
  Directory from(store_.get(), fd), to(store_.get(), td);
  DirRecord src_rec, dst_rec;
  bool found, dst_found;
  if ((st = from.lookup(from_name, &src_rec, &found)) != Status::Ok) return done(st);
  if (!found) return done(Status::NoEnt);
  CachedInode* src;
  if ((st = store_->load(src_rec.ino, &src)) != Status::Ok) return done(Status::Io);
  if (!may_delete(ctx.cred, subject_of(fd), src->inode.uid)) return done(Status::Access);
  if (fd == td && from_name == to_name) return done(Status::Ok);
  if ((st = to.lookup(to_name, &dst_rec, &dst_found)) != Status::Ok) return done(st);
  CachedInode* dst = nullptr;
  bool src_dir = src->inode.type == FileType::Dir;
  if (dst_found) {
    if ((st = store_->load(dst_rec.ino, &dst)) != Status::Ok) return done(Status::Io);
    if (dst == src) return done(Status::Ok);  // two links to one file: nothing to do
    bool dst_dir = dst->inode.type == FileType::Dir;
    if (src_dir && !dst_dir) return done(Status::NotDir);
    if (!src_dir && dst_dir) return done(Status::IsDir);
    if (dst_dir && dst->inode.dir_entries > 0) return done(Status::NotEmpty);
    if (!may_delete(ctx.cred, subject_of(td), dst->inode.uid)) return done(Status::Access);
  }
  if (src_dir && fd != td) {
    bool inside;
    if ((st = is_ancestor(src->inode.ino, td->inode.ino, &inside)) != Status::Ok) return done(st);
    if (inside) return done(Status::Inval);
    if (!may(ctx.cred, subject_of(src), kWantWrite)) return done(Status::Access);  // its ".."
    if (!dst_found && td->inode.nlink >= limits().link_max) return done(Status::MLink);
  }
  // A new name may need a directory block; replacing one allocates nothing.
  st = dst_found ? store_->make_log_room(0, claim()) : store_->reserve(1, 0, claim());
  if (st != Status::Ok) return done(st);
  Time now = now_time();
  if (dst_found) st = to.replace(to_name, src->inode.ino, src->inode.gen, src->inode.type);
  else st = to.insert(to_name, src->inode.ino, src->inode.gen, src->inode.type);
  if (st != Status::Ok) return done(st);
  if ((st = from.remove(from_name, &found)) != Status::Ok) return done(st);
  if (src_dir && fd != td) {
    fd->inode.nlink--;
    td->inode.nlink++;
    src->inode.parent = td->inode.ino;
  }
  src->inode.ctime = now;
  fd->inode.mtime = fd->inode.ctime = now;
  td->inode.mtime = td->inode.ctime = now;
  store_->mark_dirty(src);
  store_->mark_dirty(fd);
  store_->mark_dirty(td);
  if (dst) {
    if (dst->inode.type == FileType::Dir) td->inode.nlink--;
    if ((st = drop_link(dst)) != Status::Ok) return done(st);
  }
  done(Status::Ok);  // WCC is taken under the lock; finish() may drop it
  return finish(lk, Status::Ok, true);
}

Status LfsVolume::link(const OpContext& ctx, InodeId file, InodeId dir, std::string_view name,
                       std::optional<Attr>* file_attr, Wcc* dir_wcc) {
  if (in_snapshot_space(file.ino) || in_snapshot_space(dir.ino) || name == kSnapshotDirName)
    return Status::RoFs;
  Lock lk(mu_);
  if (Status u = usable(); u != Status::Ok) return u;
  store_->trim();
  CachedInode* c;
  Status st = store_->get(file, &c);
  if (st != Status::Ok) return st;
  CachedInode* d;
  if ((st = get_dir(dir, &d)) != Status::Ok) {
    if (file_attr) *file_attr = attr_of(c);
    return st;
  }
  PreAttr pre = pre_of(d);
  auto fail = [&](Status s) {
    if (file_attr) *file_attr = attr_of(c);
    fill_wcc(dir_wcc, pre, d);
    return s;
  };
  if (c->inode.type == FileType::Dir) return fail(Status::IsDir);
  if (name == "." || name == "..") return fail(Status::Exist);
  if ((st = check_name(name)) != Status::Ok) return fail(st);
  if (!may(ctx.cred, subject_of(d), kWantWrite | kWantExec)) return fail(Status::Access);
  DirRecord rec;
  bool found;
  Directory dirobj(store_.get(), d);
  if ((st = dirobj.lookup(name, &rec, &found)) != Status::Ok) return fail(st);
  if (found) return fail(Status::Exist);
  if (c->inode.nlink >= limits().link_max) return fail(Status::MLink);
  if ((st = store_->reserve(1, 0, claim())) != Status::Ok) return fail(st);
  if ((st = dirobj.insert(name, c->inode.ino, c->inode.gen, c->inode.type)) != Status::Ok)
    return fail(st);
  Time now = now_time();
  c->inode.nlink++;
  c->inode.ctime = now;
  d->inode.mtime = d->inode.ctime = now;
  store_->mark_dirty(c);
  store_->mark_dirty(d);
  fail(Status::Ok);  // attributes are taken under the lock; finish() may drop it
  return finish(lk, Status::Ok, true);
}

Status LfsVolume::readdir_locked(const OpContext& ctx, InodeId dir, uint64_t cookie,
                                 uint64_t cookieverf, uint32_t max_entries, bool with_attrs,
                                 ReaddirResult* out) {
  // A run under the shared lock that met something uncached is run again: start clean.
  out->entries.clear();
  if (Status u = readable(); u != Status::Ok) return u;
  CachedInode* d;
  Status st = get_dir(dir, &d);
  if (st != Status::Ok) return st;
  out->dir_attr = attr_of(d);
  out->cookieverf = cookie_verifier(d->inode);
  if (!may(ctx.cred, subject_of(d), kWantRead)) return Status::Access;
  if (cookie != 0 && cookieverf != 0 && cookieverf != out->cookieverf) return Status::BadCookie;
  if (cookie > 2 && !is_entry_cookie(cookie)) return Status::BadCookie;
  if (max_entries == 0) return Status::TooSmall;
  max_entries = std::min(max_entries, kReaddirMax);
  out->entries.clear();
  out->eof = false;
  auto add = [&](std::string name, uint64_t ino, uint64_t ck) -> Status {
    DirEntry e;
    e.name = std::move(name);
    e.fileid = ino;
    e.cookie = ck;
    CachedInode* c;
    Status s = store_->load(ino, &c);
    if (s != Status::Ok) return Status::Io;
    e.id = InodeId{c->inode.ino, c->inode.gen};
    if (with_attrs) e.attr = attr_of(c);
    out->entries.push_back(std::move(e));
    return Status::Ok;
  };
  if (cookie == 0 && out->entries.size() < max_entries) {
    if ((st = add(".", d->inode.ino, 1)) != Status::Ok) return st;
  }
  if (cookie <= 1 && out->entries.size() < max_entries) {
    uint64_t parent = d->inode.parent ? d->inode.parent : d->inode.ino;
    if ((st = add("..", parent, 2)) != Status::Ok) return st;
  }
  if (out->entries.size() >= max_entries) return Status::Ok;
  std::vector<DirRecord> recs;
  bool eof;
  uint64_t after = cookie <= 2 ? 0 : cookie;
  st = Directory(store_.get(), d).list(after, max_entries - uint32_t(out->entries.size()), &recs,
                                       &eof);
  if (st != Status::Ok) return st;
  for (DirRecord& r : recs) {
    if (with_attrs) {
      if ((st = add(std::move(r.name), r.ino, r.cookie)) != Status::Ok) return st;
    } else {
      DirEntry e;
      e.name = std::move(r.name);
      e.fileid = r.ino;
      e.cookie = r.cookie;
      e.id = InodeId{r.ino, r.gen};
      out->entries.push_back(std::move(e));
    }
  }
  out->eof = eof;
  return Status::Ok;
}

}  // namespace nasd::fs::lfs
