// The transport over UDP: one datagram per call, replies to the sender, bad datagrams dropped.
#include <chrono>
#include <thread>

#include "tests/rpc/loopback_fixture.h"

namespace nasd::rpc::testing {
namespace {

TEST_F(LoopbackTest, UdpEchoRepliesToSender) {
  UdpTestClient a(port_), b(port_);
  ASSERT_TRUE(a.send(make_call(call(1, kEcho, echo_args("from a")))));
  ASSERT_TRUE(b.send(make_call(call(2, kEcho, echo_args("from b")))));
  auto ra = a.receive();
  auto rb = b.receive();
  ASSERT_TRUE(ra && rb);
  EXPECT_EQ(parse_reply(*ra).xid, 1u);
  EXPECT_EQ(parse_reply(*rb).xid, 2u);
  EXPECT_EQ(parse_reply(*ra).results, echo_args("from a"));
}

TEST_F(LoopbackTest, UdpRejectionsAreAnsweredImmediately) {
  UdpTestClient c(port_);
  ASSERT_TRUE(c.send(make_call(call(3, kNull, {}, /*vers=*/9))));
  auto r = c.receive();
  ASSERT_TRUE(r);
  EXPECT_EQ(parse_reply(*r).accept_stat, 2u);
}

TEST_F(LoopbackTest, UdpGarbageIsDroppedAndServerGoesOn) {
  UdpTestClient c(port_);
  std::vector<uint8_t> junk = {1, 2, 3};
  ASSERT_TRUE(c.send(junk));
  EXPECT_FALSE(c.receive(300));
  ASSERT_TRUE(c.send(make_call(call(4, kNull))));
  auto r = c.receive();
  ASSERT_TRUE(r);
  EXPECT_EQ(parse_reply(*r).xid, 4u);
  EXPECT_EQ(counter(TransportCounter::BadRecords), 1u);
}

TEST_F(LoopbackTest, UdpRetransmissionGetsCachedReply) {
  UdpTestClient c(port_);
  auto inc = make_call(call(77, kIncrement, XdrBuilder().u32(3).take()));
  ASSERT_TRUE(c.send(inc));
  auto first = c.receive();
  ASSERT_TRUE(c.send(inc));
  auto again = c.receive();
  ASSERT_TRUE(first && again);
  EXPECT_EQ(*first, *again);
  EXPECT_EQ(service_->counter.load(), 3u);
  EXPECT_EQ(counter(TransportCounter::DrcHits), 1u);
}

TEST_F(LoopbackTest, UdpAndTcpShareThePortNumber) {
  UdpTestClient u(port_);
  ASSERT_TRUE(u.send(make_call(call(5, kNull))));
  ASSERT_TRUE(u.receive());
  EXPECT_EQ(roundtrip(call(6, kNull)).xid, 6u);
}

class UdpOverloadTest : public LoopbackTest {
 protected:
  void tune(RpcServerOptions& o) override {
    o.workers = 1;
    o.udp_max_in_flight = 1;
  }
};

TEST_F(UdpOverloadTest, DatagramsBeyondTheInFlightBoundAreDropped) {
  UdpTestClient c(port_);
  for (uint32_t xid = 1; xid <= 3; ++xid)
    ASSERT_TRUE(c.send(make_call(call(xid, kSleepEcho, sleep_args(200, "u")))));
  auto first = c.receive();
  ASSERT_TRUE(first);
  EXPECT_EQ(parse_reply(*first).xid, 1u);
  EXPECT_FALSE(c.receive(400)) << "the other two were dropped, not queued";
  EXPECT_EQ(counter(TransportCounter::UdpDropped), 2u);
  // Once the slot is free again the endpoint serves normally.
  ASSERT_TRUE(c.send(make_call(call(4, kNull))));
  auto later = c.receive();
  ASSERT_TRUE(later);
  EXPECT_EQ(parse_reply(*later).xid, 4u);
}

}  // namespace
}  // namespace nasd::rpc::testing
