// `nasd-admin volume create`: a volume made on a running node is exported as /r/NAME and
// usable at once, survives a restart, and bad requests are refused with a message. nasd only.
#include <algorithm>
#include <filesystem>

#include "tests/e2e/e2e_fixture.h"

namespace nasd::e2e {
namespace {

using namespace std::chrono_literals;

class AdminVolumeTest : public E2eTest {
 protected:
  void SetUp() override {
    NASD_E2E_NEEDS_OWN_SERVER("creates volumes through the server's admin socket and restarts it");
    E2eTest::SetUp();
    if (is_ganesha()) GTEST_SKIP() << "volume creation is nasd's admin command";
    if (server().choice().admin_binary.empty()) GTEST_SKIP() << "no nasd-admin binary";
  }
  CommandResult admin(std::vector<std::string> words) {
    std::vector<std::string> argv = {server().choice().admin_binary, "--socket",
                                     server().admin_socket().string()};
    argv.insert(argv.end(), words.begin(), words.end());
    return run_command(argv, 60s, scratch().path());
  }
  // The URL of `path` inside export /r/NAME (the harness's URLs name /r/v0).
  std::string url_in(const std::string& name, const std::string& path) {
    std::string u = server().url(path);
    return u.replace(u.find("/r/v0"), 5, "/r/" + name);
  }
};

TEST_F(AdminVolumeTest, CreatedVolumeIsServedAtOnceAndAfterRestart) {
  CommandResult made = admin({"volume", "create", "projects", "128M"});
  ASSERT_EQ(made.exit_code, 0) << made.output;
  EXPECT_NE(made.output.find("/r/projects"), std::string::npos) << made.output;

  {
    NfsClient c(url_in("projects", ""));
    ASSERT_EQ(c.write_file("/plan.txt", "phase one"), 0) << c.error();
  }
  CommandResult listed = admin({"volumes"});
  EXPECT_NE(listed.output.find("projects.lfs"), std::string::npos) << listed.output;

  ASSERT_TRUE(server().restart()) << server().last_exit();
  NfsClient again(url_in("projects", ""));
  std::string data;
  ASSERT_EQ(again.read_file("/plan.txt", &data), 0) << again.error();
  EXPECT_EQ(data, "phase one");
  // The default volume is untouched by the new one.
  NfsClient v0(server().url(""));
  std::vector<std::string> names;
  ASSERT_EQ(v0.list("/", &names), 0) << v0.error();
  EXPECT_EQ(std::count(names.begin(), names.end(), "plan.txt"), 0);
}

TEST_F(AdminVolumeTest, BadRequestsAreRefusedAndChangeNothing) {
  for (auto words : std::vector<std::vector<std::string>>{
           {"volume", "create", "v0", "64M"},           // exists
           {"volume", "create", "no/slash", "64M"},     // bad name
           {"volume", "create", "x1", "-64M"},          // bad size
           {"volume", "create", "x2", "64M", "--id", "0"},  // id in use
           {"volume", "create", "x3", "64M", "--squash", "sometimes"},
           {"volume", "create"}}) {
    CommandResult r = admin(words);
    EXPECT_NE(r.exit_code, 0) << "accepted: " << r.output;
    EXPECT_FALSE(r.output.empty()) << "no message for a refused request";
  }
  EXPECT_FALSE(std::filesystem::exists(server().data_dir() / "volumes.conf"));
  EXPECT_FALSE(std::filesystem::exists(server().data_dir() / "x3.lfs"));
}

}  // namespace
}  // namespace nasd::e2e
