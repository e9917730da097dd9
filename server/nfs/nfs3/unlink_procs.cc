// REMOVE, RMDIR, RENAME and LINK: the procedures that take away or add names of existing
// objects.
#include "server/nfs/nfs3/procedures.h"

namespace nasd::nfs::nfs3 {
namespace {

nfsstat3 open_entry(Nfs3Call& call, const diropargs3& entry, Target* dir) {
  nfsstat3 st = call.open_for_change(entry.dir, dir);
  return st == NFS3_OK ? call.check_name(entry.name) : st;
}

// Both objects of a two-handle procedure must live on one volume.
nfsstat3 same_volume(const Target& a, const Target& b) {
  return a.volume_id == b.volume_id ? NFS3_OK : NFS3ERR_XDEV;
}

}  // namespace

rpc::DispatchResult proc_remove(Nfs3Call& call) {
  xdr::Decoded<REMOVE3args> args(xdr_REMOVE3args);
  if (!call.decode(args)) return Nfs3Call::garbage_args();

  REMOVE3res res{};
  Target dir;
  fs::Wcc wcc;
  res.status = open_entry(call, args->object, &dir);
  if (res.status == NFS3_OK)
    res.status = to_nfsstat(call.remove(dir, args->object.name, &wcc));
  if (res.status == NFS3_OK) res.REMOVE3res_u.resok.dir_wcc = to_wcc(wcc);
  else res.REMOVE3res_u.resfail.dir_wcc = to_wcc(wcc);
  return call.reply(xdr_REMOVE3res, res);
}

rpc::DispatchResult proc_rmdir(Nfs3Call& call) {
  xdr::Decoded<RMDIR3args> args(xdr_RMDIR3args);
  if (!call.decode(args)) return Nfs3Call::garbage_args();

  RMDIR3res res{};
  Target dir;
  fs::Wcc wcc;
  res.status = open_entry(call, args->object, &dir);
  if (res.status == NFS3_OK)
    res.status = to_nfsstat(call.rmdir(dir, args->object.name, &wcc));
  if (res.status == NFS3_OK) res.RMDIR3res_u.resok.dir_wcc = to_wcc(wcc);
  else res.RMDIR3res_u.resfail.dir_wcc = to_wcc(wcc);
  return call.reply(xdr_RMDIR3res, res);
}

rpc::DispatchResult proc_rename(Nfs3Call& call) {
  xdr::Decoded<RENAME3args> args(xdr_RENAME3args);
  if (!call.decode(args)) return Nfs3Call::garbage_args();

  RENAME3res res{};
  Target from, to;
  fs::Wcc from_wcc, to_wcc_data;
  res.status = open_entry(call, args->from, &from);
  if (res.status == NFS3_OK) res.status = open_entry(call, args->to, &to);
  if (res.status == NFS3_OK) res.status = same_volume(from, to);
  if (res.status == NFS3_OK)
    res.status = to_nfsstat(
        call.rename(from, args->from.name, to, args->to.name, &from_wcc, &to_wcc_data));
  // Success and failure replies both carry the WCC data of the two directories.
  if (res.status == NFS3_OK) {
    res.RENAME3res_u.resok.fromdir_wcc = to_wcc(from_wcc);
    res.RENAME3res_u.resok.todir_wcc = to_wcc(to_wcc_data);
  } else {
    res.RENAME3res_u.resfail.fromdir_wcc = to_wcc(from_wcc);
    res.RENAME3res_u.resfail.todir_wcc = to_wcc(to_wcc_data);
  }
  return call.reply(xdr_RENAME3res, res);
}

rpc::DispatchResult proc_link(Nfs3Call& call) {
  xdr::Decoded<LINK3args> args(xdr_LINK3args);
  if (!call.decode(args)) return Nfs3Call::garbage_args();

  LINK3res res{};
  Target file, dir;
  std::optional<fs::Attr> file_attr;
  fs::Wcc dir_wcc;
  res.status = call.open_for_change(args->file, &file);
  if (res.status == NFS3_OK) res.status = open_entry(call, args->link, &dir);
  if (res.status == NFS3_OK) res.status = same_volume(file, dir);
  if (res.status == NFS3_OK)
    res.status = to_nfsstat(call.link(file, dir, args->link.name, &file_attr, &dir_wcc));
  if (res.status == NFS3_OK) {
    res.LINK3res_u.resok.file_attributes = to_post_op(file_attr);
    res.LINK3res_u.resok.linkdir_wcc = to_wcc(dir_wcc);
  } else {
    res.LINK3res_u.resfail.file_attributes = to_post_op(file_attr);
    res.LINK3res_u.resfail.linkdir_wcc = to_wcc(dir_wcc);
  }
  return call.reply(xdr_LINK3res, res);
}

}  // namespace nasd::nfs::nfs3
