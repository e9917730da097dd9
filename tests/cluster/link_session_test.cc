// The owner's fencing of stale connections (cluster/interconnect/link_session.h), without
// sockets: which session is admitted, which calls may start, how long admission waits.
#include "cluster/interconnect/link_session.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace nasd::interconnect {
namespace {

using namespace std::chrono_literals;

std::shared_ptr<LinkSession> session(const std::string& peer, const std::string& channel,
                                     uint64_t incarnation, uint64_t generation) {
  return std::make_shared<LinkSession>(SessionId{peer, channel, incarnation, generation}, nullptr);
}

TEST(LinkSessions, ANewerSessionFencesTheOlderOnesOfItsPeerAndChannelOnly) {
  LinkSessions sessions;
  auto a1 = session("a", "main", 11, 1);
  auto other_channel = session("a", "bulk", 11, 1);
  auto b1 = session("b", "main", 22, 1);
  ASSERT_EQ(sessions.admit(a1, 100ms), "");
  ASSERT_EQ(sessions.admit(other_channel, 100ms), "");
  ASSERT_EQ(sessions.admit(b1, 100ms), "");
  LinkSession::Call queued_before = a1->begin();  // a request that started before the fence
  EXPECT_TRUE(queued_before);
  queued_before = LinkSession::Call();            // ... and ended

  auto a2 = session("a", "main", 11, 2);
  EXPECT_EQ(sessions.admit(a2, 100ms), "");
  EXPECT_TRUE(a1->fenced());
  EXPECT_FALSE(a1->begin()) << "a call of the fenced session started";
  EXPECT_TRUE(a2->begin());
  EXPECT_FALSE(other_channel->fenced());
  EXPECT_FALSE(b1->fenced());
  EXPECT_EQ(sessions.fenced_count(), 1u);

  // The forwarder restarted (a new incarnation): its first connection takes over as well.
  auto a_restarted = session("a", "main", 99, 1);
  EXPECT_EQ(sessions.admit(a_restarted, 100ms), "");
  EXPECT_TRUE(a2->fenced());
}

// A hello that arrives after a newer one of the same forwarder (it gave up on that connection)
// must not fence the connection actually in use.
TEST(LinkSessions, AnOvertakenHelloIsRefused) {
  LinkSessions sessions;
  auto newer = session("a", "main", 11, 5);
  ASSERT_EQ(sessions.admit(newer, 100ms), "");
  auto late = session("a", "main", 11, 4);
  EXPECT_NE(sessions.admit(late, 100ms), "");
  auto again = session("a", "main", 11, 5);
  EXPECT_NE(sessions.admit(again, 100ms), "");
  EXPECT_FALSE(newer->fenced());
}

// Admission waits for the older session's running calls, and refuses when they outlast the
// bound; the next attempt is admitted once they ended.
TEST(LinkSessions, AdmissionWaitsForTheOlderSessionsRunningCalls) {
  LinkSessions sessions;
  auto old = session("a", "main", 11, 1);
  ASSERT_EQ(sessions.admit(old, 100ms), "");
  auto running = std::make_unique<LinkSession::Call>(old->begin());
  ASSERT_TRUE(*running);

  const auto start = std::chrono::steady_clock::now();
  EXPECT_NE(sessions.admit(session("a", "main", 11, 2), 150ms), "") << "admitted while a call ran";
  EXPECT_GE(std::chrono::steady_clock::now() - start, 150ms);
  EXPECT_TRUE(old->fenced());

  std::thread finish([&] {
    std::this_thread::sleep_for(100ms);
    running.reset();
  });
  auto third = session("a", "main", 11, 3);
  EXPECT_EQ(sessions.admit(third, 5s), "");
  finish.join();
  EXPECT_EQ(old->running(), 0u);
}

}  // namespace
}  // namespace nasd::interconnect
