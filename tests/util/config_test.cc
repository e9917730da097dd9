#include "util/config.h"

#include <gtest/gtest.h>

namespace nasd {
namespace {

TEST(ConfigTest, ParsesSectionsNamesAndValues) {
  Config c = Config::parse(
      "# comment\n[node]\nname = n1   # trailing comment\nudp=off\n\n"
      "[volume v0]\nsize = 8G\n[volume v1]\nsize=64m\n[export /r/v0]\nclients = 127.0.0.1, *\n",
      "/etc/nasd/nasd.conf");
  const ConfigSection* node = c.section("node");
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(node->get("name"), "n1");
  EXPECT_FALSE(node->get_bool("udp", true));
  ASSERT_EQ(c.sections("volume").size(), 2u);
  EXPECT_EQ(c.section("volume", "v1")->get_size("size", 0), 64ull << 20);
  EXPECT_EQ(c.section("volume", "v0")->get_size("size", 0), 8ull << 30);
  EXPECT_EQ(c.section("export")->name(), "/r/v0");
  EXPECT_EQ(c.section("export")->get_list("clients"), (std::vector<std::string>{"127.0.0.1", "*"}));
  EXPECT_EQ(c.resolve_path("data"), "/etc/nasd/data");
  EXPECT_EQ(c.resolve_path("/abs"), "/abs");
}

TEST(ConfigTest, SizesAcceptBinarySuffixes) {
  EXPECT_EQ(parse_size("4096"), 4096u);
  EXPECT_EQ(parse_size("64k"), 65536u);
  EXPECT_EQ(parse_size("2GiB"), 2ull << 30);
  EXPECT_EQ(parse_size(" 1 T "), 1ull << 40);
  EXPECT_THROW(parse_size("12x"), ConfigError);
  EXPECT_THROW(parse_size(""), ConfigError);
  EXPECT_THROW(parse_size("-3"), ConfigError);
  EXPECT_THROW(parse_size("99999999999999999999"), ConfigError);
  EXPECT_THROW(parse_size("17179869184T"), ConfigError);
}

TEST(ConfigTest, RejectsMalformedLinesWithTheirLineNumber) {
  try {
    Config::parse("[node]\nname\n", "x.conf");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("x.conf:2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Config::parse("key = 1\n"), ConfigError);
  EXPECT_THROW(Config::parse("[node\n"), ConfigError);
  EXPECT_THROW(Config::parse("[]\n"), ConfigError);
}

TEST(ConfigTest, ReportsUnknownKeysAndBadValues) {
  Config c = Config::parse("[node]\nname = a\nnfs_prot = 1\nthreads = lots\nudp = maybe\n");
  const ConfigSection* s = c.section("node");
  EXPECT_EQ(s->unknown_keys({"name", "threads", "udp"}), std::vector<std::string>{"nfs_prot"});
  EXPECT_THROW(s->get_int("threads", 1), ConfigError);
  EXPECT_THROW(s->get_bool("udp", true), ConfigError);
  EXPECT_EQ(s->get_int("missing", 7), 7);
}

}  // namespace
}  // namespace nasd
