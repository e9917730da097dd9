#include "tests/nvram/mem_target.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

namespace nasd::nvram::testing {

using fs::Status;

namespace {

fs::Time now() {
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count();
  return fs::Time{ns / 1000000000, static_cast<uint32_t>(ns % 1000000000)};
}

template <typename T>
void put(std::string& out, const T& v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}
void put_bytes(std::string& out, const void* p, uint64_t n) {
  put(out, n);
  out.append(static_cast<const char*>(p), n);
}
template <typename T>
bool get(std::istream& in, T* v) {
  return static_cast<bool>(in.read(reinterpret_cast<char*>(v), sizeof *v));
}
bool get_string(std::istream& in, std::string* s) {
  uint64_t n;
  if (!get(in, &n) || n > (1u << 30)) return false;
  s->resize(n);
  return static_cast<bool>(in.read(s->data(), static_cast<std::streamsize>(n)));
}

}  // namespace

MemTarget::MemTarget(uint32_t id, std::string persist_path)
    : id_(id), persist_path_(std::move(persist_path)), verifier_(std::random_device{}() | 1) {
  if (persist_path_.empty() || !load(&durable_)) {
    Node root;
    root.type = fs::FileType::Dir;
    root.mode = 0777;
    root.nlink = 2;
    durable_.nodes[1] = root;
  }
  live_ = durable_;
}

void MemTarget::crash() {
  std::lock_guard lk(mu_);
  live_ = durable_;
}

std::vector<uint64_t> MemTarget::applied_seqs() const {
  std::lock_guard lk(mu_);
  return applied_;
}

uint64_t MemTarget::flushes() const {
  std::lock_guard lk(mu_);
  return flushes_;
}

void MemTarget::set_flush_delay(std::chrono::milliseconds d) {
  std::lock_guard lk(mu_);
  flush_delay_ = d;
}

size_t MemTarget::object_count() const {
  std::lock_guard lk(mu_);
  return live_.nodes.size();
}

uint64_t MemTarget::durable_seq() const {
  std::lock_guard lk(mu_);
  return durable_.applied_seq;
}

Status MemTarget::flush(uint64_t* durable_seq) {
  std::chrono::milliseconds delay;
  State snapshot;
  {
    std::lock_guard lk(mu_);
    delay = flush_delay_;
    snapshot = live_;
  }
  if (delay.count() > 0) std::this_thread::sleep_for(delay);
  if (!persist_path_.empty()) save(snapshot);
  std::lock_guard lk(mu_);
  // Only move forward: a concurrent flush may already have made a later state durable.
  if (snapshot.applied_seq >= durable_.applied_seq) durable_ = std::move(snapshot);
  ++flushes_;
  *durable_seq = durable_.applied_seq;
  return Status::Ok;
}

void MemTarget::save(const State& s) const {
  std::string out;
  put(out, s.next_ino);
  put(out, s.applied_seq);
  put(out, static_cast<uint64_t>(s.nodes.size()));
  for (const auto& [ino, n] : s.nodes) {
    put(out, ino);
    put(out, n.gen);
    put(out, n.type);
    put(out, n.mode);
    put(out, n.uid);
    put(out, n.gid);
    put(out, n.nlink);
    put(out, n.rdev_major);
    put(out, n.rdev_minor);
    put(out, n.verifier);
    put(out, n.atime);
    put(out, n.mtime);
    put(out, n.ctime);
    put_bytes(out, n.data.data(), n.data.size());
    put_bytes(out, n.target.data(), n.target.size());
    put(out, static_cast<uint64_t>(n.entries.size()));
    for (const auto& [name, child] : n.entries) {
      put_bytes(out, name.data(), name.size());
      put(out, child);
    }
  }
  const std::string tmp = persist_path_ + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f.write(out.data(), static_cast<std::streamsize>(out.size()));
  }
  std::rename(tmp.c_str(), persist_path_.c_str());
}

bool MemTarget::load(State* s) const {
  std::ifstream f(persist_path_, std::ios::binary);
  if (!f) return false;
  State st;
  uint64_t count;
  if (!get(f, &st.next_ino) || !get(f, &st.applied_seq) || !get(f, &count)) return false;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t ino;
    Node n;
    std::string data;
    uint64_t entries;
    if (!get(f, &ino) || !get(f, &n.gen) || !get(f, &n.type) || !get(f, &n.mode) ||
        !get(f, &n.uid) || !get(f, &n.gid) || !get(f, &n.nlink) || !get(f, &n.rdev_major) ||
        !get(f, &n.rdev_minor) || !get(f, &n.verifier) || !get(f, &n.atime) ||
        !get(f, &n.mtime) || !get(f, &n.ctime) || !get_string(f, &data) ||
        !get_string(f, &n.target) || !get(f, &entries))
      return false;
    n.data.assign(data.begin(), data.end());
    for (uint64_t e = 0; e < entries; ++e) {
      std::string name;
      uint64_t child;
      if (!get_string(f, &name) || !get(f, &child)) return false;
      n.entries[name] = child;
    }
    st.nodes[ino] = std::move(n);
  }
  *s = std::move(st);
  return true;
}

fs::VolumeLimits MemTarget::limits() const {
  fs::VolumeLimits l;
  l.max_file_size = 1ull << 40;
  return l;
}

MemTarget::Node* MemTarget::find(fs::InodeId id) {
  auto it = live_.nodes.find(id.ino);
  if (it == live_.nodes.end() || it->second.gen != id.gen) return nullptr;
  return &it->second;
}

MemTarget::Node* MemTarget::find_dir(fs::InodeId id, Status* st) {
  Node* n = find(id);
  if (n == nullptr) {
    *st = Status::Stale;
    return nullptr;
  }
  if (n->type != fs::FileType::Dir) {
    *st = Status::NotDir;
    return nullptr;
  }
  return n;
}

fs::Attr MemTarget::attr_of(uint64_t ino, const Node& n) const {
  fs::Attr a;
  a.type = n.type;
  a.mode = n.mode;
  a.nlink = n.nlink;
  a.uid = n.uid;
  a.gid = n.gid;
  a.size = n.type == fs::FileType::Lnk ? n.target.size() : n.data.size();
  a.used = a.size;
  a.rdev_major = n.rdev_major;
  a.rdev_minor = n.rdev_minor;
  a.fsid = id_;
  a.fileid = ino;
  a.atime = n.atime;
  a.mtime = n.mtime;
  a.ctime = n.ctime;
  return a;
}

fs::PreAttr MemTarget::pre_of(const Node& n) const {
  return fs::PreAttr{n.data.size(), n.mtime, n.ctime};
}

void MemTarget::note_applied(const fs::OpContext& ctx) {
  if (ctx.journal_seq == 0) return;
  applied_.push_back(ctx.journal_seq);
  if (ctx.journal_seq > live_.applied_seq) live_.applied_seq = ctx.journal_seq;
}

void MemTarget::apply_sattr(Node* n, const fs::SetAttr& sa) {
  if (sa.mode) n->mode = *sa.mode & 07777;
  if (sa.uid) n->uid = *sa.uid;
  if (sa.gid) n->gid = *sa.gid;
  if (sa.size && n->type == fs::FileType::Reg) n->data.resize(*sa.size);
  if (sa.atime_how == fs::TimeHow::ClientTime) n->atime = sa.atime;
  if (sa.atime_how == fs::TimeHow::ServerTime) n->atime = now();
  if (sa.mtime_how == fs::TimeHow::ClientTime) n->mtime = sa.mtime;
  if (sa.mtime_how == fs::TimeHow::ServerTime) n->mtime = now();
  n->ctime = now();
}

void MemTarget::drop_link(uint64_t ino) {
  auto it = live_.nodes.find(ino);
  if (it == live_.nodes.end()) return;
  Node& n = it->second;
  if (n.type == fs::FileType::Dir || --n.nlink == 0) live_.nodes.erase(it);
}

Status MemTarget::getattr(const fs::OpContext&, fs::InodeId id, fs::Attr* out) {
  std::lock_guard lk(mu_);
  Node* n = find(id);
  if (n == nullptr) return Status::Stale;
  *out = attr_of(id.ino, *n);
  return Status::Ok;
}

Status MemTarget::setattr(const fs::OpContext& ctx, fs::InodeId id, const fs::SetAttr& sa,
                          std::optional<fs::Time> guard_ctime, fs::Wcc* wcc) {
  std::lock_guard lk(mu_);
  Node* n = find(id);
  if (n == nullptr) return Status::Stale;
  if (guard_ctime && !(*guard_ctime == n->ctime)) return Status::NotSync;
  wcc->before = pre_of(*n);
  apply_sattr(n, sa);
  wcc->after = attr_of(id.ino, *n);
  note_applied(ctx);
  return Status::Ok;
}

Status MemTarget::lookup(const fs::OpContext&, fs::InodeId dir, std::string_view name,
                         fs::InodeId* out, std::optional<fs::Attr>* obj_attr,
                         std::optional<fs::Attr>* dir_attr) {
  std::lock_guard lk(mu_);
  Status st;
  Node* d = find_dir(dir, &st);
  if (d == nullptr) return st;
  *dir_attr = attr_of(dir.ino, *d);
  auto it = d->entries.find(std::string(name));
  if (it == d->entries.end()) return Status::NoEnt;
  const Node& n = live_.nodes.at(it->second);
  *out = {it->second, n.gen};
  *obj_attr = attr_of(it->second, n);
  return Status::Ok;
}

Status MemTarget::access(const fs::OpContext&, fs::InodeId id, uint32_t requested,
                         uint32_t* granted, std::optional<fs::Attr>* attr) {
  std::lock_guard lk(mu_);
  Node* n = find(id);
  if (n == nullptr) return Status::Stale;
  *granted = requested;
  *attr = attr_of(id.ino, *n);
  return Status::Ok;
}

Status MemTarget::readlink(const fs::OpContext&, fs::InodeId id, std::string* target,
                           std::optional<fs::Attr>* attr) {
  std::lock_guard lk(mu_);
  Node* n = find(id);
  if (n == nullptr) return Status::Stale;
  if (n->type != fs::FileType::Lnk) return Status::Inval;
  *target = n->target;
  *attr = attr_of(id.ino, *n);
  return Status::Ok;
}

Status MemTarget::read(const fs::OpContext&, fs::InodeId id, uint64_t offset, uint32_t count,
                       std::vector<uint8_t>* data, bool* eof, std::optional<fs::Attr>* attr) {
  std::lock_guard lk(mu_);
  Node* n = find(id);
  if (n == nullptr) return Status::Stale;
  if (n->type != fs::FileType::Reg) return Status::IsDir;
  const uint64_t size = n->data.size();
  const uint64_t start = std::min(offset, size), end = std::min(size, offset + count);
  data->assign(n->data.begin() + static_cast<long>(start), n->data.begin() + static_cast<long>(end));
  *eof = end >= size;
  *attr = attr_of(id.ino, *n);
  return Status::Ok;
}

Status MemTarget::write(const fs::OpContext& ctx, fs::InodeId id, uint64_t offset,
                        std::span<const uint8_t> data, fs::Stability stable,
                        fs::Stability* committed, fs::Wcc* wcc) {
  std::lock_guard lk(mu_);
  Node* n = find(id);
  if (n == nullptr) return Status::Stale;
  if (n->type != fs::FileType::Reg) return Status::IsDir;
  if (offset + data.size() > limits().max_file_size) return Status::FBig;
  wcc->before = pre_of(*n);
  if (n->data.size() < offset + data.size()) n->data.resize(offset + data.size());
  std::memcpy(n->data.data() + offset, data.data(), data.size());
  n->mtime = n->ctime = now();
  *committed = stable;  // a lie for the double: it is only durable at flush()
  wcc->after = attr_of(id.ino, *n);
  note_applied(ctx);
  return Status::Ok;
}

Status MemTarget::make_node(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                            Node node, bool exclusive_ok, fs::InodeId* out,
                            std::optional<fs::Attr>* obj_attr, fs::Wcc* dir_wcc) {
  Status st;
  Node* d = find_dir(dir, &st);
  if (d == nullptr) return st;
  if (name.empty() || name.size() > 255 || name.find('/') != std::string_view::npos)
    return Status::Inval;
  auto existing = d->entries.find(std::string(name));
  if (existing != d->entries.end()) {
    Node& e = live_.nodes.at(existing->second);
    if (!exclusive_ok || e.verifier != node.verifier) return Status::Exist;
    *out = {existing->second, e.gen};  // a retried exclusive CREATE
    *obj_attr = attr_of(existing->second, e);
    note_applied(ctx);
    return Status::Ok;
  }
  uint64_t ino;
  if (ctx.forced_inode) {
    ino = ctx.forced_inode->ino;
    node.gen = ctx.forced_inode->gen;
    if (live_.nodes.count(ino) != 0) return Status::ServerFault;
    live_.next_ino = std::max(live_.next_ino, ino + 1);
  } else {
    ino = live_.next_ino++;
  }
  dir_wcc->before = pre_of(*d);
  node.atime = node.mtime = node.ctime = now();
  if (node.type == fs::FileType::Dir) d->nlink++;
  live_.nodes[ino] = std::move(node);  // std::map: `d` stays valid
  d->entries[std::string(name)] = ino;
  d->mtime = d->ctime = now();
  *out = {ino, live_.nodes[ino].gen};
  *obj_attr = attr_of(ino, live_.nodes[ino]);
  dir_wcc->after = attr_of(dir.ino, *d);
  note_applied(ctx);
  return Status::Ok;
}

Status MemTarget::create(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                         fs::CreateMode mode, const fs::SetAttr& sa, uint64_t verifier,
                         fs::InodeId* out, std::optional<fs::Attr>* obj_attr, fs::Wcc* dir_wcc) {
  std::lock_guard lk(mu_);
  Node n;
  n.uid = ctx.cred.uid;
  n.gid = ctx.cred.gid;
  apply_sattr(&n, sa);
  n.verifier = mode == fs::CreateMode::Exclusive ? verifier : 0;
  if (mode == fs::CreateMode::Unchecked) {
    Status st;
    Node* d = find_dir(dir, &st);
    if (d == nullptr) return st;
    auto it = d->entries.find(std::string(name));
    if (it != d->entries.end()) {  // UNCHECKED on an existing file: apply the attributes
      Node& e = live_.nodes.at(it->second);
      dir_wcc->before = pre_of(*d);
      if (sa.size) e.data.resize(*sa.size);
      *out = {it->second, e.gen};
      *obj_attr = attr_of(it->second, e);
      dir_wcc->after = attr_of(dir.ino, *d);
      note_applied(ctx);
      return Status::Ok;
    }
  }
  return make_node(ctx, dir, name, std::move(n), mode == fs::CreateMode::Exclusive, out, obj_attr,
                   dir_wcc);
}

Status MemTarget::mkdir(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                        const fs::SetAttr& sa, fs::InodeId* out, std::optional<fs::Attr>* obj_attr,
                        fs::Wcc* dir_wcc) {
  std::lock_guard lk(mu_);
  Node n;
  n.type = fs::FileType::Dir;
  n.mode = 0755;
  n.nlink = 2;
  n.uid = ctx.cred.uid;
  n.gid = ctx.cred.gid;
  apply_sattr(&n, sa);
  return make_node(ctx, dir, name, std::move(n), false, out, obj_attr, dir_wcc);
}

Status MemTarget::symlink(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                          std::string_view target, const fs::SetAttr& sa, fs::InodeId* out,
                          std::optional<fs::Attr>* obj_attr, fs::Wcc* dir_wcc) {
  std::lock_guard lk(mu_);
  Node n;
  n.type = fs::FileType::Lnk;
  n.mode = 0777;
  n.target = target;
  n.uid = ctx.cred.uid;
  n.gid = ctx.cred.gid;
  return make_node(ctx, dir, name, std::move(n), false, out, obj_attr, dir_wcc);
}

Status MemTarget::mknod(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                        fs::FileType type, const fs::SetAttr& sa, uint32_t rdev_major,
                        uint32_t rdev_minor, fs::InodeId* out, std::optional<fs::Attr>* obj_attr,
                        fs::Wcc* dir_wcc) {
  if (type != fs::FileType::Chr && type != fs::FileType::Blk && type != fs::FileType::Sock &&
      type != fs::FileType::Fifo)
    return Status::BadType;
  std::lock_guard lk(mu_);
  Node n;
  n.type = type;
  n.rdev_major = rdev_major;
  n.rdev_minor = rdev_minor;
  n.uid = ctx.cred.uid;
  n.gid = ctx.cred.gid;
  apply_sattr(&n, sa);
  return make_node(ctx, dir, name, std::move(n), false, out, obj_attr, dir_wcc);
}

Status MemTarget::remove(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                         fs::Wcc* dir_wcc) {
  std::lock_guard lk(mu_);
  Status st;
  Node* d = find_dir(dir, &st);
  if (d == nullptr) return st;
  auto it = d->entries.find(std::string(name));
  if (it == d->entries.end()) return Status::NoEnt;
  if (live_.nodes.at(it->second).type == fs::FileType::Dir) return Status::IsDir;
  dir_wcc->before = pre_of(*d);
  const uint64_t ino = it->second;
  d->entries.erase(it);
  d->mtime = d->ctime = now();
  dir_wcc->after = attr_of(dir.ino, *d);
  drop_link(ino);
  note_applied(ctx);
  return Status::Ok;
}

Status MemTarget::rmdir(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                        fs::Wcc* dir_wcc) {
  std::lock_guard lk(mu_);
  Status st;
  Node* d = find_dir(dir, &st);
  if (d == nullptr) return st;
  auto it = d->entries.find(std::string(name));
  if (it == d->entries.end()) return Status::NoEnt;
  const Node& victim = live_.nodes.at(it->second);
  if (victim.type != fs::FileType::Dir) return Status::NotDir;
  if (!victim.entries.empty()) return Status::NotEmpty;
  dir_wcc->before = pre_of(*d);
  const uint64_t ino = it->second;
  d->entries.erase(it);
  d->nlink--;
  d->mtime = d->ctime = now();
  dir_wcc->after = attr_of(dir.ino, *d);
  drop_link(ino);
  note_applied(ctx);
  return Status::Ok;
}

Status MemTarget::rename(const fs::OpContext& ctx, fs::InodeId from_dir, std::string_view from_name,
                         fs::InodeId to_dir, std::string_view to_name, fs::Wcc* from_wcc,
                         fs::Wcc* to_wcc) {
  std::lock_guard lk(mu_);
  Status st;
  Node* from = find_dir(from_dir, &st);
  if (from == nullptr) return st;
  Node* to = find_dir(to_dir, &st);
  if (to == nullptr) return st;
  auto it = from->entries.find(std::string(from_name));
  if (it == from->entries.end()) return Status::NoEnt;
  const uint64_t ino = it->second;
  auto dst = to->entries.find(std::string(to_name));
  if (dst != to->entries.end()) {
    if (dst->second == ino) return Status::Ok;
    const Node& victim = live_.nodes.at(dst->second);
    if (victim.type == fs::FileType::Dir && !victim.entries.empty()) return Status::NotEmpty;
    const uint64_t old = dst->second;
    to->entries.erase(dst);
    drop_link(old);
  }
  from_wcc->before = pre_of(*from);
  to_wcc->before = pre_of(*to);
  from->entries.erase(std::string(from_name));
  to->entries[std::string(to_name)] = ino;
  from->mtime = from->ctime = to->mtime = to->ctime = now();
  from_wcc->after = attr_of(from_dir.ino, *from);
  to_wcc->after = attr_of(to_dir.ino, *to);
  note_applied(ctx);
  return Status::Ok;
}

Status MemTarget::link(const fs::OpContext& ctx, fs::InodeId file, fs::InodeId dir,
                       std::string_view name, std::optional<fs::Attr>* file_attr,
                       fs::Wcc* dir_wcc) {
  std::lock_guard lk(mu_);
  Node* f = find(file);
  if (f == nullptr) return Status::Stale;
  if (f->type == fs::FileType::Dir) return Status::IsDir;
  Status st;
  Node* d = find_dir(dir, &st);
  if (d == nullptr) return st;
  if (d->entries.count(std::string(name)) != 0) return Status::Exist;
  dir_wcc->before = pre_of(*d);
  d->entries[std::string(name)] = file.ino;
  f->nlink++;
  f->ctime = d->mtime = d->ctime = now();
  *file_attr = attr_of(file.ino, *f);
  dir_wcc->after = attr_of(dir.ino, *d);
  note_applied(ctx);
  return Status::Ok;
}

Status MemTarget::readdir(const fs::OpContext&, fs::InodeId dir, uint64_t cookie, uint64_t,
                          uint32_t max_entries, bool with_attrs, fs::ReaddirResult* out) {
  std::lock_guard lk(mu_);
  Status st;
  Node* d = find_dir(dir, &st);
  if (d == nullptr) return st;
  uint64_t index = 0;
  out->entries.clear();
  out->eof = true;
  for (const auto& [name, ino] : d->entries) {
    ++index;
    if (index <= cookie) continue;
    if (out->entries.size() == max_entries) {
      out->eof = false;
      break;
    }
    const Node& n = live_.nodes.at(ino);
    fs::DirEntry e;
    e.name = name;
    e.fileid = ino;
    e.cookie = index;
    e.id = {ino, n.gen};
    if (with_attrs) e.attr = attr_of(ino, n);
    out->entries.push_back(std::move(e));
  }
  out->dir_attr = attr_of(dir.ino, *d);
  return Status::Ok;
}

Status MemTarget::fsstat(const fs::OpContext&, fs::InodeId id, fs::FsStat* out,
                         std::optional<fs::Attr>* attr) {
  std::lock_guard lk(mu_);
  Node* n = find(id);
  if (n == nullptr) return Status::Stale;
  out->total_bytes = out->free_bytes = out->avail_bytes = 1ull << 40;
  out->total_files = out->free_files = out->avail_files = 1 << 20;
  *attr = attr_of(id.ino, *n);
  return Status::Ok;
}

Status MemTarget::commit(const fs::OpContext&, fs::InodeId id, uint64_t, uint32_t, fs::Wcc* wcc) {
  uint64_t durable;
  flush(&durable);
  std::lock_guard lk(mu_);
  Node* n = find(id);
  if (n == nullptr) return Status::Stale;
  wcc->after = attr_of(id.ino, *n);
  return Status::Ok;
}

}  // namespace nasd::nvram::testing
