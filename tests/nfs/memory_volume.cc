// TEST FIXTURE ONLY (see memory_volume.h).
#include "tests/nfs/memory_volume.h"

#include <algorithm>

namespace nasd::nfs::fixture {

using fs::Status;

namespace {
constexpr uint32_t kR = 4, kW = 2, kX = 1;
constexpr size_t kNameMax = 255;
constexpr uint64_t kMaxFileSize = 64ull << 20;
uint64_t cookie_verifier(uint64_t dir_ino) { return 0x5a5a000000000000ull | dir_ino; }
}  // namespace

MemoryVolume::MemoryVolume(uint32_t id, uint64_t write_verifier) : id_(id), verifier_(write_verifier) {
  Node root;
  root.attr.type = fs::FileType::Dir;
  root.attr.mode = 0755;
  root.attr.nlink = 2;
  root.attr.uid = root.attr.gid = 0;
  root.attr.fsid = id;
  root.attr.fileid = kRootIno;
  root.attr.atime = root.attr.mtime = root.attr.ctime = tick();
  nodes_[kRootIno] = root;
}

fs::VolumeLimits MemoryVolume::limits() const {
  fs::VolumeLimits l;
  l.max_file_size = kMaxFileSize;  // file data is stored densely, so keep it small
  l.block_size = 4096;
  l.link_max = 1000;
  l.name_max = kNameMax;
  l.time_delta = {0, 1000};
  return l;
}

size_t MemoryVolume::inode_count() const {
  std::lock_guard lock(mu_);
  return nodes_.size();
}

MemoryVolume::Node* MemoryVolume::find(fs::InodeId id) {
  auto it = nodes_.find(id.ino);
  return it == nodes_.end() || it->second.gen != id.gen ? nullptr : &it->second;
}

Status MemoryVolume::find_dir(fs::InodeId id, Node** out) {
  *out = find(id);
  if (!*out) return Status::Stale;
  return (*out)->attr.type == fs::FileType::Dir ? Status::Ok : Status::NotDir;
}

bool MemoryVolume::allowed(const fs::Cred& cred, const Node& n, uint32_t rwx) const {
  if (cred.uid == 0) return true;
  uint32_t bits = n.attr.mode;
  if (cred.uid == n.attr.uid) bits >>= 6;
  else if (cred.gid == n.attr.gid ||
           std::find(cred.gids.begin(), cred.gids.end(), n.attr.gid) != cred.gids.end())
    bits >>= 3;
  return (bits & rwx) == rwx;
}

fs::Time MemoryVolume::tick() { return fs::Time{clock_++, 0}; }

void MemoryVolume::touch(Node& n, bool data_changed) {
  fs::Time now = tick();
  if (data_changed) n.attr.mtime = now;
  n.attr.ctime = now;
}

fs::PreAttr MemoryVolume::pre(const Node& n) { return fs::PreAttr{n.attr.size, n.attr.mtime, n.attr.ctime}; }

void MemoryVolume::apply(Node& n, const fs::SetAttr& sa) {
  if (sa.mode) n.attr.mode = *sa.mode & 07777;
  if (sa.uid) n.attr.uid = *sa.uid;
  if (sa.gid) n.attr.gid = *sa.gid;
  if (sa.size) {
    n.data.resize(*sa.size);
    n.attr.size = *sa.size;
    n.attr.used = (n.attr.size + 4095) / 4096 * 4096;
  }
  if (sa.atime_how == fs::TimeHow::ServerTime) n.attr.atime = tick();
  if (sa.atime_how == fs::TimeHow::ClientTime) n.attr.atime = sa.atime;
  if (sa.mtime_how == fs::TimeHow::ServerTime) n.attr.mtime = tick();
  if (sa.mtime_how == fs::TimeHow::ClientTime) n.attr.mtime = sa.mtime;
  n.attr.ctime = tick();
}

Status MemoryVolume::getattr(const fs::OpContext&, fs::InodeId id, fs::Attr* out) {
  std::lock_guard lock(mu_);
  Node* n = find(id);
  if (!n) return Status::Stale;
  *out = n->attr;
  return Status::Ok;
}

Status MemoryVolume::setattr(const fs::OpContext& ctx, fs::InodeId id, const fs::SetAttr& sa,
                             std::optional<fs::Time> guard_ctime, fs::Wcc* wcc) {
  std::lock_guard lock(mu_);
  Node* n = find(id);
  if (!n) return Status::Stale;
  wcc->before = pre(*n);
  wcc->after = n->attr;
  if (guard_ctime && !(*guard_ctime == n->attr.ctime)) return Status::NotSync;
  const bool owner = ctx.cred.uid == 0 || ctx.cred.uid == n->attr.uid;
  if ((sa.uid && *sa.uid != n->attr.uid && ctx.cred.uid != 0) ||
      ((sa.mode || sa.gid || sa.atime_how == fs::TimeHow::ClientTime ||
        sa.mtime_how == fs::TimeHow::ClientTime) && !owner))
    return Status::Perm;
  if (sa.size) {
    if (n->attr.type == fs::FileType::Dir) return Status::IsDir;
    if (n->attr.type != fs::FileType::Reg) return Status::Inval;
    if (!allowed(ctx.cred, *n, kW)) return Status::Access;
    if (*sa.size > kMaxFileSize) return Status::FBig;
  }
  apply(*n, sa);
  wcc->after = n->attr;
  return Status::Ok;
}

Status MemoryVolume::lookup(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                            fs::InodeId* out, std::optional<fs::Attr>* obj_attr,
                            std::optional<fs::Attr>* dir_attr) {
  std::lock_guard lock(mu_);
  Node* d = nullptr;
  Status st = find_dir(dir, &d);
  if (st != Status::Ok) return st;
  *dir_attr = d->attr;
  if (!allowed(ctx.cred, *d, kX)) return Status::Access;
  if (name.size() > kNameMax) return Status::NameTooLong;
  uint64_t ino = 0;
  if (name == ".") ino = dir.ino;
  else if (name == "..") ino = d->parent;
  else {
    auto it = d->children.find(name);
    if (it == d->children.end()) return Status::NoEnt;
    ino = it->second;
  }
  Node& n = nodes_.at(ino);
  *out = {ino, n.gen};
  *obj_attr = n.attr;
  return Status::Ok;
}

Status MemoryVolume::access(const fs::OpContext& ctx, fs::InodeId id, uint32_t requested,
                            uint32_t* granted, std::optional<fs::Attr>* attr) {
  std::lock_guard lock(mu_);
  Node* n = find(id);
  if (!n) return Status::Stale;
  *attr = n->attr;
  const bool dir = n->attr.type == fs::FileType::Dir;
  uint32_t g = 0;
  if (allowed(ctx.cred, *n, kR)) g |= fs::kAccessRead;
  if (allowed(ctx.cred, *n, kW)) {
    g |= fs::kAccessModify | fs::kAccessExtend;
    if (dir) g |= fs::kAccessDelete;
  }
  if (allowed(ctx.cred, *n, kX)) g |= dir ? fs::kAccessLookup : fs::kAccessExecute;
  *granted = g & requested;
  return Status::Ok;
}

Status MemoryVolume::readlink(const fs::OpContext&, fs::InodeId id, std::string* target,
                              std::optional<fs::Attr>* attr) {
  std::lock_guard lock(mu_);
  Node* n = find(id);
  if (!n) return Status::Stale;
  *attr = n->attr;
  if (n->attr.type != fs::FileType::Lnk) return Status::Inval;
  *target = n->target;
  return Status::Ok;
}

Status MemoryVolume::read(const fs::OpContext& ctx, fs::InodeId id, uint64_t offset,
                          uint32_t count, std::vector<uint8_t>* data, bool* eof,
                          std::optional<fs::Attr>* attr) {
  std::lock_guard lock(mu_);
  Node* n = find(id);
  if (!n) return Status::Stale;
  *attr = n->attr;
  if (n->attr.type == fs::FileType::Dir) return Status::IsDir;
  if (n->attr.type != fs::FileType::Reg) return Status::Inval;
  if (!allowed(ctx.cred, *n, kR)) return Status::Access;
  uint64_t start = std::min<uint64_t>(offset, n->data.size());
  uint64_t end = std::min<uint64_t>(n->data.size(), start + count);
  data->assign(n->data.begin() + start, n->data.begin() + end);
  *eof = end >= n->data.size();
  return Status::Ok;
}

Status MemoryVolume::write(const fs::OpContext& ctx, fs::InodeId id, uint64_t offset,
                           std::span<const uint8_t> data, fs::Stability,
                           fs::Stability* committed, fs::Wcc* wcc) {
  std::lock_guard lock(mu_);
  Node* n = find(id);
  if (!n) return Status::Stale;
  wcc->before = pre(*n);
  wcc->after = n->attr;
  if (n->attr.type == fs::FileType::Dir) return Status::IsDir;
  if (n->attr.type != fs::FileType::Reg) return Status::Inval;
  if (!allowed(ctx.cred, *n, kW)) return Status::Access;
  if (offset > kMaxFileSize || data.size() > kMaxFileSize - offset) return Status::FBig;
  if (n->data.size() < offset + data.size()) n->data.resize(offset + data.size());
  std::copy(data.begin(), data.end(), n->data.begin() + offset);
  n->attr.size = n->data.size();
  n->attr.used = (n->attr.size + 4095) / 4096 * 4096;
  touch(*n, true);
  *committed = fs::Stability::FileSync;  // memory is as stable as this fixture gets
  wcc->after = n->attr;
  return Status::Ok;
}

Status MemoryVolume::check_new_name(const fs::OpContext& ctx, Node& dir, std::string_view name) {
  if (!allowed(ctx.cred, dir, kW | kX)) return Status::Access;
  if (name.empty()) return Status::Inval;
  if (name.size() > kNameMax) return Status::NameTooLong;
  if (name == "." || name == ".." || dir.children.count(name)) return Status::Exist;
  return Status::Ok;
}

MemoryVolume::Node& MemoryVolume::make(const fs::OpContext& ctx, Node& dir, uint64_t dir_ino,
                                       std::string_view name, fs::FileType type,
                                       const fs::SetAttr& sa, fs::InodeId* out) {
  uint64_t ino = next_ino_++;
  Node& n = nodes_[ino];
  n.attr.type = type;
  n.attr.mode = type == fs::FileType::Dir ? 0755 : 0644;
  n.attr.nlink = type == fs::FileType::Dir ? 2 : 1;
  n.attr.uid = ctx.cred.uid;
  n.attr.gid = ctx.cred.gid;
  n.attr.fsid = id_;
  n.attr.fileid = ino;
  n.attr.atime = n.attr.mtime = n.attr.ctime = tick();
  n.parent = dir_ino;
  fs::SetAttr initial = sa;
  initial.uid.reset();  // the creator owns what it makes
  initial.gid.reset();
  if (type != fs::FileType::Reg) initial.size.reset();
  apply(n, initial);
  dir.children.emplace(std::string(name), ino);
  if (type == fs::FileType::Dir) dir.attr.nlink++;
  touch(dir, true);
  *out = {ino, n.gen};
  return n;
}

Status MemoryVolume::create(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                            fs::CreateMode mode, const fs::SetAttr& sa, uint64_t verifier,
                            fs::InodeId* out, std::optional<fs::Attr>* obj_attr,
                            fs::Wcc* dir_wcc) {
  std::lock_guard lock(mu_);
  Node* d = nullptr;
  Status st = find_dir(dir, &d);
  if (st != Status::Ok) return st;
  dir_wcc->before = pre(*d);
  dir_wcc->after = d->attr;
  if (sa.size && *sa.size > kMaxFileSize) return Status::FBig;
  auto existing = d->children.find(name);
  if (existing != d->children.end()) {
    Node& n = nodes_.at(existing->second);
    bool same_exclusive = mode == fs::CreateMode::Exclusive && n.create_verf == verifier;
    bool reuse = mode == fs::CreateMode::Unchecked && n.attr.type == fs::FileType::Reg;
    if (!same_exclusive && !reuse) return Status::Exist;
    if (reuse && sa.size) apply(n, sa);
    *out = {existing->second, n.gen};
    *obj_attr = n.attr;
    return Status::Ok;
  }
  st = check_new_name(ctx, *d, name);
  if (st != Status::Ok) return st;
  Node& n = make(ctx, *d, dir.ino, name, fs::FileType::Reg, sa, out);
  if (mode == fs::CreateMode::Exclusive) n.create_verf = verifier;
  *obj_attr = n.attr;
  dir_wcc->after = d->attr;
  return Status::Ok;
}

Status MemoryVolume::mkdir(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                           const fs::SetAttr& sa, fs::InodeId* out,
                           std::optional<fs::Attr>* obj_attr, fs::Wcc* dir_wcc) {
  std::lock_guard lock(mu_);
  Node* d = nullptr;
  Status st = find_dir(dir, &d);
  if (st != Status::Ok) return st;
  dir_wcc->before = pre(*d);
  dir_wcc->after = d->attr;
  if ((st = check_new_name(ctx, *d, name)) != Status::Ok) return st;
  *obj_attr = make(ctx, *d, dir.ino, name, fs::FileType::Dir, sa, out).attr;
  dir_wcc->after = d->attr;
  return Status::Ok;
}

Status MemoryVolume::symlink(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                             std::string_view target, const fs::SetAttr& sa, fs::InodeId* out,
                             std::optional<fs::Attr>* obj_attr, fs::Wcc* dir_wcc) {
  std::lock_guard lock(mu_);
  Node* d = nullptr;
  Status st = find_dir(dir, &d);
  if (st != Status::Ok) return st;
  dir_wcc->before = pre(*d);
  dir_wcc->after = d->attr;
  if ((st = check_new_name(ctx, *d, name)) != Status::Ok) return st;
  Node& n = make(ctx, *d, dir.ino, name, fs::FileType::Lnk, sa, out);
  n.target = std::string(target);
  n.attr.size = target.size();
  *obj_attr = n.attr;
  dir_wcc->after = d->attr;
  return Status::Ok;
}

Status MemoryVolume::mknod(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                           fs::FileType type, const fs::SetAttr& sa, uint32_t rdev_major,
                           uint32_t rdev_minor, fs::InodeId* out,
                           std::optional<fs::Attr>* obj_attr, fs::Wcc* dir_wcc) {
  std::lock_guard lock(mu_);
  if (type != fs::FileType::Chr && type != fs::FileType::Blk && type != fs::FileType::Sock &&
      type != fs::FileType::Fifo)
    return Status::BadType;
  Node* d = nullptr;
  Status st = find_dir(dir, &d);
  if (st != Status::Ok) return st;
  dir_wcc->before = pre(*d);
  dir_wcc->after = d->attr;
  if ((st = check_new_name(ctx, *d, name)) != Status::Ok) return st;
  Node& n = make(ctx, *d, dir.ino, name, type, sa, out);
  n.attr.rdev_major = rdev_major;
  n.attr.rdev_minor = rdev_minor;
  *obj_attr = n.attr;
  dir_wcc->after = d->attr;
  return Status::Ok;
}

void MemoryVolume::drop_link(uint64_t ino) {
  Node& n = nodes_.at(ino);
  if (n.attr.type == fs::FileType::Dir || --n.attr.nlink == 0) nodes_.erase(ino);
  else touch(n, false);
}

Status MemoryVolume::remove(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                            fs::Wcc* dir_wcc) {
  std::lock_guard lock(mu_);
  Node* d = nullptr;
  Status st = find_dir(dir, &d);
  if (st != Status::Ok) return st;
  dir_wcc->before = pre(*d);
  dir_wcc->after = d->attr;
  if (!allowed(ctx.cred, *d, kW | kX)) return Status::Access;
  auto it = d->children.find(name);
  if (it == d->children.end()) return Status::NoEnt;
  if (nodes_.at(it->second).attr.type == fs::FileType::Dir) return Status::IsDir;
  uint64_t ino = it->second;
  d->children.erase(it);
  drop_link(ino);
  touch(*d, true);
  dir_wcc->after = d->attr;
  return Status::Ok;
}

Status MemoryVolume::rmdir(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                           fs::Wcc* dir_wcc) {
  std::lock_guard lock(mu_);
  Node* d = nullptr;
  Status st = find_dir(dir, &d);
  if (st != Status::Ok) return st;
  dir_wcc->before = pre(*d);
  dir_wcc->after = d->attr;
  if (!allowed(ctx.cred, *d, kW | kX)) return Status::Access;
  if (name == ".") return Status::Inval;
  if (name == "..") return Status::NotEmpty;
  auto it = d->children.find(name);
  if (it == d->children.end()) return Status::NoEnt;
  Node& victim = nodes_.at(it->second);
  if (victim.attr.type != fs::FileType::Dir) return Status::NotDir;
  if (!victim.children.empty()) return Status::NotEmpty;
  uint64_t ino = it->second;
  d->children.erase(it);
  d->attr.nlink--;
  drop_link(ino);
  touch(*d, true);
  dir_wcc->after = d->attr;
  return Status::Ok;
}

Status MemoryVolume::rename(const fs::OpContext& ctx, fs::InodeId from_dir,
                            std::string_view from_name, fs::InodeId to_dir,
                            std::string_view to_name, fs::Wcc* from_wcc, fs::Wcc* to_wcc) {
  std::lock_guard lock(mu_);
  Node *from = nullptr, *to = nullptr;
  Status st = find_dir(from_dir, &from);
  if (st == Status::Ok) st = find_dir(to_dir, &to);
  if (st != Status::Ok) return st;
  from_wcc->before = pre(*from);
  to_wcc->before = pre(*to);
  from_wcc->after = from->attr;
  to_wcc->after = to->attr;
  if (!allowed(ctx.cred, *from, kW | kX) || !allowed(ctx.cred, *to, kW | kX)) return Status::Access;
  if (to_name.empty() || to_name == "." || to_name == "..") return Status::Inval;
  if (to_name.size() > kNameMax) return Status::NameTooLong;
  auto src = from->children.find(from_name);
  if (src == from->children.end()) return Status::NoEnt;
  const uint64_t ino = src->second;
  Node& moving = nodes_.at(ino);
  const bool moving_dir = moving.attr.type == fs::FileType::Dir;
  // A directory may not move below itself.
  for (uint64_t a = to_dir.ino; moving_dir; a = nodes_.at(a).parent) {
    if (a == ino) return Status::Inval;
    if (a == kRootIno) break;
  }
  auto dst = to->children.find(to_name);
  if (dst != to->children.end()) {
    if (dst->second == ino) return Status::Ok;  // renaming a name onto itself changes nothing
    Node& victim = nodes_.at(dst->second);
    const bool victim_dir = victim.attr.type == fs::FileType::Dir;
    if (victim_dir && !moving_dir) return Status::IsDir;
    if (!victim_dir && moving_dir) return Status::NotDir;
    if (victim_dir && !victim.children.empty()) return Status::NotEmpty;
    uint64_t victim_ino = dst->second;
    to->children.erase(dst);
    if (victim_dir) to->attr.nlink--;
    drop_link(victim_ino);
  }
  from->children.erase(std::string(from_name));
  to->children.emplace(std::string(to_name), ino);
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
  return Status::Ok;
}

Status MemoryVolume::link(const fs::OpContext& ctx, fs::InodeId file, fs::InodeId dir,
                          std::string_view name, std::optional<fs::Attr>* file_attr,
                          fs::Wcc* dir_wcc) {
  std::lock_guard lock(mu_);
  Node* f = find(file);
  if (!f) return Status::Stale;
  *file_attr = f->attr;
  Node* d = nullptr;
  Status st = find_dir(dir, &d);
  if (st != Status::Ok) return st;
  dir_wcc->before = pre(*d);
  dir_wcc->after = d->attr;
  if (f->attr.type == fs::FileType::Dir) return Status::IsDir;
  if ((st = check_new_name(ctx, *d, name)) != Status::Ok) return st;
  if (f->attr.nlink >= limits().link_max) return Status::MLink;
  d->children.emplace(std::string(name), file.ino);
  f->attr.nlink++;
  touch(*f, false);
  touch(*d, true);
  *file_attr = f->attr;
  dir_wcc->after = d->attr;
  return Status::Ok;
}

Status MemoryVolume::readdir(const fs::OpContext& ctx, fs::InodeId dir, uint64_t cookie,
                             uint64_t cookieverf, uint32_t max_entries, bool with_attrs,
                             fs::ReaddirResult* out) {
  std::lock_guard lock(mu_);
  last_max_entries_ = max_entries;
  Node* d = nullptr;
  Status st = find_dir(dir, &d);
  if (st != Status::Ok) return st;
  out->dir_attr = d->attr;
  if (!allowed(ctx.cred, *d, kR)) return Status::Access;
  if (cookie != 0 && cookieverf != 0 && cookieverf != cookie_verifier(dir.ino))
    return Status::BadCookie;
  // Position i (1-based) is ".", "..", then the children in name order; an entry's cookie is
  // its position, so resuming at cookie c skips c entries.
  std::vector<std::pair<std::string, uint64_t>> all = {{".", dir.ino}, {"..", d->parent}};
  for (const auto& [name, ino] : d->children) all.emplace_back(name, ino);
  if (cookie > all.size()) return Status::BadCookie;
  out->cookieverf = cookie_verifier(dir.ino);
  out->entries.clear();
  for (size_t i = cookie; i < all.size() && out->entries.size() < max_entries; i++) {
    const Node& n = nodes_.at(all[i].second);
    fs::DirEntry e;
    e.name = all[i].first;
    e.fileid = all[i].second;
    e.cookie = i + 1;
    e.id = {all[i].second, n.gen};
    if (with_attrs) e.attr = n.attr;
    out->entries.push_back(std::move(e));
  }
  out->eof = cookie + out->entries.size() >= all.size();
  return Status::Ok;
}

Status MemoryVolume::fsstat(const fs::OpContext&, fs::InodeId id, fs::FsStat* out,
                            std::optional<fs::Attr>* attr) {
  std::lock_guard lock(mu_);
  Node* n = find(id);
  if (!n) return Status::Stale;
  *attr = n->attr;
  uint64_t used = 0;
  for (const auto& [ino, node] : nodes_) used += node.attr.used;
  out->total_bytes = 1ull << 30;
  out->free_bytes = out->avail_bytes = out->total_bytes - std::min(used, out->total_bytes);
  out->total_files = 1u << 20;
  out->free_files = out->avail_files = out->total_files - nodes_.size();
  out->invarsec = 0;
  return Status::Ok;
}

Status MemoryVolume::commit(const fs::OpContext&, fs::InodeId id, uint64_t, uint32_t,
                            fs::Wcc* wcc) {
  std::lock_guard lock(mu_);
  Node* n = find(id);
  if (!n) return Status::Stale;
  wcc->before = pre(*n);
  wcc->after = n->attr;
  return n->attr.type == fs::FileType::Reg ? Status::Ok : Status::Inval;
}

}  // namespace nasd::nfs::fixture
