#include "cluster/interconnect/frame.h"

#include <gtest/gtest.h>

#include "cluster/interconnect/hello.h"

namespace nasd::interconnect {
namespace {

std::span<const uint8_t, kFrameHeaderBytes> header_of(const std::vector<uint8_t>& f) {
  return std::span<const uint8_t, kFrameHeaderBytes>(f.data(), kFrameHeaderBytes);
}

TEST(Frame, EncodesAndParses) {
  std::vector<uint8_t> payload = {1, 2, 3, 4, 5};
  auto f = encode_frame(MessageType::VolumeCall, 0x1122334455667788ull, payload);
  ASSERT_EQ(f.size(), kFrameHeaderBytes + payload.size());
  FrameHeader h;
  std::string error;
  ASSERT_TRUE(parse_frame_header(header_of(f), 1024, &h, &error)) << error;
  EXPECT_EQ(h.type, MessageType::VolumeCall);
  EXPECT_EQ(h.request_id, 0x1122334455667788ull);
  EXPECT_EQ(h.version, kProtocolVersion);
  EXPECT_EQ(h.length, 5u);
  EXPECT_TRUE(frame_crc_ok(h, {f.data() + kFrameHeaderBytes, 5}));
}

TEST(Frame, CrcCatchesPayloadAndHeaderCorruption) {
  std::vector<uint8_t> payload(100, 0x5a);
  auto f = encode_frame(MessageType::Reply, 7, payload);
  FrameHeader h;
  std::string error;
  ASSERT_TRUE(parse_frame_header(header_of(f), 1024, &h, &error));
  payload[50] ^= 1;
  EXPECT_FALSE(frame_crc_ok(h, payload));
  payload[50] ^= 1;
  EXPECT_TRUE(frame_crc_ok(h, payload));
  h.request_id = 8;  // a reply matched to the wrong request would be worse than a drop
  EXPECT_FALSE(frame_crc_ok(h, payload));
}

TEST(Frame, RejectsBadMagicAndOversizedLength) {
  auto f = encode_frame(MessageType::Reply, 1, std::vector<uint8_t>(2000));
  FrameHeader h;
  std::string error;
  EXPECT_FALSE(parse_frame_header(header_of(f), 1024, &h, &error));
  EXPECT_NE(error.find("exceeds"), std::string::npos);
  f[0] ^= 0xff;
  EXPECT_FALSE(parse_frame_header(header_of(f), 4096, &h, &error));
  EXPECT_NE(error.find("magic"), std::string::npos);
}

TEST(Frame, Crc32cKnownValue) {
  // RFC 3720 B.4 test vector: 32 bytes of zeros.
  std::vector<uint8_t> zeros(32, 0);
  EXPECT_EQ(crc32c(zeros), 0x8A9136AAu);
}

TEST(Hello, RoundTripAndMismatchReasons) {
  Hello a{kProtocolVersion, "prod", "node-a"};
  Hello got;
  std::string error;
  ASSERT_TRUE(decode_hello(encode_hello(a), &got, &error)) << error;
  EXPECT_EQ(got.cluster_name, "prod");
  EXPECT_EQ(got.node_name, "node-a");

  Hello b{kProtocolVersion, "prod", "node-b"};
  EXPECT_EQ(hello_mismatch(a, b), "");
  EXPECT_NE(hello_mismatch(a, b, "node-c").find("expected to reach node 'node-c'"),
            std::string::npos);
  Hello other{kProtocolVersion, "test", "node-b"};
  EXPECT_NE(hello_mismatch(a, other).find("cluster name mismatch"), std::string::npos);
  Hello future{kProtocolVersion + 1, "prod", "node-b"};
  EXPECT_NE(hello_mismatch(a, future).find("protocol version"), std::string::npos);
  EXPECT_NE(hello_mismatch(a, a).find("own name"), std::string::npos);
}

}  // namespace
}  // namespace nasd::interconnect
