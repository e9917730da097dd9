// FrameReader's non-blocking half (receive_available + next_buffered), for an owner that must
// never wait: fed a sealed stream in random chunkings through a live socket, it never blocks,
// returns exactly the frames the blocking reader returns, and bounds what it buffers by the
// frame limit before allocating.
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <vector>

#include "cluster/interconnect/frame.h"
#include "cluster/interconnect/frame_stream.h"
#include "tests/cluster/socket_pair.h"
#include "util/link_seal.h"

namespace nasd::interconnect {
namespace {

using namespace std::chrono_literals;
using testing::SocketPair;

const link::DirectionKey kKey = [] {
  link::DirectionKey k{};
  for (size_t i = 0; i < k.size(); ++i) k[i] = static_cast<uint8_t>(i * 7 + 1);
  return k;
}();

// `count` sealed frames with payloads of random sizes (some empty, some past kBufferBytes).
std::vector<uint8_t> sealed_stream(std::mt19937& rng, size_t count, std::vector<Frame>* sent) {
  link::FrameSealer sealer(kKey);
  std::vector<uint8_t> stream;
  for (size_t i = 0; i < count; ++i) {
    Frame f;
    const uint32_t size = rng() % 8 == 0 ? 300 * 1024 + rng() % 1000 : rng() % 3000;
    f.payload.resize(size);
    for (auto& b : f.payload) b = static_cast<uint8_t>(rng());
    const auto head = encode_frame_header(MessageType::Reply, 1000 + i, f.payload);
    std::string error;
    EXPECT_TRUE(parse_frame_header(head, kDefaultMaxFramePayload, &f.header, &error));
    const link::Tag tag = sealer.seal({head, f.payload});
    stream.insert(stream.end(), head.begin(), head.end());
    stream.insert(stream.end(), f.payload.begin(), f.payload.end());
    stream.insert(stream.end(), tag.begin(), tag.end());
    sent->push_back(std::move(f));
  }
  return stream;
}

TEST(FrameReaderNonBlocking, RandomChunkingsGiveEveryFrameAndNeverWait) {
  std::mt19937 rng(1234);
  for (int round = 0; round < 20; ++round) {
    std::vector<Frame> sent;
    const std::vector<uint8_t> stream = sealed_stream(rng, 12, &sent);
    SocketPair sp;
    FrameReader reader(sp.reader);
    link::FrameOpener opener(kKey);
    FrameLimits limits;
    std::vector<Frame> got;
    size_t off = 0;
    bool eof = false;
    for (int step = 0; step < 100000 && !eof; ++step) {
      if (off < stream.size()) {
        // A chunk of 1 byte to 64 KiB, or none (the reader must answer "nothing" at once).
        const size_t chunk = rng() % 4 == 0 ? 0 : 1 + rng() % (rng() % 2 ? 64 : 65536);
        const size_t n = std::min(chunk, stream.size() - off);
        if (n > 0) {
          const ssize_t w = ::send(sp.writer, stream.data() + off, n, MSG_DONTWAIT);
          if (w > 0) off += static_cast<size_t>(w);
        }
        if (off == stream.size()) sp.close_writer();
      }
      std::string error;
      const auto t0 = std::chrono::steady_clock::now();
      const ReadStatus st = reader.receive_available(limits, /*sealed=*/true, &error);
      ASSERT_LT(std::chrono::steady_clock::now() - t0, 1s) << "receive_available waited";
      ASSERT_NE(st, ReadStatus::Error) << error;
      if (st == ReadStatus::Eof) eof = true;
      for (;;) {
        Frame f;
        const ReadStatus fs = reader.next_buffered(limits, &f, &error, &opener);
        ASSERT_NE(fs, ReadStatus::Error) << error;
        if (fs != ReadStatus::Ok) break;
        got.push_back(std::move(f));
      }
      if (st == ReadStatus::Ok || off < stream.size()) continue;
      // Everything is sent and nothing came: the next call sees the end of the stream.
    }
    ASSERT_TRUE(eof) << "round " << round;
    EXPECT_FALSE(reader.mid_frame());
    ASSERT_EQ(got.size(), sent.size()) << "round " << round;
    for (size_t i = 0; i < sent.size(); ++i) {
      EXPECT_EQ(got[i].header.request_id, sent[i].header.request_id);
      EXPECT_EQ(got[i].payload, sent[i].payload) << "frame " << i;
    }
  }
}

TEST(FrameReaderNonBlocking, AnOversizedHeaderIsAnErrorBeforeAnythingIsAllocatedForIt) {
  SocketPair sp;
  std::vector<uint8_t> payload(100, 1);
  auto head = encode_frame_header(MessageType::Reply, 1, payload);
  ASSERT_EQ(::send(sp.writer, head.data(), head.size(), 0), static_cast<ssize_t>(head.size()));
  FrameReader reader(sp.reader);
  FrameLimits limits;
  limits.max_payload = 99;  // one byte short
  std::string error;
  ASSERT_EQ(reader.receive_available(limits, true, &error), ReadStatus::Ok);
  Frame f;
  EXPECT_EQ(reader.next_buffered(limits, &f, &error), ReadStatus::Error);
  EXPECT_EQ(reader.receive_available(limits, true, &error), ReadStatus::Error);
}

TEST(FrameReaderNonBlocking, AStreamCutMidFrameIsAnErrorAndAnEmptyOneEof) {
  {
    SocketPair sp;
    FrameReader reader(sp.reader);
    std::string error;
    EXPECT_EQ(reader.receive_available({}, true, &error), ReadStatus::Timeout);  // open, silent
    sp.close_writer();
    EXPECT_EQ(reader.receive_available({}, true, &error), ReadStatus::Eof);
  }
  {
    SocketPair sp;
    std::vector<uint8_t> payload(100, 1);
    auto head = encode_frame_header(MessageType::Reply, 1, payload);
    ASSERT_EQ(::send(sp.writer, head.data(), head.size(), 0), static_cast<ssize_t>(head.size()));
    sp.close_writer();
    FrameReader reader(sp.reader);
    std::string error;
    ASSERT_EQ(reader.receive_available({}, true, &error), ReadStatus::Ok);
    EXPECT_TRUE(reader.mid_frame());
    Frame f;
    EXPECT_EQ(reader.next_buffered({}, &f, &error), ReadStatus::Timeout);
    EXPECT_EQ(reader.receive_available({}, true, &error), ReadStatus::Error);
  }
}

}  // namespace
}  // namespace nasd::interconnect
