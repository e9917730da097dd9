// SmartConnect-style pools (cluster/membership/address_pool.h): directed cases and a
// randomized simulation of nodes failing and returning.
#include "cluster/membership/address_pool.h"

#include <gtest/gtest.h>

#include <random>

namespace nasd::membership {
namespace {

std::vector<std::string> names(const std::string& prefix, int n) {
  std::vector<std::string> out;
  for (int i = 1; i <= n; ++i) out.push_back(prefix + std::to_string(i));
  return out;
}

TEST(AddressPool, FirstAddressesOnTheFirstNodeThenTheNext) {
  const auto nodes = names("n", 4);
  const auto addrs = names("10.0.4.", 8);
  auto owner = assign_pool(addrs, nodes, {"n1", "n2", "n3", "n4"});
  for (int i = 0; i < 8; ++i) EXPECT_EQ(owner[addrs[i]], nodes[i % 4]) << addrs[i];
}

TEST(AddressPool, ADeadNodesAddressesGoToSurvivorsAndComeBack) {
  const auto nodes = names("n", 4);
  const auto addrs = names("10.0.4.", 8);  // n2 is home of .2 and .6
  auto owner = assign_pool(addrs, nodes, {"n1", "n3", "n4"});
  EXPECT_NE(owner["10.0.4.2"], "n2");
  EXPECT_NE(owner["10.0.4.6"], "n2");
  EXPECT_NE(owner["10.0.4.2"], owner["10.0.4.6"]);  // spread, not both on one survivor
  for (const char* a : {"10.0.4.1", "10.0.4.3", "10.0.4.4", "10.0.4.5", "10.0.4.7", "10.0.4.8"}) {
    EXPECT_EQ(owner[a], nodes[(std::stoi(std::string(a).substr(7)) - 1) % 4]) << a;  // unmoved
  }
  owner = assign_pool(addrs, nodes, {"n1", "n2", "n3", "n4"});
  EXPECT_EQ(owner["10.0.4.2"], "n2");
  EXPECT_EQ(owner["10.0.4.6"], "n2");
  owner = assign_pool(addrs, nodes, {});
  for (const auto& a : addrs) EXPECT_EQ(owner[a], "");
  owner = assign_pool(addrs, nodes, {"n3"});
  for (const auto& a : addrs) EXPECT_EQ(owner[a], "n3");
}

// Random failures and returns on 2..8 nodes with 1..40 addresses. After every event: every
// address is served by an alive node (when one is), an alive home always serves its own
// addresses, the survivors' counts differ by at most one, and the answer depends only on who
// is alive. When every node is back, every address is home.
TEST(AddressPool, SimulatedFailuresKeepEveryAddressServedAndBalanced) {
  std::mt19937_64 rng(20261203);
  for (int run = 0; run < 300; ++run) {
    const int n = 2 + static_cast<int>(rng() % 7);
    const auto nodes = names("n", n);
    const auto addrs = names("10.9.0.", 1 + static_cast<int>(rng() % 40));
    std::set<std::string> alive(nodes.begin(), nodes.end());
    for (int step = 0; step < 60; ++step) {
      const std::string& who = nodes[rng() % nodes.size()];
      if (alive.count(who)) {
        alive.erase(who);
      } else {
        alive.insert(who);
      }
      const auto owner = assign_pool(addrs, nodes, alive);
      ASSERT_EQ(owner.size(), addrs.size());
      std::map<std::string, int> load;
      for (size_t i = 0; i < addrs.size(); ++i) {
        const std::string& o = owner.at(addrs[i]);
        if (alive.empty()) {
          ASSERT_EQ(o, "");
          continue;
        }
        ASSERT_TRUE(alive.count(o)) << "run " << run << ": " << addrs[i] << " on dead " << o;
        if (alive.count(nodes[i % nodes.size()])) {
          ASSERT_EQ(o, nodes[i % nodes.size()]);
        }
        ++load[o];
      }
      if (!alive.empty()) {
        int lo = 1 << 20, hi = 0;
        for (const std::string& a : alive) {
          lo = std::min(lo, load[a]);
          hi = std::max(hi, load[a]);
        }
        ASSERT_LE(hi - lo, 1) << "run " << run << " step " << step;
      }
      std::set<std::string> again(alive.rbegin(), alive.rend());
      ASSERT_EQ(assign_pool(addrs, nodes, again), owner);
    }
    const auto home = assign_pool(addrs, nodes, std::set<std::string>(nodes.begin(), nodes.end()));
    for (size_t i = 0; i < addrs.size(); ++i) ASSERT_EQ(home.at(addrs[i]), nodes[i % nodes.size()]);
  }
}

}  // namespace
}  // namespace nasd::membership
