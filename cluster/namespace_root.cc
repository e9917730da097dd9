#include "cluster/namespace_root.h"

#include <chrono>

namespace nasd::cluster {
namespace {

fs::Time now() {
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count();
  return fs::Time{ns / 1000000000, static_cast<uint32_t>(ns % 1000000000)};
}

}  // namespace

NamespaceRoot::NamespaceRoot(fs::VolumeResolver* volumes)
    : volumes_(volumes), created_(now()), changed_(created_) {}

void NamespaceRoot::add_entry(const std::string& name, uint32_t volume_id) {
  std::lock_guard lock(mu_);
  entries_.emplace_back(name, volume_id);
  changed_ = now();
}

fs::VolumeLimits NamespaceRoot::limits() const {
  fs::VolumeLimits l;
  l.max_file_size = 0;
  return l;
}

fs::Status NamespaceRoot::check_root(fs::InodeId id) const {
  return id == kRoot ? fs::Status::Ok : fs::Status::Stale;
}

fs::Attr NamespaceRoot::root_attr() const {
  std::lock_guard lock(mu_);
  fs::Attr a;
  a.type = fs::FileType::Dir;
  a.mode = 0555;
  a.nlink = 2;
  a.size = 4096;
  a.used = 4096;
  a.fsid = kVolumeId;
  a.fileid = kRoot.ino;
  a.atime = changed_;
  a.mtime = changed_;
  a.ctime = changed_;
  return a;
}

std::optional<fs::Attr> NamespaceRoot::target_attr(const fs::OpContext& ctx,
                                                   uint32_t volume_id) const {
  fs::Volume* v = volumes_->find(volume_id);
  fs::Attr a;
  if (!v || v->getattr(ctx, v->root(), &a) != fs::Status::Ok) return std::nullopt;
  return a;
}

fs::Status NamespaceRoot::refuse_change(fs::InodeId dir, fs::Wcc* wcc) const {
  if (fs::Status st = check_root(dir); st != fs::Status::Ok) return st;
  fs::Attr a = root_attr();
  if (wcc) {
    wcc->before = fs::PreAttr{a.size, a.mtime, a.ctime};
    wcc->after = a;
  }
  return fs::Status::RoFs;
}

fs::Status NamespaceRoot::getattr(const fs::OpContext&, fs::InodeId id, fs::Attr* out) {
  if (fs::Status st = check_root(id); st != fs::Status::Ok) return st;
  *out = root_attr();
  return fs::Status::Ok;
}

fs::Status NamespaceRoot::setattr(const fs::OpContext&, fs::InodeId id, const fs::SetAttr&,
                                  std::optional<fs::Time>, fs::Wcc* wcc) {
  return refuse_change(id, wcc);
}

fs::Status NamespaceRoot::lookup(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                                 fs::InodeId* out, std::optional<fs::Attr>* obj_attr,
                                 std::optional<fs::Attr>* dir_attr) {
  if (fs::Status st = check_root(dir); st != fs::Status::Ok) return st;
  *dir_attr = root_attr();
  if (name == "." || name == "..") {
    *out = kRoot;
    *obj_attr = *dir_attr;
    return fs::Status::Ok;
  }
  std::optional<uint32_t> target;
  {
    std::lock_guard lock(mu_);
    for (const auto& [entry, id] : entries_)
      if (entry == name) target = id;
  }
  if (!target) return fs::Status::NoEnt;
  *out = fs::junction_to(*target);
  *obj_attr = target_attr(ctx, *target);
  return fs::Status::Ok;
}

fs::Status NamespaceRoot::access(const fs::OpContext&, fs::InodeId id, uint32_t requested,
                                 uint32_t* granted, std::optional<fs::Attr>* attr) {
  if (fs::Status st = check_root(id); st != fs::Status::Ok) return st;
  *granted = requested & (fs::kAccessRead | fs::kAccessLookup | fs::kAccessExecute);
  *attr = root_attr();
  return fs::Status::Ok;
}

fs::Status NamespaceRoot::readlink(const fs::OpContext&, fs::InodeId id, std::string*,
                                   std::optional<fs::Attr>* attr) {
  if (fs::Status st = check_root(id); st != fs::Status::Ok) return st;
  *attr = root_attr();
  return fs::Status::Inval;
}

fs::Status NamespaceRoot::read(const fs::OpContext&, fs::InodeId id, uint64_t, uint32_t,
                               std::vector<uint8_t>*, bool*, std::optional<fs::Attr>* attr) {
  if (fs::Status st = check_root(id); st != fs::Status::Ok) return st;
  *attr = root_attr();
  return fs::Status::IsDir;
}

fs::Status NamespaceRoot::write(const fs::OpContext&, fs::InodeId id, uint64_t,
                                std::span<const uint8_t>, fs::Stability, fs::Stability*,
                                fs::Wcc* wcc) {
  if (fs::Status st = refuse_change(id, wcc); st != fs::Status::RoFs) return st;
  return fs::Status::IsDir;
}

fs::Status NamespaceRoot::create(const fs::OpContext&, fs::InodeId dir, std::string_view,
                                 fs::CreateMode, const fs::SetAttr&, uint64_t, fs::InodeId*,
                                 std::optional<fs::Attr>*, fs::Wcc* dir_wcc) {
  return refuse_change(dir, dir_wcc);
}

fs::Status NamespaceRoot::mkdir(const fs::OpContext&, fs::InodeId dir, std::string_view,
                                const fs::SetAttr&, fs::InodeId*, std::optional<fs::Attr>*,
                                fs::Wcc* dir_wcc) {
  return refuse_change(dir, dir_wcc);
}

fs::Status NamespaceRoot::symlink(const fs::OpContext&, fs::InodeId dir, std::string_view,
                                  std::string_view, const fs::SetAttr&, fs::InodeId*,
                                  std::optional<fs::Attr>*, fs::Wcc* dir_wcc) {
  return refuse_change(dir, dir_wcc);
}

fs::Status NamespaceRoot::mknod(const fs::OpContext&, fs::InodeId dir, std::string_view,
                                fs::FileType, const fs::SetAttr&, uint32_t, uint32_t, fs::InodeId*,
                                std::optional<fs::Attr>*, fs::Wcc* dir_wcc) {
  return refuse_change(dir, dir_wcc);
}

fs::Status NamespaceRoot::remove(const fs::OpContext&, fs::InodeId dir, std::string_view,
                                 fs::Wcc* dir_wcc) {
  return refuse_change(dir, dir_wcc);
}

fs::Status NamespaceRoot::rmdir(const fs::OpContext&, fs::InodeId dir, std::string_view,
                                fs::Wcc* dir_wcc) {
  return refuse_change(dir, dir_wcc);
}

fs::Status NamespaceRoot::rename(const fs::OpContext&, fs::InodeId from_dir, std::string_view,
                                 fs::InodeId to_dir, std::string_view, fs::Wcc* from_wcc,
                                 fs::Wcc* to_wcc) {
  // A rename that involves a real volume's directory never reaches here: it is XDEV across
  // volumes for the protocol side, which sends it to the volume of from_dir.
  if (to_dir != kRoot) return fs::Status::XDev;
  refuse_change(to_dir, to_wcc);
  return refuse_change(from_dir, from_wcc);
}

fs::Status NamespaceRoot::link(const fs::OpContext&, fs::InodeId, fs::InodeId dir,
                               std::string_view, std::optional<fs::Attr>*, fs::Wcc* dir_wcc) {
  return refuse_change(dir, dir_wcc);
}

fs::Status NamespaceRoot::readdir(const fs::OpContext& ctx, fs::InodeId dir, uint64_t cookie,
                                  uint64_t cookieverf, uint32_t max_entries, bool with_attrs,
                                  fs::ReaddirResult* out) {
  if (fs::Status st = check_root(dir); st != fs::Status::Ok) return st;
  // Cookie k resumes after the k-th name of ".", "..", then the volumes in the order added;
  // entries are only ever appended, so every cookie stays valid and the verifier is constant.
  constexpr uint64_t kVerifier = 0x2f72;  // "/r"
  if (cookieverf != 0 && cookieverf != kVerifier) return fs::Status::BadCookie;
  std::vector<std::pair<std::string, uint32_t>> names;
  {
    std::lock_guard lock(mu_);
    names = entries_;
  }
  uint64_t total = names.size() + 2;
  if (cookie > total) return fs::Status::BadCookie;
  out->cookieverf = kVerifier;
  out->dir_attr = root_attr();
  for (uint64_t k = cookie; k < total && out->entries.size() < max_entries; k++) {
    fs::DirEntry e;
    e.cookie = k + 1;
    if (k < 2) {
      e.name = k == 0 ? "." : "..";
      e.id = kRoot;
      e.fileid = kRoot.ino;
      if (with_attrs) e.attr = out->dir_attr;
    } else {
      const auto& [name, volume_id] = names[k - 2];
      e.name = name;
      e.id = fs::junction_to(volume_id);
      std::optional<fs::Attr> a = target_attr(ctx, volume_id);
      e.fileid = a ? a->fileid : volume_id + 2;
      if (with_attrs) e.attr = a;
    }
    out->entries.push_back(std::move(e));
  }
  out->eof = cookie + out->entries.size() >= total;
  return fs::Status::Ok;
}

fs::Status NamespaceRoot::fsstat(const fs::OpContext&, fs::InodeId id, fs::FsStat* out,
                                 std::optional<fs::Attr>* attr) {
  if (fs::Status st = check_root(id); st != fs::Status::Ok) return st;
  *out = fs::FsStat{};
  *attr = root_attr();
  return fs::Status::Ok;
}

fs::Status NamespaceRoot::commit(const fs::OpContext&, fs::InodeId id, uint64_t, uint32_t,
                                 fs::Wcc* wcc) {
  if (fs::Status st = check_root(id); st != fs::Status::Ok) return st;
  wcc->after = root_attr();
  return fs::Status::Ok;
}

}  // namespace nasd::cluster
