#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "server/nfs/nfs_programs.h"
#include "tests/support/memory_fs.h"
#include "tests/support/memory_resolver.h"

namespace nasd::nfs {
namespace {

class NfsProgramsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("nasd-nfs-programs-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / "data");
    std::ofstream(dir_ / "nasd.conf") << "[node]\ndata_dir = data\nhandle_key = handle.key\n"
                                         "[volume v0]\nid = 0\n"
                                         "[export /r/v0]\nvolume = v0\nclients = 127.0.0.0/8\n";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(NfsProgramsTest, BuildsBothServicesFromTheConfig) {
  auto resolver = std::make_shared<test_support::MemoryResolver>();
  NfsPrograms p = make_nfs_programs(Config::load((dir_ / "nasd.conf").string()), resolver);
  EXPECT_EQ(p.nfs->program(), 100003u);
  EXPECT_EQ(p.mount->program(), 100005u);
  ASSERT_EQ(p.exports->all().size(), 1u);
  EXPECT_EQ(p.exports->all()[0].path, "/r/v0");
  // The key was created inside data_dir, relative to the config file's folder.
  EXPECT_TRUE(std::filesystem::exists(dir_ / "data" / "handle.key"));

  // A second start reads the same key: old handles stay valid.
  FileHandle fh = p.handles->encode(0, {5, 1});
  NfsPrograms again = make_nfs_programs(Config::load((dir_ / "nasd.conf").string()), resolver);
  HandleTarget t;
  EXPECT_EQ(again.handles->decode(fh.bytes, &t), fs::Status::Ok);
}

TEST_F(NfsProgramsTest, RequiresADataDir) {
  auto resolver = std::make_shared<test_support::MemoryResolver>();
  EXPECT_THROW(make_nfs_programs(Config::parse("[volume v]\nid = 1\n"), resolver), ConfigError);
}

}  // namespace
}  // namespace nasd::nfs
