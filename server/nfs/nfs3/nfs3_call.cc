#include "server/nfs/nfs3/nfs3_call.h"

#include <cstring>

#include "fs/call/calls.h"
#include "fs/call/out_params.h"
#include "server/nfs/xdr/wire_peek.h"

namespace nasd::nfs::nfs3 {

std::optional<uint32_t> name_length_after_handle(std::span<const uint8_t> args) {
  const std::optional<xdr::LeadingHandle> dir = xdr::peek_leading_handle(args);
  if (!dir) return std::nullopt;
  return xdr::peek_word(args, dir->end);
}

nfsstat3 Nfs3Call::open(const nfs_fh3& fh, Target* out) const {
  HandleTarget named;
  std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(fh.data.data_val),
                                 fh.data.data_len);
  if (deps_.handles->decode(bytes, &named) != fs::Status::Ok) return NFS3ERR_BADHANDLE;
  fs::Volume* volume = deps_.volumes->find(named.volume_id);
  if (!volume) return NFS3ERR_STALE;
  Exports::Policy policy = deps_.exports->for_handle(named.volume_id, named.export_id, call_.peer);
  if (!policy) return NFS3ERR_STALE;
  if (!policy->allows(call_.peer)) return NFS3ERR_ACCES;
  if (!policy->port_allowed(call_.peer)) return NFS3ERR_PERM;
  out->volume = volume;
  out->volume_id = named.volume_id;
  out->inode = named.inode;
  out->policy = std::move(policy);
  out->ctx = fs::OpContext{};
  out->ctx.cred = out->policy->credential_for(call_.cred);
  // The first handle a call opens is the one its new object's handle is issued under (the
  // parent directory of CREATE, MKDIR, SYMLINK, MKNOD): the journal records that export so the
  // rebuilt reply names it too (export ids are never 0). A legacy handle (id 0) is answered
  // under its policy's real id, so that is the one recorded.
  if (identity_ && identity_->export_id == 0) identity_->export_id = out->policy->export_id;
  return NFS3_OK;
}

nfsstat3 Nfs3Call::open_for_change(const nfs_fh3& fh, Target* out) const {
  nfsstat3 st = open(fh, out);
  if (st == NFS3_OK && out->policy->read_only) return NFS3ERR_ROFS;
  return st;
}

rpc::DispatchResult Nfs3Call::reply_with(xdrproc_t routine, const void* res) {
  rpc::DispatchResult r;
  if (!xdr::append_encoded(routine, res, results_)) r.accept = rpc::AcceptStat::SystemErr;
  return r;
}

void Nfs3Call::patch_last_word(uint32_t value) {
  uint8_t* end = results_->data() + results_->size();
  end[-4] = static_cast<uint8_t>(value >> 24);
  end[-3] = static_cast<uint8_t>(value >> 16);
  end[-2] = static_cast<uint8_t>(value >> 8);
  end[-1] = static_cast<uint8_t>(value);
}

rpc::DispatchResult Nfs3Call::garbage_args() {
  rpc::DispatchResult r;
  r.accept = rpc::AcceptStat::GarbageArgs;
  return r;
}

nfsstat3 Nfs3Call::handle_for(const Target& t, fs::InodeId inode, FileHandle* out,
                              std::string_view name) const {
  if (auto other = fs::junction_target(inode)) {
    // The target's root() may ask its owner over the network: not on the event loop. (Only a
    // name-space root answers junctions, and it answers no non-blocking attempt, so this is a
    // guard rather than a path taken.)
    if (on_event_loop_) {
      would_block_ = true;
      return NFS3ERR_JUKEBOX;
    }
    std::string crossed = t.policy->path == "/" ? "" : t.policy->path;
    crossed += "/";
    crossed += name;
    Exports::Policy entered = deps_.exports->for_crossing(*other, crossed, call_.peer);
    if (!entered) return NFS3ERR_ACCES;
    fs::Volume* v = deps_.volumes->find(*other);
    if (v == nullptr) return NFS3ERR_NOENT;
    // A volume whose owner has not told its root yet (not reachable, or not opened there):
    // "try again", as MOUNT refuses it, rather than a handle of {0, 0} that never works.
    const fs::InodeId root = v->root();
    if (root == fs::InodeId{}) return NFS3ERR_JUKEBOX;
    *out = deps_.handles->encode(*other, root, entered->export_id);
    return NFS3_OK;
  }
  *out = deps_.handles->encode(t.volume_id, inode, t.policy->export_id);
  return NFS3_OK;
}

nfsstat3 Nfs3Call::check_name(const char* name) const {
  if (std::strchr(name, '/')) return NFS3ERR_INVAL;
  if (decoded_intact_ && !decoded_intact_()) return NFS3ERR_INVAL;
  return NFS3_OK;
}

}  // namespace nasd::nfs::nfs3

namespace nasd::nfs::nfs3 {

using namespace fs::call;

// One volume call: the request (the caller's credential, and the client call's identity for a
// procedure whose reply the journal rebuilds) made with the volume's call(), or on the event
// loop with its attempt, where "would block" answers Jukebox and marks the call.
template <class Args, class Take>
fs::Status Nfs3Call::volume_call(fs::Volume* volume, const fs::OpContext& ctx, Args args,
                                 Take&& take) {
  fs::call::VolumeRequest req;
  req.volume_id = volume->id();
  req.ctx = ctx;
  req.args = std::move(args);
  if (identity_ != nullptr) req.identity = *identity_;
  if (!on_event_loop_) {
    fs::call::VolumeReply reply = volume->call(req);
    return fs::call::answer<Args>(reply, take);
  }
  std::optional<fs::call::VolumeReply> reply = volume->try_call(req);
  if (!reply) {
    would_block_ = true;
    return fs::Status::Jukebox;
  }
  return fs::call::answer<Args>(*reply, take);
}

fs::Status Nfs3Call::getattr(const Target& t, fs::Attr* out) {
  return volume_call(t.volume, t.ctx, GetattrArgs{t.inode}, fs::call::to_attr(out));
}

fs::Status Nfs3Call::lookup(const Target& dir, std::string_view name, fs::InodeId* out,
                            std::optional<fs::Attr>* obj_attr,
                            std::optional<fs::Attr>* dir_attr) {
  return volume_call(dir.volume, dir.ctx, LookupArgs{dir.inode, name},
                     fs::call::to_lookup(out, obj_attr, dir_attr));
}

fs::Status Nfs3Call::access(const Target& t, uint32_t requested, uint32_t* granted,
                            std::optional<fs::Attr>* attr) {
  return volume_call(t.volume, t.ctx, AccessArgs{t.inode, requested}, fs::call::to_access(granted, attr));
}

fs::Status Nfs3Call::read(const Target& t, uint64_t offset, uint32_t count,
                          util::ByteSlices* data, bool* eof, std::optional<fs::Attr>* attr) {
  data->clear();
  fs::Status st;
  if (on_event_loop_) {
    std::optional<fs::Status> tried =
        t.volume->try_read_shared(t.ctx, t.inode, offset, count, data, eof, attr);
    would_block_ = would_block_ || !tried;
    st = tried.value_or(fs::Status::Jukebox);
  } else {
    auto owned = std::make_shared<std::vector<uint8_t>>();
    st = volume_call(t.volume, t.ctx, ReadArgs{t.inode, offset, count},
                     fs::call::to_read(owned.get(), eof, attr));
    if (st == fs::Status::Ok) {
      data->append(owned->data(), owned->size());
      data->owner = std::move(owned);
    }
  }
  if (st != fs::Status::Ok) data->clear();
  data->truncate(count);
  return st;
}

fs::Status Nfs3Call::write(const Target& t, uint64_t offset, std::span<const uint8_t> data,
                           fs::Stability stable, fs::Stability* committed, fs::Wcc* wcc) {
  return volume_call(t.volume, t.ctx, WriteArgs{t.inode, offset, data, stable},
                     fs::call::to_write(committed, wcc));
}

fs::Status Nfs3Call::commit(const Target& t, uint64_t offset, uint32_t count, fs::Wcc* wcc) {
  return volume_call(t.volume, t.ctx, CommitArgs{t.inode, offset, count}, fs::call::to_wcc(wcc));
}

fs::Status Nfs3Call::readlink(const Target& t, std::string* target,
                              std::optional<fs::Attr>* attr) {
  return volume_call(t.volume, t.ctx, ReadlinkArgs{t.inode}, fs::call::to_readlink(target, attr));
}

fs::Status Nfs3Call::readdir(const Target& dir, uint64_t cookie, uint64_t cookieverf,
                             uint32_t max_entries, bool with_attrs, fs::ReaddirResult* out) {
  return volume_call(dir.volume, dir.ctx,
                     ReaddirArgs{dir.inode, cookie, cookieverf, max_entries, with_attrs},
                     fs::call::to_readdir(out));
}

fs::Status Nfs3Call::fsstat(const Target& t, fs::FsStat* out, std::optional<fs::Attr>* attr) {
  return volume_call(t.volume, t.ctx, FsstatArgs{t.inode}, fs::call::to_fsstat(out, attr));
}

fs::Status Nfs3Call::setattr(const Target& t, const fs::SetAttr& sa,
                             std::optional<fs::Time> guard, fs::Wcc* wcc) {
  return volume_call(t.volume, t.ctx, SetattrArgs{t.inode, sa, guard}, fs::call::to_wcc(wcc));
}

fs::Status Nfs3Call::create(const Target& dir, std::string_view name, fs::CreateMode mode,
                            const fs::SetAttr& sa, uint64_t verifier, fs::InodeId* out,
                            std::optional<fs::Attr>* obj_attr, fs::Wcc* dir_wcc) {
  return volume_call(dir.volume, dir.ctx, CreateArgs{dir.inode, name, mode, sa, verifier},
                     fs::call::to_created(out, obj_attr, dir_wcc));
}

fs::Status Nfs3Call::mkdir(const Target& dir, std::string_view name, const fs::SetAttr& sa,
                           fs::InodeId* out, std::optional<fs::Attr>* obj_attr,
                           fs::Wcc* dir_wcc) {
  return volume_call(dir.volume, dir.ctx, MkdirArgs{dir.inode, name, sa},
                     fs::call::to_created(out, obj_attr, dir_wcc));
}

fs::Status Nfs3Call::symlink(const Target& dir, std::string_view name, std::string_view target,
                             const fs::SetAttr& sa, fs::InodeId* out,
                             std::optional<fs::Attr>* obj_attr, fs::Wcc* dir_wcc) {
  return volume_call(dir.volume, dir.ctx, SymlinkArgs{dir.inode, name, target, sa},
                     fs::call::to_created(out, obj_attr, dir_wcc));
}

fs::Status Nfs3Call::mknod(const Target& dir, std::string_view name, fs::FileType type,
                           const fs::SetAttr& sa, uint32_t rdev_major, uint32_t rdev_minor,
                           fs::InodeId* out, std::optional<fs::Attr>* obj_attr,
                           fs::Wcc* dir_wcc) {
  return volume_call(dir.volume, dir.ctx,
                     MknodArgs{dir.inode, name, type, sa, rdev_major, rdev_minor},
                     fs::call::to_created(out, obj_attr, dir_wcc));
}

fs::Status Nfs3Call::remove(const Target& dir, std::string_view name, fs::Wcc* dir_wcc) {
  return volume_call(dir.volume, dir.ctx, RemoveArgs{dir.inode, name}, fs::call::to_wcc(dir_wcc));
}

fs::Status Nfs3Call::rmdir(const Target& dir, std::string_view name, fs::Wcc* dir_wcc) {
  return volume_call(dir.volume, dir.ctx, RmdirArgs{dir.inode, name}, fs::call::to_wcc(dir_wcc));
}

fs::Status Nfs3Call::rename(const Target& from, std::string_view from_name, const Target& to,
                            std::string_view to_name, fs::Wcc* from_wcc, fs::Wcc* to_wcc) {
  return volume_call(from.volume, from.ctx, RenameArgs{from.inode, from_name, to.inode, to_name},
                     fs::call::to_rename(from_wcc, to_wcc));
}

fs::Status Nfs3Call::link(const Target& file, const Target& dir, std::string_view name,
                          std::optional<fs::Attr>* file_attr, fs::Wcc* dir_wcc) {
  return volume_call(file.volume, dir.ctx, LinkArgs{file.inode, dir.inode, name},
                     fs::call::to_link(file_attr, dir_wcc));
}

}  // namespace nasd::nfs::nfs3
