// MirrorServer against hand-made connections: the authentication, the bounds of every hello
// and record, and who holds the one primary slot.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "nvram/log_layout.h"
#include "nvram/mirror_protocol.h"
#include "nvram/mirror_server.h"
#include "util/net.h"
#include "nvram/record.h"
#include "tests/nvram/test_util.h"

namespace nasd::nvram {
namespace {

using namespace std::chrono_literals;

const std::vector<uint8_t> kKey(32, 0x5a);

class MirrorServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MirrorServerOptions o;
    o.credentials = {kKey, "b"};
    o.primary = "a";
    o.handshake_timeout = 300ms;
    o.max_log_size = 16 << 20;
    server_ = std::make_unique<MirrorServer>(dir_.file("copy.img"), DurabilityMode::Process, o);
    port_ = server_->listen("127.0.0.1", 0);
    thread_ = std::thread([this] { server_->serve(); });
  }
  void TearDown() override {
    server_->stop();
    thread_.join();
  }

  int dial() {
    std::string error;
    int fd = util::connect_tcp("127.0.0.1", port_, 1s, &error);
    EXPECT_GE(fd, 0) << error;
    return fd;
  }

  // An authenticated primary connection.
  struct Primary {
    int fd = -1;
    link::Session session;
    wire::FrameReader reader;
    ~Primary() {
      if (fd >= 0) ::close(fd);
    }
    void send(std::vector<uint8_t> frame) {
      wire::append_tag(&frame, 0, &session.send);
      ASSERT_TRUE(util::send_all(fd, frame.data(), frame.size()));
    }
    // The next frame from the mirror; false on EOF/timeout.
    bool next(wire::Frame* f) {
      for (int i = 0; i < 50; ++i) {
        auto n = reader.next(f);
        if (n == wire::FrameReader::Next::Frame) return true;
        if (n == wire::FrameReader::Next::Bad) return false;
        if (!util::wait_readable(fd, 100ms)) continue;
        if (!reader.fill(fd)) return false;
      }
      return false;
    }
  };

  std::unique_ptr<Primary> primary(const std::vector<uint8_t>& key = kKey,
                                   const std::string& name = "a") {
    auto p = std::make_unique<Primary>();
    p->fd = dial();
    std::string error;
    auto session = link::authenticate_client(p->fd, link::LinkKind::Mirror, {key, name}, "b", 1s,
                                             &error);
    if (!session) return nullptr;
    p->session = *session;
    p->reader.require_tags(p->session.receive);
    return p;
  }

  std::vector<uint8_t> hello(uint64_t uuid, uint64_t log, uint64_t head, uint64_t tail) {
    std::vector<uint8_t> out;
    wire::append_hello(&out, MirrorHello{uuid, log, head, tail, 1});
    return out;
  }

  // A frame with one record of `payload` bytes at `pos`.
  std::vector<uint8_t> record_frame(uint64_t pos, size_t payload) {
    std::vector<uint8_t> buf(record_footprint(payload));
    std::vector<uint8_t> data(payload, 0xab);
    std::span<const uint8_t> part(data);
    encode_record(buf.data(), RecordKey{pos, 1, 1, 1, RecordType::Call}, {&part, 1});
    RecordView view;
    EXPECT_EQ(decode_record(buf.data(), buf.size(), pos, &view), DecodeResult::Ok);
    std::vector<uint8_t> out;
    wire::append_records(&out, {&view, 1});
    return out;
  }

  // The mirror answers an authenticated hello, so it is up and holding the slot for it.
  void expect_hello_ack(Primary& p, uint64_t want) {
    wire::Frame f;
    ASSERT_TRUE(p.next(&f));
    ASSERT_EQ(f.type, wire::FrameType::HelloAck);
    uint64_t resume = 0;
    ASSERT_TRUE(wire::parse_u64(f, &resume));
    EXPECT_EQ(resume, want);
  }

  testing::ScratchDir dir_;
  std::unique_ptr<MirrorServer> server_;
  uint16_t port_ = 0;
  std::thread thread_;
};

TEST_F(MirrorServerTest, AHugeHelloIsRefusedAndTheServerLives) {
  auto p = primary();
  ASSERT_TRUE(p);
  p->send(hello(1, uint64_t{1} << 62, 0, 0));
  wire::Frame f;
  ASSERT_TRUE(p->next(&f));
  EXPECT_EQ(f.type, wire::FrameType::Error);
  EXPECT_FALSE(p->next(&f));  // and closed
  auto again = primary();
  ASSERT_TRUE(again);
  again->send(hello(1, 1 << 20, 0, 0));
  expect_hello_ack(*again, 0);
}

TEST_F(MirrorServerTest, ARecordAtTheTailThatDoesNotFitInTheLapIsRefused) {
  auto p = primary();
  ASSERT_TRUE(p);
  const uint64_t log = 8192;
  p->send(hello(2, log, log - 8, log - 8));
  expect_hello_ack(*p, log - 8);
  p->send(record_frame(log - 8, 200));  // would run 200 bytes past the end of the log area
  wire::Frame f;
  ASSERT_TRUE(p->next(&f));
  EXPECT_EQ(f.type, wire::FrameType::Error);
  EXPECT_NE(std::string(f.body.begin(), f.body.end()).find("expected a record"), std::string::npos);
  EXPECT_EQ(server_->tail(), log - 8);
  // Where the journal would put it (the next lap) is fine.
  auto q = primary();
  ASSERT_TRUE(q);
  q->send(hello(2, log, log - 8, log - 8));
  expect_hello_ack(*q, log - 8);
  q->send(record_frame(log, 200));
  ASSERT_TRUE(q->next(&f));
  EXPECT_EQ(f.type, wire::FrameType::Ack);
  EXPECT_EQ(server_->tail(), log + record_footprint(200));
}

// A kill -9 may come between any two stores to the image's header, so every stored state must
// be one the node can open again at its restart (head <= tail). The fault drill found a node that
// could not restart: a trim past what the mirror had acknowledged had stored head > tail.
TEST_F(MirrorServerTest, ATrimPastTheStoredTailLeavesAnImageThatOpens) {
  auto p = primary();
  ASSERT_TRUE(p);
  const uint64_t log = 8192;
  p->send(hello(3, log, 0, 0));
  expect_hello_ack(*p, 0);
  p->send(record_frame(0, 200));
  wire::Frame f;
  ASSERT_TRUE(p->next(&f));
  ASSERT_EQ(f.type, wire::FrameType::Ack);
  std::vector<uint8_t> trim;
  wire::append_u64_frame(&trim, wire::FrameType::Trim, 3 * log + 512);  // far past the tail
  p->send(trim);
  for (int i = 0; i < 50 && server_->tail() < 3 * log + 512; ++i) std::this_thread::sleep_for(10ms);
  // The header as a restart would find it now (the process "killed" right here).
  auto image = Region::open_read_only(dir_.file("copy.img"));
  const RegionHeader* h = image->header();
  EXPECT_LE(h->head, h->tail);
  EXPECT_LE(h->tail - h->head, h->log_size);
  EXPECT_EQ(h->head, 3 * log + 512);
}

// Positions a primary names are bounded only by 2^62. Walking the image's header there one lap
// at a time (so each stored state opens again) took 2^50 steps for a trim the fuzzer made up:
// the mirror spun for 20 minutes. A position that far is a fresh start, done at once. The
// frames run in a child that an alarm ends, so a regression fails here instead of hanging; its
// exit code names the first step that went wrong.
[[noreturn]] void take_far_positions(const std::string& path) {
  ::alarm(10);
  MirrorServerOptions o;
  o.credentials = {kKey, "b"};
  MirrorServer server(path, DurabilityMode::Process, o);
  const uint64_t log = 8192;
  bool greeted = false, got = false;
  std::vector<uint8_t> frames, reply;
  auto step = [&](const std::vector<uint8_t>& bytes) {
    wire::FrameReader reader;
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) std::exit(2);
    if (!util::send_all(fds[0], bytes.data(), bytes.size())) std::exit(3);
    ::close(fds[0]);
    if (!reader.fill(fds[1])) std::exit(4);
    ::close(fds[1]);
    wire::Frame f;
    if (reader.next(&f) != wire::FrameReader::Next::Frame) std::exit(5);
    reply.clear();
    return server.on_frame(f, &greeted, &got, &reply);
  };
  wire::append_hello(&frames, MirrorHello{9, log, 0, 0, 1});
  if (!step(frames).empty()) std::exit(6);
  const uint64_t far = uint64_t{1} << 61;
  frames.clear();
  wire::append_u64_frame(&frames, wire::FrameType::Trim, far);
  if (!step(frames).empty()) std::exit(7);
  if (server.tail() != far) std::exit(8);
  // A trim past any position is refused, not walked.
  frames.clear();
  wire::append_u64_frame(&frames, wire::FrameType::Trim, ~uint64_t{0});
  if (step(frames).empty()) std::exit(9);
  // The same primary, back after a long time far ahead: nothing held is wanted.
  frames.clear();
  wire::append_hello(&frames, MirrorHello{9, log, far * 2, far * 2, 2});
  if (!step(frames).empty() || server.tail() != far * 2) std::exit(10);
  auto image = Region::open_read_only(path);
  const RegionHeader* h = image->header();
  if (h->head != far * 2 || h->tail != far * 2) std::exit(11);
  std::exit(0);
}

TEST(MirrorServerPositions, AFarTrimOrHelloIsTakenAtOnceAndLeavesAnImageThatOpens) {
  testing::ScratchDir dir;
  const std::string path = dir.file("far.img");
  EXPECT_EXIT(take_far_positions(path), ::testing::ExitedWithCode(0), "");
}

TEST_F(MirrorServerTest, AnIdleConnectionNeitherHoldsThePortNorLocksThePrimaryOut) {
  int idle = dial();
  auto p = primary();
  ASSERT_TRUE(p) << "an idle connection kept the primary out";
  p->send(hello(3, 1 << 20, 0, 0));
  expect_hello_ack(*p, 0);
  // The idle one is closed once its handshake time is up.
  ASSERT_TRUE(util::wait_readable(idle, 3s));
  char byte;
  EXPECT_EQ(::recv(idle, &byte, 1, 0), 0);
  ::close(idle);
  EXPECT_GE(server_->refused(), 1u);
}

// Silent connections from another address fill that address's handshake slots only: before,
// 8 shared slots let any host keep the primary from reconnecting.
TEST_F(MirrorServerTest, ASilentFloodFromAnotherAddressDoesNotKeepThePrimaryOut) {
  std::vector<int> flood;
  std::string error;
  for (int i = 0; i < 40; ++i) {
    int fd = util::connect_tcp("127.0.0.1", port_, 1s, &error, "127.0.0.2");
    if (fd >= 0) flood.push_back(fd);
  }
  ASSERT_FALSE(flood.empty()) << error;
  std::this_thread::sleep_for(100ms);
  auto p = primary();
  ASSERT_TRUE(p) << "the flood's handshakes kept the primary out";
  p->send(hello(5, 1 << 20, 0, 0));
  expect_hello_ack(*p, 0);
  EXPECT_GE(server_->refused(), 1u);
  for (int fd : flood) ::close(fd);
}

TEST_F(MirrorServerTest, AnAuthenticatedNewConnectionReplacesTheOldOne) {
  auto old_link = primary();
  ASSERT_TRUE(old_link);
  old_link->send(hello(4, 1 << 20, 0, 0));
  expect_hello_ack(*old_link, 0);
  auto new_link = primary();
  ASSERT_TRUE(new_link);
  new_link->send(hello(4, 1 << 20, 0, 0));
  expect_hello_ack(*new_link, 0);
  wire::Frame f;
  EXPECT_FALSE(old_link->next(&f));  // dropped
}

TEST_F(MirrorServerTest, AWrongKeyOrAStrangerIsClosedAndChangesNothing) {
  auto p = primary();
  ASSERT_TRUE(p);
  p->send(hello(5, 1 << 20, 0, 0));
  expect_hello_ack(*p, 0);
  p->send(record_frame(0, 100));
  wire::Frame f;
  ASSERT_TRUE(p->next(&f));
  ASSERT_EQ(f.type, wire::FrameType::Ack);
  const uint64_t tail = server_->tail();
  EXPECT_FALSE(primary(std::vector<uint8_t>(32, 0x33)));  // wrong key: the proof fails
  // The right key under another name than the partner's: closed after its proof.
  auto stranger = primary(kKey, "c");
  if (stranger) {
    stranger->send(hello(6, 1 << 20, 0, 0));
    EXPECT_FALSE(stranger->next(&f));
  }
  // Untagged bytes on a raw connection: closed without a word.
  int raw = dial();
  std::vector<uint8_t> forged = hello(7, 1 << 20, 0, 0);
  util::send_all(raw, forged.data(), forged.size());
  ASSERT_TRUE(util::wait_readable(raw, 3s));
  char byte;
  EXPECT_EQ(::recv(raw, &byte, 1, 0), 0);
  ::close(raw);
  EXPECT_EQ(server_->tail(), tail);
  // The real primary's link is still the one served.
  p->send(record_frame(tail, 100));
  ASSERT_TRUE(p->next(&f));
  EXPECT_EQ(f.type, wire::FrameType::Ack);
}

TEST_F(MirrorServerTest, AFrameWithABadTagEndsTheConnection) {
  auto p = primary();
  ASSERT_TRUE(p);
  p->send(hello(8, 1 << 20, 0, 0));
  expect_hello_ack(*p, 0);
  std::vector<uint8_t> frame = record_frame(0, 100);
  frame.insert(frame.end(), link::kTagBytes, 0);  // a made-up tag
  ASSERT_TRUE(util::send_all(p->fd, frame.data(), frame.size()));
  wire::Frame f;
  ASSERT_TRUE(p->next(&f));
  EXPECT_EQ(f.type, wire::FrameType::Error);
  EXPECT_EQ(server_->tail(), 0u);
}

}  // namespace
}  // namespace nasd::nvram
