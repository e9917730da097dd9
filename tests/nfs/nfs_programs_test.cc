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
  std::string data_dir() const { return (dir_ / "data").string(); }
  std::string key_path() const { return (dir_ / "data" / "handle.key").string(); }
  std::filesystem::path dir_;
};

TEST_F(NfsProgramsTest, BuildsBothServicesFromTheConfig) {
  auto resolver = std::make_shared<test_support::MemoryResolver>();
  NfsPrograms p = make_nfs_programs(Config::load((dir_ / "nasd.conf").string()), resolver,
                                    data_dir(), key_path());
  EXPECT_EQ(p.nfs->program(), 100003u);
  EXPECT_EQ(p.mount->program(), 100005u);
  ASSERT_EQ(p.exports->all().size(), 1u);
  EXPECT_EQ(p.exports->all()[0].path, "/r/v0");
  // The key was created where the node said.
  EXPECT_TRUE(std::filesystem::exists(dir_ / "data" / "handle.key"));

  // A second start reads the same key: old handles stay valid.
  FileHandle fh = p.handles->encode(0, {5, 1});
  NfsPrograms again = make_nfs_programs(Config::load((dir_ / "nasd.conf").string()), resolver,
                                        data_dir(), key_path());
  HandleTarget t;
  EXPECT_EQ(again.handles->decode(fh.bytes, &t), fs::Status::Ok);
}

TEST_F(NfsProgramsTest, RequiresADataDir) {
  auto resolver = std::make_shared<test_support::MemoryResolver>();
  EXPECT_THROW(make_nfs_programs(Config::parse("[volume v]\nid = 1\n"), resolver, "", key_path()),
               ConfigError);
}

}  // namespace
}  // namespace nasd::nfs
