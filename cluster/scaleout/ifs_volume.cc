// IfsVolume: opening, the namespace calls and the calls on one object. The data path (READ,
// WRITE, truncation, flush) is in ifs_data.cc, protection in ifs_protect.cc.
#include "cluster/scaleout/ifs_volume.h"

#include <sys/statvfs.h>

#include <algorithm>
#include <chrono>
#include <random>

#include "cluster/scaleout/ifs_image.h"
#include "fs/permission.h"

namespace nasd::scaleout {

using fs::Status;

namespace {
uint64_t cookie_verifier(uint64_t dir_ino) { return 0x1f5c000000000000ull ^ dir_ino; }
uint64_t random_verifier() {
  std::random_device rd;
  return (uint64_t(rd()) << 32) ^ rd() ^ uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
}
}  // namespace

std::unique_ptr<IfsVolume> IfsVolume::open(const IfsOptions& options, IfsCluster* cluster,
                                           std::string* error) {
  std::vector<uint8_t> image;
  ImageHead head;
  std::string why;
  IfsState state;
  switch (read_image(cluster->units(), cluster->topology(), cluster->drives_per_node(), &image,
                     &head, &why)) {
    case ImageLoad::NoQuorum:
    case ImageLoad::Damaged:
      *error = "scale-out volume " + options.name + ": " + why;
      return nullptr;
    case ImageLoad::Found:
      if (!decode_state(image.data(), image.size(), &state, &why)) {
        *error = "scale-out volume " + options.name + ": checkpoint " +
                 std::to_string(head.generation) + ": " + why;
        return nullptr;
      }
      break;
    case ImageLoad::Empty: {
      IfsInode& root = state.inodes[kIfsRootIno];
      root.attr.type = fs::FileType::Dir;
      root.attr.mode = 0755;
      root.attr.nlink = 2;
      root.attr.fileid = kIfsRootIno;
      root.attr.atime = root.attr.mtime = root.attr.ctime = now();
      root.parent = kIfsRootIno;
      break;
    }
  }
  for (auto& [ino, n] : state.inodes) n.attr.fsid = options.volume_id;
  // A new incarnation: its group versions never reuse a referenced one (ifs_state.h).
  state.epoch += 1;
  state.next_version = 1;
  return std::unique_ptr<IfsVolume>(new IfsVolume(options, cluster, std::move(state), head.generation));
}

IfsVolume::IfsVolume(IfsOptions options, IfsCluster* cluster, IfsState state, uint64_t generation)
    : options_(std::move(options)), cluster_(cluster), io_(cluster->units()),
      verifier_(random_verifier()), live_(std::move(state)) {
  generation_ = generation;
  sweep_every_ = options_.orphan_sweep_interval;  // [volume] orphan_sweep_interval_ms
  durable_seq_ = live_.applied_seq;
}

void IfsVolume::start_protection() {
  std::lock_guard lock(stop_mu_);
  if (!protector_.joinable() && !stopping_) protector_ = std::thread([this] { protect_loop(); });
}

IfsVolume::~IfsVolume() { abandon(); }

void IfsVolume::abandon() {
  abandoned_ = true;
  {
    std::lock_guard lock(stop_mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (protector_.joinable()) protector_.join();
  closed_ = true;
}

Status IfsVolume::close() {
  if (closed_) return Status::Ok;
  {
    std::lock_guard lock(stop_mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (protector_.joinable()) protector_.join();
  uint64_t durable = 0;
  Status st = flush(&durable);
  closed_ = true;
  return st;
}

uint64_t IfsVolume::durable_seq() const { return durable_seq_.load(); }

fs::VolumeLimits IfsVolume::limits() const {
  fs::VolumeLimits l;
  l.max_file_size = 1ull << 44;
  l.block_size = 4096;
  l.link_max = 65000;
  l.name_max = kNameMax;
  l.time_delta = {0, 1};
  return l;
}

// --- helpers (mu_ held)

IfsInode* IfsVolume::find(fs::InodeId id) {
  auto it = live_.inodes.find(id.ino);
  return it == live_.inodes.end() || it->second.gen != id.gen ? nullptr : &it->second;
}

Status IfsVolume::find_dir(fs::InodeId id, IfsInode** out) {
  *out = find(id);
  if (!*out) return Status::Stale;
  return (*out)->attr.type == fs::FileType::Dir ? Status::Ok : Status::NotDir;
}

Status IfsVolume::find_dir_for_change(fs::InodeId id, fs::Wcc* wcc, IfsInode** out) {
  Status st = find_dir(id, out);
  if (st != Status::Ok) return st;
  wcc->before = pre(**out);
  wcc->after = (*out)->attr;
  return Status::Ok;
}

bool IfsVolume::allowed(const fs::Cred& cred, const IfsInode& n, uint32_t rwx) const {
  return fs::may(cred, fs::Subject{n.attr.type, n.attr.mode, n.attr.uid, n.attr.gid}, rwx);
}

fs::PreAttr IfsVolume::pre(const IfsInode& n) { return fs::PreAttr{n.attr.size, n.attr.mtime, n.attr.ctime}; }

fs::Time IfsVolume::now() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return fs::Time{ts.tv_sec, static_cast<uint32_t>(ts.tv_nsec)};
}

void IfsVolume::touch(IfsInode& n, bool data_changed) {
  fs::Time t = now();
  if (data_changed) n.attr.mtime = t;
  n.attr.ctime = t;
}

void IfsVolume::note_applied() {
  if (const fs::JournalTag* tag = journal_tag()) live_.applied_seq = std::max(live_.applied_seq, tag->seq);
}

void IfsVolume::link_name(IfsInode& dir, std::string_view name, uint64_t ino) {
  const uint64_t cookie = dir.next_cookie++;
  dir.names.emplace(std::string(name), cookie);
  dir.entries[cookie] = {std::string(name), ino};
}

void IfsVolume::unlink_name(IfsInode& dir, std::string_view name) {
  auto it = dir.names.find(name);
  if (it == dir.names.end()) return;
  dir.entries.erase(it->second);
  dir.names.erase(it);
}

uint64_t IfsVolume::child(const IfsInode& dir, std::string_view name) {
  auto it = dir.names.find(name);
  return it == dir.names.end() ? 0 : dir.entries.at(it->second).second;
}

void IfsVolume::drop_link(uint64_t ino) {
  IfsInode& n = live_.inodes.at(ino);
  if (n.attr.type == fs::FileType::Dir || --n.attr.nlink == 0) {
    forget_file(ino, n);
    live_.inodes.erase(ino);
  } else {
    touch(n, false);
  }
}

Status IfsVolume::check_new_name(const fs::OpContext& ctx, IfsInode& dir, std::string_view name) {
  if (!allowed(ctx.cred, dir, kChangeEntries)) return Status::Access;
  if (name.empty() || name.find('/') != std::string_view::npos) return Status::Inval;
  if (name.size() > kNameMax) return Status::NameTooLong;
  if (name == "." || name == ".." || dir.names.count(name)) return Status::Exist;
  return Status::Ok;
}

// A replayed record brings the inode the client was first given (JournalTag::created).
Status IfsVolume::add_entry(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                            fs::FileType type, const fs::SetAttr& sa, fs::InodeId* out,
                            fs::Wcc* dir_wcc, IfsInode** made) {
  IfsInode* d = nullptr;
  Status st = find_dir_for_change(dir, dir_wcc, &d);
  if (st != Status::Ok) return st;
  if ((st = check_new_name(ctx, *d, name)) != Status::Ok) return st;
  uint64_t ino = live_.next_ino;
  uint32_t gen = 1;
  if (const fs::JournalTag* tag = journal_tag(); tag && tag->created) {
    ino = tag->created->ino;
    gen = tag->created->gen;
    if (ino <= kIfsRootIno || live_.inodes.count(ino)) return Status::ServerFault;
  }
  live_.next_ino = std::max(live_.next_ino, ino + 1);
  IfsInode& n = live_.inodes[ino];  // std::map: `d` stays valid
  n.gen = gen;
  n.attr.type = type;
  n.attr.mode = type == fs::FileType::Dir ? 0755 : 0644;
  n.attr.nlink = type == fs::FileType::Dir ? 2 : 1;
  n.attr.uid = ctx.cred.uid;
  n.attr.gid = ctx.cred.gid;
  n.attr.fsid = options_.volume_id;
  n.attr.fileid = ino;
  n.attr.atime = n.attr.mtime = n.attr.ctime = now();
  n.parent = dir.ino;
  if (sa.mode) n.attr.mode = *sa.mode & fs::kModeMask;
  if (sa.atime_how == fs::TimeHow::ClientTime) n.attr.atime = sa.atime;
  if (sa.mtime_how == fs::TimeHow::ClientTime) n.attr.mtime = sa.mtime;
  link_name(*d, name, ino);
  if (type == fs::FileType::Dir) d->attr.nlink++;
  touch(*d, true);
  dir_wcc->after = d->attr;
  *out = {ino, gen};
  *made = &n;
  return Status::Ok;
}

// --- calls on one object

Status IfsVolume::getattr(const fs::OpContext&, fs::InodeId id, fs::Attr* out) {
  std::lock_guard lock(mu_);
  IfsInode* n = find(id);
  if (!n) return Status::Stale;
  *out = n->attr;
  return Status::Ok;
}

Status IfsVolume::setattr(const fs::OpContext& ctx, fs::InodeId id, const fs::SetAttr& sa,
                          std::optional<fs::Time> guard_ctime, fs::Wcc* wcc) {
  std::unique_lock lk(mu_);
  IfsInode* n = find(id);
  if (!n) return Status::Stale;
  wcc->before = pre(*n);
  wcc->after = n->attr;
  if (guard_ctime && !(*guard_ctime == n->attr.ctime)) return Status::NotSync;
  uint32_t new_mode = n->attr.mode;
  Status st = fs::check_setattr(ctx.cred, fs::Subject{n->attr.type, n->attr.mode, n->attr.uid, n->attr.gid}, sa, &new_mode);
  if (st != Status::Ok) return st;
  if (sa.size) {
    if (n->attr.type == fs::FileType::Dir) return Status::IsDir;
    if (n->attr.type != fs::FileType::Reg) return Status::Inval;
    if (*sa.size > limits().max_file_size) return Status::FBig;
    resize_file(lk, *n, id.ino, *sa.size);
    n = find(id);
    if (!n) return Status::Stale;
    n->attr.mtime = now();
  }
  n->attr.mode = new_mode;
  if (sa.uid) n->attr.uid = *sa.uid;
  if (sa.gid) n->attr.gid = *sa.gid;
  if (sa.atime_how == fs::TimeHow::ServerTime) n->attr.atime = now();
  if (sa.atime_how == fs::TimeHow::ClientTime) n->attr.atime = sa.atime;
  if (sa.mtime_how == fs::TimeHow::ServerTime) n->attr.mtime = now();
  if (sa.mtime_how == fs::TimeHow::ClientTime) n->attr.mtime = sa.mtime;
  n->attr.ctime = now();
  wcc->after = n->attr;
  note_applied();
  return Status::Ok;
}

Status IfsVolume::access(const fs::OpContext& ctx, fs::InodeId id, uint32_t requested,
                         uint32_t* granted, std::optional<fs::Attr>* attr) {
  std::lock_guard lock(mu_);
  IfsInode* n = find(id);
  if (!n) return Status::Stale;
  *attr = n->attr;
  *granted = fs::access_granted(ctx.cred, fs::Subject{n->attr.type, n->attr.mode, n->attr.uid, n->attr.gid}, requested);
  return Status::Ok;
}

Status IfsVolume::readlink(const fs::OpContext&, fs::InodeId id, std::string* target,
                           std::optional<fs::Attr>* attr) {
  std::lock_guard lock(mu_);
  IfsInode* n = find(id);
  if (!n) return Status::Stale;
  *attr = n->attr;
  if (n->attr.type != fs::FileType::Lnk) return Status::Inval;
  *target = n->target;
  return Status::Ok;
}

Status IfsVolume::fsstat(const fs::OpContext&, fs::InodeId id, fs::FsStat* out,
                         std::optional<fs::Attr>* attr) {
  Topology t = cluster_->topology();
  std::lock_guard lock(mu_);
  IfsInode* n = find(id);
  if (!n) return Status::Stale;
  *attr = n->attr;
  uint64_t used = 0;
  for (const auto& [ino, node] : live_.inodes) used += node.attr.used;
  // Raw capacity is what the drives' host file systems have left, times the nodes; data costs
  // (N+M)/N of itself at 6+2: report usable space at that rate.
  struct statvfs vfs{};
  uint64_t raw = 0;
  if (statvfs(".", &vfs) == 0) raw = uint64_t(vfs.f_bavail) * vfs.f_frsize;
  const uint64_t usable = raw / 4 * 3 * std::max(1, t.alive_nodes()) / std::max<size_t>(1, t.nodes.size());
  out->total_bytes = usable + used;
  out->free_bytes = out->avail_bytes = usable;
  out->total_files = 1ull << 32;
  out->free_files = out->avail_files = out->total_files - live_.inodes.size();
  out->invarsec = 0;
  return Status::Ok;
}

// The NVRAM journal answers COMMIT itself (its records are the stable copy); without it, a
// flush makes everything durable.
Status IfsVolume::commit(const fs::OpContext&, fs::InodeId id, uint64_t, uint32_t, fs::Wcc* wcc) {
  if (!journal_tag()) {
    uint64_t durable = 0;
    Status st = flush(&durable);
    if (st != Status::Ok) return st;
  }
  std::lock_guard lock(mu_);
  IfsInode* n = find(id);
  if (!n) return Status::Stale;
  wcc->before = pre(*n);
  wcc->after = n->attr;
  return Status::Ok;
}

// --- entries

Status IfsVolume::lookup(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                         fs::InodeId* out, std::optional<fs::Attr>* obj_attr,
                         std::optional<fs::Attr>* dir_attr) {
  std::lock_guard lock(mu_);
  IfsInode* d = nullptr;
  Status st = find_dir(dir, &d);
  if (st != Status::Ok) return st;
  *dir_attr = d->attr;
  if (!allowed(ctx.cred, *d, fs::kWantExec)) return Status::Access;
  if (name.size() > kNameMax) return Status::NameTooLong;
  uint64_t ino = 0;
  if (name == ".") ino = dir.ino;
  else if (name == "..") ino = d->parent;
  else if ((ino = child(*d, name)) == 0) return Status::NoEnt;
  IfsInode& n = live_.inodes.at(ino);
  *out = {ino, n.gen};
  *obj_attr = n.attr;
  return Status::Ok;
}

Status IfsVolume::create(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                         fs::CreateMode mode, const fs::SetAttr& sa, uint64_t verifier,
                         fs::InodeId* out, std::optional<fs::Attr>* obj_attr, fs::Wcc* dir_wcc) {
  std::unique_lock lk(mu_);
  IfsInode* d = nullptr;
  Status st = find_dir_for_change(dir, dir_wcc, &d);
  if (st != Status::Ok) return st;
  if (sa.size && *sa.size > limits().max_file_size) return Status::FBig;
  if (const uint64_t existing = child(*d, name)) {
    IfsInode& n = live_.inodes.at(existing);
    const bool same_exclusive = mode == fs::CreateMode::Exclusive && n.create_verf == verifier;
    const bool reuse = mode == fs::CreateMode::Unchecked && n.attr.type == fs::FileType::Reg;
    if (!same_exclusive && !reuse) return Status::Exist;
    if (reuse && sa.size) {
      if (!allowed(ctx.cred, n, fs::kWantWrite)) return Status::Access;
      resize_file(lk, n, existing, *sa.size);
      touch(n, true);
    }
    IfsInode& again = live_.inodes.at(existing);
    *out = {existing, again.gen};
    *obj_attr = again.attr;
    note_applied();
    return Status::Ok;
  }
  IfsInode* n = nullptr;
  if ((st = add_entry(ctx, dir, name, fs::FileType::Reg, sa, out, dir_wcc, &n)) != Status::Ok) return st;
  if (mode == fs::CreateMode::Exclusive) n->create_verf = verifier;
  if (sa.size && *sa.size > 0) resize_file(lk, *n, out->ino, *sa.size);
  *obj_attr = live_.inodes.at(out->ino).attr;
  note_applied();
  return Status::Ok;
}

Status IfsVolume::mkdir(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                        const fs::SetAttr& sa, fs::InodeId* out, std::optional<fs::Attr>* obj_attr,
                        fs::Wcc* dir_wcc) {
  std::lock_guard lock(mu_);
  IfsInode* n = nullptr;
  Status st = add_entry(ctx, dir, name, fs::FileType::Dir, sa, out, dir_wcc, &n);
  if (st != Status::Ok) return st;
  *obj_attr = n->attr;
  note_applied();
  return Status::Ok;
}

Status IfsVolume::symlink(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                          std::string_view target, const fs::SetAttr& sa, fs::InodeId* out,
                          std::optional<fs::Attr>* obj_attr, fs::Wcc* dir_wcc) {
  std::lock_guard lock(mu_);
  if (target.size() > 4096) return Status::NameTooLong;
  IfsInode* n = nullptr;
  Status st = add_entry(ctx, dir, name, fs::FileType::Lnk, sa, out, dir_wcc, &n);
  if (st != Status::Ok) return st;
  n->target = std::string(target);
  n->attr.size = n->attr.used = target.size();
  *obj_attr = n->attr;
  note_applied();
  return Status::Ok;
}

Status IfsVolume::mknod(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                        fs::FileType type, const fs::SetAttr& sa, uint32_t rdev_major,
                        uint32_t rdev_minor, fs::InodeId* out, std::optional<fs::Attr>* obj_attr,
                        fs::Wcc* dir_wcc) {
  std::lock_guard lock(mu_);
  if (type != fs::FileType::Chr && type != fs::FileType::Blk && type != fs::FileType::Sock &&
      type != fs::FileType::Fifo)
    return Status::BadType;
  IfsInode* n = nullptr;
  Status st = add_entry(ctx, dir, name, type, sa, out, dir_wcc, &n);
  if (st != Status::Ok) return st;
  n->attr.rdev_major = rdev_major;
  n->attr.rdev_minor = rdev_minor;
  *obj_attr = n->attr;
  note_applied();
  return Status::Ok;
}

Status IfsVolume::link(const fs::OpContext& ctx, fs::InodeId file, fs::InodeId dir,
                       std::string_view name, std::optional<fs::Attr>* file_attr, fs::Wcc* dir_wcc) {
  std::lock_guard lock(mu_);
  IfsInode* f = find(file);
  if (!f) return Status::Stale;
  *file_attr = f->attr;
  IfsInode* d = nullptr;
  Status st = find_dir_for_change(dir, dir_wcc, &d);
  if (st != Status::Ok) return st;
  if (f->attr.type == fs::FileType::Dir) return Status::IsDir;
  if ((st = check_new_name(ctx, *d, name)) != Status::Ok) return st;
  if (f->attr.nlink >= limits().link_max) return Status::MLink;
  link_name(*d, name, file.ino);
  f->attr.nlink++;
  touch(*f, false);
  touch(*d, true);
  *file_attr = f->attr;
  dir_wcc->after = d->attr;
  note_applied();
  return Status::Ok;
}

Status IfsVolume::remove(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                         fs::Wcc* dir_wcc) {
  std::lock_guard lock(mu_);
  IfsInode* d = nullptr;
  Status st = find_dir_for_change(dir, dir_wcc, &d);
  if (st != Status::Ok) return st;
  if (!allowed(ctx.cred, *d, kChangeEntries)) return Status::Access;
  const uint64_t ino = child(*d, name);
  if (ino == 0) return Status::NoEnt;
  const IfsInode& victim = live_.inodes.at(ino);
  if (victim.attr.type == fs::FileType::Dir) return Status::IsDir;
  if (!fs::may_delete(ctx.cred, fs::Subject{d->attr.type, d->attr.mode, d->attr.uid, d->attr.gid}, victim.attr.uid))
    return Status::Access;
  unlink_name(*d, name);
  drop_link(ino);
  touch(*d, true);
  dir_wcc->after = d->attr;
  note_applied();
  return Status::Ok;
}

Status IfsVolume::rmdir(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                        fs::Wcc* dir_wcc) {
  std::lock_guard lock(mu_);
  IfsInode* d = nullptr;
  Status st = find_dir_for_change(dir, dir_wcc, &d);
  if (st != Status::Ok) return st;
  if (!allowed(ctx.cred, *d, kChangeEntries)) return Status::Access;
  if (name == ".") return Status::Inval;
  if (name == "..") return Status::NotEmpty;
  const uint64_t ino = child(*d, name);
  if (ino == 0) return Status::NoEnt;
  const IfsInode& victim = live_.inodes.at(ino);
  if (victim.attr.type != fs::FileType::Dir) return Status::NotDir;
  if (!victim.names.empty()) return Status::NotEmpty;
  if (!fs::may_delete(ctx.cred, fs::Subject{d->attr.type, d->attr.mode, d->attr.uid, d->attr.gid}, victim.attr.uid))
    return Status::Access;
  unlink_name(*d, name);
  d->attr.nlink--;
  drop_link(ino);
  touch(*d, true);
  dir_wcc->after = d->attr;
  note_applied();
  return Status::Ok;
}

Status IfsVolume::rename(const fs::OpContext& ctx, fs::InodeId from_dir, std::string_view from_name,
                         fs::InodeId to_dir, std::string_view to_name, fs::Wcc* from_wcc,
                         fs::Wcc* to_wcc) {
  std::lock_guard lock(mu_);
  IfsInode *from = nullptr, *to = nullptr;
  Status st = find_dir(from_dir, &from);
  if (st == Status::Ok) st = find_dir(to_dir, &to);
  if (st != Status::Ok) return st;
  from_wcc->before = pre(*from);
  to_wcc->before = pre(*to);
  from_wcc->after = from->attr;
  to_wcc->after = to->attr;
  if (!allowed(ctx.cred, *from, kChangeEntries) || !allowed(ctx.cred, *to, kChangeEntries))
    return Status::Access;
  if (from_name.empty() || from_name == "." || from_name == "..") return Status::Inval;
  if (to_name.empty() || to_name == "." || to_name == ".." || to_name.find('/') != std::string_view::npos)
    return Status::Inval;
  if (to_name.size() > kNameMax) return Status::NameTooLong;
  const uint64_t ino = child(*from, from_name);
  if (ino == 0) return Status::NoEnt;
  IfsInode& moving = live_.inodes.at(ino);
  if (!fs::may_delete(ctx.cred, fs::Subject{from->attr.type, from->attr.mode, from->attr.uid, from->attr.gid}, moving.attr.uid))
    return Status::Access;
  const bool moving_dir = moving.attr.type == fs::FileType::Dir;
  for (uint64_t a = to_dir.ino; moving_dir; a = live_.inodes.at(a).parent) {
    if (a == ino) return Status::Inval;  // a directory may not move below itself
    if (a == kIfsRootIno) break;
  }
  if (const uint64_t victim_ino = child(*to, to_name)) {
    if (victim_ino == ino) return Status::Ok;  // a name onto itself (or a hard link of it)
    IfsInode& victim = live_.inodes.at(victim_ino);
    const bool victim_dir = victim.attr.type == fs::FileType::Dir;
    if (victim_dir && !moving_dir) return Status::IsDir;
    if (!victim_dir && moving_dir) return Status::NotDir;
    if (victim_dir && !victim.names.empty()) return Status::NotEmpty;
    if (!fs::may_delete(ctx.cred, fs::Subject{to->attr.type, to->attr.mode, to->attr.uid, to->attr.gid}, victim.attr.uid))
      return Status::Access;
    unlink_name(*to, to_name);
    if (victim_dir) to->attr.nlink--;
    drop_link(victim_ino);
  }
  unlink_name(*from, from_name);
  link_name(*to, to_name, ino);
  if (moving_dir && from != to) {
    from->attr.nlink--;
    to->attr.nlink++;
  }
  moving.parent = to_dir.ino;
  touch(moving, false);
  touch(*from, true);
  touch(*to, true);
  from_wcc->after = from->attr;
  to_wcc->after = to->attr;
  note_applied();
  return Status::Ok;
}

Status IfsVolume::readdir(const fs::OpContext& ctx, fs::InodeId dir, uint64_t cookie,
                          uint64_t cookieverf, uint32_t max_entries, bool with_attrs,
                          fs::ReaddirResult* out) {
  std::lock_guard lock(mu_);
  IfsInode* d = nullptr;
  Status st = find_dir(dir, &d);
  if (st != Status::Ok) return st;
  out->dir_attr = d->attr;
  if (!allowed(ctx.cred, *d, fs::kWantRead)) return Status::Access;
  if (cookie != 0 && cookieverf != 0 && cookieverf != cookie_verifier(dir.ino)) return Status::BadCookie;
  if (cookie >= d->next_cookie) return Status::BadCookie;
  out->cookieverf = cookie_verifier(dir.ino);
  out->entries.clear();
  auto add = [&](const std::string& name, uint64_t ino, uint64_t c) {
    const IfsInode& n = live_.inodes.at(ino);
    fs::DirEntry e;
    e.name = name;
    e.fileid = ino;
    e.cookie = c;
    e.id = {ino, n.gen};
    if (with_attrs) e.attr = n.attr;
    out->entries.push_back(std::move(e));
  };
  if (cookie < 1 && out->entries.size() < max_entries) add(".", dir.ino, 1);
  if (cookie < 2 && out->entries.size() < max_entries) add("..", d->parent, 2);
  auto it = d->entries.upper_bound(std::max<uint64_t>(cookie, 2));
  for (; it != d->entries.end() && out->entries.size() < max_entries; ++it)
    add(it->second.first, it->second.second, it->first);
  const uint64_t last = out->entries.empty() ? cookie : out->entries.back().cookie;
  out->eof = last >= 2 && d->entries.upper_bound(last) == d->entries.end();
  return Status::Ok;
}

}  // namespace nasd::scaleout
