#include "server/rpc/call_header.h"

#include <rpc/xdr.h>

namespace nasd::rpc {
namespace {

enum : uint32_t { kMsgCall = 0, kMsgReply = 1 };
enum : uint32_t { kMsgAccepted = 0, kMsgDenied = 1 };
enum : uint32_t { kRejectRpcMismatch = 0, kRejectAuthError = 1 };

// A read-only XDR stream over a byte span; libtirpc takes a non-const pointer but a
// decode stream never writes through it.
class XdrReader {
 public:
  explicit XdrReader(std::span<const uint8_t> bytes) {
    xdrmem_create(&xdr_, reinterpret_cast<char*>(const_cast<uint8_t*>(bytes.data())),
                  static_cast<u_int>(bytes.size()), XDR_DECODE);
  }
  ~XdrReader() { xdr_destroy(&xdr_); }
  XdrReader(const XdrReader&) = delete;
  XdrReader& operator=(const XdrReader&) = delete;

  bool u32(uint32_t* v) {
    u_int x;
    if (!xdr_u_int(&xdr_, &x)) return false;
    *v = x;
    return true;
  }
  bool opaque(void* out, uint32_t len) {
    return xdr_opaque(&xdr_, static_cast<char*>(out), len);
  }
  // Skips an opaque of `len` bytes plus its XDR padding.
  bool skip(uint32_t len) {
    uint64_t target = uint64_t{pos()} + ((uint64_t{len} + 3) & ~uint64_t{3});
    return target <= UINT32_MAX && xdr_setpos(&xdr_, static_cast<u_int>(target));
  }
  uint32_t pos() { return xdr_getpos(&xdr_); }

 private:
  XDR xdr_;
};

// authsys_parms (RFC 5531 appendix A). Anything that does not decode exactly, or exceeds the
// protocol limits, is a bad credential.
bool decode_auth_sys(std::span<const uint8_t> body, Credential* cred) {
  XdrReader in(body);
  uint32_t name_len = 0, ngids = 0;
  if (!in.u32(&cred->stamp) || !in.u32(&name_len) || name_len > kMaxMachineName) return false;
  cred->machine.resize(name_len);
  if (!in.opaque(cred->machine.data(), name_len)) return false;
  if (!in.u32(&cred->uid) || !in.u32(&cred->gid) || !in.u32(&ngids) || ngids > kMaxAuthSysGids)
    return false;
  cred->gids.resize(ngids);
  for (uint32_t& g : cred->gids)
    if (!in.u32(&g)) return false;
  return in.pos() == body.size();
}

// A writer over EncodedReply::head, after the record mark slot.
class HeadWriter {
 public:
  explicit HeadWriter(EncodedReply* reply) : reply_(reply) {
    xdrmem_create(&xdr_, reinterpret_cast<char*>(reply->head.data() + 4),
                  static_cast<u_int>(reply->head.size() - 4), XDR_ENCODE);
  }
  ~HeadWriter() { xdr_destroy(&xdr_); }
  HeadWriter& u32(uint32_t v) {
    u_int x = v;
    xdr_u_int(&xdr_, &x);  // cannot overflow: every header here is far below head.size()
    return *this;
  }
  // Fills the record mark for head + body as one last fragment.
  void finish() {
    reply_->head_len = 4 + xdr_getpos(&xdr_);
    uint32_t length = static_cast<uint32_t>(reply_->message_size());
    uint32_t mark = 0x80000000u | length;
    for (int i = 0; i < 4; ++i) reply_->head[i] = static_cast<uint8_t>(mark >> (24 - 8 * i));
  }

 private:
  EncodedReply* reply_;
  XDR xdr_;
};

}  // namespace

DecodedCall decode_call_header(std::span<const uint8_t> record) {
  DecodedCall out;
  XdrReader in(record);
  CallContext& call = out.call;
  uint32_t mtype = 0, rpcvers = 0;
  if (!in.u32(&call.xid) || !in.u32(&mtype) || mtype != kMsgCall || !in.u32(&rpcvers)) return out;
  if (rpcvers != kRpcVersion) {
    // The rest of the header may follow another layout; answer from the xid alone.
    out.status = CallHeaderStatus::RpcVersionMismatch;
    return out;
  }
  uint32_t cred_len = 0, verf_flavor = 0, verf_len = 0;
  if (!in.u32(&call.prog) || !in.u32(&call.vers) || !in.u32(&call.proc) ||
      !in.u32(&call.cred.flavor) || !in.u32(&cred_len))
    return out;
  uint32_t cred_pos = in.pos();
  if (!in.skip(cred_len) || !in.u32(&verf_flavor) || !in.u32(&verf_len) || !in.skip(verf_len))
    return out;
  out.args_offset = in.pos();

  AuthStat auth = AuthStat::Ok;
  if (cred_len > kMaxAuthBytes || verf_len > kMaxAuthBytes) {
    auth = cred_len > kMaxAuthBytes ? AuthStat::BadCred : AuthStat::BadVerf;
  } else if (call.cred.flavor == kAuthSys) {
    if (!decode_auth_sys(record.subspan(cred_pos, cred_len), &call.cred)) auth = AuthStat::BadCred;
  } else if (call.cred.flavor == kAuthShort) {
    // We never hand out short-hand verifiers, so the client must resend full AUTH_SYS.
    auth = AuthStat::RejectedCred;
  } else if (call.cred.flavor != kAuthNone) {
    auth = AuthStat::TooWeak;  // RPCSEC_GSS, AUTH_DH, ...: not offered by this server
  }
  if (auth != AuthStat::Ok) {
    call.cred = Credential{};
    out.auth_stat = auth;
    out.status = CallHeaderStatus::AuthError;
    return out;
  }
  out.status = CallHeaderStatus::Ok;
  return out;
}

EncodedReply encode_accepted_reply(uint32_t xid, AcceptStat stat, std::vector<uint8_t> results,
                                   uint32_t low_version, uint32_t high_version) {
  EncodedReply reply;
  HeadWriter w(&reply);
  w.u32(xid).u32(kMsgReply).u32(kMsgAccepted).u32(kAuthNone).u32(0).u32(
      static_cast<uint32_t>(stat));
  if (stat == AcceptStat::ProgMismatch) w.u32(low_version).u32(high_version);
  if (stat == AcceptStat::Success) reply.body = std::move(results);
  w.finish();
  return reply;
}

EncodedReply encode_rpc_mismatch_reply(uint32_t xid) {
  EncodedReply reply;
  HeadWriter w(&reply);
  w.u32(xid).u32(kMsgReply).u32(kMsgDenied).u32(kRejectRpcMismatch).u32(kRpcVersion).u32(
      kRpcVersion);
  w.finish();
  return reply;
}

EncodedReply encode_auth_error_reply(uint32_t xid, AuthStat why) {
  EncodedReply reply;
  HeadWriter w(&reply);
  w.u32(xid).u32(kMsgReply).u32(kMsgDenied).u32(kRejectAuthError).u32(static_cast<uint32_t>(why));
  w.finish();
  return reply;
}

EncodedReply encode_dispatch_reply(uint32_t xid, DispatchResult result,
                                   std::vector<uint8_t> results) {
  if (result.kind == DispatchResult::AuthError) return encode_auth_error_reply(xid, result.auth);
  if (result.accept != AcceptStat::Success || result.tail.empty())
    return encode_accepted_reply(xid, result.accept, std::move(results), result.low_version,
                                 result.high_version);
  EncodedReply reply;
  reply.body = std::move(results);
  reply.tail = std::move(result.tail);
  HeadWriter w(&reply);  // the record mark covers the tail too
  w.u32(xid).u32(kMsgReply).u32(kMsgAccepted).u32(kAuthNone).u32(0).u32(
      static_cast<uint32_t>(AcceptStat::Success));
  w.finish();
  return reply;
}

}  // namespace nasd::rpc
