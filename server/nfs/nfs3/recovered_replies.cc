#include "server/nfs/nfs3/recovered_replies.h"

#include "server/nfs/nfs3/convert.h"
#include "server/nfs/xdr/nfs3_prot.h"
#include "server/nfs/xdr/xdr_codec.h"
#include "server/rpc/call_header.h"

namespace nasd::nfs {
namespace {

using namespace fs::call;
using namespace nfs3;

constexpr uint32_t kNfsProgram = 100003;
enum : uint32_t {
  kSetattr = 2, kCreate = 8, kMkdir = 9, kSymlink = 10, kMknod = 11,
  kRemove = 12, kRmdir = 13, kRename = 14, kLink = 15,
};

template <class Res>
std::optional<std::vector<uint8_t>> encoded(xdr::Routine<Res> routine, const Res& res) {
  std::vector<uint8_t> out;
  if (!xdr::append_encoded(xdr::as_proc(routine), &res, &out)) return std::nullopt;
  return out;
}

// The op a procedure journals; a record under another op is not this procedure's.
std::optional<VolumeOp> op_of(uint32_t proc) {
  switch (proc) {
    case kSetattr: return VolumeOp::Setattr;
    case kCreate: return VolumeOp::Create;
    case kMkdir: return VolumeOp::Mkdir;
    case kSymlink: return VolumeOp::Symlink;
    case kMknod: return VolumeOp::Mknod;
    case kRemove: return VolumeOp::Remove;
    case kRmdir: return VolumeOp::Rmdir;
    case kRename: return VolumeOp::Rename;
    case kLink: return VolumeOp::Link;
    default: return std::nullopt;
  }
}

// As put_created() in create_procs.cc: the new object's handle is issued under the export the
// parent directory was opened under (a new object is never a junction).
template <class Res, class ResOk>
std::optional<std::vector<uint8_t>> created(const HandleCodec& handles, uint32_t volume,
                                            uint32_t export_id, const CreatedResult& c,
                                            xdr::Routine<Res> routine, Res& res, ResOk* ok) {
  FileHandle handle = handles.encode(volume, c.id, export_id);
  res.status = NFS3_OK;
  ok->obj = to_post_op_fh(handle);
  ok->obj_attributes = to_post_op(c.obj_attr);
  ok->dir_wcc = to_wcc(c.dir_wcc);
  return encoded(routine, res);
}

}  // namespace

fs::CallIdentity call_identity_of(const rpc::DrcKey& key) {
  fs::CallIdentity id;
  id.address = key.address;
  id.family = key.family;
  id.port = 0;  // not part of a call's identity (rpc::DrcKey: a retransmission may come from a new port)
  id.xid = key.xid;
  id.prog = key.prog;
  id.vers = key.vers;
  id.proc = key.proc;
  id.args_hash = key.args_hash;
  return id;
}

rpc::DrcKey drc_key_of(const fs::CallIdentity& id) {
  rpc::DrcKey key;
  key.address = id.address;
  key.family = id.family;  // the port journalled by older builds is left out, as in DrcKey::make
  key.xid = id.xid;
  key.prog = id.prog;
  key.vers = id.vers;
  key.proc = id.proc;
  key.args_hash = id.args_hash;
  return key;
}

bool reply_rebuilt_from_journal(uint32_t proc) { return op_of(proc).has_value(); }

std::optional<std::vector<uint8_t>> rebuild_nfs3_results(const HandleCodec& handles,
                                                         uint32_t proc, uint32_t export_id,
                                                         const VolumeRequest& request,
                                                         const VolumeReply& reply) {
  const auto op = op_of(proc);
  if (!op || request.op() != *op || reply.op != *op || reply.status != fs::Status::Ok)
    return std::nullopt;
  // Export ids are 24 bits (export_id_for_path); anything else was never a handle's.
  if (export_id > 0xffffffu) return std::nullopt;
  const uint32_t volume = request.volume_id;
  if (const auto* c = std::get_if<CreatedResult>(&reply.result)) {
    switch (proc) {
      case kCreate: {
        CREATE3res res{};
        return created(handles, volume, export_id, *c, xdr_CREATE3res, res, &res.CREATE3res_u.resok);
      }
      case kMkdir: {
        MKDIR3res res{};
        return created(handles, volume, export_id, *c, xdr_MKDIR3res, res, &res.MKDIR3res_u.resok);
      }
      case kSymlink: {
        SYMLINK3res res{};
        return created(handles, volume, export_id, *c, xdr_SYMLINK3res, res, &res.SYMLINK3res_u.resok);
      }
      case kMknod: {
        MKNOD3res res{};
        return created(handles, volume, export_id, *c, xdr_MKNOD3res, res, &res.MKNOD3res_u.resok);
      }
    }
    return std::nullopt;
  }
  if (const auto* w = std::get_if<WccResult>(&reply.result)) {
    switch (proc) {
      case kSetattr: {
        SETATTR3res res{};
        res.status = NFS3_OK;
        res.SETATTR3res_u.resok.obj_wcc = to_wcc(w->wcc);
        return encoded(xdr_SETATTR3res, res);
      }
      case kRemove: {
        REMOVE3res res{};
        res.status = NFS3_OK;
        res.REMOVE3res_u.resok.dir_wcc = to_wcc(w->wcc);
        return encoded(xdr_REMOVE3res, res);
      }
      case kRmdir: {
        RMDIR3res res{};
        res.status = NFS3_OK;
        res.RMDIR3res_u.resok.dir_wcc = to_wcc(w->wcc);
        return encoded(xdr_RMDIR3res, res);
      }
    }
    return std::nullopt;
  }
  if (const auto* r = std::get_if<RenameResult>(&reply.result)) {
    RENAME3res res{};
    res.status = NFS3_OK;
    res.RENAME3res_u.resok.fromdir_wcc = to_wcc(r->from_wcc);
    res.RENAME3res_u.resok.todir_wcc = to_wcc(r->to_wcc);
    return encoded(xdr_RENAME3res, res);
  }
  if (const auto* l = std::get_if<LinkResult>(&reply.result)) {
    LINK3res res{};
    res.status = NFS3_OK;
    res.LINK3res_u.resok.file_attributes = to_post_op(l->file_attr);
    res.LINK3res_u.resok.linkdir_wcc = to_wcc(l->dir_wcc);
    return encoded(xdr_LINK3res, res);
  }
  return std::nullopt;
}

RecoveredReplies::RecoveredReplies(std::shared_ptr<HandleCodec> handles,
                                   std::shared_ptr<rpc::DuplicateRequestCache> cache)
    : handles_(std::move(handles)), cache_(std::move(cache)) {}

void RecoveredReplies::recovered(const fs::CallIdentity& identity, const VolumeRequest& request,
                                 const VolumeReply& reply) {
  if (identity.prog != kNfsProgram || identity.vers != 3) return;
  auto results =
      rebuild_nfs3_results(*handles_, identity.proc, identity.export_id, request, reply);
  if (!results) return;
  auto rpc_reply = std::make_shared<const rpc::EncodedReply>(
      rpc::encode_dispatch_reply(identity.xid, rpc::DispatchResult{}, std::move(*results)));
  cache_->insert_completed(drc_key_of(identity), std::move(rpc_reply));
  ++rebuilt_;
}

}  // namespace nasd::nfs
