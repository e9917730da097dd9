#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "server/nfs/handle/handle_codec.h"
#include "server/nfs/handle/handle_key.h"

namespace nasd::nfs {
namespace {

HandleCodec codec_with(uint8_t fill) { return HandleCodec(std::vector<uint8_t>(32, fill)); }

TEST(HandleCodec, RoundTripsVolumeInodeAndGeneration) {
  HandleCodec codec = codec_with(1);
  FileHandle fh = codec.encode(0xdeadbeef, {0x0123456789abcdefull, 77});
  HandleTarget t;
  ASSERT_EQ(codec.decode(fh.bytes, &t), fs::Status::Ok);
  EXPECT_EQ(t.volume_id, 0xdeadbeefu);
  EXPECT_EQ(t.inode.ino, 0x0123456789abcdefull);
  EXPECT_EQ(t.inode.gen, 77u);
}

TEST(HandleCodec, DistinctInodesGiveDistinctHandles) {
  HandleCodec codec = codec_with(1);
  EXPECT_NE(codec.encode(1, {5, 1}).bytes, codec.encode(1, {5, 2}).bytes);
  EXPECT_NE(codec.encode(1, {5, 1}).bytes, codec.encode(2, {5, 1}).bytes);
}

TEST(HandleCodec, RejectsAnyChangedByteAsForged) {
  HandleCodec codec = codec_with(1);
  const FileHandle good = codec.encode(3, {1000, 4});
  for (size_t i = 0; i < FileHandle::kSize; i++) {
    FileHandle bad = good;
    bad.bytes[i] ^= 0x01;
    HandleTarget t;
    EXPECT_EQ(codec.decode(bad.bytes, &t), fs::Status::BadHandle) << "byte " << i;
  }
}

TEST(HandleCodec, RejectsHandlesMadeWithAnotherKey) {
  FileHandle fh = codec_with(1).encode(3, {1000, 4});
  HandleTarget t;
  EXPECT_EQ(codec_with(2).decode(fh.bytes, &t), fs::Status::BadHandle);
}

TEST(HandleCodec, RejectsWrongLength) {
  HandleCodec codec = codec_with(1);
  FileHandle fh = codec.encode(3, {1000, 4});
  HandleTarget t;
  EXPECT_EQ(codec.decode(std::span(fh.bytes).first(31), &t), fs::Status::BadHandle);
  std::vector<uint8_t> longer(fh.bytes.begin(), fh.bytes.end());
  longer.push_back(0);
  EXPECT_EQ(codec.decode(longer, &t), fs::Status::BadHandle);
  EXPECT_EQ(codec.decode({}, &t), fs::Status::BadHandle);
}

TEST(HandleCodec, RefusesShortKeys) {
  EXPECT_THROW(HandleCodec(std::vector<uint8_t>(8, 1)), std::invalid_argument);
}

class HandleKeyFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("nasd-handle-key-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(HandleKeyFile, CreatesPrivateKeyOnceAndReloadsIt) {
  const std::string path = dir_ / "handle.key";
  std::vector<uint8_t> first = load_or_create_handle_key(path);
  EXPECT_EQ(first.size(), kHandleKeyBytes);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(load_or_create_handle_key(path), first);

  // Handles made before a "restart" still decode after it.
  FileHandle fh = HandleCodec::from_key_file(path)->encode(1, {2, 3});
  HandleTarget t;
  EXPECT_EQ(HandleCodec::from_key_file(path)->decode(fh.bytes, &t), fs::Status::Ok);
}

TEST_F(HandleKeyFile, RefusesTruncatedKeyFile) {
  const std::string path = dir_ / "handle.key";
  std::ofstream(path) << "short";
  EXPECT_THROW(load_or_create_handle_key(path), std::runtime_error);
}

TEST_F(HandleKeyFile, ReportsUnwritableLocation) {
  EXPECT_THROW(load_or_create_handle_key((dir_ / "missing-dir" / "handle.key").string()),
               std::runtime_error);
}

}  // namespace
}  // namespace nasd::nfs
