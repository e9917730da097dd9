// Four nodes in one process, each with its own drives behind an InterconnectServer and a
// UnitServer on a loopback port; node 1 writes groups through RemoteUnits, node 3 reads them.
// Then node 2's server stops (a dead node): node 3's reads are rebuilt from parity.
#include "cluster/scaleout/unit_service.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <set>

#include "cluster/interconnect/peer_client.h"
#include "tests/cluster/scratch_dir.h"

namespace nasd::scaleout {
namespace {

using namespace std::chrono_literals;
using cluster::testing::ScratchDir;
using namespace interconnect;

const std::vector<uint8_t> kKey(32, 0x42);

std::string name(uint32_t id) { return "n" + std::to_string(id); }

struct TestNode {
  std::unique_ptr<NodeUnits> units;
  std::unique_ptr<UnitServer> unit_server;
  std::unique_ptr<InterconnectServer> server;
};

class UnitServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (uint32_t id = 1; id <= 4; ++id) {
      TestNode n;
      std::string err;
      ASSERT_TRUE(NodeUnits::open(dir_.path + "/" + name(id), 5, id, 4, &n.units, &err)) << err;
      n.unit_server = std::make_unique<UnitServer>(n.units.get());
      InterconnectServerOptions o;
      o.cluster_name = "so";
      o.local_node = name(id);
      o.credentials = {kKey, name(id)};
      n.server = std::make_unique<InterconnectServer>(o);
      n.unit_server->attach(*n.server);
      n.server->start();
      nodes_.push_back(std::move(n));
      NodeState s;
      s.id = id;
      s.drives.resize(4);
      topo_.nodes.push_back(s);
    }
  }
  void TearDown() override {
    clients_.clear();
    for (auto& n : nodes_) n.server->stop();
  }

  // A RemoteUnits as node `self` sees the cluster.
  std::unique_ptr<RemoteUnits> view_from(uint32_t self) {
    auto r = std::make_unique<RemoteUnits>(nodes_[self - 1].units.get(), 2000ms);
    for (uint32_t id = 1; id <= 4; ++id) {
      if (id == self) continue;
      PeerClientOptions o;
      o.port = nodes_[id - 1].server->port();
      o.cluster_name = "so";
      o.local_node = name(self);
      o.expected_peer = name(id);
      o.credentials = {kKey, name(self)};
      o.backoff_initial = 10ms;
      o.backoff_max = 50ms;
      auto c = std::make_unique<PeerClient>(o);
      c->start();
      EXPECT_TRUE(c->wait_connected(5s)) << c->last_error();
      r->add_peer(id, c.get());
      clients_.push_back(std::move(c));
    }
    return r;
  }

  ScratchDir dir_{"scaleout-svc"};
  std::vector<TestNode> nodes_;
  std::vector<std::unique_ptr<PeerClient>> clients_;
  Topology topo_;
};

TEST_F(UnitServiceTest, WriteOnOneNodeReadOnAnotherDegradedToo) {
  auto from1 = view_from(1);
  auto from3 = view_from(3);
  GroupIo writer(from1.get()), reader(from3.get());
  std::mt19937_64 rng(5);
  std::vector<uint8_t> data(2 * 6 * kStripeUnit + 12345);
  for (auto& b : data) b = static_cast<uint8_t>(rng());
  std::vector<GroupRecord> groups;
  std::string err;
  ASSERT_TRUE(GroupIo::plan_extent(ProtectionPolicy{}, topo_, 42, 0, 1, 0, data.size(), &groups, &err)) << err;
  for (const GroupRecord& g : groups) {
    std::vector<int> failed;
    ASSERT_TRUE(writer.write_group(g, data.data() + g.offset, &failed, &err)) << err;
    ASSERT_TRUE(failed.empty());
  }
  auto read_all = [&] {
    for (const GroupRecord& g : groups) {
      std::vector<uint8_t> out;
      GroupHealth h;
      ASSERT_TRUE(reader.read_group(g, &out, &h, &err)) << err;
      ASSERT_EQ(0, std::memcmp(out.data(), data.data() + g.offset, g.length));
    }
  };
  read_all();
  for (const GroupRecord& g : groups) EXPECT_TRUE(reader.verify_group(g).unreadable.empty());
  EXPECT_EQ(from3->health(2), std::vector<bool>(4, true));

  nodes_[1].server->stop();  // node 2 dies
  read_all();
  EXPECT_TRUE(from3->health(2).empty());
  // Its units now count as unreadable, within parity.
  for (const GroupRecord& g : groups) {
    GroupHealth h = reader.verify_group(g);
    EXPECT_TRUE(h.readable);
    EXPECT_TRUE(h.bad_parity.empty());
  }
}

// The orphan sweep's listing across the interconnect: node 1 pages through a drive of node 2
// (every key once, ascending), and a dead node answers Unreachable.
TEST_F(UnitServiceTest, ListPagesThroughAnotherNodesDrive) {
  auto from1 = view_from(1);
  const uint8_t unit[16] = {1, 2, 3};
  std::set<UnitKey> put;
  for (uint16_t i = 0; i < 300; i++) {
    const UnitKey k{7, uint64_t(i % 5), uint64_t(i / 5), uint16_t(i % 3)};
    if (put.insert(k).second) {
      ASSERT_EQ(nodes_[1].units->put(1, k, unit, sizeof unit), UnitStatus::Ok);
    }
  }
  std::vector<UnitKey> seen;
  UnitKey from;
  for (int page = 0; page < 100; page++) {
    std::vector<UnitKey> keys;
    bool more = false;
    ASSERT_EQ(from1->list(UnitPlace{2, 1}, from, 64, &keys, &more), UnitStatus::Ok);
    ASSERT_LE(keys.size(), 64u);
    seen.insert(seen.end(), keys.begin(), keys.end());
    if (!more) break;
    from = next_key(keys.back());
  }
  EXPECT_EQ(seen, std::vector<UnitKey>(put.begin(), put.end()));
  std::vector<UnitKey> keys;
  bool more = false;
  EXPECT_EQ(from1->list(UnitPlace{2, 1}, UnitKey{}, 0, &keys, &more), UnitStatus::Invalid);
  EXPECT_EQ(from1->list(UnitPlace{2, 1}, UnitKey{}, kMaxListKeys + 1, &keys, &more), UnitStatus::Invalid);
  nodes_[1].server->stop();
  EXPECT_EQ(from1->list(UnitPlace{2, 1}, UnitKey{}, 64, &keys, &more), UnitStatus::Unreachable);
}

TEST_F(UnitServiceTest, MalformedRequestsAreRefusedNotExecuted) {
  auto from1 = view_from(1);
  // A raw peer client sends garbage as a UnitCall: the answer is Invalid, the node survives.
  CallOutcome out = clients_[0]->call(MessageType::UnitCall, {1, 2, 3}, 2s);
  ASSERT_TRUE(out.ok());
  UnitReply reply;
  ASSERT_TRUE(decode_unit_reply(out.payload, UnitOp::Get, &reply));
  EXPECT_EQ(reply.status, UnitStatus::Invalid);
  UnitRequest big{UnitOp::Get, 70, {}, {}};  // drive beyond kMaxDrivesPerNode
  out = clients_[0]->call(MessageType::UnitCall, encode_unit_request(big), 2s);
  ASSERT_TRUE(out.ok());
  ASSERT_TRUE(decode_unit_reply(out.payload, UnitOp::Get, &reply));
  EXPECT_EQ(reply.status, UnitStatus::Invalid);
  std::vector<uint8_t> unit;
  EXPECT_EQ(from1->get(UnitPlace{2, 9}, UnitKey{}, &unit), UnitStatus::DriveFailed);
}

TEST(UnitCodec, RoundTripsAndRejectsBadLengths) {
  UnitRequest r{UnitOp::Put, 3, UnitKey{1, 2, 3, 4}, std::vector<uint8_t>(1000, 7)};
  std::vector<uint8_t> wire = encode_unit_request(r);
  UnitRequest back;
  ASSERT_TRUE(decode_unit_request(wire, &back));
  EXPECT_EQ(back.key, r.key);
  EXPECT_EQ(back.data, r.data);
  wire.push_back(0);
  EXPECT_FALSE(decode_unit_request(wire, &back));
  wire.pop_back();
  wire.pop_back();
  EXPECT_FALSE(decode_unit_request(wire, &back));
  std::mt19937 rng(9);
  for (int i = 0; i < 20000; ++i) {  // random bytes decode or fail cleanly
    std::vector<uint8_t> b(rng() % 64);
    for (auto& x : b) x = static_cast<uint8_t>(rng());
    if (b.size() >= 2 && i % 2) {
      b[0] = 1;
      b[1] = static_cast<uint8_t>(1 + rng() % 5);
    }
    decode_unit_request(b, &back);
    UnitReply rep;
    decode_unit_reply(b, static_cast<UnitOp>(1 + rng() % 6), &rep);
  }
  // A List: the request carries exactly a u32; a page is u8 more | ascending 26-byte keys.
  UnitRequest list{UnitOp::List, 2, UnitKey{1, 0, 0, 0}, {64, 0, 0, 0}};
  ASSERT_TRUE(decode_unit_request(encode_unit_request(list), &back));
  list.data.push_back(0);
  EXPECT_FALSE(decode_unit_request(encode_unit_request(list), &back));
  const std::vector<UnitKey> keys{UnitKey{1, 2, 3, 4}, UnitKey{1, 2, 3, 5}, UnitKey{9, 0, 0, 0}};
  std::vector<UnitKey> got;
  bool more = false;
  ASSERT_TRUE(decode_key_list(encode_key_list(keys, true), 16, &got, &more));
  EXPECT_EQ(got, keys);
  EXPECT_TRUE(more);
  EXPECT_FALSE(decode_key_list(encode_key_list(keys, false), 2, &got, &more)) << "more than asked for";
  EXPECT_FALSE(decode_key_list(encode_key_list({keys[2], keys[0]}, false), 16, &got, &more)) << "out of order";
  std::vector<uint8_t> cut = encode_key_list(keys, false);
  cut.pop_back();
  EXPECT_FALSE(decode_key_list(cut, 16, &got, &more));
  EXPECT_FALSE(decode_key_list({}, 16, &got, &more));
}

}  // namespace
}  // namespace nasd::scaleout
