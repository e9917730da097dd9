#include "server/nfs/nfs3/nfs3_call.h"

#include <cstring>

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

fs::Status Nfs3Call::attempted(std::optional<fs::Status> answer) {
  if (answer) return *answer;
  would_block_ = true;
  return fs::Status::Jukebox;
}

fs::Status Nfs3Call::getattr(const Target& t, fs::Attr* out) {
  if (!on_event_loop_) return t.volume->getattr(t.ctx, t.inode, out);
  return attempted(t.volume->try_getattr(t.ctx, t.inode, out));
}

fs::Status Nfs3Call::lookup(const Target& dir, std::string_view name, fs::InodeId* out,
                            std::optional<fs::Attr>* obj_attr,
                            std::optional<fs::Attr>* dir_attr) {
  if (!on_event_loop_) return dir.volume->lookup(dir.ctx, dir.inode, name, out, obj_attr, dir_attr);
  return attempted(dir.volume->try_lookup(dir.ctx, dir.inode, name, out, obj_attr, dir_attr));
}

fs::Status Nfs3Call::access(const Target& t, uint32_t requested, uint32_t* granted,
                            std::optional<fs::Attr>* attr) {
  if (!on_event_loop_) return t.volume->access(t.ctx, t.inode, requested, granted, attr);
  return attempted(t.volume->try_access(t.ctx, t.inode, requested, granted, attr));
}

fs::Status Nfs3Call::read(const Target& t, uint64_t offset, uint32_t count,
                          util::ByteSlices* data, bool* eof, std::optional<fs::Attr>* attr) {
  data->clear();
  fs::Status st;
  if (on_event_loop_) {
    st = attempted(t.volume->try_read_shared(t.ctx, t.inode, offset, count, data, eof, attr));
  } else {
    auto owned = std::make_shared<std::vector<uint8_t>>();
    st = t.volume->read(t.ctx, t.inode, offset, count, owned.get(), eof, attr);
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
  if (!on_event_loop_) return t.volume->write(t.ctx, t.inode, offset, data, stable, committed, wcc);
  return attempted(t.volume->try_write(t.ctx, t.inode, offset, data, stable, committed, wcc));
}

fs::Status Nfs3Call::commit(const Target& t, uint64_t offset, uint32_t count, fs::Wcc* wcc) {
  if (!on_event_loop_) return t.volume->commit(t.ctx, t.inode, offset, count, wcc);
  return attempted(t.volume->try_commit(t.ctx, t.inode, offset, count, wcc));
}

fs::Status Nfs3Call::readlink(const Target& t, std::string* target,
                              std::optional<fs::Attr>* attr) {
  if (!on_event_loop_) return t.volume->readlink(t.ctx, t.inode, target, attr);
  return attempted(t.volume->try_readlink(t.ctx, t.inode, target, attr));
}

fs::Status Nfs3Call::readdir(const Target& dir, uint64_t cookie, uint64_t cookieverf,
                             uint32_t max_entries, bool with_attrs, fs::ReaddirResult* out) {
  if (!on_event_loop_)
    return dir.volume->readdir(dir.ctx, dir.inode, cookie, cookieverf, max_entries, with_attrs,
                               out);
  return attempted(dir.volume->try_readdir(dir.ctx, dir.inode, cookie, cookieverf, max_entries,
                                           with_attrs, out));
}

fs::Status Nfs3Call::fsstat(const Target& t, fs::FsStat* out, std::optional<fs::Attr>* attr) {
  if (!on_event_loop_) return t.volume->fsstat(t.ctx, t.inode, out, attr);
  return attempted(t.volume->try_fsstat(t.ctx, t.inode, out, attr));
}

fs::Status Nfs3Call::setattr(const Target& t, const fs::SetAttr& sa,
                             std::optional<fs::Time> guard, fs::Wcc* wcc) {
  if (!on_event_loop_) return t.volume->setattr(t.ctx, t.inode, sa, guard, wcc);
  return attempted(t.volume->try_setattr(t.ctx, t.inode, sa, guard, wcc));
}

fs::Status Nfs3Call::create(const Target& dir, std::string_view name, fs::CreateMode mode,
                            const fs::SetAttr& sa, uint64_t verifier, fs::InodeId* out,
                            std::optional<fs::Attr>* obj_attr, fs::Wcc* dir_wcc) {
  if (!on_event_loop_)
    return dir.volume->create(dir.ctx, dir.inode, name, mode, sa, verifier, out, obj_attr,
                              dir_wcc);
  return attempted(dir.volume->try_create(dir.ctx, dir.inode, name, mode, sa, verifier, out,
                                          obj_attr, dir_wcc));
}

fs::Status Nfs3Call::mkdir(const Target& dir, std::string_view name, const fs::SetAttr& sa,
                           fs::InodeId* out, std::optional<fs::Attr>* obj_attr,
                           fs::Wcc* dir_wcc) {
  if (!on_event_loop_)
    return dir.volume->mkdir(dir.ctx, dir.inode, name, sa, out, obj_attr, dir_wcc);
  return attempted(dir.volume->try_mkdir(dir.ctx, dir.inode, name, sa, out, obj_attr, dir_wcc));
}

fs::Status Nfs3Call::symlink(const Target& dir, std::string_view name, std::string_view target,
                             const fs::SetAttr& sa, fs::InodeId* out,
                             std::optional<fs::Attr>* obj_attr, fs::Wcc* dir_wcc) {
  if (!on_event_loop_)
    return dir.volume->symlink(dir.ctx, dir.inode, name, target, sa, out, obj_attr, dir_wcc);
  return attempted(
      dir.volume->try_symlink(dir.ctx, dir.inode, name, target, sa, out, obj_attr, dir_wcc));
}

fs::Status Nfs3Call::mknod(const Target& dir, std::string_view name, fs::FileType type,
                           const fs::SetAttr& sa, uint32_t rdev_major, uint32_t rdev_minor,
                           fs::InodeId* out, std::optional<fs::Attr>* obj_attr,
                           fs::Wcc* dir_wcc) {
  if (!on_event_loop_)
    return dir.volume->mknod(dir.ctx, dir.inode, name, type, sa, rdev_major, rdev_minor, out,
                             obj_attr, dir_wcc);
  return attempted(dir.volume->try_mknod(dir.ctx, dir.inode, name, type, sa, rdev_major,
                                         rdev_minor, out, obj_attr, dir_wcc));
}

fs::Status Nfs3Call::remove(const Target& dir, std::string_view name, fs::Wcc* dir_wcc) {
  if (!on_event_loop_) return dir.volume->remove(dir.ctx, dir.inode, name, dir_wcc);
  return attempted(dir.volume->try_remove(dir.ctx, dir.inode, name, dir_wcc));
}

fs::Status Nfs3Call::rmdir(const Target& dir, std::string_view name, fs::Wcc* dir_wcc) {
  if (!on_event_loop_) return dir.volume->rmdir(dir.ctx, dir.inode, name, dir_wcc);
  return attempted(dir.volume->try_rmdir(dir.ctx, dir.inode, name, dir_wcc));
}

fs::Status Nfs3Call::rename(const Target& from, std::string_view from_name, const Target& to,
                            std::string_view to_name, fs::Wcc* from_wcc, fs::Wcc* to_wcc) {
  if (!on_event_loop_)
    return from.volume->rename(from.ctx, from.inode, from_name, to.inode, to_name, from_wcc,
                               to_wcc);
  return attempted(from.volume->try_rename(from.ctx, from.inode, from_name, to.inode, to_name,
                                           from_wcc, to_wcc));
}

fs::Status Nfs3Call::link(const Target& file, const Target& dir, std::string_view name,
                          std::optional<fs::Attr>* file_attr, fs::Wcc* dir_wcc) {
  if (!on_event_loop_)
    return file.volume->link(dir.ctx, file.inode, dir.inode, name, file_attr, dir_wcc);
  return attempted(
      file.volume->try_link(dir.ctx, file.inode, dir.inode, name, file_attr, dir_wcc));
}

}  // namespace nasd::nfs::nfs3
