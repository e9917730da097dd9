// NLM v4 and NSM against a real nasd process: two clients contending for a range, a blocking
// lock granted by a GRANTED callback to a small NLM service this test runs (registered with
// rpcbind, as a client's lockd is), CANCEL, share reservations, SM_NOTIFY releasing a rebooted
// client's locks, and lock reclaim in the grace period after a kill -9 and restart (with the
// server's SM_NOTIFY to the clients' status monitor, which this test also plays).
//
// The clients speak raw RPC over TCP (tests/e2e/raw_rpc.h) with arguments encoded by the
// rpcgen routines of the server's own .x files. Runs under nlm_test.sh: in a private network
// namespace with its own rpcbind, so the callbacks can find this test and meet nothing else.
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <cstdlib>
#include <memory>
#include <thread>

#include "tests/e2e/child_process.h"
#include "tests/e2e/e2e_fixture.h"
#include "tests/e2e/mount3_client.h"
#include "tests/e2e/nfs3_client.h"
#include "tests/e2e/rpc_channel.h"
#include "tests/e2e/nlm_wire.h"
#include "tests/e2e/raw_rpc.h"

namespace nasd::e2e {
namespace {

using namespace std::chrono_literals;
using namespace nlmwire;

// One client host: its caller_name, and a TCP connection to the server's NFS port (where every
// program is served).
class LockClient {
 public:
  LockClient(uint16_t port, std::string name) : conn_(port), name_(std::move(name)) {}
  // At another address of the namespace (a cluster node's or virtual server's).
  LockClient(const std::string& host, uint16_t port, std::string name)
      : conn_(tcp_connect(host, port)), name_(std::move(name)) {}
  // From another loopback address: another host of the client network.
  static std::unique_ptr<LockClient> from(const std::string& source, uint16_t port, std::string name) {
    return std::unique_ptr<LockClient>(
        new LockClient(raw::TcpConnection(tcp_connect_from(port, source)), std::move(name)));
  }

  LockArgs args(const Fh& fh, bool excl, uint64_t off, uint64_t len, int32_t svid) const {
    LockArgs a;
    a.caller = name_;
    a.fh = fh.bytes;
    a.oh = name_ + "-owner-" + std::to_string(svid);
    a.svid = svid;
    a.offset = off;
    a.len = len;
    a.exclusive = excl;
    return a;
  }
  uint32_t lock(const Fh& fh, bool excl, uint64_t off, uint64_t len, bool block = false,
                bool reclaim = false, int32_t svid = 1) {
    LockArgs a = args(fh, excl, off, len, svid);
    a.block = block;
    a.reclaim = reclaim;
    return decode_res(call(kNlmProg, kNlmVers, kLock, encode_lock(a)));
  }
  uint32_t unlock(const Fh& fh, uint64_t off, uint64_t len, int32_t svid = 1) {
    return decode_res(call(kNlmProg, kNlmVers, kUnlock, encode_unlock(args(fh, false, off, len, svid))));
  }
  uint32_t cancel(const Fh& fh, bool excl, uint64_t off, uint64_t len, int32_t svid = 1) {
    LockArgs a = args(fh, excl, off, len, svid);
    a.block = true;
    return decode_res(call(kNlmProg, kNlmVers, kCancel, encode_cancel(a)));
  }
  TestOutcome test(const Fh& fh, bool excl, uint64_t off, uint64_t len, int32_t svid = 1) {
    return decode_testres(call(kNlmProg, kNlmVers, kTest, encode_test(args(fh, excl, off, len, svid))));
  }
  uint32_t share(const Fh& fh, Access access, Deny deny, const std::string& oh, bool unshare = false) {
    return decode_shareres(call(kNlmProg, kNlmVers, unshare ? kUnshare : kShare,
                                encode_share(name_, fh.bytes, oh, access, deny)));
  }
  // The asynchronous form: the reply is empty, the result comes back as a _RES call.
  void lock_msg(const Fh& fh, bool excl, uint64_t off, uint64_t len, const std::string& cookie) {
    LockArgs a = args(fh, excl, off, len, 1);
    a.cookie = cookie;
    call(kNlmProg, kNlmVers, kLockMsg, encode_lock(a));
  }
  void unlock_msg(const Fh& fh, uint64_t off, uint64_t len, const std::string& cookie) {
    LockArgs a = args(fh, false, off, len, 1);
    a.cookie = cookie;
    call(kNlmProg, kNlmVers, kUnlockMsg, encode_unlock(a));
  }
  void test_msg(const Fh& fh, bool excl, uint64_t off, uint64_t len, const std::string& cookie) {
    LockArgs a = args(fh, excl, off, len, 1);
    a.cookie = cookie;
    call(kNlmProg, kNlmVers, kTestMsg, encode_test(a));
  }
  // What this host's status monitor sends after it rebooted.
  void sm_notify(const std::string& mon_name, int32_t state) {
    call(kNsmProg, kNsmVers, kSmNotify, encode_sm_notify(mon_name, state));
  }
  void free_all(const std::string& name) {
    call(kNlmProg, kNlmVers, kFreeAll, encode_free_all(name, 5));
  }
  // A client's answer to a GRANTED, as a message of its own.
  void granted_res(const std::string& cookie, uint32_t stat) {
    call(kNlmProg, kNlmVers, kGrantedRes, encode_res(cookie, stat));
  }

 private:
  LockClient(raw::TcpConnection conn, std::string name) : conn_(std::move(conn)), name_(std::move(name)) {}

  std::string call(uint32_t prog, uint32_t vers, uint32_t proc, const std::string& args) {
    raw::Call c;
    c.xid = raw::next_xid();
    c.prog = prog;
    c.vers = vers;
    c.proc = proc;
    c.cred_body = raw::auth_sys_body(0, 0, {}, name_);
    c.args = args;
    auto r = conn_.call(c, 10s);
    if (quiet_) return r && r->accept_stat == raw::kSuccess ? r->results : std::string();
    EXPECT_TRUE(r && r->reply_stat == raw::kMsgAccepted && r->accept_stat == raw::kSuccess)
        << "program " << prog << " procedure " << proc << ": no successful reply";
    return r ? r->results : std::string();
  }

  raw::TcpConnection conn_;
  std::string name_;

 public:
  // A server that is not there yet (a takeover under way) is not a failure: no reply decodes
  // as kFailed.
  bool quiet_ = false;
};

class NlmTest : public E2eTest {
 protected:
  void SetUp() override {
    NASD_E2E_NEEDS_OWN_SERVER("plays lockd and statd for its own server, kills it");
    E2eTest::SetUp();
    if (is_ganesha()) GTEST_SKIP() << "nasd's lock manager";
    file_ = make_file(root(), "locked-file", "0123456789");
    other_ = make_file(root(), "other-file", "x");
    a_ = std::make_unique<LockClient>(server().nfs_port(), "client-a");
    b_ = std::make_unique<LockClient>(server().nfs_port(), "client-b");
    wait_out_grace();
  }

  // Every start begins a grace period (2.5 s in the test config) in which only reclaims work.
  void wait_out_grace() {
    auto deadline = std::chrono::steady_clock::now() + 20s;
    while (a_->test(other_, true, 0, 1).stat == kGrace) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "grace period never ended";
      std::this_thread::sleep_for(100ms);
    }
  }

  std::string admin_locks() {
    if (server().choice().admin_binary.empty()) return "";
    CommandResult r = run_command(
        {server().choice().admin_binary, "--socket", server().admin_socket().string(), "locks"},
        20s, scratch().path());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return r.output;
  }

  static bool in_netns() { return std::getenv("NASD_IN_NETNS") != nullptr; }

  Fh file_, other_;
  std::unique_ptr<LockClient> a_, b_;
};

TEST_F(NlmTest, TwoClientsContendForARange) {
  EXPECT_EQ(a_->lock(file_, true, 0, 100), kGranted);
  TestOutcome t = b_->test(file_, false, 50, 10);
  EXPECT_EQ(t.stat, kDenied);
  EXPECT_TRUE(t.exclusive);
  EXPECT_EQ(t.svid, 1);
  EXPECT_EQ(t.offset, 0u);
  EXPECT_EQ(t.len, 100u);
  EXPECT_EQ(b_->lock(file_, true, 50, 10), kDenied);
  EXPECT_EQ(b_->lock(file_, false, 99, 1), kDenied);
  EXPECT_EQ(b_->lock(file_, true, 100, 0), kGranted);  // adjacent, to end of file
  EXPECT_EQ(b_->lock(other_, true, 0, 0), kGranted);   // another file
  EXPECT_EQ(a_->test(file_, true, 0, 100).stat, kGranted);  // its own
  EXPECT_EQ(a_->lock(file_, false, 1000, 1), kDenied);      // b's up to EOF

  std::string listing = admin_locks();
  if (!listing.empty()) {
    EXPECT_NE(listing.find("client-a"), std::string::npos) << listing;
    EXPECT_NE(listing.find("0-99"), std::string::npos) << listing;
    EXPECT_NE(listing.find("100-EOF"), std::string::npos) << listing;
    EXPECT_NE(listing.find("3 lock(s)"), std::string::npos) << listing;
  }

  // a unlocks the middle: its lock splits, and b can take the hole.
  EXPECT_EQ(a_->unlock(file_, 40, 20), kGranted);
  EXPECT_EQ(b_->lock(file_, true, 40, 20), kGranted);
  EXPECT_EQ(b_->test(file_, true, 39, 1).stat, kDenied);
  EXPECT_EQ(b_->test(file_, true, 60, 1).stat, kDenied);
  // Another process (svid) of host a is another owner.
  EXPECT_EQ(a_->lock(file_, true, 0, 10, false, false, 2), kDenied);
  EXPECT_EQ(a_->unlock(file_, 0, 0), kGranted);
  EXPECT_EQ(a_->lock(file_, true, 0, 10, false, false, 2), kGranted);
}

TEST_F(NlmTest, BlockedLockIsGrantedByCallback) {
  if (!in_netns()) GTEST_SKIP() << "needs its own rpcbind: run through nlm_test.sh";
  CallbackServer cb;
  ASSERT_TRUE(cb.registered()) << "cannot register the callback service with rpcbind";
  ASSERT_EQ(a_->lock(file_, true, 0, 0), kGranted);
  EXPECT_EQ(b_->lock(file_, true, 10, 10, true), kBlocked);
  EXPECT_EQ(b_->lock(file_, true, 10, 10, true), kBlocked);  // a retransmission
  // Another blocked request, cancelled: never granted.
  EXPECT_EQ(b_->lock(file_, false, 500, 10, true, false, 7), kBlocked);
  std::string listing = admin_locks();
  if (!listing.empty()) {
    EXPECT_NE(listing.find("2 waiting"), std::string::npos) << listing;
  }
  EXPECT_EQ(b_->cancel(file_, false, 500, 10, 7), kGranted);
  EXPECT_EQ(b_->cancel(file_, false, 500, 10, 7), kDenied);
  std::this_thread::sleep_for(300ms);
  EXPECT_TRUE(cb.snapshot().granted.empty());

  EXPECT_EQ(a_->unlock(file_, 0, 0), kGranted);
  ASSERT_TRUE(cb.wait_for([](const Callbacks& c) { return !c.granted.empty(); }))
      << "no GRANTED callback; server log:\n" << server().log_tail();
  std::this_thread::sleep_for(300ms);
  Callbacks seen = cb.snapshot();
  ASSERT_EQ(seen.granted.size(), 1u);
  const auto& g = seen.granted[0];
  EXPECT_EQ(g.caller_name, "client-b");
  EXPECT_EQ(g.offset, 10u);
  EXPECT_EQ(g.len, 10u);
  EXPECT_TRUE(g.exclusive);
  // b holds it now.
  TestOutcome t = a_->test(file_, false, 15, 1);
  EXPECT_EQ(t.stat, kDenied);
  EXPECT_EQ(t.offset, 10u);
  EXPECT_EQ(a_->test(file_, false, 500, 1).stat, kGranted);  // the cancelled one is not held
}

TEST_F(NlmTest, MsgCallsAreAnsweredWithResCalls) {
  if (!in_netns()) GTEST_SKIP() << "needs its own rpcbind: run through nlm_test.sh";
  CallbackServer cb;
  ASSERT_TRUE(cb.registered());
  a_->lock_msg(file_, true, 0, 10, "m1");
  ASSERT_TRUE(cb.wait_for([](const Callbacks& c) { return c.results.size() >= 1; }));
  b_->lock_msg(file_, true, 5, 1, "m2");
  ASSERT_TRUE(cb.wait_for([](const Callbacks& c) { return c.results.size() >= 2; }));
  b_->test_msg(file_, true, 5, 1, "m3");
  ASSERT_TRUE(cb.wait_for([](const Callbacks& c) { return c.results.size() >= 3; }));
  a_->unlock_msg(file_, 0, 0, "m4");
  ASSERT_TRUE(cb.wait_for([](const Callbacks& c) { return c.results.size() >= 4; }));
  Callbacks seen = cb.snapshot();
  ASSERT_EQ(seen.results.size(), 4u);
  // One thread sends them, in order.
  EXPECT_EQ(seen.results[0].proc, kLockRes);
  EXPECT_EQ(seen.results[0].cookie, "m1");
  EXPECT_EQ(seen.results[0].stat, kGranted);
  EXPECT_EQ(seen.results[1].cookie, "m2");
  EXPECT_EQ(seen.results[1].stat, kDenied);
  EXPECT_EQ(seen.results[2].proc, kTestRes);
  EXPECT_EQ(seen.results[2].stat, kDenied);
  EXPECT_EQ(seen.results[3].proc, kUnlockRes);
  EXPECT_EQ(seen.results[3].stat, kGranted);
  EXPECT_EQ(b_->lock(file_, true, 5, 1), kGranted);
}

TEST_F(NlmTest, ShareReservationsConflict) {
  EXPECT_EQ(a_->share(file_, kAccessR, kDenyW, "a-open"), kGranted);
  EXPECT_EQ(b_->share(file_, kAccessW, kDenyNone, "b-open"), kDenied);
  EXPECT_EQ(b_->share(file_, kAccessRW, kDenyNone, "b-open"), kDenied);
  EXPECT_EQ(b_->share(file_, kAccessR, kDenyR, "b-open"), kDenied);  // a reads
  EXPECT_EQ(b_->share(file_, kAccessR, kDenyNone, "b-open"), kGranted);
  std::string listing = admin_locks();
  if (!listing.empty()) {
    EXPECT_NE(listing.find("2 share(s)"), std::string::npos) << listing;
  }
  EXPECT_EQ(a_->share(file_, kAccessR, kDenyW, "a-open", true), kGranted);  // UNSHARE
  EXPECT_EQ(b_->share(file_, kAccessW, kDenyNone, "b-write"), kGranted);
  EXPECT_EQ(a_->share(file_, kAccessR, kDenyW, "a-open"), kDenied);  // b writes
}

TEST_F(NlmTest, SmNotifyReleasesARebootedClientsLocks) {
  ASSERT_EQ(a_->lock(file_, true, 0, 0), kGranted);
  ASSERT_EQ(a_->share(other_, kAccessRW, kDenyRW, "a-open"), kGranted);
  ASSERT_EQ(b_->lock(file_, true, 0, 10), kDenied);
  // A notice about some other host changes nothing.
  b_->sm_notify("client-c", 7);
  EXPECT_EQ(b_->lock(file_, true, 0, 10), kDenied);
  // client-a's status monitor says it rebooted: everything it held is gone.
  a_->sm_notify("client-a", 7);
  EXPECT_EQ(b_->lock(file_, true, 0, 10), kGranted);
  EXPECT_EQ(b_->share(other_, kAccessRW, kDenyNone, "b-open"), kGranted);
  // FREE_ALL does the same for b.
  b_->free_all("client-b");
  EXPECT_EQ(a_->lock(file_, true, 0, 10), kGranted);
}

TEST_F(NlmTest, LocksAreReclaimedInTheGracePeriodAfterKill9) {
  std::unique_ptr<CallbackServer> cb;
  if (in_netns()) {
    cb = std::make_unique<CallbackServer>();
    ASSERT_TRUE(cb->registered());
  }
  ASSERT_EQ(a_->lock(file_, true, 0, 100), kGranted);
  ASSERT_EQ(a_->share(other_, kAccessR, kDenyW, "a-open"), kGranted);
  a_.reset();
  b_.reset();
  server().kill9();
  server().start();
  a_ = std::make_unique<LockClient>(server().nfs_port(), "client-a");
  b_ = std::make_unique<LockClient>(server().nfs_port(), "client-b");

  // In the grace period: only reclaims.
  std::string listing = admin_locks();
  if (!listing.empty()) {
    EXPECT_NE(listing.find("grace period (only reclaims granted): every volume"), std::string::npos)
        << listing;
  }
  EXPECT_EQ(b_->lock(file_, true, 50, 10), kGrace);
  EXPECT_EQ(b_->test(file_, true, 50, 10).stat, kGrace);
  EXPECT_EQ(a_->lock(file_, true, 0, 100, false, /*reclaim=*/true), kGranted);
  // Reclaims still conflict with each other.
  EXPECT_EQ(b_->lock(file_, true, 50, 10, false, true), kDenied);

  if (cb) {
    // The restarted server told client-a's status monitor, with a new state number.
    ASSERT_TRUE(cb->wait_for([](const Callbacks& c) { return !c.notified.empty(); }))
        << "no SM_NOTIFY after the restart; server log:\n" << server().log_tail();
    Callbacks seen = cb->snapshot();
    EXPECT_EQ(seen.notified[0].first, "127.0.0.1");  // [node] listen
    EXPECT_EQ(seen.notified[0].second % 2, 1);
    EXPECT_GE(seen.notified[0].second, 3);
  }

  wait_out_grace();
  // The reclaimed lock holds after the grace period; the share was not reclaimed.
  EXPECT_EQ(b_->lock(file_, true, 50, 10), kDenied);
  EXPECT_EQ(b_->share(other_, kAccessW, kDenyNone, "b-open"), kGranted);
  // A reclaim after the grace period is refused: the lock may have gone to someone else.
  EXPECT_EQ(a_->lock(file_, true, 200, 10, false, /*reclaim=*/true), kGrace);
}

TEST_F(NlmTest, MalformedAndForeignHandlesAreRefused) {
  Fh forged = file_;
  forged.bytes[forged.bytes.size() - 1] ^= 1;  // the tag no longer verifies
  EXPECT_EQ(a_->lock(forged, true, 0, 1), kStaleFh);
  EXPECT_EQ(a_->test(Fh{"short"}, true, 0, 1).stat, kStaleFh);
  // Version 1 (32-bit offsets) is not served.
  raw::TcpConnection c(server().nfs_port());
  raw::Call call;
  call.xid = raw::next_xid();
  call.prog = kNlmProg;
  call.vers = 1;
  auto r = c.call(call);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->accept_stat, raw::kProgMismatch);
  EXPECT_EQ(r->mismatch_low, 4u);
}


// Attacks from another host of the client network (issue 33): 127.0.0.2 is another client
// address of the namespace, listed by the test export like 127.0.0.1.

// A GRANTED_RES is taken only from the host the GRANTED went to, with the GRANTED's cookie
// (random): a host spraying GRANTED_RES with guessed cookies (they were a counter from 1) and
// status DENIED released the lock just granted to a waiting client, and then two clients held
// the same range.
TEST_F(NlmTest, GrantedResFromAnotherHostOrWithAGuessedCookieIsIgnored) {
  if (!in_netns()) GTEST_SKIP() << "needs its own rpcbind: run through nlm_test.sh";
  CallbackServer cb(/*answer_granted=*/false);  // b's lockd answers late: the grant is pending
  ASSERT_TRUE(cb.registered());
  ASSERT_EQ(a_->lock(file_, true, 0, 0), kGranted);
  ASSERT_EQ(b_->lock(file_, true, 10, 10, /*block=*/true), kBlocked);
  ASSERT_EQ(a_->unlock(file_, 0, 0), kGranted);
  ASSERT_TRUE(cb.wait_for([](const Callbacks& c) { return !c.granted.empty(); }))
      << "no GRANTED callback; server log:\n" << server().log_tail();
  auto mallory = LockClient::from("127.0.0.2", server().nfs_port(), "mallory");
  auto guesses = [](LockClient& c) {
    for (uint64_t n = 1; n <= 64; ++n) {
      std::string cookie(8, '\0');
      for (int i = 0; i < 8; ++i) cookie[i] = static_cast<char>(n >> (8 * i));
      c.granted_res(cookie, kDenied);
    }
  };
  guesses(*mallory);
  guesses(*a_);  // from b's own host, too: the cookie cannot be guessed
  EXPECT_EQ(mallory->lock(file_, true, 10, 10), kDenied) << "b's granted lock was released";
  EXPECT_EQ(mallory->test(file_, true, 15, 1).stat, kDenied);
}

// A client that locks under another client's caller_name gets an owner of its own (keyed by its
// address): its FREE_ALL and SM_NOTIFY (over TCP and UDP) free only what it holds, the victim
// keeps its locks, and
// the victim's own SM_NOTIFY still frees them (the name was not rebound to the attacker).
TEST_F(NlmTest, AForgedCallerNameCannotFreeAnotherClientsLocks) {
  ASSERT_EQ(a_->lock(file_, true, 0, 100), kGranted);
  ASSERT_EQ(a_->share(other_, kAccessRW, kDenyRW, "a-open"), kGranted);
  auto mallory = LockClient::from("127.0.0.2", server().nfs_port(), "client-a");
  ASSERT_EQ(mallory->lock(other_, true, 0, 1), kGranted);  // under the victim's name
  mallory->free_all("client-a");
  mallory->sm_notify("client-a", 9);
  {
    // And over UDP, one datagram each, as a status monitor sends them.
    raw::UdpConnection udp(udp_connect_from(server().nfs_port(), "127.0.0.2"));
    raw::Call c;
    c.cred_body = raw::auth_sys_body(0, 0, {}, "client-a");
    c.prog = kNlmProg;
    c.vers = kNlmVers;
    c.proc = kFreeAll;
    c.args = encode_free_all("client-a", 9);
    c.xid = raw::next_xid();
    EXPECT_TRUE(udp.call(c));
    c.prog = kNsmProg;
    c.vers = kNsmVers;
    c.proc = kSmNotify;
    c.args = encode_sm_notify("client-a", 11);
    c.xid = raw::next_xid();
    EXPECT_TRUE(udp.call(c));
  }
  EXPECT_EQ(b_->lock(file_, true, 0, 10), kDenied) << "the victim's lock was freed by another host";
  EXPECT_EQ(b_->share(other_, kAccessR, kDenyNone, "b-open"), kDenied) << "the victim's share was freed";
  EXPECT_EQ(b_->lock(other_, true, 0, 1), kGranted) << "the attacker's own lock outlived its FREE_ALL";
  EXPECT_EQ(b_->unlock(other_, 0, 1), kGranted);
  // The victim's own notice, from its address, still works.
  a_->sm_notify("client-a", 9);
  EXPECT_EQ(b_->lock(file_, true, 0, 10), kGranted);
  EXPECT_EQ(b_->share(other_, kAccessR, kDenyNone, "b-open"), kGranted);
}

// UNLOCK, CANCEL and UNSHARE with the owner's wire values (caller_name, svid, oh -- which TEST
// shows) from another address remove nothing: the owner includes the address.
TEST_F(NlmTest, TheOwnersWireValuesFromAnotherAddressRemoveNothing) {
  ASSERT_EQ(a_->lock(file_, true, 0, 100), kGranted);
  ASSERT_EQ(a_->share(other_, kAccessRW, kDenyRW, "a-open"), kGranted);
  ASSERT_EQ(b_->lock(file_, true, 200, 10), kGranted);
  ASSERT_EQ(a_->lock(file_, true, 200, 10, /*block=*/true), kBlocked);
  TestOutcome seen = b_->test(file_, true, 0, 1);
  ASSERT_EQ(seen.stat, kDenied);
  auto mallory = LockClient::from("127.0.0.2", server().nfs_port(), "client-a");
  EXPECT_EQ(mallory->unlock(file_, 0, 0, seen.svid), kGranted);  // answered, but a no-op
  EXPECT_EQ(mallory->cancel(file_, true, 200, 10, seen.svid), kDenied) << "cancelled a's request";
  EXPECT_EQ(mallory->share(other_, kAccessRW, kDenyRW, "a-open", /*unshare=*/true), kGranted);
  EXPECT_EQ(b_->lock(file_, true, 0, 10), kDenied) << "another host unlocked a's lock";
  EXPECT_EQ(b_->share(other_, kAccessR, kDenyNone, "b-open"), kDenied) << "another host unshared a's share";
  std::string listing = admin_locks();
  if (!listing.empty()) {
    EXPECT_NE(listing.find("client-a@127.0.0.1"), std::string::npos) << listing;
    EXPECT_NE(listing.find("1 waiting"), std::string::npos) << listing;
  }
  EXPECT_EQ(a_->cancel(file_, true, 200, 10), kGranted);  // a's own cancel works
}

// A host whose portmapper swallows packets (nlm_test.sh drops UDP and TCP to 127.0.0.3:111)
// sends thousands of _MSG calls: each result is a callback that costs the server attempts x
// timeout. They were queued on the one callback thread (4,096 at most, the rest dropped), so a
// GRANTED for another client was dropped or waited for hours. Now that host's replies wait in
// its own bounded queue, and the GRANTED goes out at once.
TEST_F(NlmTest, AMsgFloodFromASilentHostDoesNotHoldUpGranted) {
  if (!in_netns()) GTEST_SKIP() << "needs its own rpcbind: run through nlm_test.sh";
  const char* silent = std::getenv("NASD_NLM_SILENT_HOST");
  if (!silent) GTEST_SKIP() << "nlm_test.sh could not make a host whose port 111 is silent (nft)";
  CallbackServer cb;
  ASSERT_TRUE(cb.registered());
  {
    auto flood = LockClient::from(silent, server().nfs_port(), "flood");
    for (int i = 0; i < 4200; ++i) flood->test_msg(other_, true, 0, 1, "f" + std::to_string(i));
  }
  ASSERT_EQ(a_->lock(file_, true, 0, 0), kGranted);
  ASSERT_EQ(b_->lock(file_, true, 10, 10, /*block=*/true), kBlocked);
  ASSERT_EQ(a_->unlock(file_, 0, 0), kGranted);
  EXPECT_TRUE(cb.wait_for([](const Callbacks& c) { return !c.granted.empty(); }, 20s))
      << "the GRANTED was dropped or waited behind the flood's callbacks";
  // And b's own _MSG replies are not held up by the flood either.
  b_->test_msg(file_, true, 0, 1, "mine");
  EXPECT_TRUE(cb.wait_for(
      [](const Callbacks& c) {
        for (const auto& r : c.results)
          if (r.cookie == "mine") return true;
        return false;
      },
      20s))
      << "b's TEST_RES waited behind the flood's";
}


// Invented caller_names filled the status monitor's list (max_hosts, 200 in the test config)
// for ever, and every new client's LOCK was then answered DENIED_NOLOCKS. Now names that hold
// nothing are forgotten when room is needed, and one address gets at most 64 names (the
// default): the attacker's own requests are refused, nobody else's.
TEST_F(NlmTest, InventedCallerNamesDoNotFillTheClientList) {
  // 300 names that lock and unlock at once, then 100 that keep their lock.
  for (int i = 0; i < 300; ++i) {
    auto m = LockClient::from("127.0.0.2", server().nfs_port(), "idle-" + std::to_string(i));
    ASSERT_EQ(m->lock(other_, true, 1000 + i, 1), kGranted) << i;
    ASSERT_EQ(m->unlock(other_, 1000 + i, 1), kGranted);
  }
  int refused = 0;
  for (int i = 0; i < 100; ++i) {
    auto m = LockClient::from("127.0.0.2", server().nfs_port(), "holder-" + std::to_string(i));
    if (m->lock(other_, true, 5000 + i, 1) == kNoLocks) refused++;
  }
  EXPECT_EQ(refused, 100 - 64) << "one address kept more names than its bound";
  // New clients at other addresses are served.
  for (int i = 0; i < 3; ++i) {
    auto c = LockClient::from("127.0.0." + std::to_string(10 + i), server().nfs_port(),
                              "new-client-" + std::to_string(i));
    EXPECT_EQ(c->lock(file_, false, 0, 1), kGranted) << i;
  }
  EXPECT_EQ(a_->lock(file_, false, 0, 1), kGranted);
  std::ifstream list(server().data_dir() / "sm" / "clients");
  size_t lines = 0;
  for (std::string l; std::getline(list, l);) lines++;
  EXPECT_LE(lines, 2 * 200u + 17) << "the log of the client list is compacted";
}


// An HA pair (deploy/start-cluster.sh, started by nlm_failover_test.sh, which sets
// NASD_NLM_PAIR_DIR): node a (NFS 2049) is the home of v0, node b (2149) of v1. A lock on v0
// taken through a's address is reclaimed at b after a is killed: b serves a's address, and v0
// alone is in its grace period.
class NlmPairTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* d = std::getenv("NASD_NLM_PAIR_DIR");
    if (!d) GTEST_SKIP() << "needs an HA pair: run through nlm_failover_test.sh";
    dir_ = d;
  }

  // A new file in `volume`, made through the NFS port `port`.
  Fh make_file(uint16_t nfs_port, uint16_t mount_port, const std::string& volume,
               const std::string& name) {
    RpcChannel mch(mount_port, Credential{});
    Mount3Client mount(mch);
    MountReply m = mount.mnt("/r/" + volume);
    EXPECT_EQ(m.status, MNT3_OK);
    RpcChannel nch(nfs_port, Credential{});
    Nfs3Client nfs(nch);
    NewObjectReply r = nfs.create(m.root, name, UNCHECKED);
    EXPECT_EQ(r.status, NFS3_OK);
    return r.fh.value_or(Fh{});
  }

  // Waits (bounded) until a TEST on `fh` through `port` is out of its grace period.
  static void wait_out_grace(uint16_t port, const Fh& fh, std::chrono::seconds limit = 30s) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
      {
        LockClient probe(port, "probe");
        if (probe.test(fh, true, 0, 1).stat != kGrace) return;
      }
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "grace period never ended";
      std::this_thread::sleep_for(200ms);
    }
  }

  // Whether `client` is on `volume`'s list of lock clients in the shared folder, for whoever
  // takes the volume over.
  bool listed_for_takeover(const std::string& volume, const std::string& client) const {
    std::ifstream list(dir_ + "/san/nsm/" + volume + ".clients");
    std::string text((std::istreambuf_iterator<char>(list)), std::istreambuf_iterator<char>());
    return text.find(client) != std::string::npos;
  }

  void kill_node_a() {
    std::ifstream pidfile(dir_ + "/a/data/nasd.pid");
    pid_t pid = 0;
    pidfile >> pid;
    ASSERT_GT(pid, 0);
    ASSERT_EQ(kill(pid, SIGKILL), 0);
  }

  // After a's death: LOCK `fh` [off, off+1) as `client` through `port` until the node that
  // took the volume over answers, which must be the grace refusal (bounded: 60 s).
  static void expect_grace_after_takeover(uint16_t port, const std::string& client, const Fh& fh,
                                          uint64_t off) {
    auto deadline = std::chrono::steady_clock::now() + 60s;
    uint32_t st = kFailed;
    while (std::chrono::steady_clock::now() < deadline) {
      try {
        LockClient c(port, client);
        c.quiet_ = true;
        st = c.lock(fh, true, off, 1);
        if (st == kGrace) break;
      } catch (const std::exception&) {
      }
      std::this_thread::sleep_for(100ms);
    }
    ASSERT_EQ(st, kGrace) << "v0 at b never answered NLM4_DENIED_GRACE_PERIOD";
  }

  std::string dir_;
};

TEST_F(NlmPairTest, LocksAreReclaimedAtTheNodeThatTookTheVolumeOver) {
  Fh f0 = make_file(2049, 20048, "v0", "locked-v0");
  Fh f1 = make_file(2149, 20148, "v1", "locked-v1");
  ASSERT_FALSE(f0.bytes.empty());
  ASSERT_FALSE(f1.bytes.empty());
  wait_out_grace(2049, f0);
  wait_out_grace(2149, f1);
  {
    LockClient a(2049, "client-a");
    ASSERT_EQ(a.lock(f0, true, 0, 100), kGranted);
    // Node b only forwards v0: its lock call goes to a, and meets a's lock there.
    LockClient b(2149, "client-b");
    EXPECT_EQ(b.lock(f0, true, 0, 1), kDenied);
    EXPECT_EQ(b.lock(f1, true, 0, 100), kGranted);
  }
  EXPECT_TRUE(listed_for_takeover("v0", "client-a"));

  ASSERT_NO_FATAL_FAILURE(kill_node_a());
  // b takes v0 and a's address over (lease expiry, a few seconds); v0 then starts its grace
  // period at b: the first answer on a's address for v0 is the grace refusal.
  ASSERT_NO_FATAL_FAILURE(expect_grace_after_takeover(2049, "client-b", f0, 50));
  LockClient a(2049, "client-a");
  LockClient b(2049, "client-b");
  EXPECT_EQ(a.lock(f0, true, 0, 100, false, /*reclaim=*/true), kGranted);
  EXPECT_EQ(b.lock(f0, true, 50, 10, false, true), kDenied);  // reclaims conflict too
  // v1 was not failed over: no grace there, and b's lock on it still holds.
  EXPECT_EQ(a.lock(f1, true, 0, 1), kDenied);
  EXPECT_EQ(a.lock(f1, true, 200, 1), kGranted);
  wait_out_grace(2049, f0);
  EXPECT_EQ(b.lock(f0, true, 50, 10), kDenied);  // a's reclaimed lock holds
  EXPECT_EQ(b.lock(f0, true, 100, 10), kGranted);
}

// NLM through the node that does not serve the volume (nlm_forward_test.sh: the HA pair with
// its own rpcbind, where this test plays the clients' lockd and statd). client-x locks v0 at its
// owner a (2049), client-y through b (2149), which forwards every call to a: they contend in
// a's one table; a client's SM_NOTIFY that reaches b releases its locks at a; y's blocked lock is
// granted by a GRANTED callback from the owner to y; after a
// kill -9 of a, b takes v0 over, begins its grace period, sends SM_NOTIFY to y (recorded on v0's
// list at its own address although it locked through b), and y reclaims through b.
class NlmForwardTest : public NlmPairTest {};

TEST_F(NlmForwardTest, ALockThroughEitherNodeIsHeldByTheOwnerAndSurvivesItsFailure) {
  CallbackServer cb;
  ASSERT_TRUE(cb.registered()) << "cannot register the callback service with rpcbind";
  Fh f0 = make_file(2049, 20048, "v0", "forwarded-v0");
  ASSERT_FALSE(f0.bytes.empty());
  wait_out_grace(2049, f0);
  wait_out_grace(2149, f0);
  LockClient x(2049, "client-x");
  LockClient y(2149, "client-y");
  ASSERT_EQ(x.lock(f0, true, 0, 100), kGranted);
  EXPECT_EQ(y.lock(f0, true, 50, 10), kDenied);  // through b, against x's lock at a
  TestOutcome t = y.test(f0, true, 60, 1);
  EXPECT_EQ(t.stat, kDenied);
  EXPECT_EQ(t.offset, 0u);
  EXPECT_EQ(t.len, 100u);
  EXPECT_EQ(y.lock(f0, true, 200, 10), kGranted);  // held at a, not at b:
  EXPECT_EQ(x.lock(f0, true, 205, 1), kDenied);
  EXPECT_EQ(y.unlock(f0, 200, 10), kGranted);
  EXPECT_EQ(x.lock(f0, true, 205, 1), kGranted);
  EXPECT_EQ(x.unlock(f0, 205, 1), kGranted);
  {
    // What forwarding costs: TEST round trips at the owner and through b (printed, not judged).
    auto time_tests = [&](LockClient& c) {
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < 200; ++i) c.test(f0, true, 1000, 1);
      return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / 200;
    };
    const double direct = time_tests(x), forwarded = time_tests(y);
    std::printf("NLM TEST round trip: %.0f us at the owner, %.0f us through b (%.2fx)\n", direct,
                forwarded, forwarded / direct);
  }
  // client-z locks at a and reboots: its SM_NOTIFY reaches b, which passes it on to a.
  {
    LockClient z(2049, "client-z");
    ASSERT_EQ(z.lock(f0, true, 300, 10), kGranted);
    EXPECT_EQ(x.lock(f0, true, 300, 10), kDenied);
    LockClient z_statd(2149, "client-z");
    z_statd.sm_notify("client-z", 7);
    auto until = std::chrono::steady_clock::now() + 10s;
    uint32_t freed = kDenied;
    while (std::chrono::steady_clock::now() < until && (freed = x.lock(f0, true, 300, 10)) != kGranted)
      std::this_thread::sleep_for(50ms);
    EXPECT_EQ(freed, kGranted) << "SM_NOTIFY through b did not release client-z's lock at a";
    EXPECT_EQ(x.unlock(f0, 300, 10), kGranted);
  }

  // A blocked request through b, granted by the owner's callback when x unlocks.
  EXPECT_EQ(y.lock(f0, true, 10, 10, /*block=*/true), kBlocked);
  EXPECT_EQ(x.unlock(f0, 0, 0), kGranted);
  ASSERT_TRUE(cb.wait_for([](const Callbacks& c) { return !c.granted.empty(); }))
      << "no GRANTED callback for the lock blocked through b";
  Callbacks seen = cb.snapshot();
  EXPECT_EQ(seen.granted[0].caller_name, "client-y");
  EXPECT_EQ(seen.granted[0].offset, 10u);
  EXPECT_EQ(x.lock(f0, true, 15, 1), kDenied);  // y holds it now, at a

  // y is on v0's list (at its own address) for whoever takes v0 over.
  EXPECT_TRUE(listed_for_takeover("v0", "client-y"));

  ASSERT_NO_FATAL_FAILURE(kill_node_a());
  // b takes v0 over: its grace period, and SM_NOTIFY to y's status monitor.
  ASSERT_NO_FATAL_FAILURE(expect_grace_after_takeover(2149, "probe", f0, 500));
  ASSERT_TRUE(cb.wait_for([](const Callbacks& c) { return !c.notified.empty(); }, 20s))
      << "no SM_NOTIFY after the takeover";
  LockClient y2(2149, "client-y");
  EXPECT_EQ(y2.lock(f0, true, 10, 10, false, /*reclaim=*/true), kGranted);
  LockClient x2(2149, "client-x");
  EXPECT_EQ(x2.lock(f0, true, 15, 1, false, true), kDenied);  // reclaims conflict too
  wait_out_grace(2149, f0);
  EXPECT_EQ(x2.lock(f0, true, 15, 1), kDenied);  // y's reclaimed lock holds
  EXPECT_EQ(x2.lock(f0, true, 30, 1), kGranted);
}

// NLM in an N-node cluster whose virtual servers move (nlm_moves_test.sh starts it: three nodes,
// evs<i> on 127.0.2.i, lease 3 s, NLM grace 12 s). Locks taken through evs1's address follow the
// EVS: on a planned move (`nasd-admin evs move evs1 n2`) the lock table is handed over with v0 --
// no grace, no reclaim, a conflicting lock is refused at once; on a takeover (kill -9 of n2, the
// owner by then) the new owner begins v0's grace period, sends SM_NOTIFY naming evs1's address
// to the clients on v0's list (this test plays their statd), and the client that reclaims keeps
// its lock; one that does not reclaim loses it when the grace period ends.
class NlmClusterTest : public ::testing::Test {
 protected:
  static constexpr const char* kEvs1 = "127.0.2.1";
  static constexpr const char* kN3 = "127.0.1.3";  // n3's own address: it forwards v0's calls

  void SetUp() override {
    const char* d = std::getenv("NASD_NLM_CLUSTER_DIR");
    const char* a = std::getenv("NASD_ADMIN");
    if (!d || !a) GTEST_SKIP() << "needs a cluster: run through nlm_moves_test.sh";
    dir_ = d;
    admin_ = a;
  }

  // `nasd-admin COMMAND` on `node`; its output.
  std::string admin_on(const std::string& node, const std::string& command) {
    const std::string out = dir_ + "/admin.out";
    const std::string cmd = admin_ + " --socket " + dir_ + "/" + node + "/data/nasd.sock " + command +
                            " >" + out + " 2>&1";
    int rc = std::system(cmd.c_str());
    std::ifstream in(out);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(rc, 0) << cmd << ": " << text;
    return text;
  }

  // A new file in v0, through evs1's address (retried while the cluster comes up).
  Fh make_file(const std::string& name) {
    auto deadline = std::chrono::steady_clock::now() + 60s;
    while (std::chrono::steady_clock::now() < deadline) {
      try {
        RpcChannel mch(kEvs1, 20048, Credential{});
        Mount3Client mount(mch);
        MountReply m = mount.mnt("/r/v0");
        if (m.status == MNT3_OK) {
          RpcChannel nch(kEvs1, 2049, Credential{});
          Nfs3Client nfs(nch);
          NewObjectReply r = nfs.create(m.root, name, UNCHECKED);
          if (r.status == NFS3_OK && r.fh) return *r.fh;
        }
      } catch (const std::exception&) {
      }
      std::this_thread::sleep_for(200ms);
    }
    ADD_FAILURE() << "no file made on v0 through " << kEvs1;
    return Fh{};
  }

  // The first answer to a LOCK through evs1's address from whichever node answers there (no
  // node, or one that does not serve v0 -- NLM4_FAILED -- is not an answer yet).
  uint32_t lock_when_served(const std::string& client, const Fh& fh, uint64_t off, uint64_t len,
                            bool reclaim = false, std::chrono::seconds limit = 60s,
                            const char* through = kEvs1) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      try {
        LockClient c(through, 2049, client);
        c.quiet_ = true;
        uint32_t st = c.lock(fh, true, off, len, false, reclaim);
        if (st != kFailed) return st;
      } catch (const std::exception&) {
      }
      std::this_thread::sleep_for(100ms);
    }
    return kFailed;
  }

  // TEST through evs1's address, as lock_when_served.
  TestOutcome test_when_served(const Fh& fh, uint64_t off, uint64_t len, std::chrono::seconds limit = 30s) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    TestOutcome t;
    while (std::chrono::steady_clock::now() < deadline) {
      try {
        LockClient c(kEvs1, 2049, "client-y");
        c.quiet_ = true;
        t = c.test(fh, true, off, len);
        if (t.stat != kFailed) return t;
      } catch (const std::exception&) {
      }
      std::this_thread::sleep_for(100ms);
    }
    return t;
  }

  void wait_out_grace(const Fh& fh, std::chrono::seconds limit = 40s) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
      try {
        LockClient probe(kEvs1, 2049, "probe");
        probe.quiet_ = true;
        uint32_t st = probe.test(fh, true, 0, 1).stat;
        if (st != kGrace && st != kFailed) return;
      } catch (const std::exception&) {
      }
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "grace period never ended";
      std::this_thread::sleep_for(200ms);
    }
  }

  // Every node begins a grace period for all volumes when it starts; a move to a node still in
  // its own would be answered DENIED_GRACE_PERIOD for that reason alone.
  void wait_nodes_out_of_grace(std::chrono::seconds limit = 40s) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    for (const char* node : {"n1", "n2", "n3"}) {
      while (admin_on(node, "locks").find("every volume") != std::string::npos) {
        ASSERT_LT(std::chrono::steady_clock::now(), deadline) << node << "'s grace period never ended";
        std::this_thread::sleep_for(200ms);
      }
    }
  }

  // Whether an SM_NOTIFY in the name of `server` has arrived.
  static auto notified_as(const char* server) {
    return [server](const Callbacks& c) {
      for (const auto& n : c.notified)
        if (n.first == server) return true;
      return false;
    };
  }

  pid_t pid_of(const std::string& node) {
    std::ifstream in(dir_ + "/" + node + "/data/nasd.pid");
    pid_t pid = 0;
    in >> pid;
    return pid;
  }

  std::string dir_, admin_;
};

TEST_F(NlmClusterTest, LocksFollowAPlannedEvsMoveAndAreReclaimedAfterATakeover) {
  CallbackServer statd;  // client-x's, client-y's and client-z's lockd and statd
  ASSERT_TRUE(statd.registered());
  Fh f = make_file("locked-v0");
  ASSERT_FALSE(f.bytes.empty());
  wait_nodes_out_of_grace();
  // And v0's own: until n1 serves v0 for locks (slower under load), a lock through evs1 is
  // answered NLM4_DENIED_GRACE_PERIOD (no owner to forward it to), which lock_when_served
  // takes as final.
  wait_out_grace(f);

  // Calls back come from the address the client called (server/nlm/callback_call.h): w blocks
  // through n3's own address (n3 forwards to v0's owner n1) and y through evs1's; each GRANTED
  // must come from there, or a Linux client ignores it.
  {
    ASSERT_EQ(lock_when_served("client-x", f, 1000, 10), kGranted);
    LockClient w(kN3, 2049, "client-w");
    ASSERT_EQ(w.lock(f, true, 1000, 10, /*block=*/true), kBlocked);
    LockClient x(kEvs1, 2049, "client-x");
    ASSERT_EQ(x.unlock(f, 1000, 10), kGranted);
    ASSERT_TRUE(statd.wait_for([](const Callbacks& c) { return c.granted.size() == 1; }))
        << "no GRANTED for the lock blocked through n3";
    EXPECT_EQ(statd.snapshot().granted[0].caller_name, "client-w");
    EXPECT_EQ(statd.snapshot().granted[0].from, kN3);
    LockClient y(kEvs1, 2049, "client-y");
    ASSERT_EQ(y.lock(f, true, 1000, 10, /*block=*/true), kBlocked);
    ASSERT_EQ(w.unlock(f, 1000, 10), kGranted);
    ASSERT_TRUE(statd.wait_for([](const Callbacks& c) { return c.granted.size() == 2; }))
        << "no GRANTED for the lock blocked through evs1";
    EXPECT_EQ(statd.snapshot().granted[1].caller_name, "client-y");
    EXPECT_EQ(statd.snapshot().granted[1].from, kEvs1);
    ASSERT_EQ(y.unlock(f, 1000, 10), kGranted);
  }

  // Before the move: x holds [0, 100), z holds [500, 510), y conflicts with both.
  ASSERT_EQ(lock_when_served("client-x", f, 0, 100), kGranted);
  ASSERT_EQ(lock_when_served("client-z", f, 500, 10), kGranted);
  ASSERT_EQ(lock_when_served("client-y", f, 50, 10), kDenied);
  EXPECT_NE(admin_on("n1", "locks").find("client-x"), std::string::npos);

  // 1. Planned move of evs1 (v0 and its address) from n1 to n2, issued on n3.
  std::string moved = admin_on("n3", "evs move evs1 n2");
  ASSERT_NE(moved.find("evs evs1 to n2: done"), std::string::npos) << moved;
  // The table went with v0: at n2 there is no grace period, y is refused at once, x and z
  // still hold their locks, nobody was asked to reclaim.
  EXPECT_EQ(lock_when_served("client-y", f, 50, 10), kDenied);
  EXPECT_EQ(lock_when_served("client-y", f, 505, 1), kDenied);
  EXPECT_EQ(lock_when_served("client-y", f, 200, 10), kGranted);
  {
    TestOutcome t = test_when_served(f, 0, 1);
    EXPECT_EQ(t.stat, kDenied);
    EXPECT_EQ(t.offset, 0u);
    EXPECT_EQ(t.len, 100u);
  }
  std::string listing = admin_on("n2", "locks");
  EXPECT_NE(listing.find("client-x"), std::string::npos) << listing;
  EXPECT_NE(listing.find("client-z"), std::string::npos) << listing;
  EXPECT_EQ(listing.find("grace period"), std::string::npos) << listing;
  EXPECT_EQ(admin_on("n1", "locks").find("client-x"), std::string::npos) << "n1 still holds v0's locks";
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/san/nsm/v0.locks")) << "the table was not taken";
  std::this_thread::sleep_for(1s);
  EXPECT_TRUE(statd.snapshot().notified.empty()) << "SM_NOTIFY after a planned move";

  // w locks through n3's own address (n3 forwards to n2).
  ASSERT_EQ(lock_when_served("client-w", f, 2000, 10, false, 60s, kN3), kGranted);

  // 2. kill -9 of n2, which owns v0 now: its cover takes v0 and evs1's address over without the
  // table. The first answer there is the grace refusal; no conflicting lock is ever granted.
  pid_t pid = pid_of("n2");
  ASSERT_GT(pid, 0);
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  const auto killed = std::chrono::steady_clock::now();
  EXPECT_EQ(lock_when_served("client-y", f, 50, 10), kGrace);
  // x's statd hears that the server it locked at (evs1's address) restarted.
  ASSERT_TRUE(statd.wait_for(notified_as(kEvs1), 30s)) << "no SM_NOTIFY naming " << kEvs1;
  // w's statd hears it in the name of the server w knows, n3's address (it never called evs1),
  // and w reclaims through n3.
  ASSERT_TRUE(statd.wait_for(notified_as(kN3), 30s))
      << "no SM_NOTIFY naming " << kN3 << ", the address client-w locked at";
  EXPECT_EQ(lock_when_served("client-w", f, 2000, 10, /*reclaim=*/true, 60s, kN3), kGranted);
  std::cout << "takeover: SM_NOTIFY for " << kEvs1 << " "
            << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - killed).count()
            << " ms after the kill" << std::endl;
  // x reclaims and keeps its lock; y's reclaim of an overlapping range is refused; y's lock
  // taken after the move is not reclaimed by y either, so it is free after the grace period.
  EXPECT_EQ(lock_when_served("client-x", f, 0, 100, /*reclaim=*/true), kGranted);
  EXPECT_EQ(lock_when_served("client-y", f, 50, 10, /*reclaim=*/true), kDenied);
  EXPECT_EQ(lock_when_served("client-y", f, 600, 10), kGrace);
  wait_out_grace(f);
  EXPECT_EQ(lock_when_served("client-y", f, 50, 10), kDenied);  // x's reclaimed lock holds
  // z never reclaimed: after the grace period its range is free; w's reclaimed lock holds.
  EXPECT_EQ(lock_when_served("client-y", f, 500, 10), kGranted);
  EXPECT_EQ(lock_when_served("client-y", f, 2005, 1), kDenied);
  {
    TestOutcome t = test_when_served(f, 10, 1);
    EXPECT_EQ(t.stat, kDenied);
    EXPECT_EQ(t.len, 100u);
  }
}

}  // namespace
}  // namespace nasd::e2e
