// CREATE, MKDIR, SYMLINK and MKNOD: each makes one new directory entry and replies with the
// new object's handle and attributes plus the parent directory's WCC data.
#include "server/nfs/nfs3/procedures.h"

namespace nasd::nfs::nfs3 {
namespace {

// What the volume reports about a newly made object; `handle` backs the reply's nfs_fh3.
struct Created {
  fs::InodeId inode;
  std::optional<fs::Attr> attr;
  fs::Wcc dir_wcc;
  FileHandle handle;
};

// The four *3resok structures share one shape; so do the *3resfail ones.
template <typename ResOk>
void put_created(Nfs3Call& call, const Target& dir, Created& c, ResOk* ok) {
  // A new object is never a junction, so its handle is always issued under dir's export.
  if (call.handle_for(dir, c.inode, &c.handle) == NFS3_OK) ok->obj = to_post_op_fh(c.handle);
  ok->obj_attributes = to_post_op(c.attr);
  ok->dir_wcc = to_wcc(c.dir_wcc);
}

// Opens the parent directory for a new entry named `where.name`.
nfsstat3 open_parent(Nfs3Call& call, const diropargs3& where, Target* dir) {
  nfsstat3 st = call.open_for_change(where.dir, dir);
  return st == NFS3_OK ? call.check_name(where.name) : st;
}

}  // namespace

rpc::DispatchResult proc_create(Nfs3Call& call) {
  xdr::Decoded<CREATE3args> args(xdr_CREATE3args);
  if (!call.decode(args)) return Nfs3Call::garbage_args();

  CREATE3res res{};
  Target dir;
  Created c;
  fs::SetAttr sa;
  uint64_t verifier = 0;
  const createhow3& how = args->how;
  res.status = open_parent(call, args->where, &dir);
  if (res.status == NFS3_OK) {
    if (how.mode == EXCLUSIVE)
      verifier = get_verifier(how.createhow3_u.verf);  // attributes follow in a SETATTR
    else if (!from_sattr(how.createhow3_u.obj_attributes, &sa))
      res.status = NFS3ERR_INVAL;
  }
  if (res.status == NFS3_OK)
    res.status = to_nfsstat(call.create(dir, args->where.name,
                                        static_cast<fs::CreateMode>(how.mode), sa, verifier,
                                        &c.inode, &c.attr, &c.dir_wcc));
  if (res.status == NFS3_OK) put_created(call, dir, c, &res.CREATE3res_u.resok);
  else res.CREATE3res_u.resfail.dir_wcc = to_wcc(c.dir_wcc);
  return call.reply(xdr_CREATE3res, res);
}

rpc::DispatchResult proc_mkdir(Nfs3Call& call) {
  xdr::Decoded<MKDIR3args> args(xdr_MKDIR3args);
  if (!call.decode(args)) return Nfs3Call::garbage_args();

  MKDIR3res res{};
  Target dir;
  Created c;
  fs::SetAttr sa;
  res.status = open_parent(call, args->where, &dir);
  if (res.status == NFS3_OK && !from_sattr(args->attributes, &sa)) res.status = NFS3ERR_INVAL;
  if (res.status == NFS3_OK)
    res.status =
        to_nfsstat(call.mkdir(dir, args->where.name, sa, &c.inode, &c.attr, &c.dir_wcc));
  if (res.status == NFS3_OK) put_created(call, dir, c, &res.MKDIR3res_u.resok);
  else res.MKDIR3res_u.resfail.dir_wcc = to_wcc(c.dir_wcc);
  return call.reply(xdr_MKDIR3res, res);
}

rpc::DispatchResult proc_symlink(Nfs3Call& call) {
  xdr::Decoded<SYMLINK3args> args(xdr_SYMLINK3args);
  if (!call.decode(args)) return Nfs3Call::garbage_args();

  SYMLINK3res res{};
  Target dir;
  Created c;
  fs::SetAttr sa;
  const symlinkdata3& link = args->symlink;
  res.status = open_parent(call, args->where, &dir);
  if (res.status == NFS3_OK && !from_sattr(link.symlink_attributes, &sa))
    res.status = NFS3ERR_INVAL;
  if (res.status == NFS3_OK)
    res.status = to_nfsstat(call.symlink(dir, args->where.name, link.symlink_data, sa,
                                         &c.inode, &c.attr, &c.dir_wcc));
  if (res.status == NFS3_OK) put_created(call, dir, c, &res.SYMLINK3res_u.resok);
  else res.SYMLINK3res_u.resfail.dir_wcc = to_wcc(c.dir_wcc);
  return call.reply(xdr_SYMLINK3res, res);
}

rpc::DispatchResult proc_mknod(Nfs3Call& call) {
  xdr::Decoded<MKNOD3args> args(xdr_MKNOD3args);
  if (!call.decode(args)) return Nfs3Call::garbage_args();

  MKNOD3res res{};
  Target dir;
  Created c;
  fs::SetAttr sa;
  uint32_t major = 0, minor = 0;
  const mknoddata3& what = args->what;
  const sattr3* attrs = nullptr;
  const uint32_t type = raw_enum(what.type);
  switch (type) {
    case NF3CHR:
    case NF3BLK:
      attrs = &what.mknoddata3_u.device.dev_attributes;
      major = what.mknoddata3_u.device.spec.specdata1;
      minor = what.mknoddata3_u.device.spec.specdata2;
      break;
    case NF3SOCK:
    case NF3FIFO:
      attrs = &what.mknoddata3_u.pipe_attributes;
      break;
    default:
      break;  // regular files, directories and symlinks have their own procedures
  }
  res.status = open_parent(call, args->where, &dir);
  if (res.status == NFS3_OK && !attrs) res.status = NFS3ERR_BADTYPE;
  if (res.status == NFS3_OK && !from_sattr(*attrs, &sa)) res.status = NFS3ERR_INVAL;
  if (res.status == NFS3_OK)
    res.status = to_nfsstat(call.mknod(dir, args->where.name, static_cast<fs::FileType>(type),
                                       sa, major, minor, &c.inode, &c.attr, &c.dir_wcc));
  if (res.status == NFS3_OK) put_created(call, dir, c, &res.MKNOD3res_u.resok);
  else res.MKNOD3res_u.resfail.dir_wcc = to_wcc(c.dir_wcc);
  return call.reply(xdr_MKNOD3res, res);
}

}  // namespace nasd::nfs::nfs3
