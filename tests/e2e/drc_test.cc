// The duplicate request cache: a retransmitted non-idempotent call (same xid, same client)
// must get the original reply, not a second execution. Without a DRC, a retried GUARDED
// CREATE answers EXIST and a retried REMOVE answers NOENT.
#include "tests/e2e/e2e_fixture.h"
#include "tests/e2e/raw_rpc.h"
#include "tests/e2e/xdr_buffer.h"

namespace nasd::e2e {
namespace {

constexpr uint32_t kCreate = 8, kRemove = 12;

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
  raw::TcpConnection conn(server().nfs_port());
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
  raw::TcpConnection conn(server().nfs_port());
  raw::Call remove = call(kRemove, raw::dirop_args(root().bytes, "doomed"), raw::next_xid());

  ASSERT_EQ(status_of(conn.call(remove)), 0u);
  EXPECT_EQ(status_of(retransmit(conn, remove)), 0u) << "retransmitted REMOVE answered NOENT";
  EXPECT_EQ(nfs().lookup(root(), "doomed").status, NFS3ERR_NOENT);

  remove.xid = raw::next_xid();
  EXPECT_EQ(status_of(conn.call(remove)), 2u) << "a fresh REMOVE of a missing name is NOENT";
}

TEST_F(DrcTest, UdpRetransmissionIsAnsweredFromTheCache) {
  // A real retransmission comes from the same address and port: one socket for both sends.
  raw::UdpConnection sock(server().nfs_port());
  raw::Call create = call(kCreate, raw::create_guarded_args(root().bytes, "udp-once"),
                          raw::next_xid());
  auto first = sock.call(create);
  ASSERT_EQ(status_of(first), 0u);
  auto again = retransmit(sock, create);
  EXPECT_EQ(status_of(again), 0u) << "UDP retransmission executed again (EXIST)";
  EXPECT_EQ(again->results, first->results);
}

}  // namespace
}  // namespace nasd::e2e
