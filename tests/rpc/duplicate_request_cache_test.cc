#include "server/rpc/duplicate_request_cache.h"

#include "server/rpc/reply_pool.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace nasd::rpc {
namespace {

using Clock = DuplicateRequestCache::Clock;
using State = DuplicateRequestCache::State;

CallContext call_from(const char* ip, uint16_t port, uint32_t xid, uint32_t proc = 8) {
  CallContext c;
  auto* sin = reinterpret_cast<sockaddr_in*>(&c.peer);
  sin->sin_family = AF_INET;
  sin->sin_port = htons(port);
  inet_pton(AF_INET, ip, &sin->sin_addr);
  c.xid = xid;
  c.prog = 100003;
  c.vers = 3;
  c.proc = proc;
  return c;
}

std::shared_ptr<const EncodedReply> reply(uint32_t xid) {
  return std::make_shared<const EncodedReply>(encode_accepted_reply(xid, AcceptStat::Success, {}));
}

const std::vector<uint8_t> kArgs = {1, 2, 3, 4};

TEST(DuplicateRequestCache, NewThenInProgressThenDone) {
  DuplicateRequestCache drc;
  DrcKey key = DrcKey::make(call_from("10.0.0.1", 800, 42), kArgs);
  EXPECT_EQ(drc.begin(key).state, State::New);
  EXPECT_EQ(drc.begin(key).state, State::InProgress);
  auto r = reply(42);
  drc.complete(key, r);
  auto hit = drc.begin(key);
  EXPECT_EQ(hit.state, State::Done);
  EXPECT_EQ(hit.reply, r);  // the very same bytes
}

TEST(DuplicateRequestCache, KeyDistinguishesEveryField) {
  DuplicateRequestCache drc;
  DrcKey base = DrcKey::make(call_from("10.0.0.1", 800, 42), kArgs);
  ASSERT_EQ(drc.begin(base).state, State::New);
  drc.complete(base, reply(42));
  std::vector<DrcKey> others = {
      DrcKey::make(call_from("10.0.0.2", 800, 42), kArgs),
      DrcKey::make(call_from("10.0.0.1", 800, 43), kArgs),
      DrcKey::make(call_from("10.0.0.1", 800, 42, 9), kArgs),
      DrcKey::make(call_from("10.0.0.1", 800, 42), std::vector<uint8_t>{1, 2, 3, 5}),
  };
  for (const auto& k : others) EXPECT_EQ(drc.begin(k).state, State::New);
}

// A client whose connection broke retransmits with the same xid from a new port: the same call.
// So a copy still running (read from the old connection) drops the retransmission, and a done
// one answers it with the original reply instead of running the call again.
TEST(DuplicateRequestCache, ARetransmissionFromANewPortIsTheSameCall) {
  DuplicateRequestCache drc;
  DrcKey old_connection = DrcKey::make(call_from("10.0.0.1", 800, 42), kArgs);
  DrcKey new_connection = DrcKey::make(call_from("10.0.0.1", 51234, 42), kArgs);
  EXPECT_TRUE(old_connection == new_connection);
  ASSERT_EQ(drc.begin(old_connection).state, State::New);
  EXPECT_EQ(drc.begin(new_connection).state, State::InProgress);
  auto r = reply(42);
  drc.complete(old_connection, r);
  auto hit = drc.begin(new_connection);
  EXPECT_EQ(hit.state, State::Done);
  EXPECT_EQ(hit.reply, r);
}

// The key hashes a WRITE's head (handle, offset, count, stable) and its length, not its whole
// payload: a retransmission still matches, a new call that reuses the xid still does not.
TEST(DuplicateRequestCache, KeyOfALargeWriteUsesItsHeadAndLength) {
  std::vector<uint8_t> write(1 << 20, 0x33);
  const auto c = call_from("10.0.0.1", 800, 42, 7);
  EXPECT_EQ(DrcKey::make(c, write), DrcKey::make(c, std::vector<uint8_t>(write)));
  std::vector<uint8_t> other_offset = write;
  other_offset[40] ^= 1;
  EXPECT_FALSE(DrcKey::make(c, write) == DrcKey::make(c, other_offset));
  std::vector<uint8_t> shorter(write.begin(), write.end() - 4);
  EXPECT_FALSE(DrcKey::make(c, write) == DrcKey::make(c, shorter));
}

TEST(DuplicateRequestCache, CompletedEntriesExpire) {
  DuplicateRequestCache::Options o;
  o.ttl = std::chrono::seconds(10);
  DuplicateRequestCache drc(o);
  DrcKey key = DrcKey::make(call_from("10.0.0.1", 800, 1), kArgs);
  Clock::time_point t0 = Clock::now();
  ASSERT_EQ(drc.begin(key, t0).state, State::New);
  drc.complete(key, reply(1), t0);
  EXPECT_EQ(drc.begin(key, t0 + std::chrono::seconds(9)).state, State::Done);
  EXPECT_EQ(drc.begin(key, t0 + std::chrono::seconds(11)).state, State::New);
}

TEST(DuplicateRequestCache, BoundedWithLeastRecentlyUsedEviction) {
  DuplicateRequestCache::Options o;
  o.capacity = 160;  // 10 per shard
  DuplicateRequestCache drc(o);
  std::vector<DrcKey> keys;
  for (uint32_t xid = 0; xid < 2000; ++xid) {
    keys.push_back(DrcKey::make(call_from("10.0.0.1", 800, xid), kArgs));
    ASSERT_EQ(drc.begin(keys.back()).state, State::New);
    drc.complete(keys.back(), reply(xid));
    // Keep the first key hot: it must survive all the eviction around it.
    EXPECT_EQ(drc.begin(keys.front()).state, State::Done) << "after xid " << xid;
  }
  EXPECT_LE(drc.size(), 160u);
  EXPECT_EQ(drc.begin(keys.back()).state, State::Done);
  // Probing inserts, so probe the old keys last. Each shard keeps only its newest ~10 entries.
  size_t remembered = 0;
  for (size_t i = 1; i < 1000; ++i) remembered += drc.begin(keys[i]).state == State::Done;
  EXPECT_EQ(remembered, 0u) << "old entries should have been evicted";
}

// A running call's entry is what turns its retransmission away; evicting it would let a flood
// of other calls make a retransmitted RENAME or REMOVE run twice.
TEST(DuplicateRequestCache, RunningCallsAreNeverEvicted) {
  DuplicateRequestCache::Options o;
  o.capacity = 16;  // one per shard
  DuplicateRequestCache drc(o);
  DrcKey running = DrcKey::make(call_from("10.0.0.1", 800, 7, 14), kArgs);
  ASSERT_EQ(drc.begin(running).state, State::New);
  size_t full = 0;
  for (uint32_t xid = 1000; xid < 3000; ++xid) {
    DrcKey k = DrcKey::make(call_from("10.0.0.9", 900, xid), kArgs);
    State s = drc.begin(k).state;
    if (s == State::Full) {
      ++full;
      continue;
    }
    ASSERT_EQ(s, State::New);
    drc.complete(k, reply(xid));
  }
  EXPECT_GT(full, 0u) << "the running call's shard turns new calls away instead";
  EXPECT_EQ(drc.begin(running).state, State::InProgress) << "the running call was evicted";
  auto r = reply(7);
  drc.complete(running, r);
  auto hit = drc.begin(running);
  EXPECT_EQ(hit.state, State::Done);
  EXPECT_EQ(hit.reply, r);
}

TEST(DuplicateRequestCache, AbandonForgetsInProgressCall) {
  DuplicateRequestCache drc;
  DrcKey key = DrcKey::make(call_from("10.0.0.1", 800, 5), kArgs);
  ASSERT_EQ(drc.begin(key).state, State::New);
  drc.abandon(key);
  EXPECT_EQ(drc.begin(key).state, State::New);
}

TEST(DuplicateRequestCache, ConcurrentRetransmissionsExecuteOnce) {
  DuplicateRequestCache drc;
  std::atomic<int> owners{0}, hits{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (uint32_t xid = 0; xid < 500; ++xid) {
        DrcKey key = DrcKey::make(call_from("10.0.0.9", 900, xid), kArgs);
        auto l = drc.begin(key);
        if (l.state == State::New) {
          ++owners;
          drc.complete(key, reply(xid));
        } else if (l.state == State::Done) {
          EXPECT_EQ(l.reply->head[7], static_cast<uint8_t>(xid));  // xid low byte after mark
          ++hits;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(owners.load(), 500);  // each xid ran exactly once across all threads
  EXPECT_GT(hits.load(), 0);
}

// A reply rebuilt from the journal (after a restart or failover) answers retransmissions, and
// wins over a copy of the call that ran while the volume was still being recovered.
TEST(DuplicateRequestCache, InsertedCompletedReplyAnswersRetransmissions) {
  DuplicateRequestCache drc;
  DrcKey key = DrcKey::make(call_from("10.0.0.1", 800, 77), kArgs);
  auto recorded = reply(77);
  drc.insert_completed(key, recorded);
  auto seen = drc.begin(key);
  EXPECT_EQ(seen.state, State::Done);
  EXPECT_EQ(seen.reply, recorded);
}

TEST(DuplicateRequestCache, RecordedReplyWinsOverACopyThatRanDuringRecovery) {
  DuplicateRequestCache drc;
  DrcKey running = DrcKey::make(call_from("10.0.0.1", 800, 78), kArgs);
  DrcKey answered = DrcKey::make(call_from("10.0.0.1", 800, 79), kArgs);
  ASSERT_EQ(drc.begin(running).state, State::New);   // still executing (JUKEBOX to come)
  ASSERT_EQ(drc.begin(answered).state, State::New);
  drc.complete(answered, reply(1));                   // answered JUKEBOX before the rebuild
  auto recorded_running = reply(78), recorded_answered = reply(79);
  drc.insert_completed(running, recorded_running);
  drc.insert_completed(answered, recorded_answered);
  drc.complete(running, reply(2));                    // the copy's late JUKEBOX
  EXPECT_EQ(drc.begin(running).reply, recorded_running);
  EXPECT_EQ(drc.begin(answered).reply, recorded_answered);
}

// Issue 12: no per-call allocation on the hot path. A cache at its capacity takes each new
// call's entry from the entries it dropped, and the reply it drops goes back to the dropping
// thread's spare replies, where the next call's reply is taken from.
TEST(DuplicateRequestCache, AFullCacheReusesItsEntriesAndGivesDroppedRepliesBack) {
  DuplicateRequestCache::Options o;
  o.capacity = 160;  // 10 per shard
  DuplicateRequestCache drc(o);
  // Each reply the cache gets has a body of this capacity; one made new has none, and one that
  // came back through the spares keeps it (recycle_reply empties the body, keeps its storage).
  constexpr size_t kMarkCapacity = 1000;
  size_t made_when_full = 0, fresh_after_full = 0;
  for (uint32_t xid = 0; xid < 4000; ++xid) {
    DrcKey key = DrcKey::make(call_from("10.0.0.1", 800, xid), kArgs);
    ASSERT_EQ(drc.begin(key).state, State::New);
    std::shared_ptr<EncodedReply> r = spare_reply();  // as CallDispatcher::take_slot does
    if (xid > 1000 && r->body.capacity() < kMarkCapacity) ++fresh_after_full;
    *r = encode_accepted_reply(xid, AcceptStat::Success, {});
    r->body.reserve(kMarkCapacity);
    r->pooled = true;
    drc.complete(key, std::move(r));
    if (xid == 1000) made_when_full = drc.entries_made();
  }
  EXPECT_GT(made_when_full, 0u);
  EXPECT_EQ(drc.entries_made(), made_when_full) << "a full cache made new entries";
  EXPECT_EQ(fresh_after_full, 0u) << "replies the cache dropped were not given back";
}

}  // namespace
}  // namespace nasd::rpc
