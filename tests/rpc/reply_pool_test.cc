#include "server/rpc/reply_pool.h"

#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

namespace nasd::rpc {
namespace {

// Empties this thread's spares and the shared ones (the replies taken are freed).
void drain_spares() {
  for (size_t i = 0; i < kMaxSpareReplies + kMaxSharedSpareReplies + 1; ++i) (void)spare_reply();
}

// The reply a new thread's first spare_reply() hands out (it has no spares of its own).
const EncodedReply* first_spare_on_another_thread(std::shared_ptr<EncodedReply>* keep) {
  std::thread([keep] { *keep = spare_reply(); }).join();
  return keep->get();
}

// A sent reply nobody else holds is filled again by the next call on the thread: the same
// object and the same body buffer, with nothing of its last use (no bytes, no pinned tail).
TEST(ReplyPool, ASentReplyIsReusedEmptyWithItsBuffer) {
  drain_spares();
  std::shared_ptr<EncodedReply> made = spare_reply();
  ASSERT_TRUE(made->pooled);
  made->body.assign(300, 0xab);
  made->head_len = 28;
  auto pinned = std::make_shared<int>(1);
  std::weak_ptr<int> watch = pinned;
  static const uint8_t tail_bytes[8] = {};
  made->tail.append(tail_bytes, sizeof tail_bytes);
  made->tail.owner = std::move(pinned);
  const EncodedReply* object = made.get();
  const uint8_t* buffer = made->body.data();

  std::shared_ptr<const EncodedReply> sent = std::move(made);
  recycle_reply(std::move(sent));
  EXPECT_TRUE(watch.expired()) << "the tail's pinned blocks outlive the send";

  std::shared_ptr<EncodedReply> again = spare_reply();
  EXPECT_EQ(again.get(), object);
  EXPECT_TRUE(again->body.empty());
  EXPECT_TRUE(again->tail.empty());
  EXPECT_EQ(again->head_len, 0u);
  EXPECT_GE(again->body.capacity(), 300u);
  EXPECT_EQ(again->body.data(), buffer);
}

// A reply another holder keeps (the duplicate request cache) or one not made by the pool
// (possibly a const object) is never reused.
TEST(ReplyPool, AReplyHeldElsewhereOrMadeElsewhereIsNotReused) {
  drain_spares();
  std::shared_ptr<const EncodedReply> cached = spare_reply();
  std::shared_ptr<const EncodedReply> sent = cached;
  recycle_reply(std::move(sent));
  EXPECT_NE(spare_reply().get(), cached.get()) << "a reply the cache holds was reused";

  auto foreign = std::make_shared<const EncodedReply>();
  std::weak_ptr<const EncodedReply> watch = foreign;
  recycle_reply(std::move(foreign));
  EXPECT_TRUE(watch.expired()) << "a reply the pool did not make was kept";
}

// Spares are per thread: one recycled here is not handed out on another thread.
TEST(ReplyPool, SparesStayOnTheirThread) {
  drain_spares();
  std::shared_ptr<const EncodedReply> r = spare_reply();
  const EncodedReply* object = r.get();
  recycle_reply(std::move(r));
  std::shared_ptr<EncodedReply> keep;
  EXPECT_NE(first_spare_on_another_thread(&keep), object);
  EXPECT_EQ(spare_reply().get(), object);
}

// A thread whose own spares are full gives the next to the shared list, and a thread with
// none of its own (an executor thread, whose replies the loop sends) takes it from there.
TEST(ReplyPool, ASparePastTheThreadsLimitReachesAThreadWithoutSpares) {
  drain_spares();
  std::vector<std::shared_ptr<EncodedReply>> mine;
  for (size_t i = 0; i < kMaxSpareReplies + 1; ++i) mine.push_back(spare_reply());
  const EncodedReply* overflow = mine.back().get();
  for (auto& r : mine) recycle_reply(std::shared_ptr<const EncodedReply>(std::move(r)));
  std::shared_ptr<EncodedReply> keep;
  EXPECT_EQ(first_spare_on_another_thread(&keep), overflow)
      << "the thread without spares made a new reply";
}

}  // namespace
}  // namespace nasd::rpc
