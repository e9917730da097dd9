#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "server/nfs/handle/keyed_mac.h"

namespace nasd::nfs {
namespace {

std::string hex(const std::array<uint8_t, KeyedMac::kMacBytes>& mac) {
  std::string s;
  char buf[3];
  for (uint8_t b : mac) {
    std::snprintf(buf, sizeof buf, "%02x", b);
    s += buf;
  }
  return s;
}

std::span<const uint8_t> bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// RFC 4231 test case 2.
const std::string kKey = "Jefe";
const std::string kData = "what do ya want for nothing?";
const std::string kExpected = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843";

TEST(KeyedMac, MatchesTheRfc4231Vector) {
  KeyedMac mac(bytes(kKey));
  EXPECT_EQ(hex(mac.compute(bytes(kData))), kExpected);
  // Reused (re-initialized) contexts give the same answer.
  EXPECT_EQ(hex(mac.compute(bytes(kData))), kExpected);
  EXPECT_NE(hex(mac.compute(bytes(kData + "!"))), kExpected);
}

TEST(KeyedMac, IsSafeToShareBetweenThreads) {
  KeyedMac mac(bytes(kKey));
  std::vector<std::thread> threads;
  std::vector<int> wrong(8, 0);
  for (int t = 0; t < 8; t++)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; i++)
        if (hex(mac.compute(bytes(kData))) != kExpected) wrong[t]++;
    });
  for (auto& th : threads) th.join();
  for (int w : wrong) EXPECT_EQ(w, 0);
}

}  // namespace
}  // namespace nasd::nfs
