// The HA pair as two ClusterMembershipServices in one process (a ring of two), talking over
// loopback interconnect links and fencing through lease files in a temporary folder (the "SAN").
#include "cluster/membership/cluster_membership_service.h"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <future>
#include <set>
#include <thread>

#include "cluster/interconnect/peer_client.h"
#include "cluster/membership/file_lease_authority.h"
#include "tests/cluster/scratch_dir.h"

namespace nasd::membership {
namespace {

using namespace std::chrono_literals;

// Lets the test build both nodes before either port is known.
class DeferredChannel : public interconnect::CallChannel {
 public:
  void set(std::shared_ptr<interconnect::CallChannel> target) {
    std::lock_guard lock(mu_);
    target_ = std::move(target);
  }
  interconnect::CallOutcome call(interconnect::MessageType type, std::vector<uint8_t> payload,
                                 std::chrono::milliseconds timeout) override {
    std::shared_ptr<interconnect::CallChannel> t;
    {
      std::lock_guard lock(mu_);
      t = target_;
    }
    if (!t) return {interconnect::CallError::NotConnected, {}};
    return t->call(type, std::move(payload), timeout);
  }

 private:
  std::mutex mu_;
  std::shared_ptr<interconnect::CallChannel> target_;
};

// Wraps the file authority so a test can cut one node's path to the SAN.
class SwitchableAuthority : public LeaseAuthority {
 public:
  explicit SwitchableAuthority(std::shared_ptr<LeaseAuthority> inner) : inner_(std::move(inner)) {}
  std::atomic<bool> reachable{true};
  // Runs first in every acquire (set before the service starts): a test may hold one there.
  std::function<void(uint32_t)> before_acquire;
  LeaseAnswer acquire(uint32_t v, const std::string& node, int64_t ms) override {
    if (before_acquire) before_acquire(v);
    if (!reachable) return {LeaseVerdict::Unreachable, {}, "SAN path cut by test"};
    return inner_->acquire(v, node, ms);
  }
  bool release(uint32_t v, const std::string& node) override {
    return reachable && inner_->release(v, node);
  }
  bool inspect(uint32_t v, Lease* out, std::string* error) override {
    return inner_->inspect(v, out, error);
  }

 private:
  std::shared_ptr<LeaseAuthority> inner_;
};

// What a node routes to itself, as the router would see it.
struct RoutingRecord {
  std::mutex mu;
  std::set<uint32_t> routed;
  std::set<uint32_t> snapshot() {
    std::lock_guard lock(mu);
    return routed;
  }
};

struct TestNode {
  std::string name;
  std::unique_ptr<interconnect::InterconnectServer> server;
  std::shared_ptr<DeferredChannel> to_partner = std::make_shared<DeferredChannel>();
  std::shared_ptr<SwitchableAuthority> authority;
  std::unique_ptr<ClusterMembershipService> service;
  RoutingRecord record;
  uint16_t port = 0;

  void start(const std::string& dir, const std::string& partner, std::vector<uint32_t> home,
             std::vector<uint32_t> partner_home, uint16_t listen_port = 0) {
    ClusterMemberConfig c;
    c.self = name;
    c.peers = {partner};
    c.covers = {partner};
    for (uint32_t v : home) c.home[v] = name;
    for (uint32_t v : partner_home) c.home[v] = partner;
    c.heartbeat_interval_ms = 50;
    c.missed_heartbeats = 4;
    c.lease_ms = 1200;
    c.renew_after_ms = 300;
    c.safety_margin_ms = 300;
    c.retry_ms = 100;
    authority = std::make_shared<SwitchableAuthority>(std::make_shared<FileLeaseAuthority>(dir));
    ClusterHooks hooks;
    hooks.volume.open = [](uint32_t) { std::this_thread::sleep_for(20ms); };  // journal replay
    hooks.volume.start_routing = [this](uint32_t v) {
      std::lock_guard lock(record.mu);
      record.routed.insert(v);
    };
    hooks.route = [this](uint32_t v, const std::string& node) {
      std::lock_guard lock(record.mu);
      if (node != name) record.routed.erase(v);
    };
    service = std::make_unique<ClusterMembershipService>(
        ClusterMembershipOptions{c, 10ms},
        std::map<std::string, std::shared_ptr<interconnect::CallChannel>>{{partner, to_partner}},
        authority, hooks);
    interconnect::InterconnectServerOptions o;
    o.port = listen_port;
    o.cluster_name = "pair";
    o.local_node = name;
    o.credentials = {std::vector<uint8_t>(32, 0x5a), name};
    server = std::make_unique<interconnect::InterconnectServer>(o);
    service->attach(*server);
    server->start();
    port = server->port();
  }
  void connect_to(uint16_t partner_port, const std::string& partner) {
    interconnect::PeerClientOptions o;
    o.port = partner_port;
    o.cluster_name = "pair";
    o.local_node = name;
    o.expected_peer = partner;
    o.credentials = {std::vector<uint8_t>(32, 0x5a), name};
    o.backoff_initial = 10ms;
    o.backoff_max = 50ms;
    auto client = std::make_shared<interconnect::PeerClient>(o);
    client->start();
    to_partner->set(client);
  }
  void stop() {
    if (service) service->stop();
    if (server) server->stop();
    to_partner->set(nullptr);
  }
};

bool eventually(const std::function<bool()>& cond, std::chrono::milliseconds limit = 10s) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (cond()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return cond();
}

class MembershipServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    a_.name = "a";
    b_.name = "b";
    a_.start(san_, "b", {1}, {2});
    b_.start(san_, "a", {2}, {1});
    a_.connect_to(b_.port, "b");
    b_.connect_to(a_.port, "a");
    a_.service->start();
    b_.service->start();
  }
  void TearDown() override {
    a_.stop();
    b_.stop();
  }

  cluster::testing::ScratchDir scratch_{"nasd-membership-test"};
  const std::string san_ = scratch_.path;
  TestNode a_, b_;
};

using Set = std::set<uint32_t>;

TEST_F(MembershipServiceTest, EachNodeServesItsHomeVolume) {
  ASSERT_TRUE(eventually([&] { return a_.record.snapshot() == Set{1} && b_.record.snapshot() == Set{2}; }));
  EXPECT_TRUE(eventually([&] { return a_.service->state() == MemberState::Normal; }))
      << a_.service->status();
  EXPECT_TRUE(a_.service->serving(1));
  EXPECT_FALSE(a_.service->serving(2));
}

TEST_F(MembershipServiceTest, StoppedPartnerIsTakenOverThenFailsBack) {
  ASSERT_TRUE(eventually([&] { return b_.record.snapshot() == Set{2}; }));
  uint16_t b_port = b_.port;
  b_.stop();
  ASSERT_TRUE(eventually([&] { return a_.record.snapshot() == (Set{1, 2}); }))
      << a_.service->status();
  EXPECT_EQ(a_.service->state(), MemberState::Covering);

  // b comes back on the same port and asks for its volume.
  b_.start(san_, "a", {2}, {1}, b_port);
  b_.connect_to(a_.port, "a");
  b_.service->start();
  ASSERT_TRUE(eventually([&] { return a_.record.snapshot() == Set{1} && b_.record.snapshot() == Set{2}; }))
      << "a: " << a_.service->status() << " b: " << b_.service->status();
}

TEST_F(MembershipServiceTest, NodeThatLosesTheSanStopsServingAndThePartnerTakesOver) {
  ASSERT_TRUE(eventually([&] { return a_.record.snapshot() == Set{1} && b_.record.snapshot() == Set{2}; }));
  a_.authority->reachable = false;
  auto cut = std::chrono::steady_clock::now();
  // a cannot renew: it must stop within lease - margin (900 ms), and b may only start after;
  // a routes v1 away once b says it holds it.
  ASSERT_TRUE(eventually([&] { return !a_.service->serving(1); }, 3s));
  EXPECT_LT(std::chrono::steady_clock::now() - cut, 1500ms);
  ASSERT_TRUE(eventually([&] { return a_.record.snapshot().empty(); }, 5s)) << a_.service->status();
  ASSERT_TRUE(eventually([&] { return b_.record.snapshot() == (Set{1, 2}); }))
      << "b: " << b_.service->status();
  // Once the SAN is back, a asks for its volume and gets it.
  a_.authority->reachable = true;
  ASSERT_TRUE(eventually([&] { return a_.record.snapshot() == Set{1} && b_.record.snapshot() == Set{2}; }))
      << "a: " << a_.service->status() << " b: " << b_.service->status();
}

// Node a alone (b never starts) takes b's volume 2 over; its lease request is held at the
// authority until a's stop has begun, and then granted. The member never hears of that grant,
// so the service itself must give it back: a clean stop leaves no lease behind (the next owner
// would otherwise wait a whole lease term; the etcd failover test checks etcd is empty).
TEST(MembershipServiceStop, AGrantThatLandsDuringTheStopIsReleased) {
  cluster::testing::ScratchDir san("nasd-membership-test");
  TestNode a;
  a.name = "a";
  a.start(san.path, "b", {1}, {2});
  std::promise<void> held, open;
  std::shared_future<void> opened = open.get_future().share();
  std::atomic<bool> armed{true};
  a.authority->before_acquire = [&](uint32_t v) {
    if (v != 2 || !armed.exchange(false)) return;
    held.set_value();
    opened.wait();
  };
  a.service->start();
  ASSERT_EQ(held.get_future().wait_for(10s), std::future_status::ready) << "b's volume never asked for";
  std::thread stopper([&a] { a.stop(); });
  std::this_thread::sleep_for(200ms);  // the stop is under way (it waits for the lease queue)
  open.set_value();
  stopper.join();
  Lease lease;
  std::string error;
  ASSERT_TRUE(a.authority->inspect(2, &lease, &error)) << error;
  EXPECT_EQ(lease.holder, "") << "a stopped node left volume 2's lease behind";
  ASSERT_TRUE(a.authority->inspect(1, &lease, &error)) << error;
  EXPECT_EQ(lease.holder, "");
}

}  // namespace
}  // namespace nasd::membership
