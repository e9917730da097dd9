// The duplicate request cache: a retransmitted non-idempotent call (same xid, same client)
// must get the original reply, not a second execution. Without a DRC, a retried GUARDED
// CREATE answers EXIST and a retried REMOVE answers NOENT.
#include <chrono>
#include <thread>

#include "tests/e2e/e2e_fixture.h"
#include "tests/e2e/raw_rpc.h"
#include "tests/e2e/xdr_buffer.h"

namespace nasd::e2e {
namespace {

constexpr uint32_t kCreate = 8, kMkdir = 9, kRemove = 12, kRename = 14, kLink = 15;

class DrcTest : public E2eTest {
 protected:
  raw::Call call(uint32_t proc, std::string args, uint32_t xid) {
    raw::Call c;
    c.xid = xid;
    c.proc = proc;
    c.args = std::move(args);
    return c;
  }

  // Sends `c` again the way a client retransmits: a cache may drop a duplicate of a request it
  // considers still in progress, so an unanswered retransmission is repeated (bounded).
  std::optional<raw::Reply> retransmit(raw::TcpConnection& conn, const raw::Call& c) {
    for (int attempt = 0; attempt < 5; ++attempt) {
      if (!conn.send_call(c)) return std::nullopt;
      if (auto r = conn.receive_reply(std::chrono::seconds(1))) return r;
    }
    return std::nullopt;
  }
  std::optional<raw::Reply> retransmit(raw::UdpConnection& sock, const raw::Call& c) {
    for (int attempt = 0; attempt < 5; ++attempt)
      if (auto r = sock.call(c, std::chrono::seconds(1))) return r;
    return std::nullopt;
  }

  // NFS status of an accepted reply.
  static uint32_t status_of(const std::optional<raw::Reply>& r) {
    if (!r || r->reply_stat != raw::kMsgAccepted || r->accept_stat != raw::kSuccess)
      throw RpcError("no successful RPC reply");
    return XdrReader(r->results).u32();
  }
};

TEST_F(DrcTest, RetransmittedGuardedCreateGetsTheOriginalReply) {
  raw::TcpConnection conn = nfs_tcp();
  raw::Call create = call(kCreate, raw::create_guarded_args(root().bytes, "once"), raw::next_xid());

  auto first = conn.call(create);
  ASSERT_EQ(status_of(first), 0u) << "the original CREATE";
  auto again = retransmit(conn, create);  // same bytes, same xid
  ASSERT_TRUE(again);
  EXPECT_EQ(again->xid, create.xid);
  EXPECT_EQ(status_of(again), 0u) << "a retransmission must not be executed again (EXIST)";
  EXPECT_EQ(again->results, first->results) << "the cached reply is the original reply";

  // The same request under a new xid is a new request, and must fail: this is what makes the
  // check above mean something.
  create.xid = raw::next_xid();
  EXPECT_EQ(status_of(conn.call(create)), 17u) << "a new GUARDED CREATE of an existing name";
}

TEST_F(DrcTest, RetransmittedRemoveGetsOkNotNoent) {
  make_file(root(), "doomed");
  raw::TcpConnection conn = nfs_tcp();
  raw::Call remove = call(kRemove, raw::dirop_args(root().bytes, "doomed"), raw::next_xid());

  ASSERT_EQ(status_of(conn.call(remove)), 0u);
  EXPECT_EQ(status_of(retransmit(conn, remove)), 0u) << "retransmitted REMOVE answered NOENT";
  EXPECT_EQ(nfs().lookup(root(), "doomed").status, NFS3ERR_NOENT);

  remove.xid = raw::next_xid();
  EXPECT_EQ(status_of(conn.call(remove)), 2u) << "a fresh REMOVE of a missing name is NOENT";
}

// The drill's f118: a CREATE whose connection broke is retransmitted (same xid) on a new
// connection, from a new port; a copy of it that the server reads late (from the old
// connection, after a pause) must not create the file again after the client removed it. The
// cache knows the call by the client's address, not its port.
TEST_F(DrcTest, ALateCopyOfACreateFromAnotherPortDoesNotUndoTheRemoveThatFollowed) {
  raw::Call create = call(kCreate, raw::create_guarded_args(root().bytes, "f118"), raw::next_xid());
  std::optional<raw::Reply> first;
  {
    raw::TcpConnection conn = nfs_tcp();
    first = conn.call(create);
  }
  ASSERT_EQ(status_of(first), 0u) << "the original CREATE";
  {
    raw::TcpConnection conn = nfs_tcp();  // the client goes on, on a new connection
    raw::Call remove = call(kRemove, raw::dirop_args(root().bytes, "f118"), raw::next_xid());
    ASSERT_EQ(status_of(conn.call(remove)), 0u) << "the acknowledged REMOVE";
  }
  raw::TcpConnection late = nfs_tcp();  // the old copy, from yet another port
  auto again = retransmit(late, create);
  ASSERT_TRUE(again);
  EXPECT_EQ(status_of(again), 0u);
  EXPECT_EQ(again->results, first->results) << "the original reply, not a second execution";
  EXPECT_EQ(nfs().lookup(root(), "f118").status, NFS3ERR_NOENT)
      << "the late copy created the file again after its acknowledged REMOVE";
}

TEST_F(DrcTest, UdpRetransmissionIsAnsweredFromTheCache) {
  // A real retransmission comes from the same address and port: one socket for both sends.
  raw::UdpConnection sock = nfs_udp();
  raw::Call create = call(kCreate, raw::create_guarded_args(root().bytes, "udp-once"),
                          raw::next_xid());
  auto first = sock.call(create);
  ASSERT_EQ(status_of(first), 0u);
  auto again = retransmit(sock, create);
  EXPECT_EQ(status_of(again), 0u) << "UDP retransmission executed again (EXIST)";
  EXPECT_EQ(again->results, first->results);
}

// The reply cache moves with the data: each of these calls is journalled with the client call's
// identity and its reply, and the cache is rebuilt from the journal when the server starts
// (after kill -9: the records are still in NVRAM) or from the reply window saved when the
// volume was closed (a clean restart trims the journal).
class DrcAcrossRestartTest : public DrcTest {
 protected:
  void SetUp() override {
    NASD_E2E_NEEDS_OWN_SERVER("kills and restarts the server");
    DrcTest::SetUp();
  }

  struct Sent {
    raw::Call call;
    std::string results;
  };

  // One CREATE (guarded), MKDIR, REMOVE, RENAME and LINK in the root, sent from `sock`.
  std::vector<Sent> send_all(raw::UdpConnection& sock, const std::string& prefix) {
    make_file(root(), prefix + "-doomed");
    make_file(root(), prefix + "-moved");
    Fh target = make_file(root(), prefix + "-target");
    std::vector<raw::Call> calls = {
        call(kCreate, raw::create_guarded_args(root().bytes, prefix + "-created"), raw::next_xid()),
        call(kMkdir, raw::mkdir_args(root().bytes, prefix + "-dir"), raw::next_xid()),
        call(kRemove, raw::dirop_args(root().bytes, prefix + "-doomed"), raw::next_xid()),
        call(kRename, raw::rename_args(root().bytes, prefix + "-moved", root().bytes,
                                       prefix + "-renamed"), raw::next_xid()),
        call(kLink, raw::link_args(target.bytes, root().bytes, prefix + "-link"), raw::next_xid()),
    };
    std::vector<Sent> sent;
    for (const raw::Call& c : calls) {
      auto r = retransmit(sock, c);
      EXPECT_EQ(status_of(r), 0u) << "original call, procedure " << c.proc;
      sent.push_back({c, r->results});
    }
    return sent;
  }

  // The same calls again, same xids, same socket: each must get its original reply.
  void expect_original_replies(raw::UdpConnection& sock, const std::vector<Sent>& sent) {
    for (const Sent& s : sent) {
      auto again = retransmit(sock, s.call);
      ASSERT_TRUE(again) << "no reply to the retransmission of procedure " << s.call.proc;
      EXPECT_EQ(status_of(again), 0u)
          << "procedure " << s.call.proc << " was executed again (EXIST / NOENT)";
      EXPECT_EQ(again->results, s.results)
          << "procedure " << s.call.proc << ": not byte-identical to the original reply";
    }
  }

  // What a second execution would have changed is not there.
  void expect_executed_once(const std::string& prefix) {
    EXPECT_EQ(nfs().lookup(root(), prefix + "-doomed").status, NFS3ERR_NOENT);
    EXPECT_EQ(nfs().lookup(root(), prefix + "-moved").status, NFS3ERR_NOENT);
    EXPECT_EQ(nfs().lookup(root(), prefix + "-renamed").status, NFS3_OK);
    EXPECT_EQ(attrs_of(nfs().resolve(root(), prefix + "-target")).nlink, 2u);
    EXPECT_EQ(attrs_of(nfs().resolve(root(), prefix + "-dir")).type, NF3DIR);
  }
};

TEST_F(DrcAcrossRestartTest, RetransmissionsAfterKill9AndRestartGetTheOriginalReplies) {
  raw::UdpConnection sock(server().nfs_port());  // one client address and port throughout
  std::vector<Sent> sent = send_all(sock, "k9");
  server().kill9();
  server().start();
  reconnect();
  expect_original_replies(sock, sent);
  expect_executed_once("k9");
}

// The journal's write-behind flushes and trims every flush_interval (5 s by default): after that
// the records are gone from NVRAM, and only the reply window saved before the trim still has
// the replies when the node is killed.
TEST_F(DrcAcrossRestartTest, RetransmissionsAfterARoutineTrimAndKill9GetTheOriginalReplies) {
  raw::UdpConnection sock(server().nfs_port());
  std::vector<Sent> sent = send_all(sock, "trimmed");
  std::this_thread::sleep_for(std::chrono::seconds(12));  // two write-behind rounds at least
  server().kill9();
  server().start();
  reconnect();
  expect_original_replies(sock, sent);
  expect_executed_once("trimmed");
}

TEST_F(DrcAcrossRestartTest, RetransmissionsAfterACleanRestartGetTheOriginalReplies) {
  raw::UdpConnection sock(server().nfs_port());
  std::vector<Sent> sent = send_all(sock, "clean");
  restart_server();  // the journal is drained and trimmed: the saved reply window carries them
  expect_original_replies(sock, sent);
  expect_executed_once("clean");
}

}  // namespace
}  // namespace nasd::e2e
