// LOOKUP, ACCESS and READLINK.
#include <string>

#include "server/nfs/nfs3/procedures.h"

namespace nasd::nfs::nfs3 {

rpc::DispatchResult proc_lookup(Nfs3Call& call) {
  xdr::Decoded<LOOKUP3args> args(xdr_LOOKUP3args);
  if (!call.decode(args)) return Nfs3Call::garbage_args();

  LOOKUP3res res{};
  Target dir;
  fs::InodeId found;
  std::optional<fs::Attr> obj_attr, dir_attr;
  FileHandle fh;
  res.status = call.open(args->what.dir, &dir);
  if (res.status == NFS3_OK) res.status = call.check_name(args->what.name);
  if (res.status == NFS3_OK)
    res.status =
        to_nfsstat(call.lookup(dir, args->what.name, &found, &obj_attr, &dir_attr));
  if (res.status == NFS3_OK) res.status = call.handle_for(dir, found, &fh, args->what.name);
  if (res.status == NFS3_OK) {
    res.LOOKUP3res_u.resok.object = to_wire(fh);
    res.LOOKUP3res_u.resok.obj_attributes = to_post_op(obj_attr);
    res.LOOKUP3res_u.resok.dir_attributes = to_post_op(dir_attr);
  } else {
    res.LOOKUP3res_u.resfail.dir_attributes = to_post_op(dir_attr);
  }
  return call.reply(xdr_LOOKUP3res, res);
}

rpc::DispatchResult proc_access(Nfs3Call& call) {
  xdr::Decoded<ACCESS3args> args(xdr_ACCESS3args);
  if (!call.decode(args)) return Nfs3Call::garbage_args();

  ACCESS3res res{};
  Target t;
  uint32_t granted = 0;
  std::optional<fs::Attr> attr;
  res.status = call.open(args->object, &t);
  if (res.status == NFS3_OK)
    res.status = to_nfsstat(call.access(t, args->access, &granted, &attr));
  if (res.status == NFS3_OK) {
    // The volume knows nothing of read-only exports; nothing that changes data is granted there.
    if (t.policy->read_only) granted &= ~(ACCESS3_MODIFY | ACCESS3_EXTEND | ACCESS3_DELETE);
    res.ACCESS3res_u.resok.obj_attributes = to_post_op(attr);
    res.ACCESS3res_u.resok.access = granted & args->access;
  } else {
    res.ACCESS3res_u.resfail.obj_attributes = to_post_op(attr);
  }
  return call.reply(xdr_ACCESS3res, res);
}

rpc::DispatchResult proc_readlink(Nfs3Call& call) {
  xdr::Decoded<READLINK3args> args(xdr_READLINK3args);
  if (!call.decode(args)) return Nfs3Call::garbage_args();

  READLINK3res res{};
  Target t;
  std::string target;
  std::optional<fs::Attr> attr;
  res.status = call.open(args->symlink, &t);
  if (res.status == NFS3_OK) res.status = to_nfsstat(call.readlink(t, &target, &attr));
  // The reply's nfspath3 is bounded like the request's; a longer stored target is an I/O error
  // rather than a reply the client's decoder would reject.
  if (res.status == NFS3_OK && target.size() > NFS3_MAXPATHLEN) res.status = NFS3ERR_IO;
  if (res.status == NFS3_OK) {
    res.READLINK3res_u.resok.symlink_attributes = to_post_op(attr);
    res.READLINK3res_u.resok.data = target.data();
  } else {
    res.READLINK3res_u.resfail.symlink_attributes = to_post_op(attr);
  }
  return call.reply(xdr_READLINK3res, res);
}

}  // namespace nasd::nfs::nfs3
