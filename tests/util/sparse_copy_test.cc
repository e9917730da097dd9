#include "util/sparse_copy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

namespace nasd {
namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(SparseCopy, CopiesDataAndKeepsHolesHoles) {
  char tmpl[] = "/tmp/nasd-sparse-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::string from = dir + "/from", to = dir + "/to";
  int fd = ::open(from.c_str(), O_RDWR | O_CREAT, 0600);
  ASSERT_GE(fd, 0);
  const off_t size = 64 << 20;
  ASSERT_EQ(::ftruncate(fd, size), 0);
  ASSERT_EQ(::pwrite(fd, "head", 4, 0), 4);
  ASSERT_EQ(::pwrite(fd, "middle", 6, 30 << 20), 6);
  ASSERT_EQ(::pwrite(fd, "tail", 4, size - 4), 4);
  ::close(fd);
  // An old, longer target is replaced, not merged into.
  { std::ofstream old(to); old << std::string(100, 'x'); }

  std::string error;
  ASSERT_TRUE(sparse_copy(from, to, &error)) << error;
  EXPECT_TRUE(read_all(from) == read_all(to));
  struct stat st;
  ASSERT_EQ(::stat(to.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, size);
  EXPECT_LT(st.st_blocks * 512, 8 << 20) << "the holes were filled in";

  EXPECT_FALSE(sparse_copy(dir + "/missing", to, &error));
  EXPECT_NE(error.find("missing"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace nasd
