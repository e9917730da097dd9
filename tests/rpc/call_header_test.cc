#include "server/rpc/call_header.h"

#include <gtest/gtest.h>
#include <memory>
#include <vector>
#include <rpc/rpc.h>

#include "tests/rpc/rpc_test_client.h"

namespace nasd::rpc {
namespace {

using testing::AuthSysParams;
using testing::CallSpec;
using testing::make_call;
using testing::parse_reply;
using testing::XdrBuilder;

CallSpec spec(uint32_t flavor = kAuthNone, std::vector<uint8_t> body = {}) {
  CallSpec s;
  s.xid = 0xabcdef01;
  s.prog = 100003;
  s.vers = 3;
  s.proc = 7;
  s.cred_flavor = flavor;
  s.cred_body = std::move(body);
  s.args = {1, 2, 3, 4};
  return s;
}

TEST(CallHeader, DecodesAuthNoneCall) {
  auto msg = make_call(spec());
  DecodedCall d = decode_call_header(msg);
  ASSERT_EQ(d.status, CallHeaderStatus::Ok);
  EXPECT_EQ(d.call.xid, 0xabcdef01u);
  EXPECT_EQ(d.call.prog, 100003u);
  EXPECT_EQ(d.call.vers, 3u);
  EXPECT_EQ(d.call.proc, 7u);
  EXPECT_EQ(d.call.cred.flavor, kAuthNone);
  EXPECT_EQ(d.args_offset, msg.size() - 4);
}

TEST(CallHeader, DecodesAuthSys) {
  AuthSysParams p;
  p.stamp = 99;
  p.machine = "host.example";
  p.uid = 501;
  p.gid = 20;
  p.gids = {20, 12, 61, 79, 80, 81, 98, 33, 100, 204, 250, 395, 398, 399, 400, 401};  // 16
  auto msg = make_call(spec(kAuthSys, testing::auth_sys_body(p)));
  DecodedCall d = decode_call_header(msg);
  ASSERT_EQ(d.status, CallHeaderStatus::Ok);
  EXPECT_EQ(d.call.cred.flavor, kAuthSys);
  EXPECT_EQ(d.call.cred.stamp, 99u);
  EXPECT_EQ(d.call.cred.machine, "host.example");
  EXPECT_EQ(d.call.cred.uid, 501u);
  EXPECT_EQ(d.call.cred.gid, 20u);
  EXPECT_EQ(d.call.cred.gids, p.gids);
  EXPECT_EQ(d.args_offset, msg.size() - 4);
}

TEST(CallHeader, DecodesHeaderEncodedByLibtirpc) {
  // An independent encoder: libtirpc's own xdr_callmsg with an authunix credential.
  AUTH* auth = authunix_create(const_cast<char*>("tirpc-host"), 42, 43, 0, nullptr);
  ASSERT_NE(auth, nullptr);
  rpc_msg msg{};
  msg.rm_xid = 777;
  msg.rm_direction = CALL;
  msg.rm_call.cb_rpcvers = 2;
  msg.rm_call.cb_prog = 100005;
  msg.rm_call.cb_vers = 3;
  msg.rm_call.cb_proc = 1;
  msg.rm_call.cb_cred = auth->ah_cred;
  msg.rm_call.cb_verf = auth->ah_verf;
  char buf[1024];
  XDR x;
  xdrmem_create(&x, buf, sizeof buf, XDR_ENCODE);
  ASSERT_TRUE(xdr_callmsg(&x, &msg));
  size_t len = xdr_getpos(&x);
  xdr_destroy(&x);
  auth_destroy(auth);
  DecodedCall d = decode_call_header({reinterpret_cast<uint8_t*>(buf), len});
  ASSERT_EQ(d.status, CallHeaderStatus::Ok);
  EXPECT_EQ(d.call.xid, 777u);
  EXPECT_EQ(d.call.prog, 100005u);
  EXPECT_EQ(d.call.cred.machine, "tirpc-host");
  EXPECT_EQ(d.call.cred.uid, 42u);
  EXPECT_EQ(d.call.cred.gid, 43u);
  EXPECT_EQ(d.args_offset, len);
}

TEST(CallHeader, MachineNameOverLimitIsBadCred) {
  AuthSysParams p;
  p.machine = std::string(256, 'm');
  DecodedCall d = decode_call_header(make_call(spec(kAuthSys, testing::auth_sys_body(p))));
  EXPECT_EQ(d.status, CallHeaderStatus::AuthError);
  EXPECT_EQ(d.auth_stat, AuthStat::BadCred);
}

TEST(CallHeader, SeventeenGidsIsBadCred) {
  AuthSysParams p;
  p.gids.assign(17, 5);
  DecodedCall d = decode_call_header(make_call(spec(kAuthSys, testing::auth_sys_body(p))));
  EXPECT_EQ(d.status, CallHeaderStatus::AuthError);
  EXPECT_EQ(d.auth_stat, AuthStat::BadCred);
}

TEST(CallHeader, TruncatedAuthSysBodyIsBadCred) {
  auto body = testing::auth_sys_body(AuthSysParams{});
  body.resize(body.size() - 4);  // drop the gid count
  DecodedCall d = decode_call_header(make_call(spec(kAuthSys, body)));
  EXPECT_EQ(d.status, CallHeaderStatus::AuthError);
  EXPECT_EQ(d.auth_stat, AuthStat::BadCred);
}

TEST(CallHeader, TrailingBytesInAuthSysBodyIsBadCred) {
  auto body = testing::auth_sys_body(AuthSysParams{});
  body.insert(body.end(), {0, 0, 0, 0});
  DecodedCall d = decode_call_header(make_call(spec(kAuthSys, body)));
  EXPECT_EQ(d.auth_stat, AuthStat::BadCred);
}

TEST(CallHeader, CredentialOver400BytesIsBadCred) {
  DecodedCall d = decode_call_header(make_call(spec(kAuthNone, std::vector<uint8_t>(404, 0))));
  EXPECT_EQ(d.status, CallHeaderStatus::AuthError);
  EXPECT_EQ(d.auth_stat, AuthStat::BadCred);
}

TEST(CallHeader, UnknownFlavorIsTooWeak) {
  DecodedCall d = decode_call_header(make_call(spec(6 /* RPCSEC_GSS */, {0, 0, 0, 1})));
  EXPECT_EQ(d.status, CallHeaderStatus::AuthError);
  EXPECT_EQ(d.auth_stat, AuthStat::TooWeak);
  EXPECT_EQ(d.call.xid, 0xabcdef01u);
}

TEST(CallHeader, RpcVersion3IsMismatch) {
  CallSpec s = spec();
  s.rpcvers = 3;
  DecodedCall d = decode_call_header(make_call(s));
  EXPECT_EQ(d.status, CallHeaderStatus::RpcVersionMismatch);
  EXPECT_EQ(d.call.xid, 0xabcdef01u);
}

TEST(CallHeader, ReplyMessageIsMalformed) {
  auto msg = XdrBuilder().u32(5).u32(1).u32(0).u32(0).take();
  EXPECT_EQ(decode_call_header(msg).status, CallHeaderStatus::Malformed);
}

TEST(CallHeader, EveryTruncationOfAHeaderIsMalformed) {
  auto msg = make_call(spec(kAuthSys, testing::auth_sys_body(AuthSysParams{})));
  size_t header = msg.size() - 4;  // minus args
  for (size_t n = 0; n < header; ++n) {
    DecodedCall d = decode_call_header({msg.data(), n});
    EXPECT_EQ(d.status, CallHeaderStatus::Malformed) << "length " << n;
  }
}

TEST(CallHeader, CredentialLengthPastEndIsMalformed) {
  auto msg = XdrBuilder().u32(1).u32(0).u32(2).u32(1).u32(1).u32(0).u32(1).u32(0xfffffff0).take();
  EXPECT_EQ(decode_call_header(msg).status, CallHeaderStatus::Malformed);
}

TEST(ReplyEncoding, SuccessCarriesResultsAndRecordMark) {
  EncodedReply r = encode_accepted_reply(9, AcceptStat::Success, {0xde, 0xad, 0xbe, 0xef});
  std::vector<uint8_t> tcp(r.tcp_head().begin(), r.tcp_head().end());
  tcp.insert(tcp.end(), r.body.begin(), r.body.end());
  uint32_t mark = testing::read_u32(tcp, 0);
  EXPECT_EQ(mark, 0x80000000u | (tcp.size() - 4));
  auto p = parse_reply({tcp.data() + 4, tcp.size() - 4});
  ASSERT_TRUE(p.ok);
  EXPECT_EQ(p.xid, 9u);
  EXPECT_EQ(p.reply_stat, 0u);
  EXPECT_EQ(p.accept_stat, 0u);
  EXPECT_EQ(p.results, (std::vector<uint8_t>{0xde, 0xad, 0xbe, 0xef}));
  EXPECT_EQ(r.message_size(), tcp.size() - 4);
}

TEST(ReplyEncoding, TailIsSentFromItsOwnBufferAndCountedInTheRecordMark) {
  DispatchResult result;
  auto bytes = std::make_shared<std::vector<uint8_t>>(64 << 10, 0x5a);  // a READ's data
  const uint8_t* data = bytes->data();
  result.tail.append(data, bytes->size());
  result.tail.owner = bytes;
  EncodedReply r = encode_dispatch_reply(11, std::move(result), {0, 0, 0, 0, 0, 1, 0, 0});
  // Zero-copy: the reply owns the very buffer the procedure filled (no copy into the results).
  ASSERT_EQ(r.tail.parts.size(), 1u);
  EXPECT_EQ(r.tail.parts[0].data(), data);
  EXPECT_EQ(r.tail.size(), size_t{64} << 10);
  std::vector<uint8_t> tcp(r.tcp_head().begin(), r.tcp_head().end());
  tcp.insert(tcp.end(), r.body.begin(), r.body.end());
  r.tail.copy_to(&tcp);
  EXPECT_EQ(testing::read_u32(tcp, 0), 0x80000000u | (tcp.size() - 4));
  EXPECT_EQ(r.tcp_size(), tcp.size());
  auto p = parse_reply({tcp.data() + 4, tcp.size() - 4});
  ASSERT_TRUE(p.ok);
  EXPECT_EQ(p.xid, 11u);
  EXPECT_EQ(p.accept_stat, 0u);
  ASSERT_EQ(p.results.size(), 8u + (64 << 10));
  EXPECT_EQ(p.results.back(), 0x5a);
}

TEST(ReplyEncoding, AFailedCallDropsItsTail) {
  DispatchResult result;
  result.accept = AcceptStat::SystemErr;
  static const uint8_t kOnes[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  result.tail.append(kOnes, sizeof kOnes);
  EncodedReply r = encode_dispatch_reply(12, std::move(result), {1, 2, 3, 4});
  EXPECT_TRUE(r.body.empty());
  EXPECT_TRUE(r.tail.empty());
  EXPECT_EQ(parse_reply(r.udp_head()).accept_stat, 5u);
}

TEST(ReplyEncoding, ErrorsCarryNoResults) {
  EncodedReply r = encode_accepted_reply(9, AcceptStat::GarbageArgs, {1, 2, 3, 4});
  EXPECT_TRUE(r.body.empty());
  auto p = parse_reply(r.udp_head());
  EXPECT_EQ(p.accept_stat, 4u);
  EXPECT_TRUE(p.results.empty());
}

TEST(ReplyEncoding, ProgMismatchCarriesRange) {
  EncodedReply r = encode_accepted_reply(3, AcceptStat::ProgMismatch, {}, 2, 4);
  auto p = parse_reply(r.udp_head());
  EXPECT_EQ(p.accept_stat, 2u);
  EXPECT_EQ(p.low, 2u);
  EXPECT_EQ(p.high, 4u);
}

TEST(ReplyEncoding, DeniedReplies) {
  auto mismatch = parse_reply(encode_rpc_mismatch_reply(4).udp_head());
  EXPECT_EQ(mismatch.reply_stat, 1u);
  EXPECT_EQ(mismatch.reject_stat, 0u);
  EXPECT_EQ(mismatch.low, 2u);
  EXPECT_EQ(mismatch.high, 2u);
  auto auth = parse_reply(encode_auth_error_reply(5, AuthStat::TooWeak).udp_head());
  EXPECT_EQ(auth.xid, 5u);
  EXPECT_EQ(auth.reject_stat, 1u);
  EXPECT_EQ(auth.auth_stat, 5u);
}

}  // namespace
}  // namespace nasd::rpc
