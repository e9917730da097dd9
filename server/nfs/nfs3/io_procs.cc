// READ, WRITE and COMMIT.
#include <algorithm>
#include <vector>

#include "util/byte_slices.h"

#include "server/nfs/nfs3/procedures.h"

namespace nasd::nfs::nfs3 {
namespace {

// WRITE's arguments, decoded without copying the payload: `data` points into the call's
// argument bytes, which outlive the procedure. The handle is decoded into `handle` (XDR
// checks its length against NFS3_FHSIZE first), so decoding allocates nothing.
struct WriteArgs {
  nfs_fh3 file{};
  offset3 offset = 0;
  count3 count = 0;
  stable_how stable = UNSTABLE;
  std::span<const uint8_t> data;
  char handle[NFS3_FHSIZE];

  WriteArgs() { file.data.data_val = handle; }
  WriteArgs(const WriteArgs&) = delete;
  ~WriteArgs() {
    if (file.data.data_val == handle) file.data.data_val = nullptr;  // not XDR's to free
    xdr_free(xdr::as_proc(xdr_nfs_fh3), reinterpret_cast<char*>(&file));
  }
};

bool decode_write_args(std::span<const uint8_t> bytes, WriteArgs* out) {
  XDR x;
  xdrmem_create(&x, reinterpret_cast<char*>(const_cast<uint8_t*>(bytes.data())),
                static_cast<u_int>(bytes.size()), XDR_DECODE);
  u_int len = 0;
  bool ok = xdr_nfs_fh3(&x, &out->file) && xdr_offset3(&x, &out->offset) &&
            xdr_count3(&x, &out->count) && xdr_stable_how(&x, &out->stable) &&
            xdr_u_int(&x, &len) && len <= NFS3_MAXDATA;
  if (ok) {
    // The opaque payload is padded to a multiple of four bytes on the wire.
    auto* p = reinterpret_cast<const uint8_t*>(xdr_inline(&x, static_cast<int>((len + 3) & ~3u)));
    ok = p != nullptr;
    if (ok) out->data = {p, len};
  }
  xdr_destroy(&x);
  return ok;
}

}  // namespace

rpc::DispatchResult proc_read(Nfs3Call& call) {
  xdr::Decoded<READ3args> args(xdr_READ3args);
  if (!call.decode(args)) return Nfs3Call::garbage_args();

  READ3res res{};
  Target t;
  util::ByteSlices data;
  bool eof = false;
  std::optional<fs::Attr> attr;
  // A client may ask for more than FSINFO's rtmax; it then gets a short read.
  const uint32_t count = std::min(args->count, call.max_transfer());
  res.status = call.open(args->file, &t);
  if (res.status == NFS3_OK)
    res.status = to_nfsstat(call.read(t, args->offset, count, &data, &eof, &attr));
  if (res.status == NFS3_OK) {
    auto& ok = res.READ3res_u.resok;
    ok.file_attributes = to_post_op(attr);
    ok.count = static_cast<count3>(data.size());
    ok.eof = eof;
    // The data is the last item of the reply: encode everything before it with an empty
    // opaque, put the real length in the opaque's length word, and hand the data itself to
    // the transport as the reply's tail (sent from where the volume keeps it -- cache blocks
    // when the call ran on the loop --, never copied into the results).
    ok.data.data_len = 0;
    ok.data.data_val = nullptr;
    rpc::DispatchResult r = call.reply(xdr_READ3res, res);
    if (r.accept != rpc::AcceptStat::Success) return r;
    call.patch_last_word(static_cast<uint32_t>(data.size()));
    const size_t pad = (4 - data.size() % 4) % 4;  // XDR pads opaque data to four bytes
    data.append(util::ByteSlices::zeros(pad), pad);
    r.tail = std::move(data);
    return r;
  }
  res.READ3res_u.resfail.file_attributes = to_post_op(attr);
  return call.reply(xdr_READ3res, res);
}

rpc::DispatchResult proc_write(Nfs3Call& call) {
  WriteArgs args;
  if (!decode_write_args(call.raw_args(), &args)) return Nfs3Call::garbage_args();
  // `count` may be less than the payload (the rest is ignored) but never more.
  if (args.count > args.data.size()) return Nfs3Call::garbage_args();

  WRITE3res res{};
  Target t;
  fs::Wcc wcc;
  fs::Stability committed = fs::Stability::FileSync;
  res.status = call.open_for_change(args.file, &t);
  // xdr_enum accepts any number; only the three stable_how values mean something.
  const uint32_t stable = raw_enum(args.stable);
  if (res.status == NFS3_OK && stable > FILE_SYNC) res.status = NFS3ERR_INVAL;
  if (res.status == NFS3_OK)
    res.status = to_nfsstat(call.write(t, args.offset, args.data.first(args.count),
                                       static_cast<fs::Stability>(stable), &committed, &wcc));
  if (res.status == NFS3_OK) {
    auto& ok = res.WRITE3res_u.resok;
    ok.file_wcc = to_wcc(wcc);
    ok.count = args.count;
    ok.committed = static_cast<stable_how>(committed);
    put_verifier(t.volume->write_verifier(), ok.verf);
  } else {
    res.WRITE3res_u.resfail.file_wcc = to_wcc(wcc);
  }
  return call.reply(xdr_WRITE3res, res);
}

rpc::DispatchResult proc_commit(Nfs3Call& call) {
  xdr::Decoded<COMMIT3args> args(xdr_COMMIT3args);
  if (!call.decode(args)) return Nfs3Call::garbage_args();

  COMMIT3res res{};
  Target t;
  fs::Wcc wcc;
  // COMMIT changes nothing a read-only export protects, so it is allowed there.
  res.status = call.open(args->file, &t);
  if (res.status == NFS3_OK)
    res.status = to_nfsstat(call.commit(t, args->offset, args->count, &wcc));
  if (res.status == NFS3_OK) {
    res.COMMIT3res_u.resok.file_wcc = to_wcc(wcc);
    put_verifier(t.volume->write_verifier(), res.COMMIT3res_u.resok.verf);
  } else {
    res.COMMIT3res_u.resfail.file_wcc = to_wcc(wcc);
  }
  return call.reply(xdr_COMMIT3res, res);
}

}  // namespace nasd::nfs::nfs3
