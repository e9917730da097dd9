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
  EXPECT_STREQ(args->from.name, "old");  // no name was asked for inline here: XDR's, freed by it
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

// As Nfs3Call::decode does for a LOOKUP: the name's length is read from the wire first, and a
// name that fits the storage with its NUL (up to 255 bytes) is decoded into the value itself.
// Longer ones are XDR's as before, and every one decodes to the same string.
TEST(XdrInline, ALookupNameThatFitsDecodesIntoTheValueItself) {
  std::string fh = handle_bytes('h', 30);  // padded to 32 on the wire
  for (size_t length : {size_t{0}, size_t{1}, size_t{254}, size_t{255}, size_t{256}, size_t{1000}}) {
    std::string name(length, 'n');
    for (size_t i = 0; i < length; ++i) name[i] = static_cast<char>('a' + i % 26);
    LOOKUP3args value{};
    value.what.dir.data = {static_cast<u_int>(fh.size()), fh.data()};
    value.what.name = name.data();
    const std::vector<uint8_t> bytes = testing::encode(xdr_LOOKUP3args, value);
    ASSERT_EQ(nfs3::name_length_after_handle(bytes), length);

    xdr::Decoded<LOOKUP3args> args(xdr_LOOKUP3args);
    args.decode_inline(&args->what.dir.data.data_val, NFS3_FHSIZE);
    args.decode_inline_string(nfs3::leading_name_of(*args), *nfs3::name_length_after_handle(bytes));
    ASSERT_TRUE(args.decode(bytes)) << length;
    EXPECT_EQ(std::string(args->what.name), name) << length;
    EXPECT_EQ(inside(args, args->what.name), length <= 255) << length;
    EXPECT_TRUE(args.encodes_back_to(bytes));
  }
}

// The length is read where XDR will read it, or not at all: a handle over NFS3_FHSIZE (XDR
// refuses it before the name) or arguments that end first give nothing, and a name longer
// than the bytes that follow fails to decode without writing past the storage.
TEST(XdrInline, ANameLengthIsOnlyTakenWhereXdrReadsIt) {
  std::vector<uint8_t> long_handle = {0, 0, 0, NFS3_FHSIZE + 4};
  long_handle.resize(4 + NFS3_FHSIZE + 4 + 4, 0);
  EXPECT_EQ(nfs3::name_length_after_handle(long_handle), std::nullopt);
  EXPECT_EQ(nfs3::name_length_after_handle(std::vector<uint8_t>{0, 0, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8}),
            std::nullopt);
  EXPECT_EQ(nfs3::name_length_after_handle(std::vector<uint8_t>{0, 0}), std::nullopt);

  // A handle of 3 bytes, then a name said to be 200 bytes with 2 of them present.
  const std::vector<uint8_t> short_name = {0, 0, 0, 3, 9, 9, 9, 0, 0, 0, 0, 200, 'a', 'b'};
  ASSERT_EQ(nfs3::name_length_after_handle(short_name), 200u);
  xdr::Decoded<LOOKUP3args> args(xdr_LOOKUP3args);
  args.decode_inline(&args->what.dir.data.data_val, NFS3_FHSIZE);
  args.decode_inline_string(nfs3::leading_name_of(*args), 200);
  EXPECT_FALSE(args.decode(short_name));

  // Types without a leading directory name have none to decode inline.
  GETATTR3args getattr{};
  EXPECT_EQ(nfs3::leading_name_of(getattr), nullptr);
}

}  // namespace
}  // namespace nasd::nfs
