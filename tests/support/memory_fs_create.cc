// TEST FIXTURE ONLY (see memory_fs.h): the calls that add a directory entry: CREATE, MKDIR,
// SYMLINK, MKNOD and LINK.
#include "tests/support/memory_fs.h"

#include <algorithm>

namespace nasd::test_support {

using fs::Status;

Status MemoryFs::check_new_name(const fs::OpContext& ctx, Node& dir, std::string_view name) {
  if (!allowed(ctx.cred, dir, kChangeEntries)) return Status::Access;
  if (name.empty() || name.find('/') != std::string_view::npos) return Status::Inval;
  if (name.size() > kNameMax) return Status::NameTooLong;
  if (name == "." || name == ".." || dir.children.count(name)) return Status::Exist;
  return Status::Ok;
}

// A replayed journal record brings the inode the client was first given (JournalTag::created); it must
// still be free, or the replay is not reproducing the original history.
Status MemoryFs::make(const fs::OpContext& ctx, Node& dir, uint64_t dir_ino, std::string_view name,
                      fs::FileType type, const fs::SetAttr& sa, fs::InodeId* out, Node** made) {
  uint64_t ino = live_.next_ino;
  uint32_t gen = 1;
  if (const fs::JournalTag* tag = journal_tag(); tag && tag->created) {
    ino = tag->created->ino;
    gen = tag->created->gen;
    if (live_.nodes.count(ino) != 0) return Status::ServerFault;
  }
  live_.next_ino = std::max(live_.next_ino, ino + 1);
  Node& n = live_.nodes[ino];  // std::map: `dir` stays valid
  n.gen = gen;
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
  *made = &n;
  return Status::Ok;
}

// The common part of CREATE/MKDIR/SYMLINK/MKNOD: checks on the directory and the new name, the
// new inode, and the directory's WCC data. The caller fills in what is particular to its type.
Status MemoryFs::add_entry(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                           fs::FileType type, const fs::SetAttr& sa, fs::InodeId* out,
                           fs::Wcc* dir_wcc, Node** made) {
  Node* d = nullptr;
  Status st = find_dir_for_change(dir, dir_wcc, &d);
  if (st != Status::Ok) return st;
  if ((st = check_new_name(ctx, *d, name)) != Status::Ok) return st;
  if ((st = make(ctx, *d, dir.ino, name, type, sa, out, made)) != Status::Ok) return st;
  dir_wcc->after = d->attr;
  return Status::Ok;
}

Status MemoryFs::create(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                        fs::CreateMode mode, const fs::SetAttr& sa, uint64_t verifier,
                        fs::InodeId* out, std::optional<fs::Attr>* obj_attr, fs::Wcc* dir_wcc) {
  std::lock_guard lock(mu_);
  Node* d = nullptr;
  Status st = find_dir_for_change(dir, dir_wcc, &d);
  if (st != Status::Ok) return st;
  if (sa.size && *sa.size > options_.max_file_size) return Status::FBig;
  auto existing = d->children.find(name);
  if (existing != d->children.end()) {
    // A retried EXCLUSIVE create, or UNCHECKED on an existing file, succeeds on what is there.
    Node& n = live_.nodes.at(existing->second);
    bool same_exclusive = mode == fs::CreateMode::Exclusive && n.create_verf == verifier;
    bool reuse = mode == fs::CreateMode::Unchecked && n.attr.type == fs::FileType::Reg;
    if (!same_exclusive && !reuse) return Status::Exist;
    if (reuse && sa.size) apply(n, sa);
    *out = {existing->second, n.gen};
    *obj_attr = n.attr;
    note_applied(ctx);
    return Status::Ok;
  }
  Node* n = nullptr;
  if ((st = add_entry(ctx, dir, name, fs::FileType::Reg, sa, out, dir_wcc, &n)) != Status::Ok)
    return st;
  if (mode == fs::CreateMode::Exclusive) n->create_verf = verifier;
  *obj_attr = n->attr;
  note_applied(ctx);
  return Status::Ok;
}

Status MemoryFs::mkdir(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                       const fs::SetAttr& sa, fs::InodeId* out, std::optional<fs::Attr>* obj_attr,
                       fs::Wcc* dir_wcc) {
  std::lock_guard lock(mu_);
  Node* n = nullptr;
  Status st = add_entry(ctx, dir, name, fs::FileType::Dir, sa, out, dir_wcc, &n);
  if (st != Status::Ok) return st;
  *obj_attr = n->attr;
  note_applied(ctx);
  return Status::Ok;
}

Status MemoryFs::symlink(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                         std::string_view target, const fs::SetAttr& sa, fs::InodeId* out,
                         std::optional<fs::Attr>* obj_attr, fs::Wcc* dir_wcc) {
  std::lock_guard lock(mu_);
  Node* n = nullptr;
  Status st = add_entry(ctx, dir, name, fs::FileType::Lnk, sa, out, dir_wcc, &n);
  if (st != Status::Ok) return st;
  n->target = std::string(target);
  n->attr.size = target.size();
  *obj_attr = n->attr;
  note_applied(ctx);
  return Status::Ok;
}

Status MemoryFs::mknod(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                       fs::FileType type, const fs::SetAttr& sa, uint32_t rdev_major,
                       uint32_t rdev_minor, fs::InodeId* out, std::optional<fs::Attr>* obj_attr,
                       fs::Wcc* dir_wcc) {
  std::lock_guard lock(mu_);
  if (type != fs::FileType::Chr && type != fs::FileType::Blk && type != fs::FileType::Sock &&
      type != fs::FileType::Fifo)
    return Status::BadType;
  Node* n = nullptr;
  Status st = add_entry(ctx, dir, name, type, sa, out, dir_wcc, &n);
  if (st != Status::Ok) return st;
  n->attr.rdev_major = rdev_major;
  n->attr.rdev_minor = rdev_minor;
  *obj_attr = n->attr;
  note_applied(ctx);
  return Status::Ok;
}

Status MemoryFs::link(const fs::OpContext& ctx, fs::InodeId file, fs::InodeId dir,
                      std::string_view name, std::optional<fs::Attr>* file_attr,
                      fs::Wcc* dir_wcc) {
  std::lock_guard lock(mu_);
  Node* f = find(file);
  if (!f) return Status::Stale;
  *file_attr = f->attr;
  Node* d = nullptr;
  Status st = find_dir_for_change(dir, dir_wcc, &d);
  if (st != Status::Ok) return st;
  if (f->attr.type == fs::FileType::Dir) return Status::IsDir;
  if ((st = check_new_name(ctx, *d, name)) != Status::Ok) return st;
  if (f->attr.nlink >= limits().link_max) return Status::MLink;
  d->children.emplace(std::string(name), file.ino);
  f->attr.nlink++;
  touch(*f, false);
  touch(*d, true);
  *file_attr = f->attr;
  dir_wcc->after = d->attr;
  note_applied(ctx);
  return Status::Ok;
}

}  // namespace nasd::test_support
