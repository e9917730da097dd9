#include "tests/cluster/echo_volume.h"

#include <thread>

namespace nasd::cluster::testing {

// Order-sensitive mix of every input; also derives the outputs from the running value.
class EchoVolume::Hash {
 public:
  Hash(const char* op, const fs::OpContext& ctx) {
    add(std::string_view(op));
    add(ctx.cred.uid);
    add(ctx.cred.gid);
    for (uint32_t g : ctx.cred.gids) add(g);
  }

  Hash& add(uint64_t v) {
    h_ = (h_ ^ v) * 0x100000001b3ull;
    h_ ^= h_ >> 29;
    return *this;
  }
  Hash& add(std::string_view s) {
    add(s.size());
    for (unsigned char c : s) add(c);
    return *this;
  }
  Hash& add(std::span<const uint8_t> b) {
    add(b.size());
    for (uint8_t c : b) add(c);
    return *this;
  }
  Hash& add(fs::InodeId id) { return add(id.ino).add(id.gen); }
  Hash& add(fs::Time t) { return add(static_cast<uint64_t>(t.sec)).add(t.nsec); }
  template <class T>
  Hash& add(const std::optional<T>& v) {
    add(v.has_value());
    if (v) add(*v);
    return *this;
  }
  Hash& add(const fs::SetAttr& sa) {
    add(sa.mode).add(sa.uid).add(sa.gid).add(sa.size);
    add(static_cast<uint64_t>(sa.atime_how)).add(sa.atime);
    return add(static_cast<uint64_t>(sa.mtime_how)).add(sa.mtime);
  }

  uint64_t value() const { return h_; }
  // The next pseudo-random output word (advances the state).
  uint64_t next() { return add(0x9e3779b97f4a7c15ull).value(); }

  fs::Attr attr() {
    fs::Attr a;
    a.type = static_cast<fs::FileType>(1 + next() % 7);
    a.mode = next() & 07777;
    a.nlink = static_cast<uint32_t>(next());
    a.uid = static_cast<uint32_t>(next());
    a.gid = static_cast<uint32_t>(next());
    a.size = next();
    a.used = next();
    a.rdev_major = static_cast<uint32_t>(next());
    a.rdev_minor = static_cast<uint32_t>(next());
    a.fsid = next();
    a.fileid = next();
    a.atime = time();
    a.mtime = time();
    a.ctime = time();
    return a;
  }
  fs::Time time() {
    return {static_cast<int64_t>(next()), static_cast<uint32_t>(next() % 1000000000)};
  }
  std::optional<fs::Attr> maybe_attr() {
    if (next() % 4 == 0) return std::nullopt;
    return attr();
  }
  fs::InodeId inode() { return {next(), static_cast<uint32_t>(next())}; }
  fs::Wcc wcc() {
    fs::Wcc w;
    if (next() % 3 != 0) w.before = fs::PreAttr{next(), time(), time()};
    w.after = maybe_attr();
    return w;
  }

 private:
  uint64_t h_ = 0xcbf29ce484222325ull;
};

fs::Status EchoVolume::finish(uint64_t input_hash) {
  ++calls_;
  last_hash_ = input_hash;
  if (int64_t ms = delay_ms_.load(); ms > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  }
  return status_.load();
}

fs::VolumeLimits EchoVolume::limits() const {
  return {uint64_t{1} << 40, 8192, 1000, 200, {0, 1000}};
}

fs::Status EchoVolume::getattr(const fs::OpContext& ctx, fs::InodeId id, fs::Attr* out) {
  Hash h("getattr", ctx);
  h.add(id);
  uint64_t in = h.value();
  *out = h.attr();
  return finish(in);
}

fs::Status EchoVolume::setattr(const fs::OpContext& ctx, fs::InodeId id, const fs::SetAttr& sa,
                               std::optional<fs::Time> guard_ctime, fs::Wcc* wcc) {
  Hash h("setattr", ctx);
  h.add(id).add(sa).add(guard_ctime);
  uint64_t in = h.value();
  *wcc = h.wcc();
  return finish(in);
}

fs::Status EchoVolume::lookup(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                              fs::InodeId* out, std::optional<fs::Attr>* obj_attr,
                              std::optional<fs::Attr>* dir_attr) {
  Hash h("lookup", ctx);
  h.add(dir).add(name);
  uint64_t in = h.value();
  *out = h.inode();
  *obj_attr = h.maybe_attr();
  *dir_attr = h.maybe_attr();
  return finish(in);
}

fs::Status EchoVolume::access(const fs::OpContext& ctx, fs::InodeId id, uint32_t requested,
                              uint32_t* granted, std::optional<fs::Attr>* attr) {
  Hash h("access", ctx);
  h.add(id).add(requested);
  uint64_t in = h.value();
  *granted = static_cast<uint32_t>(h.next()) & requested;
  *attr = h.maybe_attr();
  return finish(in);
}

fs::Status EchoVolume::readlink(const fs::OpContext& ctx, fs::InodeId id, std::string* target,
                                std::optional<fs::Attr>* attr) {
  Hash h("readlink", ctx);
  h.add(id);
  uint64_t in = h.value();
  *target = "/target/" + std::to_string(h.next());
  *attr = h.maybe_attr();
  return finish(in);
}

fs::Status EchoVolume::read(const fs::OpContext& ctx, fs::InodeId id, uint64_t offset,
                            uint32_t count, std::vector<uint8_t>* data, bool* eof,
                            std::optional<fs::Attr>* attr) {
  Hash h("read", ctx);
  h.add(id).add(offset).add(count);
  uint64_t in = h.value();
  data->resize(count);
  for (auto& b : *data) b = static_cast<uint8_t>(h.next());
  *eof = h.next() % 2 == 0;
  *attr = h.maybe_attr();
  return finish(in);
}

fs::Status EchoVolume::write(const fs::OpContext& ctx, fs::InodeId id, uint64_t offset,
                             std::span<const uint8_t> data, fs::Stability stable,
                             fs::Stability* committed, fs::Wcc* wcc) {
  Hash h("write", ctx);
  h.add(id).add(offset).add(data).add(static_cast<uint64_t>(stable));
  uint64_t in = h.value();
  *committed = static_cast<fs::Stability>(h.next() % 3);
  *wcc = h.wcc();
  return finish(in);
}

fs::Status EchoVolume::create(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                              fs::CreateMode mode, const fs::SetAttr& sa, uint64_t verifier,
                              fs::InodeId* out, std::optional<fs::Attr>* obj_attr,
                              fs::Wcc* dir_wcc) {
  Hash h("create", ctx);
  h.add(dir).add(name).add(static_cast<uint64_t>(mode)).add(sa).add(verifier);
  uint64_t in = h.value();
  *out = h.inode();
  *obj_attr = h.maybe_attr();
  *dir_wcc = h.wcc();
  return finish(in);
}

fs::Status EchoVolume::mkdir(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                             const fs::SetAttr& sa, fs::InodeId* out,
                             std::optional<fs::Attr>* obj_attr, fs::Wcc* dir_wcc) {
  Hash h("mkdir", ctx);
  h.add(dir).add(name).add(sa);
  uint64_t in = h.value();
  *out = h.inode();
  *obj_attr = h.maybe_attr();
  *dir_wcc = h.wcc();
  return finish(in);
}

fs::Status EchoVolume::symlink(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                               std::string_view target, const fs::SetAttr& sa, fs::InodeId* out,
                               std::optional<fs::Attr>* obj_attr, fs::Wcc* dir_wcc) {
  Hash h("symlink", ctx);
  h.add(dir).add(name).add(target).add(sa);
  uint64_t in = h.value();
  *out = h.inode();
  *obj_attr = h.maybe_attr();
  *dir_wcc = h.wcc();
  return finish(in);
}

fs::Status EchoVolume::mknod(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                             fs::FileType type, const fs::SetAttr& sa, uint32_t rdev_major,
                             uint32_t rdev_minor, fs::InodeId* out,
                             std::optional<fs::Attr>* obj_attr, fs::Wcc* dir_wcc) {
  Hash h("mknod", ctx);
  h.add(dir).add(name).add(static_cast<uint64_t>(type)).add(sa).add(rdev_major).add(rdev_minor);
  uint64_t in = h.value();
  *out = h.inode();
  *obj_attr = h.maybe_attr();
  *dir_wcc = h.wcc();
  return finish(in);
}

fs::Status EchoVolume::remove(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                              fs::Wcc* dir_wcc) {
  Hash h("remove", ctx);
  h.add(dir).add(name);
  uint64_t in = h.value();
  *dir_wcc = h.wcc();
  return finish(in);
}

fs::Status EchoVolume::rmdir(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                             fs::Wcc* dir_wcc) {
  Hash h("rmdir", ctx);
  h.add(dir).add(name);
  uint64_t in = h.value();
  *dir_wcc = h.wcc();
  return finish(in);
}

fs::Status EchoVolume::rename(const fs::OpContext& ctx, fs::InodeId from_dir,
                              std::string_view from_name, fs::InodeId to_dir,
                              std::string_view to_name, fs::Wcc* from_wcc, fs::Wcc* to_wcc) {
  Hash h("rename", ctx);
  h.add(from_dir).add(from_name).add(to_dir).add(to_name);
  uint64_t in = h.value();
  *from_wcc = h.wcc();
  *to_wcc = h.wcc();
  return finish(in);
}

fs::Status EchoVolume::link(const fs::OpContext& ctx, fs::InodeId file, fs::InodeId dir,
                            std::string_view name, std::optional<fs::Attr>* file_attr,
                            fs::Wcc* dir_wcc) {
  Hash h("link", ctx);
  h.add(file).add(dir).add(name);
  uint64_t in = h.value();
  *file_attr = h.maybe_attr();
  *dir_wcc = h.wcc();
  return finish(in);
}

fs::Status EchoVolume::readdir(const fs::OpContext& ctx, fs::InodeId dir, uint64_t cookie,
                               uint64_t cookieverf, uint32_t max_entries, bool with_attrs,
                               fs::ReaddirResult* out) {
  Hash h("readdir", ctx);
  h.add(dir).add(cookie).add(cookieverf).add(max_entries).add(with_attrs);
  uint64_t in = h.value();
  out->entries.clear();
  for (uint32_t i = 0; i < max_entries; ++i) {
    fs::DirEntry e;
    e.name = "entry-" + std::to_string(h.next() % 100000);
    e.fileid = h.next();
    e.cookie = h.next();
    e.id = h.inode();
    if (with_attrs) e.attr = h.attr();
    out->entries.push_back(std::move(e));
  }
  out->cookieverf = h.next();
  out->eof = h.next() % 2 == 0;
  out->dir_attr = h.maybe_attr();
  return finish(in);
}

fs::Status EchoVolume::fsstat(const fs::OpContext& ctx, fs::InodeId id, fs::FsStat* out,
                              std::optional<fs::Attr>* attr) {
  Hash h("fsstat", ctx);
  h.add(id);
  uint64_t in = h.value();
  *out = {h.next(), h.next(), h.next(), h.next(), h.next(), h.next(),
          static_cast<uint32_t>(h.next())};
  *attr = h.maybe_attr();
  return finish(in);
}

fs::Status EchoVolume::commit(const fs::OpContext& ctx, fs::InodeId id, uint64_t offset,
                              uint32_t count, fs::Wcc* wcc) {
  Hash h("commit", ctx);
  h.add(id).add(offset).add(count);
  uint64_t in = h.value();
  *wcc = h.wcc();
  return finish(in);
}

}  // namespace nasd::cluster::testing
