#include "util/byte_io.h"

#include <gtest/gtest.h>

namespace nasd::util {
namespace {

TEST(ByteIo, RoundTripsIntegersLittleEndian) {
  ByteWriter w;
  w.u8(0xab);
  w.u16(0x1234);
  w.u32(0xdeadbeef);
  w.u64(0x0102030405060708ull);
  w.i64(-5);
  w.boolean(true);
  std::vector<uint8_t> b = w.take();
  ASSERT_EQ(b.size(), 1u + 2 + 4 + 8 + 8 + 1);
  EXPECT_EQ(b[1], 0x34);  // low byte first
  EXPECT_EQ(b[2], 0x12);
  EXPECT_EQ(b[3], 0xef);

  ByteReader r(b);
  uint8_t a;
  uint16_t c;
  uint32_t d;
  uint64_t e;
  int64_t f;
  bool g;
  ASSERT_TRUE(r.u8(&a) && r.u16(&c) && r.u32(&d) && r.u64(&e) && r.i64(&f) && r.boolean(&g));
  EXPECT_EQ(a, 0xab);
  EXPECT_EQ(c, 0x1234);
  EXPECT_EQ(d, 0xdeadbeefu);
  EXPECT_EQ(e, 0x0102030405060708ull);
  EXPECT_EQ(f, -5);
  EXPECT_TRUE(g);
  EXPECT_TRUE(r.expect_end());
}

TEST(ByteIo, TruncationIsAStickyError) {
  std::vector<uint8_t> b = {1, 2, 3};
  ByteReader r(b);
  uint32_t v = 99;
  EXPECT_FALSE(r.u32(&v));
  EXPECT_EQ(v, 99u);
  uint8_t x;
  EXPECT_FALSE(r.u8(&x));  // stays failed even though a byte is available
  EXPECT_NE(r.error().find("truncated"), std::string::npos);
}

TEST(ByteIo, LengthOverLimitIsRejectedBeforeReading) {
  ByteWriter w;
  w.u32(0xffffffff);  // claims 4 GiB
  std::vector<uint8_t> b = w.take();
  ByteReader r(b);
  std::string_view s;
  EXPECT_FALSE(r.string(&s, 100));
  EXPECT_NE(r.error().find("exceeds limit"), std::string::npos);
}

TEST(ByteIo, StringWithinLimitAndTrailingBytes) {
  ByteWriter w;
  w.string("hello");
  w.u8(7);
  std::vector<uint8_t> b = w.take();
  ByteReader r(b);
  std::string_view s;
  ASSERT_TRUE(r.string(&s, 5));
  EXPECT_EQ(s, "hello");
  EXPECT_FALSE(r.expect_end());
}

TEST(ByteIo, BooleanOtherThanZeroOrOneIsMalformed) {
  std::vector<uint8_t> b = {2};
  ByteReader r(b);
  bool v;
  EXPECT_FALSE(r.boolean(&v));
}

TEST(ByteIo, RawBytesAreBoundedByWhatIsLeft) {
  ByteWriter w;
  const uint8_t payload[] = {9, 8, 7};
  w.raw(payload);
  w.u8(1);
  std::vector<uint8_t> b = w.take();
  ASSERT_EQ(b.size(), 4u);
  ByteReader r(b);
  std::span<const uint8_t> got;
  ASSERT_TRUE(r.raw(3, &got));
  EXPECT_EQ(got[0], 9);
  EXPECT_EQ(r.position(), 3u);
  EXPECT_FALSE(r.raw(2, &got));  // one byte left
  EXPECT_NE(r.error().find("truncated"), std::string::npos) << r.error();
}

}  // namespace
}  // namespace nasd::util
