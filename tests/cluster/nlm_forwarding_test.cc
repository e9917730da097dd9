// NLM through any node, in process: node "a" does not serve volume 7, node "b" does; a's
// NlmService forwards through a real NlmForwarding (the real codec both ways) over a channel
// that hands the payload to b's answering end. b's lock table is the one truth: clients that lock
// through a and through b conflict, b records the client of a at its own address, a keeps no
// lock, an unreachable owner answers NLM4_DENIED_GRACE_PERIOD, and a client's SM_NOTIFY that
// reaches a releases its locks at b.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <string>
#include <vector>

#include "cluster/interconnect/call_channel.h"
#include "cluster/interconnect/nlm_call_codec.h"
#include "cluster/nlm_forwarding.h"
#include "server/nfs/exports/exports.h"
#include "server/nfs/handle/handle_codec.h"
#include "server/nfs/xdr/xdr_codec.h"
#include "server/nlm/nsm_service.h"
#include "server/nlm/xdr/nlm4_prot.h"
#include "server/nlm/xdr/sm_prot.h"
#include "tests/cluster/scratch_dir.h"
#include "util/config.h"

namespace nasd::cluster {
namespace {

const char* kConfig = R"(
[volume main]
id = 7
[export /r/main]
volume = main
clients = 127.0.0.0/8
access = rw
)";

// The link from a to b: NlmCall payloads to b's answering end, reboot notices to b's state.
class ToOwner : public interconnect::CallChannel {
 public:
  NlmForwarding* owner = nullptr;
  std::atomic<bool> down{false};
  std::atomic<int> calls{0};
  interconnect::CallOutcome call(interconnect::MessageType type, std::vector<uint8_t> payload,
                                 std::chrono::milliseconds) override {
    ++calls;
    if (down) return {interconnect::CallError::NotConnected, {}};
    if (type == interconnect::MessageType::NlmClientRebooted) {
      owner->take_reboot_notice(payload);
      return {};
    }
    return {interconnect::CallError::None, owner->answer(payload, "a")};
  }
};

// The link from b back to a: b's calls back to clients that called a (NlmCallback), recorded and
// answered as a client's lock manager would, through a, answer a GRANTED.
class ToRelay : public interconnect::CallChannel {
 public:
  std::mutex mu;
  std::vector<interconnect::NlmCallbackRequest> made;
  interconnect::CallOutcome call(interconnect::MessageType type, std::vector<uint8_t> payload,
                                 std::chrono::milliseconds) override {
    interconnect::NlmCallbackRequest request;
    if (type != interconnect::MessageType::NlmCallback ||
        !interconnect::decode_nlm_callback(payload, &request))
      return {interconnect::CallError::NotConnected, {}};
    std::lock_guard lock(mu);
    made.push_back(request);
    std::vector<uint8_t> out;
    interconnect::encode_nlm_callback_reply({true, NLM4_GRANTED}, &out);
    return {interconnect::CallError::None, out};
  }
  size_t count() {
    std::lock_guard lock(mu);
    return made.size();
  }
};

struct NodeLocks {
  std::shared_ptr<nlm::LockState> state;
  std::shared_ptr<NlmForwarding> forwarding;
  std::shared_ptr<nlm::NlmService> nlm;    // what clients call
  std::shared_ptr<nlm::NsmService> nsm;
};

class NlmForwardingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    exports_ = nfs::Exports::from_config(Config::parse(kConfig));
    handles_ = std::make_shared<nfs::HandleCodec>(std::vector<uint8_t>(32, 0x5a));
    fh_ = handles_->encode(7, {42, 1});
    link_ = std::make_shared<ToOwner>();
    relay_ = std::make_shared<ToRelay>();
    a_ = make_node("a", /*serves=*/false);
    b_ = make_node("b", /*serves=*/true);
    link_->owner = b_.forwarding.get();
  }

  NodeLocks make_node(const std::string& name, bool serves) {
    nlm::NlmOptions o;
    o.grace_ms = 0;
    o.send_callbacks = name == "b";  // the owner's GRANTED calls, through a (ToRelay)
    NodeLocks n;
    n.state = std::make_shared<nlm::LockState>(o, dir_.path + "/" + name);
    n.state->start();
    NlmForwarding::Links links;
    links.owner = [](uint32_t) -> std::optional<std::string> { return "b"; };
    links.channel = [this, name](const std::string& node) -> std::shared_ptr<interconnect::CallChannel> {
      if (node == "b" && name != "b") return link_;
      if (node == "a" && name == "b") return relay_;
      return nullptr;
    };
    links.peers = [name] { return std::vector<std::string>{name == "a" ? "b" : "a"}; };
    n.forwarding = std::make_shared<NlmForwarding>(name, links, std::chrono::milliseconds(1000));
    auto serves_fn = [serves](uint32_t) { return serves; };
    n.forwarding->serve(std::make_shared<nlm::NlmService>(n.state, handles_, exports_, serves_fn,
                                                          NlmForwarding::no_further()),
                        n.state);
    n.nlm = std::make_shared<nlm::NlmService>(n.state, handles_, exports_, serves_fn,
                                              forwarding_on_ ? n.forwarding : nullptr);
    n.nsm = std::make_shared<nlm::NsmService>(n.state, n.forwarding);
    n.state->callbacks().set_relay(n.forwarding);
    return n;
  }

  static rpc::CallContext from(const char* ip, uint32_t prog, uint32_t proc) {
    rpc::CallContext c;
    c.prog = prog;
    c.vers = prog == nlm::kNlmProgram ? 4 : 1;
    c.proc = proc;
    auto* sin = reinterpret_cast<sockaddr_in*>(&c.peer);
    sin->sin_family = AF_INET;
    sin->sin_port = htons(800);
    inet_pton(AF_INET, ip, &sin->sin_addr);
    c.peer_len = sizeof *sin;
    // Every node of this test listens on 127.0.0.20 (the address the client called).
    auto* local = reinterpret_cast<sockaddr_in*>(&c.local);
    local->sin_family = AF_INET;
    local->sin_port = htons(4045);
    inet_pton(AF_INET, "127.0.0.20", &local->sin_addr);
    c.local_len = sizeof *local;
    return c;
  }

  nlm4_lock alock(std::string& caller, uint64_t off, uint64_t len) {
    nlm4_lock l{};
    l.caller_name = caller.data();
    l.fh.nlm4_netobj_len = nfs::FileHandle::kSize;
    l.fh.nlm4_netobj_val = reinterpret_cast<char*>(fh_.bytes.data());
    l.oh.nlm4_netobj_len = static_cast<u_int>(caller.size());
    l.oh.nlm4_netobj_val = caller.data();
    l.svid = 1;
    l.l_offset = off;
    l.l_len = len;
    return l;
  }

  // LOCK (exclusive) / UNLOCK of `caller` at node `n` from `ip`: the nlm4_res status.
  uint32_t lock(NodeLocks& n, const char* ip, std::string caller, uint64_t off, uint64_t len,
                bool block = false) {
    nlm4_lockargs a{};
    a.block = block;
    a.exclusive = true;
    a.alock = alock(caller, off, len);
    a.state = 3;
    return run(n, ip, 2, nfs::xdr::append(xdr_nlm4_lockargs, a, &args_));
  }
  uint32_t unlock(NodeLocks& n, const char* ip, std::string caller, uint64_t off, uint64_t len) {
    nlm4_unlockargs a{};
    a.alock = alock(caller, off, len);
    return run(n, ip, 4, nfs::xdr::append(xdr_nlm4_unlockargs, a, &args_));
  }
  uint32_t run(NodeLocks& n, const char* ip, uint32_t proc, bool encoded) {
    EXPECT_TRUE(encoded);
    std::vector<uint8_t> results;
    rpc::DispatchResult r = n.nlm->dispatch(from(ip, nlm::kNlmProgram, proc), args_, &results);
    args_.clear();
    EXPECT_EQ(r.accept, rpc::AcceptStat::Success);
    nfs::xdr::Decoded<nlm4_res> res(xdr_nlm4_res);
    if (!res.decode(results)) return 999;
    uint32_t stat;
    std::memcpy(&stat, &res->stat.stat, sizeof stat);
    return stat;
  }

  testing::ScratchDir dir_{"nasd-nlmfwd"};
  std::shared_ptr<nfs::Exports> exports_;
  std::shared_ptr<nfs::HandleCodec> handles_;
  nfs::FileHandle fh_;
  std::shared_ptr<ToOwner> link_;
  std::shared_ptr<ToRelay> relay_;
  bool forwarding_on_ = true;
  NodeLocks a_, b_;
  std::vector<uint8_t> args_;
};

TEST_F(NlmForwardingTest, ClientsOfBothNodesContendInTheOwnersTable) {
  EXPECT_EQ(lock(b_, "127.0.0.1", "client-x", 0, 100), NLM4_GRANTED);    // at the owner
  EXPECT_EQ(lock(a_, "127.0.0.2", "client-y", 50, 10), NLM4_DENIED);     // through a
  EXPECT_EQ(link_->calls.load(), 1);
  EXPECT_EQ(unlock(b_, "127.0.0.1", "client-x", 0, 0), NLM4_GRANTED);
  EXPECT_EQ(lock(a_, "127.0.0.2", "client-y", 50, 10), NLM4_GRANTED);
  EXPECT_EQ(lock(b_, "127.0.0.1", "client-x", 55, 1), NLM4_DENIED);      // y's lock, held at b
  // a holds nothing; b recorded y at y's own address (for SM_NOTIFY after a takeover).
  EXPECT_EQ(a_.state->describe([](uint32_t) { return "main"; }).find("client-y"), std::string::npos);
  EXPECT_NE(b_.state->describe([](uint32_t) { return "main"; }).find("client-y"), std::string::npos);
  EXPECT_TRUE(b_.state->monitor().monitored("client-y", "127.0.0.2"));
  // The forwarded call carries its client's address: y's wire values from another host,
  // through a, are another owner at b and unlock nothing of y's.
  EXPECT_EQ(unlock(a_, "127.0.0.3", "client-y", 0, 0), NLM4_GRANTED);
  EXPECT_EQ(lock(b_, "127.0.0.1", "client-x", 55, 1), NLM4_DENIED);
  EXPECT_EQ(unlock(a_, "127.0.0.2", "client-y", 0, 0), NLM4_GRANTED);
  EXPECT_EQ(lock(b_, "127.0.0.1", "client-x", 55, 1), NLM4_GRANTED);
}

TEST_F(NlmForwardingTest, AGrantForALockBlockedThroughAnotherNodeIsSentFromThere) {
  ASSERT_EQ(lock(b_, "127.0.0.1", "client-x", 0, 100), NLM4_GRANTED);
  ASSERT_EQ(lock(a_, "127.0.0.2", "client-y", 10, 10, /*block=*/true), NLM4_BLOCKED);
  ASSERT_EQ(unlock(b_, "127.0.0.1", "client-x", 0, 0), NLM4_GRANTED);
  // b's GRANTED goes to a, to be made from the address y called there: y's lock manager
  // accepts a GRANTED only from the server it asked.
  for (int i = 0; i < 500 && relay_->count() == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(relay_->count(), 1u);
  const interconnect::NlmCallbackRequest& made = relay_->made[0];
  EXPECT_EQ(made.host, "127.0.0.2");
  EXPECT_EQ(made.from, "127.0.0.20");
  EXPECT_EQ(made.prog, nlm::kNlmProgram);
  EXPECT_EQ(made.proc, 5u);  // NLM4_GRANTED
  EXPECT_TRUE(made.wants_status);
  nfs::xdr::Decoded<nlm4_testargs> granted(xdr_nlm4_testargs);
  ASSERT_TRUE(granted.decode(made.args));
  EXPECT_EQ(std::string(granted->alock.caller_name), "client-y");
  EXPECT_EQ(granted->alock.l_offset, 10u);
  EXPECT_EQ(granted->alock.l_len, 10u);
  // y holds the lock at b now (the grant was answered).
  EXPECT_EQ(lock(b_, "127.0.0.1", "client-x", 12, 1), NLM4_DENIED);
  // a makes only calls to a client's lock manager for a peer.
  interconnect::NlmCallbackRequest other = made;
  other.prog = nlm::kNsmProgram;
  std::vector<uint8_t> payload;
  ASSERT_TRUE(interconnect::encode_nlm_callback(other, &payload));
  interconnect::NlmCallbackReply refused;
  ASSERT_TRUE(interconnect::decode_nlm_callback_reply(a_.forwarding->make_callback(payload), &refused));
  EXPECT_FALSE(refused.answered);
}

TEST_F(NlmForwardingTest, AnUnreachableOwnerAnswersGraceSoTheClientRetries) {
  link_->down = true;
  EXPECT_EQ(lock(a_, "127.0.0.2", "client-y", 0, 10), NLM4_DENIED_GRACE_PERIOD);
  link_->down = false;
  EXPECT_EQ(lock(a_, "127.0.0.2", "client-y", 0, 10), NLM4_GRANTED);
}

TEST_F(NlmForwardingTest, WithoutForwardingANodeThatDoesNotServeTheVolumeFails) {
  forwarding_on_ = false;
  a_ = make_node("a2", false);
  EXPECT_EQ(lock(a_, "127.0.0.2", "client-y", 0, 10), NLM4_FAILED);
}

TEST_F(NlmForwardingTest, SmNotifyAtAnyNodeReleasesTheClientsLocksAtTheOwner) {
  ASSERT_EQ(lock(a_, "127.0.0.2", "client-y", 0, 10), NLM4_GRANTED);
  ASSERT_EQ(lock(b_, "127.0.0.1", "client-x", 0, 10), NLM4_DENIED);
  // From a third party's address: nothing is released.
  std::string name = "client-y";
  sm_stat_chge notice{name.data(), 5};
  std::vector<uint8_t> results;
  ASSERT_TRUE(nfs::xdr::append(xdr_sm_stat_chge, notice, &args_));
  a_.nsm->dispatch(from("127.0.0.9", nlm::kNsmProgram, 6), args_, &results);
  args_.clear();
  EXPECT_EQ(lock(b_, "127.0.0.1", "client-x", 0, 10), NLM4_DENIED);
  // From the client itself, at the node that only forwards: released at the owner.
  ASSERT_TRUE(nfs::xdr::append(xdr_sm_stat_chge, notice, &args_));
  a_.nsm->dispatch(from("127.0.0.2", nlm::kNsmProgram, 6), args_, &results);
  args_.clear();
  EXPECT_EQ(lock(b_, "127.0.0.1", "client-x", 0, 10), NLM4_GRANTED);
}

TEST_F(NlmForwardingTest, TheAnsweringEndRefusesGarbageAndNeverForwardsAgain) {
  // b does not serve the volume in this view: a forwarded call is refused with grace there,
  // not bounced on.
  b_ = make_node("b3", false);
  link_->owner = b_.forwarding.get();
  EXPECT_EQ(lock(a_, "127.0.0.2", "client-y", 0, 10), NLM4_DENIED_GRACE_PERIOD);
  EXPECT_EQ(link_->calls.load(), 1);
  std::vector<uint8_t> junk = {1, 2, 3};
  std::vector<uint8_t> reply = b_.forwarding->answer(junk, "a");
  ASSERT_EQ(reply.size(), 8u);
  EXPECT_EQ(reply[0], static_cast<uint8_t>(rpc::AcceptStat::GarbageArgs));
}

}  // namespace
}  // namespace nasd::cluster
