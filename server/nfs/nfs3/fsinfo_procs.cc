// FSSTAT, FSINFO and PATHCONF: what a client learns about the file system behind a handle.
#include <algorithm>
#include <limits>

#include "server/nfs/nfs3/procedures.h"

namespace nasd::nfs::nfs3 {
namespace {

// Directory reads are preferred in chunks this large (bounded by the transfer size).
constexpr uint32_t kPreferredReaddirBytes = 64 * 1024;

// FSINFO and PATHCONF report the object's attributes; fetching them is the procedure's one
// volume call and also tells a stale handle from a live one. Both stay off the event loop:
// Volume::limits() may ask a forwarded volume's owner (once, waiting), which neither the loop
// nor the link's reader thread that resumes parked calls may do. They are asked once a mount.
nfsstat3 open_with_attr(Nfs3Call& call, const nfs_fh3& fh, Target* t, std::optional<fs::Attr>* attr) {
  nfsstat3 st = call.open(fh, t);
  if (st != NFS3_OK) return st;
  fs::Attr a;
  st = to_nfsstat(t->volume->getattr(t->ctx, t->inode, &a));
  if (st == NFS3_OK) *attr = a;
  return st;
}

}  // namespace

rpc::DispatchResult proc_fsstat(Nfs3Call& call) {
  xdr::Decoded<FSSTAT3args> args(xdr_FSSTAT3args);
  if (!call.decode(args)) return Nfs3Call::garbage_args();

  FSSTAT3res res{};
  Target t;
  fs::FsStat st;
  std::optional<fs::Attr> attr;
  res.status = call.open(args->fsroot, &t);
  if (res.status == NFS3_OK) res.status = to_nfsstat(call.fsstat(t, &st, &attr));
  if (res.status == NFS3_OK) {
    FSSTAT3resok& ok = res.FSSTAT3res_u.resok;
    ok.obj_attributes = to_post_op(attr);
    ok.tbytes = st.total_bytes;
    ok.fbytes = st.free_bytes;
    ok.abytes = st.avail_bytes;
    ok.tfiles = st.total_files;
    ok.ffiles = st.free_files;
    ok.afiles = st.avail_files;
    ok.invarsec = st.invarsec;
  } else {
    res.FSSTAT3res_u.resfail.obj_attributes = to_post_op(attr);
  }
  return call.reply(xdr_FSSTAT3res, res);
}

rpc::DispatchResult proc_fsinfo(Nfs3Call& call) {
  xdr::Decoded<FSINFO3args> args(xdr_FSINFO3args);
  if (!call.decode(args)) return Nfs3Call::garbage_args();

  FSINFO3res res{};
  Target t;
  std::optional<fs::Attr> attr;
  res.status = open_with_attr(call, args->fsroot, &t, &attr);
  if (res.status == NFS3_OK) {
    const fs::VolumeLimits limits = t.volume->limits();
    const uint32_t transfer = call.max_transfer();
    const uint32_t block = std::max<uint32_t>(limits.block_size, 512);
    FSINFO3resok& ok = res.FSINFO3res_u.resok;
    ok.obj_attributes = to_post_op(attr);
    ok.rtmax = ok.rtpref = transfer;
    ok.wtmax = ok.wtpref = transfer;
    ok.rtmult = ok.wtmult = std::min(block, transfer);
    ok.dtpref = std::min(kPreferredReaddirBytes, transfer);
    // 0 means the volume sets no limit of its own.
    ok.maxfilesize = limits.max_file_size ? limits.max_file_size
                                          : static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    ok.time_delta = to_nfstime(limits.time_delta);
    ok.properties = FSF3_LINK | FSF3_SYMLINK | FSF3_HOMOGENEOUS | FSF3_CANSETTIME;
  } else {
    res.FSINFO3res_u.resfail.obj_attributes = to_post_op(attr);
  }
  return call.reply(xdr_FSINFO3res, res);
}

rpc::DispatchResult proc_pathconf(Nfs3Call& call) {
  xdr::Decoded<PATHCONF3args> args(xdr_PATHCONF3args);
  if (!call.decode(args)) return Nfs3Call::garbage_args();

  PATHCONF3res res{};
  Target t;
  std::optional<fs::Attr> attr;
  res.status = open_with_attr(call, args->object, &t, &attr);
  if (res.status == NFS3_OK) {
    const fs::VolumeLimits limits = t.volume->limits();
    PATHCONF3resok& ok = res.PATHCONF3res_u.resok;
    ok.obj_attributes = to_post_op(attr);
    ok.linkmax = limits.link_max;
    // Names longer than the XDR bound could not be sent anyway.
    ok.name_max = std::min<uint32_t>(limits.name_max, NFS3_MAXNAMLEN);
    ok.no_trunc = TRUE;
    ok.chown_restricted = TRUE;
    ok.case_insensitive = FALSE;
    ok.case_preserving = TRUE;
  } else {
    res.PATHCONF3res_u.resfail.obj_attributes = to_post_op(attr);
  }
  return call.reply(xdr_PATHCONF3res, res);
}

}  // namespace nasd::nfs::nfs3
