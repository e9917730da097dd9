#include "server/http/password.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>

namespace nasd::http {
namespace {

TEST(Password, VerifiesOnlyTheRightUserAndPassword) {
  PasswordHash h = PasswordHash::make("admin", "s3cret-pass", 1000);
  EXPECT_TRUE(h.verify("admin", "s3cret-pass"));
  EXPECT_FALSE(h.verify("admin", "s3cret-pasS"));
  EXPECT_FALSE(h.verify("root", "s3cret-pass"));
  EXPECT_FALSE(h.verify("admin", ""));
  PasswordHash again = PasswordHash::make("admin", "s3cret-pass", 1000);
  EXPECT_NE(h.salt, again.salt) << "every hash has its own salt";
}

TEST(Password, LineRoundTripsAndRejectsMalformedOnes) {
  PasswordHash h = PasswordHash::make("admin", "pw", 1000);
  auto back = PasswordHash::parse(h.line());
  ASSERT_TRUE(back);
  EXPECT_TRUE(back->verify("admin", "pw"));
  EXPECT_FALSE(PasswordHash::parse(""));
  EXPECT_FALSE(PasswordHash::parse("admin md5 1000 00 00"));
  EXPECT_FALSE(PasswordHash::parse("admin pbkdf2-sha256 0 0011 " + std::string(64, 'a')));
  EXPECT_FALSE(PasswordHash::parse("admin pbkdf2-sha256 99999999999 0011 " + std::string(64, 'a')));
  EXPECT_FALSE(PasswordHash::parse("admin pbkdf2-sha256 1000 zz11 " + std::string(64, 'a')));
  EXPECT_FALSE(PasswordHash::parse("admin pbkdf2-sha256 1000 0011 " + std::string(62, 'a')));
}

TEST(Password, FileIsPrivateAndReadBack) {
  auto dir = std::filesystem::temp_directory_path() / ("nasd-pw-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string file = (dir / "http.passwd").string();
  store_password_file(file, PasswordHash::make("admin", "abc", 1000));
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto loaded = load_password_file(file);
  ASSERT_TRUE(loaded);
  EXPECT_TRUE(loaded->verify("admin", "abc"));
  EXPECT_FALSE(load_password_file((dir / "missing").string()));
  std::filesystem::remove_all(dir);
}

TEST(Password, RandomPasswordsAndTokensDiffer) {
  std::string a = random_password(), b = random_password();
  EXPECT_EQ(a.size(), 20u);
  EXPECT_NE(a, b);
  EXPECT_EQ(random_token_hex(32).size(), 64u);
  EXPECT_TRUE(constant_time_equal("abc", "abc"));
  EXPECT_FALSE(constant_time_equal("abc", "abd"));
  EXPECT_FALSE(constant_time_equal("abc", "ab"));
}

}  // namespace
}  // namespace nasd::http
