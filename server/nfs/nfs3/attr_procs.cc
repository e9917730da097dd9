// GETATTR and SETATTR.
#include "server/nfs/nfs3/procedures.h"

namespace nasd::nfs::nfs3 {

rpc::DispatchResult proc_getattr(Nfs3Call& call) {
  xdr::Decoded<GETATTR3args> args(xdr_GETATTR3args);
  if (!call.decode(args)) return Nfs3Call::garbage_args();

  GETATTR3res res{};
  Target t;
  fs::Attr attr;
  res.status = call.open(args->object, &t);
  if (res.status == NFS3_OK) res.status = to_nfsstat(call.getattr(t, &attr));
  if (res.status == NFS3_OK) res.GETATTR3res_u.resok.obj_attributes = to_fattr(attr);
  return call.reply(xdr_GETATTR3res, res);
}

rpc::DispatchResult proc_setattr(Nfs3Call& call) {
  xdr::Decoded<SETATTR3args> args(xdr_SETATTR3args);
  if (!call.decode(args)) return Nfs3Call::garbage_args();

  SETATTR3res res{};
  Target t;
  fs::SetAttr sa;
  fs::Wcc wcc;
  res.status = call.open_for_change(args->object, &t);
  if (res.status == NFS3_OK && !from_sattr(args->new_attributes, &sa)) res.status = NFS3ERR_INVAL;
  if (res.status == NFS3_OK) {
    std::optional<fs::Time> guard;
    if (args->guard.check) guard = from_nfstime(args->guard.sattrguard3_u.obj_ctime);
    res.status = to_nfsstat(call.setattr(t, sa, guard, &wcc));
  }
  // resok and resfail both carry the object's WCC data, in the same place.
  if (res.status == NFS3_OK) res.SETATTR3res_u.resok.obj_wcc = to_wcc(wcc);
  else res.SETATTR3res_u.resfail.obj_wcc = to_wcc(wcc);
  return call.reply(xdr_SETATTR3res, res);
}

}  // namespace nasd::nfs::nfs3
