// util::HandshakeSlots: one source fills its own slots only; the total stays bounded.
#include "util/handshake_slots.h"

#include <gtest/gtest.h>

namespace nasd::util {
namespace {

TEST(HandshakeSlots, OneSourceCannotTakeAnothersSlots) {
  HandshakeSlots slots(2, 16);
  EXPECT_TRUE(slots.try_take("10.0.0.66"));
  EXPECT_TRUE(slots.try_take("10.0.0.66"));
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(slots.try_take("10.0.0.66"));
  EXPECT_TRUE(slots.try_take("10.0.0.2")) << "the real peer still gets in";
  EXPECT_EQ(slots.in_use(), 3u);
  slots.release("10.0.0.66");
  EXPECT_TRUE(slots.try_take("10.0.0.66"));
  slots.release("10.0.0.9");  // never taken: ignored
  EXPECT_EQ(slots.in_use(), 3u);
}

TEST(HandshakeSlots, TheTotalIsBounded) {
  HandshakeSlots slots(2, 5);
  int taken = 0;
  for (int i = 0; i < 10; ++i) taken += slots.try_take("10.0.1." + std::to_string(i));
  EXPECT_EQ(taken, 5);
  slots.release("10.0.1.0");
  EXPECT_TRUE(slots.try_take("10.0.1.99"));
}

}  // namespace
}  // namespace nasd::util
