// TEST FIXTURE ONLY (see memory_fs.h): lookup, listing and removal of directory entries. New
// entries are made in memory_fs_create.cc.
#include "tests/support/memory_fs.h"

#include <utility>
#include <vector>

namespace nasd::test_support {

using fs::Status;

namespace {
// Every directory's READDIR cookies carry this verifier; it never changes, so it only tells
// one directory's cookies from another's.
uint64_t cookie_verifier(uint64_t dir_ino) { return 0x5a5a000000000000ull | dir_ino; }
}  // namespace

Status MemoryFs::lookup(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                        fs::InodeId* out, std::optional<fs::Attr>* obj_attr,
                        std::optional<fs::Attr>* dir_attr) {
  std::lock_guard lock(mu_);
  Node* d = nullptr;
  Status st = find_dir(dir, &d);
  if (st != Status::Ok) return st;
  *dir_attr = d->attr;
  if (!allowed(ctx.cred, *d, fs::kWantExec)) return Status::Access;
  if (name.size() > kNameMax) return Status::NameTooLong;
  uint64_t ino = 0;
  if (name == ".") {
    ino = dir.ino;
  } else if (name == "..") {
    ino = d->parent;
  } else {
    auto it = d->children.find(name);
    if (it == d->children.end()) return Status::NoEnt;
    ino = it->second;
  }
  Node& n = live_.nodes.at(ino);
  *out = {ino, n.gen};
  *obj_attr = n.attr;
  return Status::Ok;
}

void MemoryFs::drop_link(uint64_t ino) {
  Node& n = live_.nodes.at(ino);
  if (n.attr.type == fs::FileType::Dir || --n.attr.nlink == 0) live_.nodes.erase(ino);
  else touch(n, false);
}

Status MemoryFs::remove(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                        fs::Wcc* dir_wcc) {
  std::lock_guard lock(mu_);
  Node* d = nullptr;
  Status st = find_dir_for_change(dir, dir_wcc, &d);
  if (st != Status::Ok) return st;
  if (!allowed(ctx.cred, *d, kChangeEntries)) return Status::Access;
  auto it = d->children.find(name);
  if (it == d->children.end()) return Status::NoEnt;
  if (live_.nodes.at(it->second).attr.type == fs::FileType::Dir) return Status::IsDir;
  uint64_t ino = it->second;
  d->children.erase(it);
  drop_link(ino);
  touch(*d, true);
  dir_wcc->after = d->attr;
  note_applied(ctx);
  return Status::Ok;
}

Status MemoryFs::rmdir(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                       fs::Wcc* dir_wcc) {
  std::lock_guard lock(mu_);
  Node* d = nullptr;
  Status st = find_dir_for_change(dir, dir_wcc, &d);
  if (st != Status::Ok) return st;
  if (!allowed(ctx.cred, *d, kChangeEntries)) return Status::Access;
  if (name == ".") return Status::Inval;
  if (name == "..") return Status::NotEmpty;
  auto it = d->children.find(name);
  if (it == d->children.end()) return Status::NoEnt;
  Node& victim = live_.nodes.at(it->second);
  if (victim.attr.type != fs::FileType::Dir) return Status::NotDir;
  if (!victim.children.empty()) return Status::NotEmpty;
  uint64_t ino = it->second;
  d->children.erase(it);
  d->attr.nlink--;
  drop_link(ino);
  touch(*d, true);
  dir_wcc->after = d->attr;
  note_applied(ctx);
  return Status::Ok;
}

Status MemoryFs::rename(const fs::OpContext& ctx, fs::InodeId from_dir, std::string_view from_name,
                        fs::InodeId to_dir, std::string_view to_name, fs::Wcc* from_wcc,
                        fs::Wcc* to_wcc) {
  std::lock_guard lock(mu_);
  Node *from = nullptr, *to = nullptr;
  Status st = find_dir(from_dir, &from);
  if (st == Status::Ok) st = find_dir(to_dir, &to);
  if (st != Status::Ok) return st;
  from_wcc->before = pre(*from);
  to_wcc->before = pre(*to);
  from_wcc->after = from->attr;
  to_wcc->after = to->attr;
  if (!allowed(ctx.cred, *from, kChangeEntries) || !allowed(ctx.cred, *to, kChangeEntries))
    return Status::Access;
  if (to_name.empty() || to_name == "." || to_name == "..") return Status::Inval;
  if (to_name.size() > kNameMax) return Status::NameTooLong;
  auto src = from->children.find(from_name);
  if (src == from->children.end()) return Status::NoEnt;
  const uint64_t ino = src->second;
  Node& moving = live_.nodes.at(ino);
  const bool moving_dir = moving.attr.type == fs::FileType::Dir;
  // A directory may not move below itself.
  for (uint64_t a = to_dir.ino; moving_dir; a = live_.nodes.at(a).parent) {
    if (a == ino) return Status::Inval;
    if (a == kRootIno) break;
  }
  auto dst = to->children.find(to_name);
  if (dst != to->children.end()) {
    if (dst->second == ino) return Status::Ok;  // renaming a name onto itself changes nothing
    Node& victim = live_.nodes.at(dst->second);
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
  note_applied(ctx);
  return Status::Ok;
}

Status MemoryFs::readdir(const fs::OpContext& ctx, fs::InodeId dir, uint64_t cookie,
                         uint64_t cookieverf, uint32_t max_entries, bool with_attrs,
                         fs::ReaddirResult* out) {
  std::lock_guard lock(mu_);
  last_max_entries_ = max_entries;
  Node* d = nullptr;
  Status st = find_dir(dir, &d);
  if (st != Status::Ok) return st;
  out->dir_attr = d->attr;
  if (!allowed(ctx.cred, *d, fs::kWantRead)) return Status::Access;
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
    const Node& n = live_.nodes.at(all[i].second);
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

}  // namespace nasd::test_support
