// The transport over real TCP sockets on loopback: record marking, pipelining, out-of-order
// replies, protocol rejections, hostile records, the duplicate request cache, back-pressure.
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <set>
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

TEST_F(LoopbackTest, NullCall) {
  ParsedReply r = roundtrip(call(11, kNull));
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.xid, 11u);
  EXPECT_EQ(r.reply_stat, 0u);
  EXPECT_EQ(r.accept_stat, 0u);
  EXPECT_TRUE(r.results.empty());
}

TEST_F(LoopbackTest, MultiFragmentRecordSentInTinyWrites) {
  TcpTestClient c(port_);
  std::string text(3000, 'q');
  auto bytes = record(call(12, kEcho, echo_args(text)), {1, 7, 0, 100, 1000, 5});
  for (size_t off = 0; off < bytes.size(); off += 97) {
    ASSERT_TRUE(c.send_all({bytes.data() + off, std::min<size_t>(97, bytes.size() - off)}));
    if (off % 970 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  auto rec = c.read_record();
  ASSERT_TRUE(rec);
  ParsedReply r = parse_reply(*rec);
  EXPECT_EQ(r.xid, 12u);
  EXPECT_EQ(opaque_text(r.results), text);
}

TEST_F(LoopbackTest, PipelinedCallsAllAnswered) {
  TcpTestClient c(port_);
  std::vector<uint8_t> burst;
  for (uint32_t xid = 100; xid < 200; ++xid) {
    auto rec = record(call(xid, kEcho, echo_args("m" + std::to_string(xid))));
    burst.insert(burst.end(), rec.begin(), rec.end());
  }
  ASSERT_TRUE(c.send_all(burst));
  std::set<uint32_t> seen;
  for (int i = 0; i < 100; ++i) {
    auto rec = c.read_record();
    ASSERT_TRUE(rec) << "reply " << i;
    ParsedReply r = parse_reply(*rec);
    EXPECT_EQ(opaque_text(r.results), "m" + std::to_string(r.xid));
    seen.insert(r.xid);
  }
  EXPECT_EQ(seen.size(), 100u);
  EXPECT_EQ(*seen.begin(), 100u);
  EXPECT_EQ(*seen.rbegin(), 199u);
}

TEST_F(LoopbackTest, SlowCallDoesNotHoldBackFastOne) {
  TcpTestClient c(port_);
  auto slow = record(call(1, kSleepEcho, sleep_args(400, "slow")));
  auto fast = record(call(2, kEcho, echo_args("fast")));
  slow.insert(slow.end(), fast.begin(), fast.end());
  ASSERT_TRUE(c.send_all(slow));
  auto first = c.read_record();
  auto second = c.read_record();
  ASSERT_TRUE(first && second);
  EXPECT_EQ(parse_reply(*first).xid, 2u) << "the fast reply must overtake the slow one";
  EXPECT_EQ(opaque_text(parse_reply(*second).results), "slow");
}

TEST_F(LoopbackTest, ProtocolRejections) {
  EXPECT_EQ(roundtrip(call(1, kEcho, echo_args("x"), /*vers=*/7)).accept_stat, 2u);
  ParsedReply mismatch = roundtrip(call(1, kEcho, echo_args("x"), 7));
  EXPECT_EQ(mismatch.low, 1u);
  EXPECT_EQ(mismatch.high, 2u);
  EXPECT_EQ(roundtrip(call(2, kNumProcs)).accept_stat, 3u);  // PROC_UNAVAIL

  CallSpec other = call(3, kNull);
  other.prog = 0x20000098;
  EXPECT_EQ(roundtrip(other).accept_stat, 1u);  // PROG_UNAVAIL

  CallSpec v3 = call(4, kNull);
  v3.rpcvers = 3;
  ParsedReply rm = roundtrip(v3);
  EXPECT_EQ(rm.xid, 4u);
  EXPECT_EQ(rm.reply_stat, 1u);
  EXPECT_EQ(rm.reject_stat, 0u);

  CallSpec gss = call(5, kNull);
  gss.cred_flavor = 6;
  ParsedReply weak = roundtrip(gss);
  EXPECT_EQ(weak.reject_stat, 1u);
  EXPECT_EQ(weak.auth_stat, 5u);  // AUTH_TOOWEAK

  CallSpec bad = call(6, kNull);
  bad.cred_flavor = kAuthSys;
  AuthSysParams p;
  p.gids.assign(17, 1);
  bad.cred_body = auth_sys_body(p);
  EXPECT_EQ(roundtrip(bad).auth_stat, 1u);  // AUTH_BADCRED

  EXPECT_EQ(roundtrip(call(7, kEcho, {0, 0, 0, 9, 1})).accept_stat, 4u);  // GARBAGE_ARGS
  EXPECT_EQ(roundtrip(call(8, kThrow)).accept_stat, 5u);                  // SYSTEM_ERR
  EXPECT_GE(counter(TransportCounter::ProgMismatch), 2u);
  EXPECT_EQ(counter(TransportCounter::AuthErrors), 2u);
}

TEST_F(LoopbackTest, AuthSysCredentialReachesService) {
  CallSpec s = call(9, kWhoAmI);
  s.cred_flavor = kAuthSys;
  AuthSysParams p;
  p.machine = "loopback-host";
  p.uid = 4242;
  p.gid = 77;
  p.gids = {77, 78};
  s.cred_body = auth_sys_body(p);
  ParsedReply r = roundtrip(s);
  ASSERT_EQ(r.accept_stat, 0u);
  ASSERT_GE(r.results.size(), 24u);
  EXPECT_EQ(read_u32(r.results, 0), kAuthSys);
  EXPECT_EQ(read_u32(r.results, 4), 4242u);
  EXPECT_EQ(read_u32(r.results, 8), 77u);
  EXPECT_EQ(read_u32(r.results, 12), 2u);
  EXPECT_EQ(read_u32(r.results, 20), 78u);
}

TEST_F(LoopbackTest, TooShortRecordClosesOnlyThatConnection) {
  TcpTestClient bystander(port_);
  TcpTestClient c(port_);
  std::vector<uint8_t> junk = {0, 0, 0, 1, 0, 0, 0, 0};  // xid + CALL, nothing else
  ASSERT_TRUE(c.send_all(as_record(junk)));
  EXPECT_TRUE(c.wait_closed());
  EXPECT_EQ(counter(TransportCounter::BadRecords), 1u);
  ASSERT_TRUE(bystander.send_all(record(call(20, kEcho, echo_args("still here")))));
  auto rec = bystander.read_record();
  ASSERT_TRUE(rec);
  EXPECT_EQ(opaque_text(parse_reply(*rec).results), "still here");
}

TEST_F(LoopbackTest, OversizedRecordClosesConnection) {
  TcpTestClient c(port_);
  // 256 KiB + 1 announced: over this server's max_record.
  std::vector<uint8_t> header = {0x80, 0x04, 0x00, 0x01};
  ASSERT_TRUE(c.send_all(header));
  EXPECT_TRUE(c.wait_closed());
  EXPECT_EQ(counter(TransportCounter::OversizedRecords), 1u);
  EXPECT_EQ(roundtrip(call(21, kNull)).accept_stat, 0u);
}

TEST_F(LoopbackTest, RandomGarbageNeverHurtsTheServer) {
  uint32_t seed = 12345;
  for (int round = 0; round < 20; ++round) {
    TcpTestClient c(port_);
    std::vector<uint8_t> junk(512);
    for (auto& b : junk) b = static_cast<uint8_t>((seed = seed * 1103515245 + 12345) >> 16);
    junk[0] &= 0x7f;  // keep the first fragment length modest, but not necessarily sane
    c.send_all(junk);
    shutdown(c.fd(), SHUT_WR);
    c.wait_closed(2000);
  }
  EXPECT_EQ(roundtrip(call(22, kEcho, echo_args("ok"))).accept_stat, 0u);
}

TEST_F(LoopbackTest, RetransmittedCallGetsCachedReply) {
  TcpTestClient c(port_);
  auto inc = record(call(500, kIncrement, XdrBuilder().u32(5).take()));
  ASSERT_TRUE(c.send_all(inc));
  auto first = c.read_record();
  ASSERT_TRUE(c.send_all(inc));  // same xid, same arguments: a retransmission
  auto again = c.read_record();
  ASSERT_TRUE(first && again);
  EXPECT_EQ(*first, *again);
  EXPECT_EQ(read_u32(parse_reply(*again).results, 0), 5u);
  EXPECT_EQ(service_->counter.load(), 5u) << "the increment must run once";
  EXPECT_EQ(counter(TransportCounter::DrcHits), 1u);

  // A new xid is a new call.
  ASSERT_TRUE(c.send_all(record(call(501, kIncrement, XdrBuilder().u32(5).take()))));
  auto third = c.read_record();
  ASSERT_TRUE(third);
  EXPECT_EQ(read_u32(parse_reply(*third).results, 0), 10u);
}

TEST_F(LoopbackTest, RetransmissionWhileExecutingIsDropped) {
  TcpTestClient c(port_);
  auto slow = record(call(600, kSleepEcho, sleep_args(300, "once")));
  ASSERT_TRUE(c.send_all(slow));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(c.send_all(slow));
  auto rec = c.read_record();
  ASSERT_TRUE(rec);
  EXPECT_EQ(parse_reply(*rec).xid, 600u);
  EXPECT_FALSE(c.read_record(500)) << "the dropped duplicate must not be answered";
  EXPECT_EQ(service_->executions.load(), 1);
  EXPECT_EQ(counter(TransportCounter::DrcInProgressDrops), 1u);
}

TEST_F(LoopbackTest, LargeReplySurvivesPartialSends) {
  TcpTestClient c(port_);
  // 6 MiB is more than the socket buffers hold while the client is not reading, so the server
  // sees short writes and must resume mid-reply.
  const uint32_t size = 6 << 20;
  ASSERT_TRUE(c.send_all(record(call(700, kBig, XdrBuilder().u32(size).take()))));
  auto small = record(call(701, kEcho, echo_args("behind the big one")));
  ASSERT_TRUE(c.send_all(small));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  bool got_big = false, got_small = false;
  for (int i = 0; i < 2; ++i) {
    auto rec = c.read_record(10000);
    ASSERT_TRUE(rec);
    ParsedReply r = parse_reply(*rec);
    if (r.xid == 701) {
      got_small = opaque_text(r.results) == "behind the big one";
      continue;
    }
    ASSERT_EQ(read_u32(r.results, 0), size);
    bool intact = true;
    for (size_t k = 0; k < size; ++k) intact &= r.results[4 + k] == static_cast<uint8_t>(k % 251);
    got_big = intact;
  }
  EXPECT_TRUE(got_big);
  EXPECT_TRUE(got_small);
  EXPECT_GE(counter(TransportCounter::ShortWrites), 1u);
}

// A reply whose data is a list of pieces (a READ sent from cache blocks): more pieces than
// one sendmsg takes (1,536 > 1,024) and more bytes than the socket buffers hold, so the
// connection resumes both mid-iovec and mid-piece; a small reply queued behind it and a second
// sliced one must arrive intact too.
TEST_F(LoopbackTest, ReplySentFromSlicesSurvivesPartialSendsAndIovecLimits) {
  TcpTestClient c(port_);
  const uint32_t big = 6 << 20, odd = 300001;
  ASSERT_TRUE(c.send_all(record(call(710, kBigSlices, XdrBuilder().u32(big).take()))));
  ASSERT_TRUE(c.send_all(record(call(711, kEcho, echo_args("behind the slices")))));
  ASSERT_TRUE(c.send_all(record(call(712, kBigSlices, XdrBuilder().u32(odd).take()))));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  int intact = 0;
  bool got_small = false;
  for (int i = 0; i < 3; ++i) {
    auto rec = c.read_record(10000);
    ASSERT_TRUE(rec);
    ParsedReply r = parse_reply(*rec);
    if (r.xid == 711) {
      got_small = opaque_text(r.results) == "behind the slices";
      continue;
    }
    const uint32_t size = r.xid == 710 ? big : odd;
    ASSERT_EQ(read_u32(r.results, 0), size);
    ASSERT_EQ(r.results.size(), 4 + ((size_t{size} + 3) & ~size_t{3}));
    bool ok = true;
    for (size_t k = 0; k < size; ++k) ok &= r.results[4 + k] == static_cast<uint8_t>(k % 251);
    for (size_t k = 4 + size; k < r.results.size(); ++k) ok &= r.results[k] == 0;
    intact += ok ? 1 : 0;
  }
  EXPECT_EQ(intact, 2);
  EXPECT_TRUE(got_small);
  EXPECT_GE(counter(TransportCounter::ShortWrites), 1u);
}

// A call far larger than the staging buffer (a large WRITE; the fixture's bound is 256 KiB) is
// received mostly in place, in fragments, and echoed back intact.
TEST_F(LoopbackTest, LargeCallsReceivedInPlaceArriveIntact) {
  TcpTestClient c(port_);
  std::vector<uint8_t> payload(200000);
  for (size_t k = 0; k < payload.size(); ++k) payload[k] = static_cast<uint8_t>(k * 13 + 5);
  std::vector<uint8_t> msg =
      make_call(call(720, kEcho, echo_args(std::string(payload.begin(), payload.end()))));
  // Two fragments, then a small call in the same write: the in-place receive must stop at the
  // record's end and leave the next call's bytes to the staging buffer.
  std::vector<uint8_t> stream = as_record(msg, {150000, msg.size() - 150000});
  auto small = record(call(721, kEcho, echo_args("after the big call")));
  stream.insert(stream.end(), small.begin(), small.end());
  ASSERT_TRUE(c.send_all(stream));
  bool got_big = false, got_small = false;
  for (int i = 0; i < 2; ++i) {
    auto rec = c.read_record(10000);
    ASSERT_TRUE(rec);
    ParsedReply r = parse_reply(*rec);
    if (r.xid == 721) got_small = opaque_text(r.results) == "after the big call";
    if (r.xid == 720)
      got_big = r.results.size() == 4 + payload.size() && read_u32(r.results, 0) == payload.size() &&
                std::equal(payload.begin(), payload.end(), r.results.begin() + 4);
  }
  EXPECT_TRUE(got_big);
  EXPECT_TRUE(got_small);
}

// While a large fragment is received in place the socket's low-water mark is the fragment's
// rest (so the loop wakes once for it, not at every segment); a small call that comes alone
// afterwards must not wait for that many bytes.
TEST_F(LoopbackTest, ASmallCallAfterALargeOneIsNotHeldBackByItsLowWaterMark) {
  TcpTestClient c(port_);
  std::vector<uint8_t> payload(200000, 0x5a);
  std::vector<uint8_t> big =
      record(call(730, kEcho, echo_args(std::string(payload.begin(), payload.end()))));
  // The head first and the rest after a pause: the rest is received in place.
  ASSERT_TRUE(c.send_all({big.data(), 1000}));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(c.send_all({big.data() + 1000, big.size() - 1000}));
  auto rec = c.read_record(10000);
  ASSERT_TRUE(rec);
  EXPECT_EQ(parse_reply(*rec).xid, 730u);
  ASSERT_TRUE(c.send_all(record(call(731, kEcho, echo_args("small")))));
  rec = c.read_record(3000);
  ASSERT_TRUE(rec) << "the small call was not answered";
  ParsedReply r = parse_reply(*rec);
  EXPECT_EQ(r.xid, 731u);
  EXPECT_EQ(opaque_text(r.results), "small");
}

TEST_F(LoopbackTest, HalfClosedClientStillGetsReplies) {
  TcpTestClient c(port_);
  ASSERT_TRUE(c.send_all(record(call(800, kSleepEcho, sleep_args(100, "bye")))));
  shutdown(c.fd(), SHUT_WR);
  auto rec = c.read_record();
  ASSERT_TRUE(rec);
  EXPECT_EQ(opaque_text(parse_reply(*rec).results), "bye");
  EXPECT_TRUE(c.wait_closed());
}

TEST_F(LoopbackTest, StatisticsCountCalls) {
  for (uint32_t i = 0; i < 3; ++i) roundtrip(call(900 + i, kEcho, echo_args("s")));
  roundtrip(call(903, kEcho, {1}));  // garbage args: an error
  StatsSnapshot s = server_->stats().snapshot();
  const ProgramSnapshot* v1 = nullptr;
  for (const auto& p : s.programs)
    if (p.prog == kEchoProgram && p.vers == 1) v1 = &p;
  ASSERT_NE(v1, nullptr);
  EXPECT_EQ(v1->name, "echo");
  EXPECT_EQ(v1->procs[kEcho].calls, 4u);
  EXPECT_EQ(v1->procs[kEcho].errors, 1u);
  EXPECT_EQ(s.counter(TransportCounter::ConnectionsAccepted), 4u);
}

TEST_F(LoopbackTest, LatencyHistogramReflectsSlowProcedures) {
  for (uint32_t i = 0; i < 2; ++i) roundtrip(call(950 + i, kSleepEcho, sleep_args(60, "t")));
  StatsSnapshot s = server_->stats().snapshot();
  for (const auto& p : s.programs) {
    if (p.prog != kEchoProgram || p.vers != 1) continue;
    const ProcSnapshot& slow = p.procs[kSleepEcho];
    ASSERT_EQ(slow.calls, 2u);
    EXPECT_GE(slow.mean_us(), 60000.0);
    EXPECT_GE(slow.percentile_us(0.5), 32768.0);  // the [2^15, 2^16) us bucket holds 60 ms
    EXPECT_LT(slow.percentile_us(0.5), 131072.0);
  }
}

class BackPressureTest : public LoopbackTest {
 protected:
  void tune(RpcServerOptions& o) override {
    o.tcp.max_in_flight = 4;
    o.threads = 16;
  }
};

TEST_F(BackPressureTest, InFlightCallsPerConnectionAreBounded) {
  TcpTestClient c(port_);
  std::vector<uint8_t> burst;
  for (uint32_t xid = 1; xid <= 24; ++xid) {
    auto rec = record(call(xid, kSleepEcho, sleep_args(40, "b")));
    burst.insert(burst.end(), rec.begin(), rec.end());
  }
  ASSERT_TRUE(c.send_all(burst));
  std::set<uint32_t> seen;
  for (int i = 0; i < 24; ++i) {
    auto rec = c.read_record();
    ASSERT_TRUE(rec) << "reply " << i;
    seen.insert(parse_reply(*rec).xid);
  }
  EXPECT_EQ(seen.size(), 24u);
  // 16 executor threads could have run all of them at once; the connection bound says 4.
  EXPECT_LE(service_->max_concurrent.load(), 4);
  EXPECT_GE(service_->max_concurrent.load(), 2);
}

}  // namespace
}  // namespace nasd::rpc::testing
