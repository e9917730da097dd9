#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "util/hmac_sha256.h"

namespace nasd::util {
namespace {

std::string hex(const HmacSha256::Digest& mac) {
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

TEST(HmacSha256, MatchesTheRfc4231Vector) {
  HmacSha256 mac(bytes(kKey));
  EXPECT_EQ(hex(mac.compute(bytes(kData))), kExpected);
  // Reused (re-initialized) contexts give the same answer.
  EXPECT_EQ(hex(mac.compute(bytes(kData))), kExpected);
  EXPECT_NE(hex(mac.compute(bytes(kData + "!"))), kExpected);
}

// RFC 4231 test case 6: a key longer than SHA-256's block is hashed first.
TEST(HmacSha256, HashesAKeyLongerThanABlock) {
  HmacSha256 mac(bytes(std::string(131, '\xaa')));
  EXPECT_EQ(hex(mac.compute(bytes("Test Using Larger Than Block-Size Key - Hash Key First"))),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

// The construction (precomputed padded-key states) against OpenSSL's own HMAC, for keys shorter
// than, equal to and longer than a block, and data around SHA-256's padding boundaries.
TEST(HmacSha256, AgreesWithOpenSslHmacForEveryKeyAndDataLength) {
  for (size_t key_len : {0, 1, 32, 63, 64, 65, 200}) {
    std::string key(key_len, '\0');
    for (size_t i = 0; i < key_len; ++i) key[i] = static_cast<char>(i * 7 + 3);
    HmacSha256 mac(bytes(key));
    for (size_t data_len : {0, 1, 32, 55, 56, 63, 64, 65, 119, 120, 1000}) {
      std::string data(data_len, '\0');
      for (size_t i = 0; i < data_len; ++i) data[i] = static_cast<char>(i * 13 + key_len);
      HmacSha256::Digest expected{};
      unsigned len = 0;
      ASSERT_NE(HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), bytes(data).data(),
                     data.size(), expected.data(), &len),
                nullptr);
      ASSERT_EQ(len, HmacSha256::kBytes);
      EXPECT_EQ(hex(mac.compute(bytes(data))), hex(expected))
          << "key of " << key_len << " bytes, data of " << data_len << " bytes";
    }
  }
}

TEST(HmacSha256, OfPiecesIsTheMacOfTheirConcatenation) {
  HmacSha256 mac(bytes(kKey));
  const std::string a = "what do ya ", b, c = "want for nothing?";
  EXPECT_EQ(hex(mac.compute({bytes(a), bytes(b), bytes(c)})), kExpected);
  HmacSha256 copy = mac;
  EXPECT_EQ(hex(copy.compute(bytes(kData))), kExpected);
}

TEST(HmacSha256, IsSafeToShareBetweenThreads) {
  HmacSha256 mac(bytes(kKey));
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
}  // namespace nasd::util
