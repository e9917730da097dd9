// Hostile and broken input over raw sockets: bad framing, garbage, malformed arguments,
// unknown programs and versions, bad credentials. Each must get the RFC 5531 answer (or a
// closed connection where no answer exists), and the server must go on serving others.
#include <random>

#include "tests/e2e/e2e_fixture.h"
#include "tests/e2e/raw_rpc.h"
#include "tests/e2e/xdr_buffer.h"

namespace nasd::e2e {
namespace {

using namespace std::chrono_literals;

class RobustnessTest : public E2eTest {
 protected:
  raw::Call nfs_call(uint32_t proc, std::string args = "") {
    raw::Call c;
    c.xid = raw::next_xid();
    c.proc = proc;
    c.args = std::move(args);
    return c;
  }

  // A brand-new connection gets NULL and GETATTR answered.
  void expect_still_serving() {
    raw::TcpConnection conn = nfs_tcp();
    auto null_reply = conn.call(nfs_call(0));
    ASSERT_TRUE(null_reply) << "server stopped answering after the bad input";
    EXPECT_EQ(null_reply->accept_stat, raw::kSuccess);
    auto getattr = conn.call(nfs_call(1, raw::fh_args(root().bytes)));
    ASSERT_TRUE(getattr);
    ASSERT_EQ(getattr->accept_stat, raw::kSuccess);
    EXPECT_EQ(XdrReader(getattr->results).u32(), 0u) << "GETATTR of the root failed";
    if (has_own_server()) {
      EXPECT_TRUE(server().running());
    }
  }

  // The reply to a call on an open connection, asserted to be accepted with `accept_stat`.
  void expect_accept_stat(raw::TcpConnection& conn, const raw::Call& c, uint32_t accept_stat) {
    auto r = conn.call(c);
    ASSERT_TRUE(r) << "no reply";
    EXPECT_EQ(r->xid, c.xid);
    EXPECT_EQ(r->reply_stat, raw::kMsgAccepted);
    EXPECT_EQ(r->accept_stat, accept_stat);
  }

  void expect_bad_cred(const std::string& cred_body, const char* what) {
    SCOPED_TRACE(what);
    raw::TcpConnection conn = nfs_tcp();
    raw::Call c = nfs_call(0);
    c.cred_body = cred_body;
    auto r = conn.call(c, 5s);
    ASSERT_TRUE(r) << "a bad credential deserves an AUTH_ERROR reply, not silence";
    EXPECT_EQ(r->reply_stat, raw::kMsgDenied);
    EXPECT_EQ(r->reject_stat, raw::kAuthError);
    EXPECT_EQ(r->auth_stat, raw::kAuthBadCred);
  }
};

TEST_F(RobustnessTest, TruncatedRecordThenClose) {
  {
    raw::TcpConnection conn = nfs_tcp();
    std::string msg = raw::record_mark(raw::encode_call(nfs_call(1, raw::fh_args(root().bytes))));
    ASSERT_TRUE(conn.send_bytes(msg.substr(0, msg.size() / 2)));
  }  // closed mid-record
  expect_still_serving();
}

TEST_F(RobustnessTest, StalledPartialRecordDoesNotBlockOthers) {
  raw::TcpConnection stalled = nfs_tcp();
  std::string msg = raw::record_mark(raw::encode_call(nfs_call(0)));
  ASSERT_TRUE(stalled.send_bytes(msg.substr(0, 10)));  // and never the rest
  expect_still_serving();
}

// Clients that connect and go away at once (port probes, crashed clients) must not disturb
// a connection that is in use: each probe's close has to close the probe's socket only.
TEST_F(RobustnessTest, ConnectAndCloseStormDoesNotDisturbOthers) {
  for (int round = 0; round < 20; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    for (int i = 0; i < 5; ++i) {
      EXPECT_TRUE(tcp_port_open(host(), nfs_port()));
      EXPECT_TRUE(tcp_port_open(host(), mount_port()));
    }
    raw::TcpConnection conn = nfs_tcp();
    auto r = conn.call(nfs_call(0), 5s);
    ASSERT_TRUE(r) << "a fresh connection right after the probes was not answered";
    EXPECT_EQ(r->accept_stat, raw::kSuccess);
    raw::TcpConnection mount = mount_tcp();
    raw::Call mnt_null = nfs_call(0);
    mnt_null.prog = raw::kMountProgram;
    ASSERT_TRUE(mount.call(mnt_null, 5s)) << "MOUNT connection right after the probes dropped";
  }
  expect_still_serving();
}

TEST_F(RobustnessTest, HugeRecordIsRefusedByClosing) {
  raw::TcpConnection conn = nfs_tcp();
  XdrWriter w;
  w.u32(0x80000000u | 0x7ffffff0u);  // a last fragment of almost 2 GiB
  w.raw(raw::encode_call(nfs_call(0)));
  ASSERT_TRUE(conn.send_bytes(w.bytes()));
  EXPECT_TRUE(wait_for_close(conn.fd(), 5s))
      << "a record larger than max_record should make the server drop the connection";
  expect_still_serving();
}

TEST_F(RobustnessTest, GarbageBytes) {
  std::mt19937 rng(12345);
  for (int round = 0; round < 3; ++round) {
    raw::TcpConnection conn = nfs_tcp();
    std::string junk(4096, '\0');
    for (char& c : junk) c = static_cast<char>(rng());
    conn.send_bytes(junk);
    wait_for_close(conn.fd(), 300ms);  // either outcome is fine; the server must survive
  }
  {
    // A well-framed record whose content is not an RPC call at all.
    raw::TcpConnection conn = nfs_tcp();
    conn.send_bytes(raw::record_mark(std::string(64, '\xff')));
    wait_for_close(conn.fd(), 300ms);
  }
  expect_still_serving();
}

TEST_F(RobustnessTest, MalformedArgumentsAreGarbageArgs) {
  raw::TcpConnection conn = nfs_tcp();
  // GETATTR whose handle claims 4 GiB.
  expect_accept_stat(conn, nfs_call(1, XdrWriter().u32(0xffffffffu).bytes()), raw::kGarbageArgs);
  // GETATTR with a 65-byte handle: nfs_fh3 is opaque<64>.
  expect_accept_stat(conn, nfs_call(1, XdrWriter().opaque(std::string(65, 'h')).bytes()),
                     raw::kGarbageArgs);
  // LOOKUP with the directory handle but no name.
  expect_accept_stat(conn, nfs_call(3, raw::fh_args(root().bytes)), raw::kGarbageArgs);
  // WRITE whose data length exceeds what follows.
  XdrWriter write;
  write.opaque(root().bytes).u64(0).u32(100).u32(2).u32(100).raw("short");
  expect_accept_stat(conn, nfs_call(7, write.bytes()), raw::kGarbageArgs);
  // The same connection still works afterwards.
  expect_accept_stat(conn, nfs_call(0), raw::kSuccess);
  expect_still_serving();
}

TEST_F(RobustnessTest, UnknownProgramVersionAndProcedure) {
  raw::TcpConnection conn = nfs_tcp();
  raw::Call unknown = nfs_call(0);
  unknown.prog = 395175;  // nobody's program
  expect_accept_stat(conn, unknown, raw::kProgUnavail);

  for (uint32_t vers : {2u, 4u}) {
    SCOPED_TRACE("NFS version " + std::to_string(vers));
    raw::Call c = nfs_call(0);
    c.vers = vers;
    auto r = conn.call(c);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->reply_stat, raw::kMsgAccepted);
    EXPECT_EQ(r->accept_stat, raw::kProgMismatch);
    EXPECT_LE(r->mismatch_low, 3u);
    EXPECT_GE(r->mismatch_high, 3u);
  }
  expect_accept_stat(conn, nfs_call(22), raw::kProcUnavail);  // NFSv3 has procedures 0..21

  raw::TcpConnection mount = mount_tcp();
  raw::Call mnt_v4 = nfs_call(0);
  mnt_v4.prog = raw::kMountProgram;
  mnt_v4.vers = 4;
  auto r = mount.call(mnt_v4);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->accept_stat, raw::kProgMismatch);
  expect_still_serving();
}

TEST_F(RobustnessTest, WrongRpcVersionIsRpcMismatch) {
  raw::TcpConnection conn = nfs_tcp();
  std::string msg = raw::encode_call(nfs_call(0));
  msg[11] = 3;  // rpcvers is the third word; 3 instead of 2
  ASSERT_TRUE(conn.send_bytes(raw::record_mark(msg)));
  auto r = conn.receive_reply(5s);
  ASSERT_TRUE(r) << "RPC_MISMATCH must be answered";
  EXPECT_EQ(r->reply_stat, raw::kMsgDenied);
  EXPECT_EQ(r->reject_stat, raw::kRpcMismatch);
  EXPECT_EQ(r->mismatch_low, 2u);
  EXPECT_EQ(r->mismatch_high, 2u);
  expect_still_serving();
}

TEST_F(RobustnessTest, BadAuthSysCredentials) {
  std::vector<uint32_t> seventeen(17, 100);
  expect_bad_cred(raw::auth_sys_body(0, 0, seventeen), "17 supplementary groups (max 16)");
  expect_bad_cred(raw::auth_sys_body(0, 0).substr(0, 12), "body ends inside the machine name");
  expect_bad_cred(XdrWriter().u32(1).u32(1000).raw("short").bytes(),
                  "machine name longer than the body");
  expect_bad_cred(raw::auth_sys_body(0, 0, {}, std::string(300, 'm')),
                  "machine name over 255 bytes");
  expect_still_serving();
}

TEST_F(RobustnessTest, UdpNullAndGetattr) {
  raw::Call null_call = nfs_call(0);
  auto n = raw::udp_call(host(), nfs_port(), null_call);
  ASSERT_TRUE(n) << "no UDP reply to NULL";
  EXPECT_EQ(n->xid, null_call.xid);
  EXPECT_EQ(n->accept_stat, raw::kSuccess);

  raw::Call getattr = nfs_call(1, raw::fh_args(root().bytes));
  auto g = raw::udp_call(host(), nfs_port(), getattr);
  ASSERT_TRUE(g) << "no UDP reply to GETATTR";
  ASSERT_EQ(g->accept_stat, raw::kSuccess);
  XdrReader r(g->results);
  EXPECT_EQ(r.u32(), 0u) << "GETATTR status";
  EXPECT_EQ(r.u32(), 2u) << "the root is a directory (NF3DIR)";
  EXPECT_EQ(r.u32() & 07777, attrs_of(root()).mode & 07777);
}

}  // namespace
}  // namespace nasd::e2e
