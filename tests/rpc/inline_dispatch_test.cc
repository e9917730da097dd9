// Run-to-completion in the transport: calls the service answers on the event loop
// (Service::dispatch_inline) and calls it refuses there, which must reach the executor and
// still be answered, with the duplicate request cache and the statistics seeing both alike.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "tests/rpc/loopback_fixture.h"

namespace nasd::rpc::testing {
namespace {

std::string opaque_text(const std::vector<uint8_t>& results) {
  if (results.size() < 4) return "<short>";
  uint32_t len = read_u32(results, 0);
  if (results.size() < 4 + len) return "<short>";
  return std::string(results.begin() + 4, results.begin() + 4 + len);
}

class InlineDispatch : public LoopbackTest {
 protected:
  void SetUp() override {
    LoopbackTest::SetUp();
    service_->inline_enabled = true;
  }
  const ProcSnapshot& echo_stats(StatsSnapshot& s, uint32_t proc) {
    for (const auto& p : s.programs)
      if (p.prog == kEchoProgram && p.vers == 1) return p.procs.at(proc);
    ADD_FAILURE() << "no statistics for the echo program";
    static ProcSnapshot none;
    return none;
  }
};

TEST_F(InlineDispatch, CallAnsweredOnTheLoopNeverReachesTheExecutor) {
  ParsedReply r = roundtrip(call(1, kEcho, echo_args("on the loop")));
  EXPECT_EQ(r.xid, 1u);
  EXPECT_EQ(r.accept_stat, 0u);
  EXPECT_EQ(opaque_text(r.results), "on the loop");
  EXPECT_EQ(service_->inline_runs.load(), 1);
  EXPECT_EQ(service_->executions.load(), 0) << "an inline call must not also run on the pool";
}

TEST_F(InlineDispatch, CallThatWouldBlockGoesToThePoolAndStillGetsItsReply) {
  service_->inline_would_block = true;
  TcpTestClient c(port_);
  for (uint32_t xid = 10; xid < 14; ++xid)
    ASSERT_TRUE(c.send_all(record(call(xid, kEcho, echo_args("via the pool")))));
  for (int i = 0; i < 4; ++i) {
    auto rec = c.read_record();
    ASSERT_TRUE(rec) << "a call refused on the loop was never answered";
    ParsedReply r = parse_reply(*rec);
    EXPECT_EQ(r.accept_stat, 0u);
    EXPECT_EQ(opaque_text(r.results), "via the pool");
  }
  EXPECT_EQ(service_->inline_refusals.load(), 4);
  EXPECT_EQ(service_->inline_runs.load(), 0);
  EXPECT_EQ(service_->executions.load(), 4);
}

TEST_F(InlineDispatch, UdpCallsRunInlineAndRefusedOnesOnThePool) {
  UdpTestClient c(port_);
  ASSERT_TRUE(c.send(make_call(call(20, kEcho, echo_args("udp inline")))));
  auto a = c.receive();
  ASSERT_TRUE(a);
  EXPECT_EQ(opaque_text(parse_reply(*a).results), "udp inline");
  service_->inline_would_block = true;
  ASSERT_TRUE(c.send(make_call(call(21, kEcho, echo_args("udp pool")))));
  auto b = c.receive();
  ASSERT_TRUE(b);
  EXPECT_EQ(opaque_text(parse_reply(*b).results), "udp pool");
  EXPECT_EQ(service_->inline_runs.load(), 1);
  EXPECT_EQ(service_->executions.load(), 1);
}

TEST_F(InlineDispatch, DuplicateRequestCacheSeesInlineCalls) {
  TcpTestClient c(port_);
  auto inc = record(call(30, kIncrement, XdrBuilder().u32(7).take()));
  ASSERT_TRUE(c.send_all(inc));
  auto first = c.read_record();
  ASSERT_TRUE(c.send_all(inc));  // a retransmission: answered from the cache, not run again
  auto again = c.read_record();
  ASSERT_TRUE(first && again);
  EXPECT_EQ(*first, *again);
  EXPECT_EQ(service_->counter.load(), 7u) << "the retransmitted increment ran twice";
  EXPECT_EQ(service_->inline_runs.load(), 1);
  EXPECT_EQ(counter(TransportCounter::DrcHits), 1u);

  // A call that went to the pool is in the same cache: its retransmission is not run inline.
  service_->inline_would_block = true;
  auto pooled = record(call(31, kIncrement, XdrBuilder().u32(1).take()));
  ASSERT_TRUE(c.send_all(pooled));
  auto p1 = c.read_record();
  service_->inline_would_block = false;
  ASSERT_TRUE(c.send_all(pooled));
  auto p2 = c.read_record();
  ASSERT_TRUE(p1 && p2);
  EXPECT_EQ(*p1, *p2);
  EXPECT_EQ(service_->counter.load(), 8u);
  EXPECT_EQ(service_->inline_runs.load(), 1);
  EXPECT_EQ(counter(TransportCounter::DrcHits), 2u);
}

TEST_F(InlineDispatch, StatisticsCountInlineCallsLikePooledOnes) {
  roundtrip(call(40, kEcho, echo_args("a")));
  roundtrip(call(41, kEcho, {1}));  // garbage arguments: an error, answered inline
  service_->inline_would_block = true;
  roundtrip(call(42, kEcho, echo_args("b")));
  StatsSnapshot s = server_->stats().snapshot();
  const ProcSnapshot& echo = echo_stats(s, kEcho);
  EXPECT_EQ(echo.calls, 3u);
  EXPECT_EQ(echo.errors, 1u);
}

TEST_F(InlineDispatch, ThrowingInlineProcedureIsSystemErrAndTheServerGoesOn) {
  ParsedReply r = roundtrip(call(50, kThrow));
  EXPECT_EQ(r.accept_stat, 5u);  // SYSTEM_ERR
  EXPECT_EQ(roundtrip(call(51, kEcho, echo_args("still here"))).accept_stat, 0u);
}

class InlineDisabled : public LoopbackTest {
 protected:
  void tune(RpcServerOptions& o) override { o.run_inline = false; }
};

TEST_F(InlineDisabled, EveryCallRunsOnTheExecutor) {
  service_->inline_enabled = true;
  EXPECT_EQ(opaque_text(roundtrip(call(60, kEcho, echo_args("pool"))).results), "pool");
  EXPECT_EQ(service_->inline_runs.load(), 0);
  EXPECT_EQ(service_->inline_refusals.load(), 0);
  EXPECT_EQ(service_->executions.load(), 1);
}

// A reply completed on another thread (the executor here; the interconnect reader for a
// forwarded call) is written to the socket by that thread when nothing else is being sent,
// without waking the event loop: it arrives even while the loop is busy with something else.
class RepliesFromElsewhere : public InlineDispatch {
 protected:
  void tune(RpcServerOptions& o) override { o.workers = 1; }  // one loop serves both clients
};

TEST_F(RepliesFromElsewhere, APoolReplyLeavesWhileTheLoopIsBusy) {
  using Clock = std::chrono::steady_clock;
  TcpTestClient pooled(port_);
  TcpTestClient holder(port_);
  const auto start = Clock::now();
  ASSERT_TRUE(pooled.send_all(record(call(40, kSleepEcho, sleep_args(200, "from the pool")))));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // handed to the executor
  service_->inline_sleep_ms = 1500;
  ASSERT_TRUE(holder.send_all(record(call(41, kEcho, echo_args("holds the loop")))));
  auto rec = pooled.read_record();
  const auto took = Clock::now() - start;
  ASSERT_TRUE(rec);
  EXPECT_EQ(opaque_text(parse_reply(*rec).results), "from the pool");
  EXPECT_LT(took, std::chrono::milliseconds(1000))
      << "the pool's reply waited for the busy event loop";
  auto held = holder.read_record();
  ASSERT_TRUE(held);
  EXPECT_EQ(opaque_text(parse_reply(*held).results), "holds the loop");
  service_->inline_sleep_ms = 0;
  // The connection still works, both ways, afterwards.
  ParsedReply again = roundtrip(call(42, kSleepEcho, sleep_args(1, "again")));
  EXPECT_EQ(opaque_text(again.results), "again");
}

}  // namespace
}  // namespace nasd::rpc::testing
