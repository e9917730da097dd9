// RemoteVolume -> interconnect -> VolumeServer -> EchoVolume, compared call by call with the
// same call made directly on an identical EchoVolume.
#include "cluster/interconnect/remote_volume.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "cluster/interconnect/interconnect_server.h"
#include "cluster/interconnect/peer_client.h"
#include "cluster/interconnect/unavailable_volume.h"
#include "fs/call/codec.h"
#include "fs/call/dispatch.h"
#include "cluster/interconnect/volume_server.h"
#include "tests/cluster/codec_samples.h"
#include "tests/cluster/echo_volume.h"
#include "tests/cluster/fs_equality.h"
#include "tests/cluster/loopback_channel.h"

namespace nasd::interconnect {

using namespace fs::call;
namespace {

using namespace std::chrono_literals;
using cluster::testing::EchoVolume;
using cluster::testing::MapResolver;
using cluster::testing::sample_context;
using cluster::testing::sample_setattr;

constexpr uint32_t kVolume = 5;

class RemoteVolumeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    volumes_.add(&served_);
    start_server();
    PeerClientOptions o;
    o.port = server_->port();
    o.cluster_name = "c";
    o.local_node = "front";
    o.expected_peer = "owner";
    o.credentials = {std::vector<uint8_t>(32, 0x5a), "front"};
    o.backoff_initial = 10ms;
    o.backoff_max = 50ms;
    client_ = std::make_shared<PeerClient>(o);
    client_->start();
    ASSERT_TRUE(client_->wait_connected(5s)) << client_->last_error();
    remote_ = std::make_unique<RemoteVolume>(kVolume, client_, RemoteVolumeOptions{2s, 1s, 8, nullptr});
  }
  void TearDown() override {
    client_->stop();
    server_->stop();
  }

  void start_server(uint16_t port = 0, VolumeServerOptions vo = {}) {
    InterconnectServerOptions o;
    o.port = port;
    o.cluster_name = "c";
    o.local_node = "owner";
    o.credentials = {std::vector<uint8_t>(32, 0x5a), "owner"};
    server_ = std::make_unique<InterconnectServer>(o);
    volume_server_ = std::make_unique<VolumeServer>(&volumes_, vo);
    volume_server_->attach(*server_);
    server_->start();
  }

  // The last call reached the served volume with exactly the inputs the reference got.
  void expect_same_inputs() {
    EXPECT_EQ(served_.last_input_hash(), reference_.last_input_hash());
  }

  EchoVolume served_{kVolume};
  EchoVolume reference_{kVolume};
  MapResolver volumes_;
  std::unique_ptr<InterconnectServer> server_;
  std::unique_ptr<VolumeServer> volume_server_;
  std::shared_ptr<PeerClient> client_;
  std::unique_ptr<RemoteVolume> remote_;
  fs::OpContext ctx_ = sample_context();
  fs::InodeId a_{77, 3}, b_{88, 4};
};

TEST_F(RemoteVolumeTest, AttributeAndLookupCallsMatchDirectCalls) {
  fs::Attr ra, la;
  EXPECT_EQ(remote_->getattr(ctx_, a_, &ra), reference_.getattr(ctx_, a_, &la));
  EXPECT_TRUE(ra == la);
  expect_same_inputs();

  fs::Wcc rw, lw;
  EXPECT_EQ(remote_->setattr(ctx_, a_, sample_setattr(), fs::Time{3, 4}, &rw),
            reference_.setattr(ctx_, a_, sample_setattr(), fs::Time{3, 4}, &lw));
  EXPECT_TRUE(rw == lw);
  expect_same_inputs();

  fs::InodeId rid, lid;
  std::optional<fs::Attr> ro, lo, rd, ld;
  EXPECT_EQ(remote_->lookup(ctx_, a_, "file", &rid, &ro, &rd),
            reference_.lookup(ctx_, a_, "file", &lid, &lo, &ld));
  EXPECT_EQ(rid, lid);
  EXPECT_TRUE(ro == lo && rd == ld);
  expect_same_inputs();

  uint32_t rg, lg;
  EXPECT_EQ(remote_->access(ctx_, a_, 0x3f, &rg, &ro), reference_.access(ctx_, a_, 0x3f, &lg, &lo));
  EXPECT_EQ(rg, lg);
  EXPECT_TRUE(ro == lo);
  expect_same_inputs();

  std::string rt, lt;
  EXPECT_EQ(remote_->readlink(ctx_, b_, &rt, &ro), reference_.readlink(ctx_, b_, &lt, &lo));
  EXPECT_EQ(rt, lt);
  EXPECT_TRUE(ro == lo);
  expect_same_inputs();

  fs::FsStat rs, ls;
  EXPECT_EQ(remote_->fsstat(ctx_, b_, &rs, &ro), reference_.fsstat(ctx_, b_, &ls, &lo));
  EXPECT_TRUE(rs == ls && ro == lo);
  expect_same_inputs();
}

TEST_F(RemoteVolumeTest, DataCallsMatchDirectCalls) {
  std::vector<uint8_t> rd, ld;
  bool reof, leof;
  std::optional<fs::Attr> ra, la;
  EXPECT_EQ(remote_->read(ctx_, a_, 1 << 20, 70000, &rd, &reof, &ra),
            reference_.read(ctx_, a_, 1 << 20, 70000, &ld, &leof, &la));
  EXPECT_EQ(rd, ld);
  EXPECT_EQ(rd.size(), 70000u);
  EXPECT_EQ(reof, leof);
  EXPECT_TRUE(ra == la);
  expect_same_inputs();

  std::vector<uint8_t> data(1 << 20);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 31);
  fs::Stability rc, lc;
  fs::Wcc rw, lw;
  EXPECT_EQ(remote_->write(ctx_, a_, 8192, data, fs::Stability::FileSync, &rc, &rw),
            reference_.write(ctx_, a_, 8192, data, fs::Stability::FileSync, &lc, &lw));
  EXPECT_EQ(rc, lc);
  EXPECT_TRUE(rw == lw);
  expect_same_inputs();

  EXPECT_EQ(remote_->commit(ctx_, a_, 0, 4096, &rw), reference_.commit(ctx_, a_, 0, 4096, &lw));
  EXPECT_TRUE(rw == lw);
  expect_same_inputs();
}

TEST_F(RemoteVolumeTest, NamespaceCallsMatchDirectCalls) {
  fs::InodeId rid, lid;
  std::optional<fs::Attr> ro, lo;
  fs::Wcc rw, lw, rw2, lw2;
  auto sa = sample_setattr();

  EXPECT_EQ(remote_->create(ctx_, a_, "c", fs::CreateMode::Guarded, sa, 42, &rid, &ro, &rw),
            reference_.create(ctx_, a_, "c", fs::CreateMode::Guarded, sa, 42, &lid, &lo, &lw));
  EXPECT_TRUE(rid == lid && ro == lo && rw == lw);
  expect_same_inputs();

  EXPECT_EQ(remote_->mkdir(ctx_, a_, "d", sa, &rid, &ro, &rw),
            reference_.mkdir(ctx_, a_, "d", sa, &lid, &lo, &lw));
  EXPECT_TRUE(rid == lid && ro == lo && rw == lw);
  expect_same_inputs();

  EXPECT_EQ(remote_->symlink(ctx_, a_, "s", "/t", sa, &rid, &ro, &rw),
            reference_.symlink(ctx_, a_, "s", "/t", sa, &lid, &lo, &lw));
  EXPECT_TRUE(rid == lid && ro == lo && rw == lw);
  expect_same_inputs();

  EXPECT_EQ(remote_->mknod(ctx_, a_, "n", fs::FileType::Blk, sa, 3, 4, &rid, &ro, &rw),
            reference_.mknod(ctx_, a_, "n", fs::FileType::Blk, sa, 3, 4, &lid, &lo, &lw));
  EXPECT_TRUE(rid == lid && ro == lo && rw == lw);
  expect_same_inputs();

  EXPECT_EQ(remote_->remove(ctx_, a_, "c", &rw), reference_.remove(ctx_, a_, "c", &lw));
  EXPECT_TRUE(rw == lw);
  expect_same_inputs();

  EXPECT_EQ(remote_->rmdir(ctx_, a_, "d", &rw), reference_.rmdir(ctx_, a_, "d", &lw));
  EXPECT_TRUE(rw == lw);
  expect_same_inputs();

  EXPECT_EQ(remote_->rename(ctx_, a_, "x", b_, "y", &rw, &rw2),
            reference_.rename(ctx_, a_, "x", b_, "y", &lw, &lw2));
  EXPECT_TRUE(rw == lw && rw2 == lw2);
  expect_same_inputs();

  EXPECT_EQ(remote_->link(ctx_, b_, a_, "h", &ro, &rw), reference_.link(ctx_, b_, a_, "h", &lo, &lw));
  EXPECT_TRUE(ro == lo && rw == lw);
  expect_same_inputs();

  fs::ReaddirResult rr, lr;
  EXPECT_EQ(remote_->readdir(ctx_, a_, 5, 6, 40, true, &rr),
            reference_.readdir(ctx_, a_, 5, 6, 40, true, &lr));
  EXPECT_EQ(rr.entries.size(), 40u);
  EXPECT_TRUE(rr == lr);
  expect_same_inputs();
}

TEST_F(RemoteVolumeTest, ErrorStatusCarriesItsOutParameters) {
  served_.set_status(fs::Status::Access);
  reference_.set_status(fs::Status::Access);
  fs::Wcc rw, lw;
  EXPECT_EQ(remote_->remove(ctx_, a_, "x", &rw), fs::Status::Access);
  reference_.remove(ctx_, a_, "x", &lw);
  EXPECT_TRUE(rw == lw);
}

TEST_F(RemoteVolumeTest, RootLimitsAndVerifierComeFromTheOwner) {
  EXPECT_EQ(remote_->root(), served_.root());
  EXPECT_TRUE(remote_->limits() == served_.limits());
  fs::Attr attr;
  remote_->getattr(ctx_, a_, &attr);
  EXPECT_EQ(remote_->write_verifier(), served_.write_verifier());
  served_.set_verifier(0xbeef);  // the owner restarted
  remote_->getattr(ctx_, a_, &attr);
  EXPECT_EQ(remote_->write_verifier(), 0xbeefu);
}

// The start failure of the 4-node drill: a node asked the owner for a volume's root before the
// owner had opened it, kept the {0, 0} of the owner's stand-in, and refused every mount of the
// volume (MNT3ERR_SERVERFAULT) after the owner had opened it.
TEST_F(RemoteVolumeTest, ARootAskedForBeforeTheOwnerOpenedTheVolumeIsAskedForAgain) {
  constexpr uint32_t kLate = kVolume + 2;
  UnavailableVolume not_yet_open(kLate, fs::InodeId{});
  volumes_.add(&not_yet_open);
  VolumeRequest describe{kLate, {}, DescribeArgs{}, std::nullopt};
  EXPECT_EQ(execute_volume_call(not_yet_open, describe).status, fs::Status::Jukebox);
  RemoteVolume remote(kLate, client_);
  EXPECT_EQ(remote.root(), fs::InodeId{});
  EXPECT_FALSE(remote.describe());

  EchoVolume opened(kLate);
  volumes_.add(&opened);
  EXPECT_EQ(remote.root(), opened.root());
  EXPECT_NE(remote.root(), fs::InodeId{});
}

TEST_F(RemoteVolumeTest, VolumeTheOwnerDoesNotHaveIsStale) {
  RemoteVolume other(kVolume + 1, client_);
  fs::Attr attr;
  EXPECT_EQ(other.getattr(ctx_, a_, &attr), fs::Status::Stale);
  EXPECT_EQ(served_.calls(), 0u);
}

TEST_F(RemoteVolumeTest, SlowOwnerGivesJukebox) {
  served_.set_delay(600ms);
  RemoteVolume impatient(kVolume, client_, RemoteVolumeOptions{100ms, 100ms, 8, nullptr});
  fs::Attr attr;
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(impatient.getattr(ctx_, a_, &attr), fs::Status::Jukebox);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 550ms);
}

TEST_F(RemoteVolumeTest, UnreachableOwnerGivesJukeboxThenRecovers) {
  uint16_t port = server_->port();
  server_->stop();
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (client_->connected() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(5ms);
  }
  fs::Attr attr;
  EXPECT_EQ(remote_->getattr(ctx_, a_, &attr), fs::Status::Jukebox);
  start_server(port);
  ASSERT_TRUE(client_->wait_connected(5s)) << client_->last_error();
  EXPECT_EQ(remote_->getattr(ctx_, a_, &attr), fs::Status::Ok);
}

TEST_F(RemoteVolumeTest, MalformedRequestIsAnsweredServerFault) {
  std::vector<uint8_t> garbage = {kVolumeCodecVersion, 1, 0xff};
  CallOutcome out = client_->call(MessageType::VolumeCall, garbage, 2s);
  ASSERT_TRUE(out.ok());
  VolumeReply reply;
  ASSERT_TRUE(decode_reply(out.payload, VolumeOp::Getattr, &reply));
  EXPECT_EQ(reply.status, fs::Status::ServerFault);
  EXPECT_EQ(served_.calls(), 0u);
}

TEST_F(RemoteVolumeTest, OverloadedOwnerAnswersJukeboxAtOnce) {
  server_->stop();
  served_.set_delay(300ms);
  start_server(0, VolumeServerOptions{1, 1});
  PeerClientOptions o;
  o.port = server_->port();
  o.cluster_name = "c";
  o.local_node = "front";
  o.expected_peer = "owner";
  o.credentials = {std::vector<uint8_t>(32, 0x5a), "front"};
  auto client = std::make_shared<PeerClient>(o);
  client->start();
  ASSERT_TRUE(client->wait_connected(5s));
  RemoteVolume remote(kVolume, client);
  std::atomic<int> jukebox{0}, ok{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([&] {
      fs::Attr attr;
      fs::Status s = remote.getattr(ctx_, a_, &attr);
      (s == fs::Status::Jukebox ? jukebox : ok)++;
    });
  }
  for (auto& t : threads) t.join();
  // One running, one queued; the rest were refused rather than queued without bound.
  EXPECT_GE(ok, 1);
  EXPECT_GE(jukebox, 1);
  EXPECT_EQ(ok + jukebox, 6);
  client->stop();
}

}  // namespace
}  // namespace nasd::interconnect

namespace nasd::interconnect {
namespace {

// An owner that takes every call and never answers (a paused partner): each call waits for
// its whole timeout.
class HungChannel : public CallChannel {
 public:
  CallOutcome call(MessageType, std::vector<uint8_t>, std::chrono::milliseconds timeout) override {
    calls_.fetch_add(1);
    std::this_thread::sleep_for(timeout);
    return CallOutcome{CallError::Timeout, {}};
  }
  int calls() const { return calls_.load(); }

 private:
  std::atomic<int> calls_{0};
};

TEST(RemoteVolumeSlots, AHungOwnerHoldsOnlyItsSlotsAndEveryOtherCallIsJukeboxAtOnce) {
  using namespace std::chrono_literals;
  auto channel = std::make_shared<HungChannel>();
  RemoteVolumeOptions o;
  o.call_timeout = 400ms;
  o.describe_timeout = 100ms;
  o.max_in_flight = 2;
  RemoteVolume remote(kVolume, channel, o);
  constexpr int kCalls = 8;
  std::vector<fs::Status> status(kCalls);
  std::vector<std::chrono::milliseconds> took(kCalls);
  std::vector<std::thread> threads;
  for (int i = 0; i < kCalls; ++i)
    threads.emplace_back([&, i] {
      const auto t0 = std::chrono::steady_clock::now();
      fs::Attr a;
      status[i] = remote.getattr(sample_context(), fs::InodeId{7, 1}, &a);
      took[i] = std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::steady_clock::now() - t0);
    });
  for (auto& t : threads) t.join();
  int waited = 0, refused_at_once = 0;
  for (int i = 0; i < kCalls; ++i) {
    EXPECT_EQ(status[i], fs::Status::Jukebox) << i;
    EXPECT_LT(took[i], 1500ms) << "call " << i << " outlived its deadline";
    if (took[i] >= 300ms) ++waited;
    if (took[i] < 150ms) ++refused_at_once;
  }
  EXPECT_LE(waited, 2) << "more calls than slots waited on the hung owner";
  EXPECT_GE(refused_at_once, kCalls - 2);
  EXPECT_LE(channel->calls(), 2 + 2);  // a slot frees only when its call ends
  EXPECT_GE(remote.slots().refused(), uint64_t(kCalls - 4));
}

}  // namespace
}  // namespace nasd::interconnect
