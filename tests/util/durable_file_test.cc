// util::write_file_durably on a folder others may write to: the temporary is never a name an
// attacker can plant beforehand, never followed through a symlink, and never readable by others.
#include "util/durable_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace nasd::util {
namespace {

struct Dir {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("nasd-durable-" + std::to_string(::getpid()));
  Dir() {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~Dir() { std::filesystem::remove_all(path); }
};

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(DurableFile, WritesModeSixHundredAndLeavesNoTemporary) {
  Dir d;
  const std::string path = (d.path / "clients").string();
  std::string error;
  ASSERT_TRUE(write_file_durably(path, "one\n", &error)) << error;
  ASSERT_TRUE(write_file_durably(path, "two\n", &error)) << error;
  EXPECT_EQ(read(path), "two\n");
  struct stat st{};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << "state files (lock owners, mounts) are the service's only";
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(d.path)) ++files, (void)e;
  EXPECT_EQ(files, 1u);
}

// The old temporary was `<path>.tmp.<pid>`, opened with O_TRUNC and following symlinks: a
// local user who could write to the folder planted a symlink under that name and had the
// service overwrite a file of its choice.
TEST(DurableFile, APlantedSymlinkAtThePidNameIsNeverWrittenThrough) {
  Dir d;
  const std::filesystem::path victim = d.path / "victim";
  std::ofstream(victim) << "precious\n";
  const std::string path = (d.path / "sm-clients").string();
  std::filesystem::create_symlink(victim, path + ".tmp." + std::to_string(::getpid()));
  std::string error;
  ASSERT_TRUE(write_file_durably(path, "state\n", &error)) << error;
  EXPECT_EQ(read(victim), "precious\n");
  EXPECT_EQ(read(path), "state\n");
}

TEST(DurableFile, TheTemporaryIsExclusiveAndNoFollow) {
  Dir d;
  const std::string path = (d.path / "f").string();
  std::string tmp1, tmp2, error;
  const int fd1 = create_private_temp(path, &tmp1, &error);
  const int fd2 = create_private_temp(path, &tmp2, &error);
  ASSERT_GE(fd1, 0) << error;
  ASSERT_GE(fd2, 0) << error;
  EXPECT_NE(tmp1, tmp2);
  EXPECT_EQ(tmp1.rfind(path + ".tmp.", 0), 0u);
  ::close(fd1);
  ::close(fd2);
}

TEST(DurableFile, TheServicesUmaskStillApplies) {
  Dir d;
  const std::string path = (d.path / "f").string();
  const mode_t old = ::umask(0277);  // the service asked for read-only files
  std::string error;
  const bool ok = write_file_durably(path, "x", &error);
  ::umask(old);
  ASSERT_TRUE(ok) << error;
  struct stat st{};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0400u);
}

}  // namespace
}  // namespace nasd::util
