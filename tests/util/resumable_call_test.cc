// util::ResumableCall::recycle(): what lets an event loop reuse one call object for the calls
// it answers without parking (rpc::CallDispatcher), instead of allocating one per call.
#include "util/resumable_call.h"

#include <gtest/gtest.h>

#include <memory>

namespace nasd::util {
namespace {

TEST(ResumableCall, ARecycledCallKeepsNothingOfItsLastUse) {
  auto call = std::make_shared<ResumableCall>();
  bool resumed = false;
  {
    ResumableCall::Run run(call);
    std::optional<size_t> k = call->next_wait();
    ASSERT_TRUE(k.has_value());
    ResumableCall::Deliver deliver = call->park(*k);
    deliver(ResumableCall::Answer{0, {1, 2, 3}});
  }
  EXPECT_TRUE(call->end_run([&] { resumed = true; }));
  EXPECT_TRUE(resumed);
  ASSERT_NE(call->answer(0), nullptr);
  ASSERT_EQ(call.use_count(), 1) << "the Deliver still holds the call: the test proves nothing";

  call->recycle();
  EXPECT_EQ(call->answer(0), nullptr) << "the last use's answer would replay into the next call";
  EXPECT_EQ(call->runs(), 0u);
  EXPECT_FALSE(call->parked());
  {
    ResumableCall::Run run(call, /*may_park=*/true);
    EXPECT_TRUE(call->may_park());
    EXPECT_EQ(call->next_wait(), std::optional<size_t>(0)) << "waits are numbered from 0 again";
  }
  EXPECT_FALSE(call->end_run(nullptr)) << "a run that made no wait did not park";
}

}  // namespace
}  // namespace nasd::util
