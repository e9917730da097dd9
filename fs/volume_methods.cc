// fs::Volume's calls as methods (fs/volume.h): each builds the request, makes it through the
// one entry (call / try_call) and hands the reply's results back as out-parameters.
#include <utility>

#include "fs/call/calls.h"
#include "fs/call/out_params.h"
#include "fs/call_deadline.h"
#include "fs/call_identity.h"
#include "fs/volume.h"

namespace nasd::fs {
namespace {

using call::to_access;
using call::to_attr;
using call::to_created;
using call::to_fsstat;
using call::to_link;
using call::to_lookup;
using call::to_read;
using call::to_readdir;
using call::to_readlink;
using call::to_rename;
using call::to_wcc;
using call::to_write;

// The request for `args` as the caller `ctx`, with the client call and deadline of the calls
// this thread serves (the scopes the NFS program and the interconnect's server open).
template <class Args>
call::VolumeRequest request(const Volume& v, const OpContext& ctx, Args&& args) {
  call::VolumeRequest req;
  req.volume_id = v.id();
  req.ctx = ctx;
  req.args = std::forward<Args>(args);
  if (const CallIdentity* identity = CallIdentityScope::current()) req.identity = *identity;
  req.deadline = CallDeadlineScope::current();
  return req;
}

template <class Args, class Take>
Status made(Volume& v, const OpContext& ctx, Args args, Take&& take) {
  call::VolumeReply reply = v.call(request(v, ctx, std::move(args)));
  return call::answer<Args>(reply, take);
}

template <class Args, class Take>
std::optional<Status> tried(Volume& v, const OpContext& ctx, Args args, Take&& take) {
  std::optional<call::VolumeReply> reply = v.try_call(request(v, ctx, std::move(args)));
  if (!reply) return std::nullopt;
  return call::answer<Args>(*reply, take);
}

}  // namespace

// --- the calls --------------------------------------------------------------------------------

Status Volume::getattr(const OpContext& ctx, InodeId id, Attr* out) {
  return made(*this, ctx, call::GetattrArgs{id}, to_attr(out));
}
Status Volume::setattr(const OpContext& ctx, InodeId id, const SetAttr& sa,
                       std::optional<Time> guard_ctime, Wcc* wcc) {
  return made(*this, ctx, call::SetattrArgs{id, sa, guard_ctime}, to_wcc(wcc));
}
Status Volume::lookup(const OpContext& ctx, InodeId dir, std::string_view name, InodeId* out,
                      std::optional<Attr>* obj_attr, std::optional<Attr>* dir_attr) {
  return made(*this, ctx, call::LookupArgs{dir, name}, to_lookup(out, obj_attr, dir_attr));
}
Status Volume::access(const OpContext& ctx, InodeId id, uint32_t requested, uint32_t* granted,
                      std::optional<Attr>* attr) {
  return made(*this, ctx, call::AccessArgs{id, requested}, to_access(granted, attr));
}
Status Volume::readlink(const OpContext& ctx, InodeId id, std::string* target,
                        std::optional<Attr>* attr) {
  return made(*this, ctx, call::ReadlinkArgs{id}, to_readlink(target, attr));
}
Status Volume::read(const OpContext& ctx, InodeId id, uint64_t offset, uint32_t count,
                    std::vector<uint8_t>* data, bool* eof, std::optional<Attr>* attr) {
  return made(*this, ctx, call::ReadArgs{id, offset, count}, to_read(data, eof, attr));
}
Status Volume::write(const OpContext& ctx, InodeId id, uint64_t offset,
                     std::span<const uint8_t> data, Stability stable, Stability* committed,
                     Wcc* wcc) {
  return made(*this, ctx, call::WriteArgs{id, offset, data, stable}, to_write(committed, wcc));
}
Status Volume::create(const OpContext& ctx, InodeId dir, std::string_view name, CreateMode mode,
                      const SetAttr& sa, uint64_t verifier, InodeId* out,
                      std::optional<Attr>* obj_attr, Wcc* dir_wcc) {
  return made(*this, ctx, call::CreateArgs{dir, name, mode, sa, verifier},
              to_created(out, obj_attr, dir_wcc));
}
Status Volume::mkdir(const OpContext& ctx, InodeId dir, std::string_view name, const SetAttr& sa,
                     InodeId* out, std::optional<Attr>* obj_attr, Wcc* dir_wcc) {
  return made(*this, ctx, call::MkdirArgs{dir, name, sa}, to_created(out, obj_attr, dir_wcc));
}
Status Volume::symlink(const OpContext& ctx, InodeId dir, std::string_view name,
                       std::string_view target, const SetAttr& sa, InodeId* out,
                       std::optional<Attr>* obj_attr, Wcc* dir_wcc) {
  return made(*this, ctx, call::SymlinkArgs{dir, name, target, sa},
              to_created(out, obj_attr, dir_wcc));
}
Status Volume::mknod(const OpContext& ctx, InodeId dir, std::string_view name, FileType type,
                     const SetAttr& sa, uint32_t rdev_major, uint32_t rdev_minor, InodeId* out,
                     std::optional<Attr>* obj_attr, Wcc* dir_wcc) {
  return made(*this, ctx, call::MknodArgs{dir, name, type, sa, rdev_major, rdev_minor},
              to_created(out, obj_attr, dir_wcc));
}
Status Volume::remove(const OpContext& ctx, InodeId dir, std::string_view name, Wcc* dir_wcc) {
  return made(*this, ctx, call::RemoveArgs{dir, name}, to_wcc(dir_wcc));
}
Status Volume::rmdir(const OpContext& ctx, InodeId dir, std::string_view name, Wcc* dir_wcc) {
  return made(*this, ctx, call::RmdirArgs{dir, name}, to_wcc(dir_wcc));
}
Status Volume::rename(const OpContext& ctx, InodeId from_dir, std::string_view from_name,
                      InodeId to_dir, std::string_view to_name, Wcc* from_wcc, Wcc* to_wcc) {
  return made(*this, ctx, call::RenameArgs{from_dir, from_name, to_dir, to_name},
              to_rename(from_wcc, to_wcc));
}
Status Volume::link(const OpContext& ctx, InodeId file, InodeId dir, std::string_view name,
                    std::optional<Attr>* file_attr, Wcc* dir_wcc) {
  return made(*this, ctx, call::LinkArgs{file, dir, name}, to_link(file_attr, dir_wcc));
}
Status Volume::readdir(const OpContext& ctx, InodeId dir, uint64_t cookie, uint64_t cookieverf,
                       uint32_t max_entries, bool with_attrs, ReaddirResult* out) {
  return made(*this, ctx, call::ReaddirArgs{dir, cookie, cookieverf, max_entries, with_attrs},
              to_readdir(out));
}
Status Volume::fsstat(const OpContext& ctx, InodeId id, FsStat* out, std::optional<Attr>* attr) {
  return made(*this, ctx, call::FsstatArgs{id}, to_fsstat(out, attr));
}
Status Volume::commit(const OpContext& ctx, InodeId id, uint64_t offset, uint32_t count,
                      Wcc* wcc) {
  return made(*this, ctx, call::CommitArgs{id, offset, count}, to_wcc(wcc));
}

// --- the attempts ------------------------------------------------------------------------------

std::optional<Status> Volume::try_getattr(const OpContext& ctx, InodeId id, Attr* out) {
  return tried(*this, ctx, call::GetattrArgs{id}, to_attr(out));
}
std::optional<Status> Volume::try_setattr(const OpContext& ctx, InodeId id, const SetAttr& sa,
                                          std::optional<Time> guard_ctime, Wcc* wcc) {
  return tried(*this, ctx, call::SetattrArgs{id, sa, guard_ctime}, to_wcc(wcc));
}
std::optional<Status> Volume::try_lookup(const OpContext& ctx, InodeId dir, std::string_view name,
                                         InodeId* out, std::optional<Attr>* obj_attr,
                                         std::optional<Attr>* dir_attr) {
  return tried(*this, ctx, call::LookupArgs{dir, name}, to_lookup(out, obj_attr, dir_attr));
}
std::optional<Status> Volume::try_access(const OpContext& ctx, InodeId id, uint32_t requested,
                                         uint32_t* granted, std::optional<Attr>* attr) {
  return tried(*this, ctx, call::AccessArgs{id, requested}, to_access(granted, attr));
}
std::optional<Status> Volume::try_readlink(const OpContext& ctx, InodeId id, std::string* target,
                                           std::optional<Attr>* attr) {
  return tried(*this, ctx, call::ReadlinkArgs{id}, to_readlink(target, attr));
}
std::optional<Status> Volume::try_read(const OpContext& ctx, InodeId id, uint64_t offset,
                                       uint32_t count, std::vector<uint8_t>* data, bool* eof,
                                       std::optional<Attr>* attr) {
  return tried(*this, ctx, call::ReadArgs{id, offset, count}, to_read(data, eof, attr));
}
std::optional<Status> Volume::try_write(const OpContext& ctx, InodeId id, uint64_t offset,
                                        std::span<const uint8_t> data, Stability stable,
                                        Stability* committed, Wcc* wcc) {
  return tried(*this, ctx, call::WriteArgs{id, offset, data, stable}, to_write(committed, wcc));
}
std::optional<Status> Volume::try_create(const OpContext& ctx, InodeId dir, std::string_view name,
                                         CreateMode mode, const SetAttr& sa, uint64_t verifier,
                                         InodeId* out, std::optional<Attr>* obj_attr,
                                         Wcc* dir_wcc) {
  return tried(*this, ctx, call::CreateArgs{dir, name, mode, sa, verifier},
               to_created(out, obj_attr, dir_wcc));
}
std::optional<Status> Volume::try_mkdir(const OpContext& ctx, InodeId dir, std::string_view name,
                                        const SetAttr& sa, InodeId* out,
                                        std::optional<Attr>* obj_attr, Wcc* dir_wcc) {
  return tried(*this, ctx, call::MkdirArgs{dir, name, sa}, to_created(out, obj_attr, dir_wcc));
}
std::optional<Status> Volume::try_symlink(const OpContext& ctx, InodeId dir,
                                          std::string_view name, std::string_view target,
                                          const SetAttr& sa, InodeId* out,
                                          std::optional<Attr>* obj_attr, Wcc* dir_wcc) {
  return tried(*this, ctx, call::SymlinkArgs{dir, name, target, sa},
               to_created(out, obj_attr, dir_wcc));
}
std::optional<Status> Volume::try_mknod(const OpContext& ctx, InodeId dir, std::string_view name,
                                        FileType type, const SetAttr& sa, uint32_t rdev_major,
                                        uint32_t rdev_minor, InodeId* out,
                                        std::optional<Attr>* obj_attr, Wcc* dir_wcc) {
  return tried(*this, ctx, call::MknodArgs{dir, name, type, sa, rdev_major, rdev_minor},
               to_created(out, obj_attr, dir_wcc));
}
std::optional<Status> Volume::try_remove(const OpContext& ctx, InodeId dir, std::string_view name,
                                         Wcc* dir_wcc) {
  return tried(*this, ctx, call::RemoveArgs{dir, name}, to_wcc(dir_wcc));
}
std::optional<Status> Volume::try_rmdir(const OpContext& ctx, InodeId dir, std::string_view name,
                                        Wcc* dir_wcc) {
  return tried(*this, ctx, call::RmdirArgs{dir, name}, to_wcc(dir_wcc));
}
std::optional<Status> Volume::try_rename(const OpContext& ctx, InodeId from_dir,
                                         std::string_view from_name, InodeId to_dir,
                                         std::string_view to_name, Wcc* from_wcc, Wcc* to_wcc) {
  return tried(*this, ctx, call::RenameArgs{from_dir, from_name, to_dir, to_name},
               to_rename(from_wcc, to_wcc));
}
std::optional<Status> Volume::try_link(const OpContext& ctx, InodeId file, InodeId dir,
                                       std::string_view name, std::optional<Attr>* file_attr,
                                       Wcc* dir_wcc) {
  return tried(*this, ctx, call::LinkArgs{file, dir, name}, to_link(file_attr, dir_wcc));
}
std::optional<Status> Volume::try_readdir(const OpContext& ctx, InodeId dir, uint64_t cookie,
                                          uint64_t cookieverf, uint32_t max_entries,
                                          bool with_attrs, ReaddirResult* out) {
  return tried(*this, ctx, call::ReaddirArgs{dir, cookie, cookieverf, max_entries, with_attrs},
               to_readdir(out));
}
std::optional<Status> Volume::try_fsstat(const OpContext& ctx, InodeId id, FsStat* out,
                                         std::optional<Attr>* attr) {
  return tried(*this, ctx, call::FsstatArgs{id}, to_fsstat(out, attr));
}
std::optional<Status> Volume::try_commit(const OpContext& ctx, InodeId id, uint64_t offset,
                                         uint32_t count, Wcc* wcc) {
  return tried(*this, ctx, call::CommitArgs{id, offset, count}, to_wcc(wcc));
}

std::optional<Status> Volume::try_read_shared(const OpContext& ctx, InodeId id, uint64_t offset,
                                              uint32_t count, util::ByteSlices* data, bool* eof,
                                              std::optional<Attr>* attr) {
  auto owned = std::make_shared<std::vector<uint8_t>>();
  std::optional<Status> st = try_read(ctx, id, offset, count, owned.get(), eof, attr);
  data->clear();
  if (st && *st == Status::Ok) {
    data->append(owned->data(), owned->size());
    data->owner = std::move(owned);
  }
  return st;
}

}  // namespace nasd::fs
