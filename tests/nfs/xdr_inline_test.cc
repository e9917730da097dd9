// Handles decoded into the decoded value's own storage (xdr::Decoded::decode_inline), as
// Nfs3Call::decode does for every argument type with handles: the bytes are right, nothing is
// allocated for them, the bound is still XDR's, and the destructor frees only what XDR made.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "server/nfs/nfs3/nfs3_call.h"
#include "tests/nfs/xdr_encode.h"

namespace nasd::nfs {
namespace {

template <typename T>
bool inside(const xdr::Decoded<T>& d, const void* p) {
  const char* begin = reinterpret_cast<const char*>(&d);
  return p >= begin && p < begin + sizeof d;
}

std::string handle_bytes(char seed, size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(seed + i);
  return s;
}

TEST(XdrInline, BothHandlesOfARenameDecodeIntoTheValueItself) {
  std::string from = handle_bytes('a', NFS3_FHSIZE), to = handle_bytes('A', 28);
  char from_name[] = "old", to_name[] = "new";
  RENAME3args value{};
  value.from.dir.data = {static_cast<u_int>(from.size()), from.data()};
  value.from.name = from_name;
  value.to.dir.data = {static_cast<u_int>(to.size()), to.data()};
  value.to.name = to_name;
  const std::vector<uint8_t> bytes = testing::encode(xdr_RENAME3args, value);

  xdr::Decoded<RENAME3args> args(xdr_RENAME3args);
  for (nfs_fh3* fh : nfs3::handles_of(*args)) args.decode_inline(&fh->data.data_val, NFS3_FHSIZE);
  ASSERT_TRUE(args.decode(bytes));
  EXPECT_TRUE(inside(args, args->from.dir.data.data_val));
  EXPECT_TRUE(inside(args, args->to.dir.data.data_val));
  EXPECT_EQ(std::string(args->from.dir.data.data_val, args->from.dir.data.data_len), from);
  EXPECT_EQ(std::string(args->to.dir.data.data_val, args->to.dir.data.data_len), to);
  EXPECT_STREQ(args->from.name, "old");  // names are still XDR's (unbounded): freed by it
  EXPECT_FALSE(inside(args, args->from.name));
}

// A handle one byte over NFS3_FHSIZE is refused before a byte is written (the storage holds
// exactly NFS3_FHSIZE), and an empty one decodes.
TEST(XdrInline, TheBoundIsStillXdrs) {
  std::vector<uint8_t> over = {0, 0, 0, NFS3_FHSIZE + 1};
  over.resize(over.size() + NFS3_FHSIZE + 4, 0x5a);
  xdr::Decoded<GETATTR3args> too_long(xdr_GETATTR3args);
  too_long.decode_inline(&too_long->object.data.data_val, NFS3_FHSIZE);
  EXPECT_FALSE(too_long.decode(over));

  const std::vector<uint8_t> empty = {0, 0, 0, 0};
  xdr::Decoded<GETATTR3args> none(xdr_GETATTR3args);
  none.decode_inline(&none->object.data.data_val, NFS3_FHSIZE);
  ASSERT_TRUE(none.decode(empty));
  EXPECT_EQ(none->object.data.data_len, 0u);
}

// A field whose bound exceeds the storage, or one more than the storage has room for, is left
// to XDR's allocation.
TEST(XdrInline, AFieldTheStorageCannotHoldIsLeftToXdr) {
  xdr::Decoded<GETATTR3args> args(xdr_GETATTR3args);
  args.decode_inline(&args->object.data.data_val, xdr::Decoded<GETATTR3args>::kInlineBytes + 1);
  EXPECT_EQ(args->object.data.data_val, nullptr);
  std::string fh = handle_bytes('x', 32);
  GETATTR3args value{};
  value.object.data = {static_cast<u_int>(fh.size()), fh.data()};
  ASSERT_TRUE(args.decode(testing::encode(xdr_GETATTR3args, value)));
  EXPECT_FALSE(inside(args, args->object.data.data_val));
  EXPECT_EQ(std::string(args->object.data.data_val, args->object.data.data_len), fh);
}

}  // namespace
}  // namespace nasd::nfs
