// FrameReader's blocking half waits inside recv() (SO_RCVTIMEO) rather than in a poll() before
// it. The waits must still mean what they did: a silent peer is a Timeout after the idle
// timeout and the stream stays usable; a peer that stops mid-frame is an Error after the stall
// timeout; "forever" waits past any short timeout set before; and a descriptor handed over in
// non-blocking mode still waits instead of timing out at once.
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "cluster/interconnect/frame.h"
#include "cluster/interconnect/frame_stream.h"
#include "tests/cluster/socket_pair.h"

namespace nasd::interconnect {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::SocketPair;

std::vector<uint8_t> frame_bytes(uint64_t id, size_t payload_size) {
  std::vector<uint8_t> payload(payload_size, static_cast<uint8_t>(id));
  const auto head = encode_frame_header(MessageType::Reply, id, payload);
  std::vector<uint8_t> out(head.size() + payload.size());
  std::copy(head.begin(), head.end(), out.begin());
  std::copy(payload.begin(), payload.end(), out.begin() + static_cast<ptrdiff_t>(head.size()));
  return out;
}

void write_all(int fd, const std::vector<uint8_t>& bytes, size_t from = 0,
               size_t to = SIZE_MAX) {
  to = std::min(to, bytes.size());
  ASSERT_EQ(::write(fd, bytes.data() + from, to - from), static_cast<ssize_t>(to - from));
}

// Reads one frame with `limits` while another thread writes frame `id` to `writer` only after
// `delay`: the read must have waited for it.
void expect_late_frame_read(FrameReader& reader, const FrameLimits& limits, int writer,
                            uint64_t id, std::chrono::milliseconds delay) {
  std::thread late([&] {
    std::this_thread::sleep_for(delay);
    write_all(writer, frame_bytes(id, 10));
  });
  Frame f;
  std::string error;
  const ReadStatus st = reader.read(limits, &f, &error);
  late.join();
  ASSERT_EQ(st, ReadStatus::Ok) << error;
  EXPECT_EQ(f.header.request_id, id);
}

// One read that must end with `expected` after about 100 ms (the timeout under test), well
// before any other timeout of the test (seconds). Returns the reader's error text.
std::string expect_read_ends_after_100ms(FrameReader& reader, const FrameLimits& limits,
                                         ReadStatus expected) {
  Frame f;
  std::string error;
  const auto t0 = Clock::now();
  EXPECT_EQ(reader.read(limits, &f, &error), expected);
  const auto waited = Clock::now() - t0;
  EXPECT_GE(waited, 80ms);
  EXPECT_LT(waited, 3s);
  return error;
}

TEST(FrameReaderWaits, ASilentPeerTimesOutAfterTheIdleTimeoutAndTheStreamGoesOn) {
  SocketPair sp;
  FrameReader reader(sp.reader);
  FrameLimits limits;
  limits.idle_timeout = 100ms;
  expect_read_ends_after_100ms(reader, limits, ReadStatus::Timeout);
  write_all(sp.writer, frame_bytes(7, 100));
  Frame f;
  std::string error;
  ASSERT_EQ(reader.read(limits, &f, &error), ReadStatus::Ok) << error;
  EXPECT_EQ(f.header.request_id, 7u);
  EXPECT_EQ(f.payload.size(), 100u);
}

TEST(FrameReaderWaits, APeerThatStopsMidFrameIsAnErrorAfterTheStallTimeout) {
  SocketPair sp;
  FrameReader reader(sp.reader);
  FrameLimits limits;
  limits.idle_timeout = 5s;
  limits.stall_timeout = 100ms;
  write_all(sp.writer, frame_bytes(1, 500), 0, 200);  // the header and part of the payload
  // After the stall timeout, not the idle one (5 s).
  const std::string error = expect_read_ends_after_100ms(reader, limits, ReadStatus::Error);
  EXPECT_NE(error.find("stalled"), std::string::npos) << error;
}

TEST(FrameReaderWaits, AWaitForeverOutlastsTheShortTimeoutSetBefore) {
  SocketPair sp;
  FrameReader reader(sp.reader);
  FrameLimits short_wait;
  short_wait.idle_timeout = 50ms;
  Frame f;
  std::string error;
  ASSERT_EQ(reader.read(short_wait, &f, &error), ReadStatus::Timeout);
  FrameLimits forever;  // idle_timeout negative: wait as long as it takes
  expect_late_frame_read(reader, forever, sp.writer, 9, 300ms);
}

TEST(FrameReaderWaits, ANonBlockingDescriptorStillWaits) {
  SocketPair sp;
  ASSERT_EQ(::fcntl(sp.reader, F_SETFL, ::fcntl(sp.reader, F_GETFL) | O_NONBLOCK), 0);
  FrameReader reader(sp.reader);
  FrameLimits limits;
  limits.idle_timeout = 5s;
  expect_late_frame_read(reader, limits, sp.writer, 3, 200ms);
}

TEST(FrameReaderWaits, APeerThatClosesBetweenFramesIsEndOfFile) {
  SocketPair sp;
  FrameReader reader(sp.reader);
  write_all(sp.writer, frame_bytes(4, 10));
  ::shutdown(sp.writer, SHUT_WR);
  FrameLimits limits;
  limits.idle_timeout = 5s;
  Frame f;
  std::string error;
  ASSERT_EQ(reader.read(limits, &f, &error), ReadStatus::Ok) << error;
  EXPECT_EQ(reader.read(limits, &f, &error), ReadStatus::Eof);
}

}  // namespace
}  // namespace nasd::interconnect
