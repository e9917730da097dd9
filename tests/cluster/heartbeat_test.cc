#include "cluster/membership/heartbeat.h"

#include <gtest/gtest.h>

#include "cluster/membership/failure_detector.h"

namespace nasd::membership {
namespace {

TEST(Heartbeat, RoundTrip) {
  Heartbeat hb{"node-a", 1234567, 42, {1, 5, 9}, true};
  Heartbeat got;
  std::string error;
  ASSERT_TRUE(decode_heartbeat(encode_heartbeat(hb), &got, &error)) << error;
  EXPECT_EQ(got.node, "node-a");
  EXPECT_EQ(got.incarnation, 1234567u);
  EXPECT_EQ(got.view, 42u);
  EXPECT_EQ(got.holding, (std::vector<uint32_t>{1, 5, 9}));
  EXPECT_TRUE(got.wants_failback);
}

TEST(Heartbeat, TruncatedOrPaddedIsMalformed) {
  auto bytes = encode_heartbeat({"n", 1, 2, {3, 4}, false});
  for (size_t n = 0; n < bytes.size(); ++n) {
    Heartbeat got;
    std::string error;
    EXPECT_FALSE(decode_heartbeat({bytes.data(), n}, &got, &error)) << n;
  }
  bytes.push_back(0);
  Heartbeat got;
  std::string error;
  EXPECT_FALSE(decode_heartbeat(bytes, &got, &error));
}

TEST(Heartbeat, HugeVolumeCountIsRejected) {
  auto bytes = encode_heartbeat({"n", 1, 2, {}, false});
  // The count follows version (1), name (4 + 1), incarnation (8) and view (8).
  size_t at = 1 + 5 + 8 + 8;
  for (int i = 0; i < 4; ++i) bytes[at + i] = 0xff;
  Heartbeat got;
  std::string error;
  EXPECT_FALSE(decode_heartbeat(bytes, &got, &error));
  EXPECT_NE(error.find("count"), std::string::npos) << error;
}

TEST(FailureDetector, SuspectsAfterMissedIntervals) {
  FailureDetector fd(200, 5, 1000);
  EXPECT_FALSE(fd.suspects(1999));
  EXPECT_TRUE(fd.suspects(2000));  // never heard since start: 5 intervals of silence
  fd.heard(2100);
  EXPECT_FALSE(fd.suspects(3099));
  EXPECT_TRUE(fd.suspects(3100));
  fd.heard(50);  // a delayed message does not move time backwards
  EXPECT_EQ(fd.last_heard_ms(), 2100);
}

}  // namespace
}  // namespace nasd::membership
