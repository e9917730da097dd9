// The coordinator/agent messages: every message round-trips; every truncation, an oversized
// length, trailing bytes, out-of-range values and inconsistent histograms are refused by the
// decoder; the channel refuses a wrong key, an oversized or tampered frame, and a replay.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <thread>

#include "bench/agent_channel.h"
#include "bench/agent_protocol.h"
#include "bench/histogram.h"

namespace nasd::bench::agent {
namespace {

Prepare sample_prepare() {
  Prepare p;
  p.agent_index = 1;
  p.agents = 2;
  p.targets = {"nfs://10.0.0.1/r/v0?nfsport=2049&mountport=20048", "10.0.0.2:/r/v0"};
  p.workdir = "loadgen-1.lg2";
  p.processes = 4;
  p.seed = 77;
  p.mix_name = "SFS2014 VDA";
  p.mix_percent[index_of(OpType::kRead)] = 45;
  p.mix_percent[index_of(OpType::kWrite)] = 55;
  p.mib_per_op = 0.5;
  p.peak_ops = 20;
  p.file_sizes = {{1 << 20, 50}, {4096, 50}};
  return p;
}

StepDone sample_step_done() {
  StepDone d;
  d.index = 3;
  d.first_issue_ns = 123456789;
  d.refused = 2;
  d.failure = "";
  d.stats.issued = 500;
  d.stats.late_issues = 7;
  for (int i = 0; i < 300; ++i) d.stats.record_reply(OpType::kRead, 1000000 + i * 1000, 0, 524288);
  for (int i = 0; i < 100; ++i) d.stats.record_reply(OpType::kGetattr, 90000000, 0);
  d.stats.record_reply(OpType::kRemove, 0, 2);
  d.stats.record_reply(OpType::kRemove, 0, kRpcFailure);
  return d;
}

TEST(AgentProtocolTest, PrepareRoundTrips) {
  Prepare in = sample_prepare(), out;
  std::string error;
  ASSERT_TRUE(decode(encode(in), &out, &error)) << error;
  EXPECT_EQ(out.agent_index, 1u);
  EXPECT_EQ(out.agents, 2u);
  EXPECT_EQ(out.targets, in.targets);
  EXPECT_EQ(out.workdir, in.workdir);
  EXPECT_EQ(out.processes, 4u);
  EXPECT_EQ(out.seed, 77u);
  EXPECT_EQ(out.mix_name, in.mix_name);
  EXPECT_EQ(out.mix_percent, in.mix_percent);
  EXPECT_EQ(out.mib_per_op, 0.5);
  ASSERT_EQ(out.file_sizes.size(), 2u);
  EXPECT_EQ(out.file_sizes[0].bytes, 1u << 20);
}

TEST(AgentProtocolTest, StepDoneRoundTripsWithItsHistograms) {
  StepDone in = sample_step_done(), out;
  std::string error;
  ASSERT_TRUE(decode(encode(in), &out, &error)) << error;
  EXPECT_EQ(out.index, 3u);
  EXPECT_EQ(out.first_issue_ns, 123456789);
  EXPECT_EQ(out.refused, 2u);
  EXPECT_EQ(out.stats.issued, 500u);
  EXPECT_EQ(out.stats.late_issues, 7u);
  EXPECT_EQ(out.stats.ok(), in.stats.ok());
  EXPECT_EQ(out.stats.errors(), 2u);
  EXPECT_EQ(out.stats.bytes(), 300u * 524288);
  const OpCounters& remove = out.stats.per_op[index_of(OpType::kRemove)];
  EXPECT_EQ(remove.errors_by_status.at(2), 1u);
  EXPECT_EQ(remove.errors_by_status.at(kRpcFailure), 1u);
  LatencyHistogram a = in.stats.latency(), b = out.stats.latency();
  EXPECT_EQ(a.count(), b.count());
  EXPECT_DOUBLE_EQ(a.mean_ms(), b.mean_ms());
  for (double p : {1.0, 50.0, 75.0, 99.0, 100.0}) EXPECT_DOUBLE_EQ(a.percentile_ms(p), b.percentile_ms(p)) << p;
}

TEST(AgentProtocolTest, SmallMessagesRoundTrip) {
  std::string error;
  Prepared pd{{ServerFacts{1, 2, 3, 4, 5, 6, 7, 8}}, 999}, pd2;
  ASSERT_TRUE(decode(encode(pd), &pd2, &error)) << error;
  EXPECT_EQ(pd2.facts[0].free_bytes, 6u);
  EXPECT_EQ(pd2.fileset_bytes_per_target, 999u);
  EXPECT_TRUE(decode_build(encode_build(), &error));
  Built b{123, 4.5}, b2;
  ASSERT_TRUE(decode(encode(b), &b2, &error));
  EXPECT_EQ(b2.fileset_bytes, 123u);
  ClockReply c{9, -5}, c2;
  ASSERT_TRUE(decode(encode(c), &c2, &error));
  EXPECT_EQ(c2.agent_now_ns, -5);
  Step s{2, 1000000000, 0, 3000000000, 12.5}, s2;
  ASSERT_TRUE(decode(encode(s), &s2, &error)) << error;
  EXPECT_EQ(s2.measure_ns, 3000000000);
  Finish f{true}, f2;
  ASSERT_TRUE(decode(encode(f), &f2, &error));
  EXPECT_TRUE(f2.cleanup);
  Error e{"no"}, e2;
  ASSERT_TRUE(decode(encode(e), &e2, &error));
  EXPECT_EQ(e2.message, "no");
}

TEST(AgentProtocolTest, EveryTruncationAndTrailingByteIsRefused) {
  std::string error;
  const auto prepare = encode(sample_prepare());
  const auto done = encode(sample_step_done());
  for (size_t n = 0; n < prepare.size(); ++n) {
    Prepare out;
    EXPECT_FALSE(decode(std::span(prepare.data(), n), &out, &error)) << n;
  }
  for (size_t n = 0; n < done.size(); n += 7) {
    StepDone out;
    EXPECT_FALSE(decode(std::span(done.data(), n), &out, &error)) << n;
  }
  auto longer = prepare;
  longer.push_back(0);
  Prepare out;
  EXPECT_FALSE(decode(longer, &out, &error));
  EXPECT_NE(error.find("trailing"), std::string::npos) << error;
}

TEST(AgentProtocolTest, OversizedLengthsAreRefusedBeforeUse) {
  std::string error;
  // An Error whose text claims 4 GiB.
  std::vector<uint8_t> huge = {static_cast<uint8_t>(MessageType::kError), 0xff, 0xff, 0xff, 0xff, 'x'};
  Error e;
  EXPECT_FALSE(decode(huge, &e, &error));
  // A target longer than kMaxTargetText, and more targets than kMaxTargets.
  Prepare p = sample_prepare();
  p.targets = {"nfs://10.0.0.1/" + std::string(kMaxTargetText, 'a')};
  Prepare out;
  EXPECT_FALSE(decode(encode(p), &out, &error));
  p = sample_prepare();
  p.targets.assign(kMaxTargets + 1, "10.0.0.2:/r/v0");
  EXPECT_FALSE(decode(encode(p), &out, &error));
}

TEST(AgentProtocolTest, HistogramPartsMustDescribeAHistogram) {
  LatencyHistogram h;
  h.record_ns(1000000);
  h.record_ns(5000000);
  LatencyHistogram::Parts good = h.parts(), bad;
  LatencyHistogram copy;
  ASSERT_TRUE(copy.restore(good));
  EXPECT_DOUBLE_EQ(copy.mean_ms(), h.mean_ms());
  bad = good;
  bad.buckets.back().first = static_cast<uint32_t>(LatencyHistogram::bucket_count());  // out of range
  EXPECT_FALSE(copy.restore(bad));
  bad = good;
  std::swap(bad.buckets[0], bad.buckets[1]);  // not increasing
  EXPECT_FALSE(copy.restore(bad));
  bad = good;
  bad.count = 3;  // buckets add up to 2
  EXPECT_FALSE(copy.restore(bad));
  bad = good;
  bad.min_ns = bad.max_ns + 1;
  EXPECT_FALSE(copy.restore(bad));
  bad = good;
  bad.buckets[0].second = UINT64_MAX;  // overflows the total
  EXPECT_FALSE(copy.restore(bad));
  EXPECT_DOUBLE_EQ(copy.mean_ms(), h.mean_ms());  // a refused restore changed nothing
}

TEST(AgentProtocolTest, OutOfRangeValuesAreRefused) {
  std::string error;
  Prepare out;
  auto refused = [&](auto change) {
    Prepare p = sample_prepare();
    change(p);
    return !decode(encode(p), &out, &error);
  };
  EXPECT_TRUE(refused([](Prepare& p) { p.workdir = "../etc"; }));
  EXPECT_TRUE(refused([](Prepare& p) { p.workdir = ".."; }));
  EXPECT_TRUE(refused([](Prepare& p) { p.workdir = ""; }));
  EXPECT_TRUE(refused([](Prepare& p) { p.processes = 0; }));
  EXPECT_TRUE(refused([](Prepare& p) { p.processes = kMaxProcesses + 1; }));
  EXPECT_TRUE(refused([](Prepare& p) { p.agent_index = 2; }));
  EXPECT_TRUE(refused([](Prepare& p) { p.mix_percent = {}; }));
  EXPECT_TRUE(refused([](Prepare& p) { p.mix_percent[0] = NAN; }));
  EXPECT_TRUE(refused([](Prepare& p) { p.mix_percent[0] = 101; }));
  EXPECT_TRUE(refused([](Prepare& p) { p.peak_ops = INFINITY; }));
  EXPECT_TRUE(refused([](Prepare& p) { p.targets = {"not a target"}; }));
  EXPECT_TRUE(refused([](Prepare& p) { p.file_sizes = {{0, 100}}; }));
  Step s{0, 1, 0, 50000000, 1}, s2;  // a measured interval below 0.1 s
  EXPECT_FALSE(decode(encode(s), &s2, &error));
  s = Step{0, -1, 0, 1000000000, 1};
  EXPECT_FALSE(decode(encode(s), &s2, &error));
  std::vector<uint8_t> unknown = {99};
  MessageType t;
  EXPECT_FALSE(peek_type(unknown, &t));
  EXPECT_FALSE(peek_type({}, &t));
}

TEST(AgentProtocolTest, InconsistentCountersAreRefused) {
  std::string error;
  StepDone d = sample_step_done();
  auto bytes = encode(d);
  // Flip the READ ok count (the first u64 of per_op[kRead]): it no longer matches its histogram.
  // Find it by encoding a StepDone whose READ ok differs and comparing.
  StepDone other = d;
  other.stats.per_op[index_of(OpType::kRead)].ok += 1;
  auto changed = encode(other);
  ASSERT_EQ(bytes.size(), changed.size());
  StepDone out;
  EXPECT_FALSE(decode(changed, &out, &error));
  EXPECT_NE(error.find("latency count"), std::string::npos) << error;
  other = d;
  other.stats.per_op[index_of(OpType::kRemove)].errors = 5;  // statuses add up to 2
  EXPECT_FALSE(decode(encode(other), &out, &error));
}

// --- the channel ---------------------------------------------------------------------------

struct Pair {
  std::unique_ptr<Channel> client, server;
};

// Runs the handshake over a socketpair with the given keys; null channels where it failed.
Pair handshake(const std::vector<uint8_t>& client_key, const std::vector<uint8_t>& server_key) {
  int fds[2];
  EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  std::optional<link::Session> server_session;
  std::thread t([&] {
    std::string error;
    server_session = link::authenticate_server(fds[1], link::LinkKind::LoadAgent, {server_key, "lg1"},
                                               [](const std::string&) { return true; }, kHandshakeTimeout, &error);
    if (!server_session) ::shutdown(fds[1], SHUT_RDWR);
  });
  std::string error;
  auto client_session = link::authenticate_client(fds[0], link::LinkKind::LoadAgent, {client_key, "coordinator"},
                                                  "lg1", kHandshakeTimeout, &error);
  t.join();
  Pair p;
  if (client_session && server_session) {
    p.client = std::make_unique<Channel>(fds[0], std::move(*client_session));
    p.server = std::make_unique<Channel>(fds[1], std::move(*server_session));
  } else {
    ::close(fds[0]);
    ::close(fds[1]);
  }
  return p;
}

const std::vector<uint8_t> kKey(32, 7);

TEST(AgentChannelTest, WrongKeyIsRefused) {
  Pair p = handshake(std::vector<uint8_t>(32, 8), kKey);
  EXPECT_FALSE(p.client);
  EXPECT_FALSE(p.server);
}

TEST(AgentChannelTest, MessagesPassBothWays) {
  Pair p = handshake(kKey, kKey);
  ASSERT_TRUE(p.client && p.server);
  std::string error;
  ASSERT_TRUE(p.client->send(encode(ClockProbe{42}), &error)) << error;
  std::vector<uint8_t> got;
  ASSERT_EQ(p.server->receive(&got, std::chrono::milliseconds(2000), &error), util::ReadStatus::Ok) << error;
  ClockProbe probe;
  ASSERT_TRUE(decode(got, &probe, &error));
  EXPECT_EQ(probe.nonce, 42u);
  ASSERT_TRUE(p.server->send(encode(sample_step_done()), &error));
  ASSERT_EQ(p.client->receive(&got, std::chrono::milliseconds(2000), &error), util::ReadStatus::Ok) << error;
  StepDone done;
  EXPECT_TRUE(decode(got, &done, &error)) << error;
}

TEST(AgentChannelTest, OversizedFrameIsRefused) {
  Pair p = handshake(kKey, kKey);
  ASSERT_TRUE(p.client && p.server);
  std::string error;
  std::vector<uint8_t> big(kMaxMessageBytes + 1, 1);
  EXPECT_FALSE(p.client->send(big, &error));
  // Written by hand: a length just above the bound is refused before anything is read or sized.
  const uint32_t n = kMaxMessageBytes + 1;
  uint8_t header[4] = {static_cast<uint8_t>(n), static_cast<uint8_t>(n >> 8), static_cast<uint8_t>(n >> 16),
                       static_cast<uint8_t>(n >> 24)};
  ASSERT_EQ(::send(p.client->fd(), header, 4, 0), 4);
  std::vector<uint8_t> got;
  EXPECT_EQ(p.server->receive(&got, std::chrono::milliseconds(2000), &error), util::ReadStatus::Error);
  EXPECT_NE(error.find("out of bounds"), std::string::npos) << error;
}

TEST(AgentChannelTest, TamperedTruncatedAndReplayedFramesAreRefused) {
  std::string error;
  std::vector<uint8_t> got;
  {
    Pair p = handshake(kKey, kKey);
    ASSERT_TRUE(p.client && p.server);
    // A frame with a made-up tag.
    std::vector<uint8_t> frame = {3, 0, 0, 0, 5, 1, 2};
    frame.resize(frame.size() + link::kTagBytes, 0xaa);
    ASSERT_EQ(::send(p.client->fd(), frame.data(), frame.size(), 0), static_cast<ssize_t>(frame.size()));
    EXPECT_EQ(p.server->receive(&got, std::chrono::milliseconds(2000), &error), util::ReadStatus::Error);
    EXPECT_NE(error.find("tag"), std::string::npos) << error;
  }
  {
    Pair p = handshake(kKey, kKey);
    ASSERT_TRUE(p.client && p.server);
    // Half a frame, then the peer goes away.
    uint8_t half[] = {100, 0, 0, 0, 1, 2, 3};
    ASSERT_EQ(::send(p.client->fd(), half, sizeof half, 0), static_cast<ssize_t>(sizeof half));
    ::shutdown(p.client->fd(), SHUT_WR);
    EXPECT_EQ(p.server->receive(&got, std::chrono::milliseconds(2000), &error), util::ReadStatus::Error);
  }
  {
    // A frame recorded and sent again: the first copy passes, the replay fails its tag.
    Pair p = handshake(kKey, kKey);
    ASSERT_TRUE(p.client && p.server);
    ASSERT_TRUE(p.client->send(encode(ClockProbe{1}), &error));
    std::vector<uint8_t> raw(4096);
    ssize_t n = ::recv(p.server->fd(), raw.data(), raw.size(), 0);
    ASSERT_GT(n, 0);
    raw.resize(static_cast<size_t>(n));
    ASSERT_EQ(::send(p.client->fd(), raw.data(), raw.size(), 0), n);  // the original
    ASSERT_EQ(::send(p.client->fd(), raw.data(), raw.size(), 0), n);  // the replay
    ASSERT_EQ(p.server->receive(&got, std::chrono::milliseconds(2000), &error), util::ReadStatus::Ok) << error;
    EXPECT_EQ(p.server->receive(&got, std::chrono::milliseconds(2000), &error), util::ReadStatus::Error);
    EXPECT_NE(error.find("tag"), std::string::npos) << error;
  }
}

}  // namespace
}  // namespace nasd::bench::agent
