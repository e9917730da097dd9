// Forwarding without holding a thread (issue 13): NFS-style calls run by rpc::CallDispatcher on
// an executor of ONE thread reach a RemoteVolume whose owner is another InterconnectServer in
// this process. The calls park while the owner works (util/resumable_call.h), many are in flight
// on the one link, and a link that dies or an owner that stays silent fails them cleanly.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "cluster/interconnect/interconnect_server.h"
#include "cluster/interconnect/peer_client.h"
#include "cluster/interconnect/remote_volume.h"
#include "cluster/interconnect/volume_server.h"
#include "fs/call/codec.h"
#include "server/rpc/call_dispatcher.h"
#include "tests/cluster/echo_volume.h"
#include "tests/cluster/held_executor.h"
#include "tests/rpc/loopback_call.h"
#include "tests/rpc/rpc_test_client.h"
#include "util/resumable_call.h"
#include "util/task_queue.h"

namespace nasd::interconnect {
namespace {

using namespace std::chrono_literals;
using cluster::testing::EchoVolume;
using cluster::testing::HeldExecutor;
using rpc::testing::CallSpec;
using rpc::testing::XdrBuilder;

const std::vector<uint8_t> kKey(32, 0x6b);
constexpr uint32_t kProg = 400123;
constexpr uint32_t kRemoteVolume = 7, kLocalVolume = 8;
constexpr uint32_t kThreeCalls = 9;  // not a volume: the procedure makes three forwarded calls

std::vector<uint8_t> bytes_of(const std::string& s) { return {s.begin(), s.end()}; }
std::string text_of(const std::vector<uint8_t>& b) { return {b.begin(), b.end()}; }

// A resumable program with one procedure (1, cacheable: the reply cache must keep working for
// calls that park): args = u32 volume id, u32 inode; results = u32 status, u64 attribute size,
// u64 attribute mtime (hashes of the inputs, from EchoVolume).
// With `on_loop`, the procedure is also offered to the event loop (dispatch_inline) and makes
// its volume call through the non-blocking attempt there, as NFS GETATTR does.
// Procedures 2 (write: 8 bytes at offset `inode`, FILE_SYNC) and 3 (commit) take the same
// arguments and answer u32 status, u64 size and u64 mtime of the post-op attributes (wcc.after),
// through try_write/try_commit on the loop as NFS WRITE and COMMIT do.
class GetattrService : public rpc::Service {
 public:
  explicit GetattrService(fs::VolumeResolver* volumes, bool on_loop = false)
      : volumes_(volumes), on_loop_(on_loop) {}
  uint32_t program() const override { return kProg; }
  uint32_t low_version() const override { return 1; }
  uint32_t high_version() const override { return 1; }
  uint32_t num_procs() const override { return 4; }
  std::string_view proc_name(uint32_t p) const override {
    return p == 0 ? "null" : p == 1 ? "getattr" : p == 2 ? "write" : "commit";
  }
  bool cacheable(uint32_t proc) const override { return proc != 0; }
  bool resumable() const override { return true; }
  rpc::DispatchResult dispatch(const rpc::CallContext& call, std::span<const uint8_t> args,
                               std::vector<uint8_t>* results) override {
    if (call.proc >= 2) return *run_change(call.proc, args, results, false);
    return *run(args, results, false);
  }
  std::optional<rpc::DispatchResult> dispatch_inline(const rpc::CallContext& call,
                                                     std::span<const uint8_t> args,
                                                     std::vector<uint8_t>* results) override {
    if (!on_loop_) return std::nullopt;
    if (call.proc >= 2) return run_change(call.proc, args, results, true);
    return run(args, results, true);
  }
  // WRITE (proc 2) or COMMIT (proc 3) of kRemoteVolume.
  std::optional<rpc::DispatchResult> run_change(uint32_t proc, std::span<const uint8_t> args,
                                                std::vector<uint8_t>* results, bool on_loop) {
    runs_.fetch_add(1);
    if (args.size() != 8) { rpc::DispatchResult r; r.accept = rpc::AcceptStat::GarbageArgs; return r; }
    const uint32_t volume = uint32_t(args[0]) << 24 | uint32_t(args[1]) << 16 |
                            uint32_t(args[2]) << 8 | args[3];
    const uint32_t inode = uint32_t(args[4]) << 24 | uint32_t(args[5]) << 16 |
                           uint32_t(args[6]) << 8 | args[7];
    fs::Volume* v = volumes_->find(volume);
    if (v == nullptr) return on_loop ? std::nullopt : std::optional(rpc::DispatchResult{});
    fs::Wcc wcc;
    std::optional<fs::Status> s;
    if (proc == 2) {
      fs::Stability committed;
      s = on_loop ? v->try_write(fs::OpContext{}, fs::InodeId{inode, 1}, inode, kWritten,
                                 fs::Stability::FileSync, &committed, &wcc)
                  : v->write(fs::OpContext{}, fs::InodeId{inode, 1}, inode, kWritten,
                             fs::Stability::FileSync, &committed, &wcc);
    } else {
      s = on_loop ? v->try_commit(fs::OpContext{}, fs::InodeId{inode, 1}, 0, inode, &wcc)
                  : v->commit(fs::OpContext{}, fs::InodeId{inode, 1}, 0, inode, &wcc);
    }
    if (!s) return std::nullopt;  // would block: to the executor
    const fs::Attr after = wcc.after.value_or(fs::Attr{});
    auto put = [&](uint64_t x, int bytes) {
      for (int i = bytes - 1; i >= 0; --i) results->push_back(uint8_t(x >> (8 * i)));
    };
    put(static_cast<uint32_t>(*s), 4);
    put(after.size, 8);
    put(static_cast<uint64_t>(after.mtime.sec), 8);
    return rpc::DispatchResult{};
  }
  static constexpr std::array<uint8_t, 8> kWritten{'f', 'o', 'r', 'w', 'a', 'r', 'd', 'd'};
  std::optional<rpc::DispatchResult> run(std::span<const uint8_t> args,
                                         std::vector<uint8_t>* results, bool on_loop) {
    runs_.fetch_add(1);
    if (args.size() != 8) { rpc::DispatchResult r; r.accept = rpc::AcceptStat::GarbageArgs; return r; }
    auto u32 = [&](size_t at) {
      return uint32_t(args[at]) << 24 | uint32_t(args[at + 1]) << 16 | uint32_t(args[at + 2]) << 8 |
             args[at + 3];
    };
    fs::Attr attr;
    fs::Status s = fs::Status::Stale;
    if (u32(0) == kThreeCalls) {
      if (on_loop) return std::nullopt;
      // Three forwarded volume calls in one procedure (as READDIRPLUS of /r makes one per
      // junction): sizes added up, mtime of the last.
      fs::Volume* v = volumes_->find(kRemoteVolume);
      uint64_t total = 0;
      for (uint32_t k = 0; k < 3; ++k) {
        s = v->getattr(fs::OpContext{}, fs::InodeId{u32(4) + k, 1}, &attr);
        if (s != fs::Status::Ok) break;
        total += attr.size;
      }
      attr.size = total;
    } else if (fs::Volume* v = volumes_->find(u32(0))) {
      if (!on_loop) {
        s = v->getattr(fs::OpContext{}, fs::InodeId{u32(4), 1}, &attr);
      } else if (std::optional<fs::Status> tried =
                     v->try_getattr(fs::OpContext{}, fs::InodeId{u32(4), 1}, &attr)) {
        s = *tried;
      } else {
        return std::nullopt;  // would block: to the executor
      }
    } else if (on_loop) {
      return std::nullopt;
    }
    auto put = [&](uint64_t x, int bytes) {
      for (int i = bytes - 1; i >= 0; --i) results->push_back(uint8_t(x >> (8 * i)));
    };
    put(static_cast<uint32_t>(s), 4);
    put(attr.size, 8);
    put(static_cast<uint64_t>(attr.mtime.sec), 8);
    return rpc::DispatchResult{};
  }
  uint64_t runs() const { return runs_.load(); }

 private:
  fs::VolumeResolver* volumes_;
  const bool on_loop_;
  std::atomic<uint64_t> runs_{0};
};

// The forwarding node's name space: kRemoteVolume through the link, kLocalVolume here.
class Resolver : public fs::VolumeResolver {
 public:
  Resolver(fs::Volume* remote, fs::Volume* local) : remote_(remote), local_(local) {}
  fs::Volume* find(uint32_t id) override {
    return id == kRemoteVolume ? remote_ : id == kLocalVolume ? local_ : nullptr;
  }

 private:
  fs::Volume* remote_;
  fs::Volume* local_;
};

// The owner node's interconnect listener (port 0: any free port).
InterconnectServerOptions owner_options(uint16_t port = 0) {
  InterconnectServerOptions o;
  o.port = port;
  o.cluster_name = "c";
  o.local_node = "owner";
  o.credentials = {kKey, "owner"};
  return o;
}

// The forwarding node's link to the owner, reconnecting quickly after a drop.
PeerClientOptions forwarder_link_options(uint16_t owner_port) {
  PeerClientOptions o;
  o.port = owner_port;
  o.cluster_name = "c";
  o.local_node = "fwd";
  o.expected_peer = "owner";
  o.credentials = {kKey, "fwd"};
  o.backoff_initial = 10ms;
  o.backoff_max = 50ms;
  return o;
}

// The owner node's side: its volume, what serves forwarded calls, and a gate in front of it.
class Owner : public fs::VolumeResolver {
 public:
  explicit Owner(uint16_t port = 0) {
    server_ = std::make_unique<InterconnectServer>(owner_options(port));
    server_->set_handler(MessageType::VolumeCall, [this](IncomingRequest r) { arrive(std::move(r)); });
    server_->start();
  }
  ~Owner() { stop(); }
  void stop() {
    server_->stop();
    std::lock_guard lock(mu_);
    held_.clear();
  }
  fs::Volume* find(uint32_t id) override { return id == kRemoteVolume ? &volume_ : nullptr; }
  uint16_t port() const { return server_->port(); }
  // Requests are held until `n` have arrived, then all are executed (0: never).
  void hold_until(size_t n) {
    std::lock_guard lock(mu_);
    release_at_ = n;
  }
  size_t arrived() const {
    std::lock_guard lock(mu_);
    return arrived_;
  }
  size_t max_held() const {
    std::lock_guard lock(mu_);
    return max_held_;
  }
  EchoVolume& volume() { return volume_; }

 private:
  void arrive(IncomingRequest r) {
    std::vector<IncomingRequest> go;
    {
      std::lock_guard lock(mu_);
      ++arrived_;
      if (release_at_ == 1) {
        go.push_back(std::move(r));
      } else {
        held_.push_back(std::move(r));
        max_held_ = std::max(max_held_, held_.size());
        if (release_at_ != 0 && held_.size() >= release_at_) {
          go.swap(held_);
          release_at_ = 1;  // from now on, straight through
        }
      }
    }
    for (auto& req : go) executor_.handle(std::move(req));
  }

  EchoVolume volume_{kRemoteVolume};
  VolumeServer executor_{this, {.threads = 2, .max_queued = 4096}};
  std::unique_ptr<InterconnectServer> server_;
  mutable std::mutex mu_;
  std::vector<IncomingRequest> held_;
  size_t release_at_ = 1;
  size_t arrived_ = 0;
  size_t max_held_ = 0;
};

// The forwarding node: a link to the owner, a RemoteVolume on it, a local volume, and a
// dispatcher whose executor has a single thread.
class Forwarder {
 public:
  Forwarder(uint16_t owner_port, std::chrono::milliseconds call_timeout, size_t slots = 1024,
            bool on_loop = false) {
    link_ = std::make_shared<PeerClient>(forwarder_link_options(owner_port));
    link_->start();
    RemoteVolumeOptions ro;
    ro.call_timeout = call_timeout;
    ro.max_in_flight = slots;
    remote_ = std::make_unique<RemoteVolume>(kRemoteVolume, link_, ro);
    resolver_ = std::make_unique<Resolver>(remote_.get(), &local_);
    service_ = std::make_shared<GetattrService>(resolver_.get(), on_loop);
    dispatcher_.add_service(service_);
  }
  ~Forwarder() {
    dispatcher_.close();
    executor_.stop();
    link_->stop();
  }

  struct Reply {
    uint32_t status = 0;
    uint64_t size = 0, mtime = 0;
  };
  // Sends call `xid` and collects its reply when it comes.
  rpc::CallDispatcher::Outcome::Kind send(uint32_t xid, uint32_t volume, uint32_t inode,
                                          uint32_t proc = 1) {
    CallSpec spec;
    spec.xid = xid;
    spec.prog = kProg;
    spec.vers = 1;
    spec.proc = proc;
    spec.args = XdrBuilder().u32(volume).u32(inode).take();
    const std::vector<uint8_t> call = rpc::testing::make_call(spec);
    auto outcome = dispatcher_.handle(rpc::Record(call.begin(), call.end()),
                                      rpc::testing::loopback_origin(800),
                                      rpc::CallDispatcher::Clock::now(),
                                      [this](rpc::CallDispatcher::Reply r) { collect(*r); });
    if (outcome.kind == rpc::CallDispatcher::Outcome::SendNow) collect(*outcome.reply);
    return outcome.kind;
  }
  // Waits until `n` replies have come (false on timeout).
  bool wait_replies(size_t n, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return replies_.size() >= n; });
  }
  std::map<uint32_t, Reply> replies() {
    std::lock_guard lock(mu_);
    return replies_;
  }
  size_t reply_count() {
    std::lock_guard lock(mu_);
    return replies_.size();
  }
  void forget_replies() {
    std::lock_guard lock(mu_);
    replies_.clear();
  }
  // What the owner's volume answers for `inode`, computed here.
  static Reply expected(uint32_t inode) {
    EchoVolume reference(kRemoteVolume);
    fs::Attr a;
    fs::Status s = reference.getattr(fs::OpContext{}, fs::InodeId{inode, 1}, &a);
    return {static_cast<uint32_t>(s), a.size, static_cast<uint64_t>(a.mtime.sec)};
  }
  // The same for the write (proc 2) or commit (proc 3) procedures.
  static Reply expected_change(uint32_t proc, uint32_t inode) {
    EchoVolume reference(kRemoteVolume);
    fs::Wcc wcc;
    fs::Status s;
    if (proc == 2) {
      fs::Stability committed;
      s = reference.write(fs::OpContext{}, fs::InodeId{inode, 1}, inode, GetattrService::kWritten,
                          fs::Stability::FileSync, &committed, &wcc);
    } else {
      s = reference.commit(fs::OpContext{}, fs::InodeId{inode, 1}, 0, inode, &wcc);
    }
    const fs::Attr after = wcc.after.value_or(fs::Attr{});
    return {static_cast<uint32_t>(s), after.size, static_cast<uint64_t>(after.mtime.sec)};
  }

  PeerClient& link() { return *link_; }
  rpc::CallDispatcher& dispatcher() { return dispatcher_; }
  util::TaskQueue& executor() { return executor_; }
  EchoVolume& local() { return local_; }

 private:
  void collect(const rpc::EncodedReply& encoded) {
    std::vector<uint8_t> wire(encoded.udp_head().begin(), encoded.udp_head().end());
    wire.insert(wire.end(), encoded.body.begin(), encoded.body.end());
    encoded.tail.copy_to(&wire);
    rpc::testing::ParsedReply p = rpc::testing::parse_reply(wire);
    Reply r;
    if (p.ok && p.results.size() == 20) {
      r.status = rpc::testing::read_u32(p.results, 0);
      r.size = uint64_t(rpc::testing::read_u32(p.results, 4)) << 32 | rpc::testing::read_u32(p.results, 8);
      r.mtime = uint64_t(rpc::testing::read_u32(p.results, 12)) << 32 | rpc::testing::read_u32(p.results, 16);
    } else {
      r.status = 0xffffffff;
    }
    std::lock_guard lock(mu_);
    replies_[p.xid] = r;
    cv_.notify_all();
  }

  EchoVolume local_{kLocalVolume};
  std::shared_ptr<PeerClient> link_;
  std::unique_ptr<RemoteVolume> remote_;
  std::unique_ptr<Resolver> resolver_;
  std::shared_ptr<GetattrService> service_;
  util::TaskQueue executor_{{.threads = 1, .room = "test"}};
  rpc::DuplicateRequestCache drc_;
  rpc::CallStats stats_;
  rpc::CallDispatcher dispatcher_{&executor_, &drc_, &stats_};
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<uint32_t, Reply> replies_;
};

// 300 forwarded calls, one executor thread: the owner answers none until all 300 are in
// flight on the link at once, which only works if no call holds the thread while it waits.
// Every reply is the one for its own call.
TEST(AsyncForwarding, ManyForwardedCallsInFlightOnOneLinkGetTheirOwnReplies) {
  constexpr uint32_t kCalls = 300;
  Owner owner;
  owner.hold_until(kCalls);
  Forwarder fwd(owner.port(), 20s);
  ASSERT_TRUE(fwd.link().wait_connected(5s)) << fwd.link().last_error();

  for (uint32_t i = 0; i < kCalls; ++i)
    ASSERT_EQ(fwd.send(1000 + i, kRemoteVolume, 500 + i), rpc::CallDispatcher::Outcome::Pending);
  ASSERT_TRUE(fwd.wait_replies(kCalls, 30s))
      << fwd.reply_count() << " replies; owner saw " << owner.arrived() << " requests at most "
      << owner.max_held() << " at once";
  EXPECT_EQ(owner.max_held(), kCalls);
  for (const auto& [xid, r] : fwd.replies()) {
    Forwarder::Reply want = Forwarder::expected(500 + (xid - 1000));
    EXPECT_EQ(r.status, want.status) << "xid " << xid;
    EXPECT_EQ(r.size, want.size) << "xid " << xid;
    EXPECT_EQ(r.mtime, want.mtime) << "xid " << xid;
  }
  EXPECT_EQ(owner.volume().calls(), kCalls);  // each executed once, none twice
  EXPECT_EQ(fwd.dispatcher().parked(), 0u);
  EXPECT_GE(fwd.dispatcher().parks(), kCalls);
}

// The reply cache still works for calls that park: a retransmission while the call is parked
// is dropped (in progress), one after the reply gets the cached reply, and the owner executed
// the call once.
TEST(AsyncForwarding, RetransmissionOfAParkedCallIsDroppedThenAnsweredFromTheCache) {
  Owner owner;
  owner.hold_until(2);  // holds the first request until a second one arrives
  Forwarder fwd(owner.port(), 20s);
  ASSERT_TRUE(fwd.link().wait_connected(5s)) << fwd.link().last_error();

  ASSERT_EQ(fwd.send(77, kRemoteVolume, 9), rpc::CallDispatcher::Outcome::Pending);
  for (int i = 0; i < 200 && owner.arrived() < 1; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(owner.arrived(), 1u);
  EXPECT_EQ(fwd.send(77, kRemoteVolume, 9), rpc::CallDispatcher::Outcome::Drop);
  ASSERT_EQ(fwd.send(78, kRemoteVolume, 10), rpc::CallDispatcher::Outcome::Pending);  // the gate
  ASSERT_TRUE(fwd.wait_replies(2, 10s));
  fwd.forget_replies();
  EXPECT_EQ(fwd.send(77, kRemoteVolume, 9), rpc::CallDispatcher::Outcome::SendNow);
  ASSERT_EQ(fwd.replies().count(77), 1u);
  EXPECT_EQ(fwd.replies()[77].size, Forwarder::expected(9).size);
  EXPECT_EQ(owner.volume().calls(), 2u);
}

// The transport goes (an EVS released while a call is parked): nobody answers the parked call
// any more, so its cache entry is forgotten; a retransmission of it (to the same node's next
// server for that address, which shares the cache) runs again instead of being dropped as
// "in progress" until the client gives up (the drill saw b-v0 stuck 55 s after a SIGSTOP).
TEST(AsyncForwarding, ClosingTheDispatcherForgetsTheCacheEntriesOfParkedCalls) {
  Owner owner;
  owner.hold_until(0);  // never answers
  Forwarder fwd(owner.port(), 20s);
  ASSERT_TRUE(fwd.link().wait_connected(5s)) << fwd.link().last_error();
  ASSERT_EQ(fwd.send(91, kRemoteVolume, 9), rpc::CallDispatcher::Outcome::Pending);
  for (int i = 0; i < 200 && owner.arrived() < 1; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(owner.arrived(), 1u);
  EXPECT_EQ(fwd.send(91, kRemoteVolume, 9), rpc::CallDispatcher::Outcome::Drop);  // in progress
  // The owner has the request once it is sent, before the executor's run has parked the call.
  for (int i = 0; i < 200 && fwd.dispatcher().parked() < 1; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(fwd.dispatcher().parked(), 1u);
  fwd.dispatcher().close();
  EXPECT_NE(fwd.send(91, kRemoteVolume, 9), rpc::CallDispatcher::Outcome::Drop)
      << "the retransmission is still dropped as in progress";
}

// A procedure that makes several forwarded calls parks on each in turn and is answered once
// all are in, with every answer in its place (each run replays the answers before the one it
// parks on).
TEST(AsyncForwarding, CallWithSeveralForwardedVolumeCallsCompletesWithAllAnswers) {
  Owner owner;
  Forwarder fwd(owner.port(), 20s);
  ASSERT_TRUE(fwd.link().wait_connected(5s)) << fwd.link().last_error();
  for (uint32_t i = 0; i < 10; ++i)
    ASSERT_EQ(fwd.send(900 + i, kThreeCalls, 40 + 3 * i), rpc::CallDispatcher::Outcome::Pending);
  ASSERT_TRUE(fwd.wait_replies(10, 10s)) << fwd.reply_count();
  for (const auto& [xid, r] : fwd.replies()) {
    const uint32_t first = 40 + 3 * (xid - 900);
    EXPECT_EQ(r.status, static_cast<uint32_t>(fs::Status::Ok)) << "xid " << xid;
    EXPECT_EQ(r.size, Forwarder::expected(first).size + Forwarder::expected(first + 1).size +
                          Forwarder::expected(first + 2).size)
        << "xid " << xid;
    EXPECT_EQ(r.mtime, Forwarder::expected(first + 2).mtime) << "xid " << xid;
  }
  EXPECT_EQ(owner.volume().calls(), 30u);  // each forwarded call sent once, none again
  EXPECT_EQ(fwd.dispatcher().parked(), 0u);
}

// The owner's link dies with 40 calls in flight: every one is answered JUKEBOX at once (not
// after its 60 s deadline), nothing stays parked, the node goes on serving its own volume,
// and forwarded calls work again once an owner is back on the link.
TEST(AsyncForwarding, LinkThatDiesWithCallsInFlightFailsThemAndTheNodeKeepsServing) {
  constexpr uint32_t kCalls = 40;
  auto owner = std::make_unique<Owner>();
  const uint16_t port = owner->port();
  owner->hold_until(0);  // never answers
  Forwarder fwd(port, 60s);
  ASSERT_TRUE(fwd.link().wait_connected(5s)) << fwd.link().last_error();

  for (uint32_t i = 0; i < kCalls; ++i)
    ASSERT_EQ(fwd.send(1 + i, kRemoteVolume, i), rpc::CallDispatcher::Outcome::Pending);
  for (int i = 0; i < 500 && owner->arrived() < kCalls; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(owner->arrived(), kCalls);
  EXPECT_EQ(fwd.dispatcher().parked(), kCalls);

  // The executor thread is free while they wait: a call on the local volume is answered.
  ASSERT_EQ(fwd.send(500, kLocalVolume, 3), rpc::CallDispatcher::Outcome::Pending);
  ASSERT_TRUE(fwd.wait_replies(1, 5s));
  EXPECT_EQ(fwd.replies()[500].status, static_cast<uint32_t>(fs::Status::Ok));
  fwd.forget_replies();

  const auto killed = std::chrono::steady_clock::now();
  owner.reset();  // the owner goes away: its end of the link closes
  ASSERT_TRUE(fwd.wait_replies(kCalls, 10s)) << fwd.reply_count() << " of " << kCalls;
  EXPECT_LT(std::chrono::steady_clock::now() - killed, 5s);
  for (const auto& [xid, r] : fwd.replies())
    EXPECT_EQ(r.status, static_cast<uint32_t>(fs::Status::Jukebox)) << "xid " << xid;
  EXPECT_EQ(fwd.dispatcher().parked(), 0u);
  fwd.forget_replies();

  ASSERT_EQ(fwd.send(600, kLocalVolume, 4), rpc::CallDispatcher::Outcome::Pending);
  ASSERT_TRUE(fwd.wait_replies(1, 5s));
  EXPECT_EQ(fwd.replies()[600].status, static_cast<uint32_t>(fs::Status::Ok));
  fwd.forget_replies();

  // An owner on the same port again: the link reconnects and forwarding resumes.
  Owner back(port);
  ASSERT_TRUE(fwd.link().wait_connected(5s));
  for (int attempt = 0; attempt < 50; ++attempt) {
    fwd.forget_replies();
    fwd.send(700 + attempt, kRemoteVolume, 11);
    ASSERT_TRUE(fwd.wait_replies(1, 5s));
    if (fwd.replies().begin()->second.status == static_cast<uint32_t>(fs::Status::Ok)) break;
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(fwd.replies().begin()->second.size, Forwarder::expected(11).size);
}

// An owner that accepts calls and never answers: each call is answered JUKEBOX at its
// deadline by the link's reader, with no thread waiting for it.
TEST(AsyncForwarding, SilentOwnerTimesCallsOutAtTheirDeadline) {
  constexpr uint32_t kCalls = 20;
  Owner owner;
  owner.hold_until(0);
  Forwarder fwd(owner.port(), 400ms);
  ASSERT_TRUE(fwd.link().wait_connected(5s)) << fwd.link().last_error();
  const auto start = std::chrono::steady_clock::now();
  for (uint32_t i = 0; i < kCalls; ++i) fwd.send(1 + i, kRemoteVolume, i);
  ASSERT_TRUE(fwd.wait_replies(kCalls, 10s)) << fwd.reply_count();
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, 400ms);
  EXPECT_LT(took, 4s);
  for (const auto& [xid, r] : fwd.replies())
    EXPECT_EQ(r.status, static_cast<uint32_t>(fs::Status::Jukebox)) << "xid " << xid;
  EXPECT_EQ(fwd.dispatcher().parked(), 0u);
}

// The link itself: 4 threads × 500 asynchronous calls with distinct payloads all complete
// with their own replies, and frames that queued up behind a send under way left together.
// Every 25th call carries 1 MiB, whose write lasts long enough for the others' frames to queue
// behind it even when the threads share one busy core (small frames alone are written faster
// than they are made there, and never queue).
TEST(AsyncForwarding, PipelinedCallsAreMatchedByIdAndBatched) {
  InterconnectServer server(owner_options());
  server.set_handler(MessageType::VolumeCall, [](IncomingRequest r) {
    r.responder.reply(bytes_of("re:" + text_of(r.payload)));
  });
  server.start();
  PeerClient link(forwarder_link_options(server.port()));
  link.start();
  ASSERT_TRUE(link.wait_connected(5s)) << link.last_error();

  std::atomic<int> done{0}, wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        std::string msg = std::to_string(t) + "/" + std::to_string(i) +
                          std::string(i % 25 == 0 ? size_t{1} << 20 : size_t(i % 97), 'x');
        link.call_async(MessageType::VolumeCall, bytes_of(msg), 20s, [&, msg](CallOutcome out) {
          if (!out.ok() || text_of(out.payload) != "re:" + msg) ++wrong;
          ++done;
        });
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int i = 0; i < 2000 && done < 2000; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(done, 2000);
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(link.in_flight(), 0u);
  EXPECT_GE(link.frames_sent(), 2000u);
  EXPECT_LT(link.writes(), link.frames_sent()) << "no two frames ever left in one write";
  link.stop();
  server.stop();
}


// ---- Fencing (link_session.h): a call the forwarder gave up on never runs after the calls
// its client made next. The CI drill lost an acknowledged REMOVE this way: a forwarded CREATE
// timed out (JUKEBOX), the client re-issued it with a new xid and removed the file, and the
// first CREATE, still on its way to the owner, ran last and brought the file back.

// The owner's volume of these tests: a directory of names, in the order the calls run.
class NamesVolume : public EchoVolume {
 public:
  NamesVolume() : EchoVolume(kRemoteVolume) {}
  fs::Status create(const fs::OpContext&, fs::InodeId, std::string_view name, fs::CreateMode,
                    const fs::SetAttr&, uint64_t, fs::InodeId* out,
                    std::optional<fs::Attr>*, fs::Wcc*) override {
    std::lock_guard lock(mu_);
    ++creates_;
    names_.insert(std::string(name));
    *out = fs::InodeId{100, 1};
    return fs::Status::Ok;
  }
  fs::Status remove(const fs::OpContext&, fs::InodeId, std::string_view name, fs::Wcc*) override {
    std::lock_guard lock(mu_);
    return names_.erase(std::string(name)) ? fs::Status::Ok : fs::Status::NoEnt;
  }
  bool has(const std::string& name) const {
    std::lock_guard lock(mu_);
    return names_.count(name) != 0;
  }
  size_t creates() const {
    std::lock_guard lock(mu_);
    return creates_;
  }

 private:
  mutable std::mutex mu_;
  std::set<std::string> names_;
  size_t creates_ = 0;
};

// An owner that holds the first CREATE it gets: on the connection's reader thread (as if the
// frame still sat in its socket buffer, or the reader had not run yet), or kept aside after the
// handler returned (as if queued for a worker); every other request runs at once.
class HoldingOwner : public fs::VolumeResolver {
 public:
  enum class Hold { InReader, Queued };
  explicit HoldingOwner(Hold hold) : hold_(hold) {
    server_ = std::make_unique<InterconnectServer>(owner_options());
    server_->set_handler(MessageType::VolumeCall, [this](IncomingRequest r) { arrive(std::move(r)); });
    server_->start();
  }
  ~HoldingOwner() {
    release();
    server_->stop();
  }
  fs::Volume* find(uint32_t id) override { return id == kRemoteVolume ? &volume_ : nullptr; }
  uint16_t port() const { return server_->port(); }
  InterconnectServer& server() { return *server_; }
  NamesVolume& volume() { return volume_; }
  bool holding() {
    std::lock_guard lock(mu_);
    return holding_;
  }
  // Lets the held CREATE go on to the worker pool, and waits until the pool has taken it.
  void release() {
    std::optional<IncomingRequest> kept;
    {
      std::lock_guard lock(mu_);
      released_ = true;
      kept.swap(kept_);
      cv_.notify_all();
    }
    std::unique_lock lock(mu_);
    if (kept) {
      lock.unlock();
      executor_.handle(std::move(*kept));
      lock.lock();
      holding_ = false;
    }
    cv_.wait_for(lock, 5s, [&] { return !holding_; });
  }

 private:
  void arrive(IncomingRequest r) {
    fs::call::VolumeRequest req;
    const bool create = fs::call::decode_request(r.payload, &req) && req.op() == fs::call::VolumeOp::Create;
    std::unique_lock lock(mu_);
    if (!create || held_once_) {
      lock.unlock();
      executor_.handle(std::move(r));
      return;
    }
    held_once_ = holding_ = true;
    if (hold_ == Hold::Queued) {
      kept_.emplace(std::move(r));
      return;  // the connection reads on
    }
    cv_.wait(lock, [&] { return released_; });
    lock.unlock();
    executor_.handle(std::move(r));
    lock.lock();
    holding_ = false;
    cv_.notify_all();
  }

  const Hold hold_;
  NamesVolume volume_;
  VolumeServer executor_{this, {.threads = 2, .max_queued = 64}};
  std::unique_ptr<InterconnectServer> server_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool held_once_ = false, holding_ = false, released_ = false;
  std::optional<IncomingRequest> kept_;
};

// The client's view: CREATE (timed out: JUKEBOX), then CREATE again with a new xid until the
// owner answers, then REMOVE; the owner lets the first CREATE go on once the REMOVE was
// acknowledged (or after a while, if the fence keeps the re-issued calls out meanwhile).
// The file must stay removed, and the first CREATE never runs.
void run_create_remove_around_a_held_create(HoldingOwner::Hold hold) {
  HoldingOwner owner(hold);
  auto link = std::make_shared<PeerClient>(forwarder_link_options(owner.port()));
  link->start();
  ASSERT_TRUE(link->wait_connected(5s)) << link->last_error();
  RemoteVolumeOptions ro;
  ro.call_timeout = 300ms;
  RemoteVolume remote(kRemoteVolume, link, ro);
  const fs::InodeId dir{2, 7};
  auto create = [&] {
    fs::InodeId out;
    std::optional<fs::Attr> attr;
    fs::Wcc wcc;
    return remote.create(fs::OpContext{}, dir, "f368", fs::CreateMode::Unchecked, fs::SetAttr{}, 0,
                         &out, &attr, &wcc);
  };
  auto remove = [&] {
    fs::Wcc wcc;
    return remote.remove(fs::OpContext{}, dir, "f368", &wcc);
  };
  // Another client's calls keep the link busy, so the owner is not silent while the CREATE
  // waits: the forwarder must give up on the connection because of the timeout itself.
  std::atomic<bool> done{false};
  std::thread chatter([&] {
    for (int i = 0; i < 2000 && !done; ++i) {
      fs::Attr attr;
      remote.getattr(fs::OpContext{}, fs::InodeId{5, 1}, &attr);
      std::this_thread::sleep_for(20ms);
    }
  });

  ASSERT_EQ(create(), fs::Status::Jukebox) << "the held CREATE was answered";
  ASSERT_TRUE(owner.holding());
  std::atomic<bool> removed{false};
  std::thread releaser([&] {
    for (int i = 0; i < 150 && !removed; ++i) std::this_thread::sleep_for(20ms);
    owner.release();
  });
  fs::Status s = fs::Status::Jukebox;
  for (int i = 0; i < 750 && s == fs::Status::Jukebox; ++i) {
    s = create();
    if (s == fs::Status::Jukebox) std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(s, fs::Status::Ok) << "the re-issued CREATE";
  s = fs::Status::Jukebox;
  for (int i = 0; i < 750 && s == fs::Status::Jukebox; ++i) {
    s = remove();
    if (s == fs::Status::Jukebox) std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(s, fs::Status::Ok) << "the REMOVE";
  removed = true;
  releaser.join();
  std::this_thread::sleep_for(300ms);  // the pool has run (or dropped) the first CREATE
  done = true;
  chatter.join();

  EXPECT_FALSE(owner.volume().has("f368"))
      << "the CREATE the forwarder gave up on ran after the acknowledged REMOVE";
  EXPECT_EQ(owner.volume().creates(), 1u) << "the first CREATE ran";
  EXPECT_GE(link->timeout_aborts(), 1u);
  EXPECT_GE(owner.server().fenced_count(), 1u);
  link->stop();
}

// The first CREATE is held on the owner's reader thread: the new connection's hello waits (and
// is refused) until it is released, and it is then dropped, not run.
TEST(AsyncForwarding, ACallGivenUpOnThatTheOwnerStillReadsNeverRunsAfterTheNextCalls) {
  run_create_remove_around_a_held_create(HoldingOwner::Hold::InReader);
}

// The first CREATE waits in the owner's queue while the link stays busy: the forwarder still
// aborts the connection on the timeout, and the owner drops the queued call of the fenced one.
TEST(AsyncForwarding, ACallGivenUpOnThatWaitsInTheOwnersQueueNeverRunsAfterTheNextCalls) {
  run_create_remove_around_a_held_create(HoldingOwner::Hold::Queued);
}

// Run to completion on the forwarding node: a call that the event loop can serve (as NFS
// GETATTR/LOOKUP/ACCESS/READ) is sent to the owner from the loop itself, parks there, and is
// finished on the link's reader thread when its answer arrives. The executor's only thread is
// held for the whole test, so a single call that needed it would never be answered.
TEST(AsyncForwarding, ForwardedCallsParkOnTheLoopAndResumeWithoutTheExecutor) {
  constexpr uint32_t kCalls = 200;
  Owner owner;
  Forwarder fwd(owner.port(), 20s, 1024, /*on_loop=*/true);
  ASSERT_TRUE(fwd.link().wait_connected(5s)) << fwd.link().last_error();
  HeldExecutor held(fwd.executor());
  ASSERT_TRUE(held.holding());

  for (uint32_t i = 0; i < kCalls; ++i) {
    if (fwd.send(3000 + i, kRemoteVolume, 100 + i) != rpc::CallDispatcher::Outcome::Pending) {
      held.let_go();
      FAIL() << "call " << i << " was not parked";
    }
  }
  const bool all = fwd.wait_replies(kCalls, 10s);
  const size_t replied = fwd.reply_count();
  held.let_go();
  ASSERT_TRUE(all) << replied << " of " << kCalls
                   << " replies with the executor held: parked calls went to the executor";
  for (const auto& [xid, r] : fwd.replies()) {
    Forwarder::Reply want = Forwarder::expected(100 + (xid - 3000));
    EXPECT_EQ(r.status, want.status) << "xid " << xid;
    EXPECT_EQ(r.size, want.size) << "xid " << xid;
    EXPECT_EQ(r.mtime, want.mtime) << "xid " << xid;
  }
  EXPECT_EQ(owner.volume().calls(), kCalls);  // each sent once
  EXPECT_EQ(fwd.dispatcher().inline_resumes(), kCalls);
  EXPECT_EQ(fwd.dispatcher().parked(), 0u);
}

// Run to completion on the owner: a forwarded call the volume can answer without waiting
// (EchoVolume::try_getattr, as an LFS volume with the inode cached) is answered on the
// connection's reader thread; one it cannot goes to the pool, with the same answer.
TEST(AsyncForwarding, OwnerAnswersCallsItCanServeAtOnceOnTheLinksReaderThread) {
  constexpr uint32_t kCalls = 50;
  Owner owner;
  owner.volume().set_answers_inline(true);
  Forwarder fwd(owner.port(), 20s);
  ASSERT_TRUE(fwd.link().wait_connected(5s)) << fwd.link().last_error();
  for (uint32_t i = 0; i < kCalls; ++i) fwd.send(4000 + i, kRemoteVolume, 200 + i);
  ASSERT_TRUE(fwd.wait_replies(kCalls, 10s)) << fwd.reply_count();
  EXPECT_EQ(owner.volume().inline_calls(), kCalls);

  owner.volume().set_answers_inline(false);  // now every call would block: the pool runs it
  for (uint32_t i = 0; i < kCalls; ++i) fwd.send(5000 + i, kRemoteVolume, 300 + i);
  ASSERT_TRUE(fwd.wait_replies(2 * kCalls, 10s)) << fwd.reply_count();
  EXPECT_EQ(owner.volume().inline_calls(), kCalls);
  EXPECT_EQ(owner.volume().calls(), 2 * kCalls);
  for (const auto& [xid, r] : fwd.replies()) {
    Forwarder::Reply want = Forwarder::expected(xid < 5000 ? 200 + (xid - 4000) : 300 + (xid - 5000));
    EXPECT_EQ(r.status, want.status) << "xid " << xid;
    EXPECT_EQ(r.size, want.size) << "xid " << xid;
  }
}

// WRITE and COMMIT on the fast lane too (RemoteVolume::try_write/try_commit): sent from the
// loop, parked, and finished on the link's reader thread with the owner's answer, with the
// executor's only thread held throughout; each is run once on the owner, and the NFS-side
// answer is the owner's (every field of the post-op attributes, hashed by EchoVolume).
TEST(AsyncForwarding, ForwardedWritesAndCommitsParkOnTheLoopAndResumeWithoutTheExecutor) {
  constexpr uint32_t kCalls = 100;  // of each
  Owner owner;
  Forwarder fwd(owner.port(), 20s, 1024, /*on_loop=*/true);
  ASSERT_TRUE(fwd.link().wait_connected(5s)) << fwd.link().last_error();
  HeldExecutor held(fwd.executor());
  ASSERT_TRUE(held.holding());
  // xid 6000+i: WRITE of inode 100+i; xid 7000+i: COMMIT of inode 100+i.
  for (uint32_t i = 0; i < kCalls; ++i) {
    for (uint32_t proc : {2u, 3u}) {
      if (fwd.send((proc == 2 ? 6000 : 7000) + i, kRemoteVolume, 100 + i, proc) !=
          rpc::CallDispatcher::Outcome::Pending) {
        held.let_go();
        FAIL() << "call " << i << " (proc " << proc << ") was not parked";
      }
    }
  }
  const bool all = fwd.wait_replies(2 * kCalls, 10s);
  const size_t replied = fwd.reply_count();
  held.let_go();
  ASSERT_TRUE(all) << replied << " of " << 2 * kCalls
                   << " replies with the executor held: parked calls went to the executor";
  for (const auto& [xid, r] : fwd.replies()) {
    const uint32_t proc = xid < 7000 ? 2 : 3;
    Forwarder::Reply want = Forwarder::expected_change(proc, 100 + xid % 1000);
    EXPECT_EQ(r.status, want.status) << "xid " << xid;
    EXPECT_EQ(r.size, want.size) << "xid " << xid;
    EXPECT_EQ(r.mtime, want.mtime) << "xid " << xid;
  }
  EXPECT_EQ(owner.volume().calls(), 2 * kCalls);  // each sent and run once
  EXPECT_EQ(fwd.dispatcher().inline_resumes(), 2 * kCalls);
  EXPECT_EQ(fwd.dispatcher().parked(), 0u);
}

// Outside a resumable call, and in a run that may not park before its answer is in, the
// attempts would block (nothing sent): the caller then takes the blocking path.
TEST(AsyncForwarding, WriteAndCommitAttemptsThatMayNotParkWouldBlockAndSendNothing) {
  Owner owner;
  Forwarder fwd(owner.port(), 20s, 1024, /*on_loop=*/true);
  ASSERT_TRUE(fwd.link().wait_connected(5s)) << fwd.link().last_error();
  auto link = std::shared_ptr<PeerClient>(&fwd.link(), [](PeerClient*) {});
  RemoteVolume remote(kRemoteVolume, link);
  fs::Wcc wcc;
  fs::Stability committed;
  EXPECT_FALSE(remote.try_write(fs::OpContext{}, fs::InodeId{5, 1}, 0, GetattrService::kWritten,
                                fs::Stability::Unstable, &committed, &wcc));
  EXPECT_FALSE(remote.try_commit(fs::OpContext{}, fs::InodeId{5, 1}, 0, 0, &wcc));
  auto call = std::make_shared<util::ResumableCall>();
  {
    util::ResumableCall::Run run(call, /*may_park=*/false);
    EXPECT_FALSE(remote.try_write(fs::OpContext{}, fs::InodeId{5, 1}, 0, GetattrService::kWritten,
                                  fs::Stability::Unstable, &committed, &wcc));
  }
  EXPECT_FALSE(call->end_run(nullptr));
  EXPECT_EQ(fwd.link().in_flight(), 0u);
  EXPECT_EQ(owner.arrived(), 0u);
}

// Runs `attempt_all` (each attempt expected to decline) against a connected forwarder, outside
// any resumable call and inside a run that may not park (the link reader's resumption): the
// attempts would block, and nothing reaches the link or the owner.
void expect_attempts_that_may_not_park_send_nothing(
    const std::function<void(RemoteVolume&)>& attempt_all) {
  Owner owner;
  Forwarder fwd(owner.port(), 20s, 1024, /*on_loop=*/true);
  ASSERT_TRUE(fwd.link().wait_connected(5s)) << fwd.link().last_error();
  auto link = std::shared_ptr<PeerClient>(&fwd.link(), [](PeerClient*) {});
  RemoteVolume remote(kRemoteVolume, link);
  attempt_all(remote);
  auto call = std::make_shared<util::ResumableCall>();
  {
    util::ResumableCall::Run run(call, /*may_park=*/false);
    attempt_all(remote);
  }
  EXPECT_FALSE(call->end_run(nullptr));
  EXPECT_EQ(fwd.link().in_flight(), 0u);
  EXPECT_EQ(owner.arrived(), 0u);
  EXPECT_EQ(owner.volume().calls(), 0u);
}

// The same for READLINK, READDIR(PLUS) and FSSTAT.
TEST(AsyncForwarding, ReadOnlyAttemptsThatMayNotParkWouldBlockAndSendNothing) {
  expect_attempts_that_may_not_park_send_nothing([](RemoteVolume& remote) {
    std::string target;
    std::optional<fs::Attr> attr;
    fs::ReaddirResult listing;
    fs::FsStat stat;
    EXPECT_FALSE(remote.try_readlink(fs::OpContext{}, fs::InodeId{5, 1}, &target, &attr));
    EXPECT_FALSE(remote.try_readdir(fs::OpContext{}, fs::InodeId{2, 7}, 0, 0, 10, false, &listing));
    EXPECT_FALSE(remote.try_readdir(fs::OpContext{}, fs::InodeId{2, 7}, 0, 0, 10, true, &listing));
    EXPECT_FALSE(remote.try_fsstat(fs::OpContext{}, fs::InodeId{2, 7}, &stat, &attr));
  });
}

// And for the name-space mutations: nothing is sent unless the call can park on it.
TEST(AsyncForwarding, MutationAttemptsThatMayNotParkWouldBlockAndSendNothing) {
  expect_attempts_that_may_not_park_send_nothing([](RemoteVolume& remote) {
    const fs::OpContext ctx;
    const fs::InodeId dir{2, 7}, file{5, 1};
    fs::InodeId out;
    std::optional<fs::Attr> attr;
    fs::Wcc wcc, other;
    EXPECT_FALSE(remote.try_setattr(ctx, file, fs::SetAttr{}, std::nullopt, &wcc));
    EXPECT_FALSE(remote.try_create(ctx, dir, "f", fs::CreateMode::Guarded, fs::SetAttr{}, 0, &out,
                                   &attr, &wcc));
    EXPECT_FALSE(remote.try_mkdir(ctx, dir, "d", fs::SetAttr{}, &out, &attr, &wcc));
    EXPECT_FALSE(remote.try_symlink(ctx, dir, "l", "t", fs::SetAttr{}, &out, &attr, &wcc));
    EXPECT_FALSE(remote.try_mknod(ctx, dir, "n", fs::FileType::Fifo, fs::SetAttr{}, 0, 0, &out,
                                  &attr, &wcc));
    EXPECT_FALSE(remote.try_remove(ctx, dir, "f", &wcc));
    EXPECT_FALSE(remote.try_rmdir(ctx, dir, "d", &wcc));
    EXPECT_FALSE(remote.try_rename(ctx, dir, "a", dir, "b", &wcc, &other));
    EXPECT_FALSE(remote.try_link(ctx, file, dir, "h", &attr, &wcc));
  });
}

}  // namespace
}  // namespace nasd::interconnect
