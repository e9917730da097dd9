// READDIR and READDIRPLUS.
#include <vector>

#include "server/nfs/nfs3/procedures.h"
#include "server/nfs/nfs3/readdir_budget.h"

namespace nasd::nfs::nfs3 {
namespace {

// rpcgen encodes entry lists by recursion, one stack level per entry; these encoders walk the
// list in a loop instead, so a large reply cannot exhaust an executor thread's stack.
bool_t encode_readdir_res(XDR* x, READDIR3res* res) {
  if (!xdr_nfsstat3(x, &res->status)) return FALSE;
  if (res->status != NFS3_OK) return xdr_READDIR3resfail(x, &res->READDIR3res_u.resfail);
  READDIR3resok& ok = res->READDIR3res_u.resok;
  if (!xdr_post_op_attr(x, &ok.dir_attributes) || !xdr_cookieverf3(x, ok.cookieverf))
    return FALSE;
  for (entry3* e = ok.reply.entries; e; e = e->nextentry) {
    bool_t follows = TRUE;
    if (!xdr_bool(x, &follows) || !xdr_fileid3(x, &e->fileid) || !xdr_filename3(x, &e->name) ||
        !xdr_cookie3(x, &e->cookie))
      return FALSE;
  }
  bool_t follows = FALSE;
  return xdr_bool(x, &follows) && xdr_bool(x, &ok.reply.eof);
}

bool_t encode_readdirplus_res(XDR* x, READDIRPLUS3res* res) {
  if (!xdr_nfsstat3(x, &res->status)) return FALSE;
  if (res->status != NFS3_OK) return xdr_READDIRPLUS3resfail(x, &res->READDIRPLUS3res_u.resfail);
  READDIRPLUS3resok& ok = res->READDIRPLUS3res_u.resok;
  if (!xdr_post_op_attr(x, &ok.dir_attributes) || !xdr_cookieverf3(x, ok.cookieverf))
    return FALSE;
  for (entryplus3* e = ok.reply.entries; e; e = e->nextentry) {
    bool_t follows = TRUE;
    if (!xdr_bool(x, &follows) || !xdr_fileid3(x, &e->fileid) || !xdr_filename3(x, &e->name) ||
        !xdr_cookie3(x, &e->cookie) || !xdr_post_op_attr(x, &e->name_attributes) ||
        !xdr_post_op_fh3(x, &e->name_handle))
      return FALSE;
  }
  bool_t follows = FALSE;
  return xdr_bool(x, &follows) && xdr_bool(x, &ok.reply.eof);
}

// Links a vector of rpcgen entries into the list the wire format wants.
template <typename Entry>
Entry* link_entries(std::vector<Entry>& entries) {
  for (size_t i = 0; i + 1 < entries.size(); i++) entries[i].nextentry = &entries[i + 1];
  return entries.empty() ? nullptr : entries.data();
}

// The volume call both procedures share; NFS3_OK or the error for the reply.
nfsstat3 read_dir(Nfs3Call& call, const nfs_fh3& fh, cookie3 cookie, const char* verf,
                  uint32_t max_entries, bool with_attrs, Target* dir, fs::ReaddirResult* out) {
  nfsstat3 st = call.open(fh, dir);
  if (st != NFS3_OK) return st;
  return to_nfsstat(
      call.readdir(*dir, cookie, get_verifier(verf), max_entries, with_attrs, out));
}

}  // namespace

rpc::DispatchResult proc_readdir(Nfs3Call& call) {
  xdr::Decoded<READDIR3args> args(xdr_READDIR3args);
  if (!call.decode(args)) return Nfs3Call::garbage_args();

  READDIR3res res{};
  Target dir;
  fs::ReaddirResult listing;
  std::vector<entry3> entries;
  ReaddirBudget budget(std::min(args->count, call.max_transfer()),
                       std::min(args->count, call.max_transfer()));
  res.status = read_dir(call, args->dir, args->cookie, args->cookieverf,
                        budget.entries_to_ask(entry3_bytes("x")), false, &dir, &listing);
  if (res.status == NFS3_OK) {
    for (fs::DirEntry& e : listing.entries) {
      if (!budget.take(entry3_bytes(e.name), entry3_bytes(e.name))) break;
      entries.push_back(entry3{e.fileid, e.name.data(), e.cookie, nullptr});
    }
    if (entries.empty() && !listing.entries.empty()) res.status = NFS3ERR_TOOSMALL;
  }
  if (res.status == NFS3_OK) {
    READDIR3resok& ok = res.READDIR3res_u.resok;
    ok.dir_attributes = to_post_op(listing.dir_attr);
    put_verifier(listing.cookieverf, ok.cookieverf);
    ok.reply.entries = link_entries(entries);
    ok.reply.eof = listing.eof && entries.size() == listing.entries.size();
  } else {
    res.READDIR3res_u.resfail.dir_attributes = to_post_op(listing.dir_attr);
  }
  return call.reply(encode_readdir_res, res);
}

rpc::DispatchResult proc_readdirplus(Nfs3Call& call) {
  xdr::Decoded<READDIRPLUS3args> args(xdr_READDIRPLUS3args);
  if (!call.decode(args)) return Nfs3Call::garbage_args();

  READDIRPLUS3res res{};
  Target dir;
  fs::ReaddirResult listing;
  std::vector<entryplus3> entries;
  std::vector<FileHandle> handles;
  ReaddirBudget budget(std::min(args->maxcount, call.max_transfer()), args->dircount);
  res.status = read_dir(call, args->dir, args->cookie, args->cookieverf,
                        budget.entries_to_ask(entryplus3_bytes("x", true)), true, &dir, &listing);
  if (res.status == NFS3_OK) {
    handles.reserve(listing.entries.size());  // entries point into it: it must not reallocate
    for (fs::DirEntry& e : listing.entries) {
      if (!budget.take(entryplus3_bytes(e.name, e.attr.has_value()), entry3_bytes(e.name))) break;
      handles.emplace_back();
      // A junction into a volume whose exports refuse this client is listed without a handle.
      bool has_handle = call.handle_for(dir, e.id, &handles.back(), e.name) == NFS3_OK;
      entryplus3 plus{};
      plus.fileid = e.fileid;
      plus.name = e.name.data();
      plus.cookie = e.cookie;
      plus.name_attributes = to_post_op(e.attr);
      if (has_handle) plus.name_handle = to_post_op_fh(handles.back());
      entries.push_back(plus);
    }
    if (entries.empty() && !listing.entries.empty()) res.status = NFS3ERR_TOOSMALL;
  }
  if (res.status == NFS3_OK) {
    READDIRPLUS3resok& ok = res.READDIRPLUS3res_u.resok;
    ok.dir_attributes = to_post_op(listing.dir_attr);
    put_verifier(listing.cookieverf, ok.cookieverf);
    ok.reply.entries = link_entries(entries);
    ok.reply.eof = listing.eof && entries.size() == listing.entries.size();
  } else {
    res.READDIRPLUS3res_u.resfail.dir_attributes = to_post_op(listing.dir_attr);
  }
  return call.reply(encode_readdirplus_res, res);
}

}  // namespace nasd::nfs::nfs3
