// The admin command registry, its wire format, and the control socket end to end.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>

#include "server/admin/admin_client.h"
#include "server/admin/admin_protocol.h"
#include "server/admin/command_registry.h"
#include "server/admin/control_socket.h"
#include "server/admin/stats_command.h"

namespace nasd::admin {
namespace {

std::string temp_socket_path(const char* tag) {
  return "/tmp/nasd-rpc-test-" + std::string(tag) + "-" + std::to_string(getpid()) + ".sock";
}

TEST(CommandRegistry, RunsCommandsWithArguments) {
  CommandRegistry r;
  r.add_command("join", "joins its arguments", [](const std::vector<std::string>& args) {
    std::string out;
    for (const auto& a : args) out += a + "+";
    return out;
  });
  auto res = r.run({"join", "a", "b"});
  EXPECT_TRUE(res.ok);
  EXPECT_EQ(res.text, "a+b+\n");
}

TEST(CommandRegistry, ErrorsAreReportedNotThrown) {
  CommandRegistry r;
  r.add_command("boom", "throws", [](const std::vector<std::string>&) -> std::string {
    throw std::runtime_error("kaput");
  });
  EXPECT_FALSE(r.run({}).ok);
  auto unknown = r.run({"nope"});
  EXPECT_FALSE(unknown.ok);
  EXPECT_NE(unknown.text.find("unknown command 'nope'"), std::string::npos);
  auto boom = r.run({"boom"});
  EXPECT_FALSE(boom.ok);
  EXPECT_EQ(boom.text, "boom: kaput\n");
  EXPECT_THROW(r.add_command("boom", "again", nullptr), std::invalid_argument);
  EXPECT_THROW(r.add_command("two words", "x", nullptr), std::invalid_argument);
}

TEST(CommandRegistry, HelpListsEveryCommand) {
  CommandRegistry r;
  r.add_command("zeta", "the last one", [](const std::vector<std::string>&) { return ""; });
  auto help = r.run({"help"});
  ASSERT_TRUE(help.ok);
  EXPECT_NE(help.text.find("help"), std::string::npos);
  EXPECT_NE(help.text.find("zeta  the last one"), std::string::npos) << help.text;
}

TEST(AdminProtocol, RequestRoundTrip) {
  std::string wire = encode_admin_request({"stats", "reset", "with space"});
  EXPECT_FALSE(decode_admin_request(wire.substr(0, wire.size() - 1)));  // incomplete
  auto words = decode_admin_request(wire);
  ASSERT_TRUE(words);
  EXPECT_EQ(*words, (std::vector<std::string>{"stats", "reset", "with space"}));
  EXPECT_THROW(encode_admin_request({"a\nb"}), std::invalid_argument);
}

TEST(AdminProtocol, ResponseStatus) {
  bool ok = false;
  std::string text;
  ASSERT_TRUE(decode_admin_response(encode_admin_response(true, "hi\n"), &ok, &text));
  EXPECT_TRUE(ok);
  EXPECT_EQ(text, "hi\n");
  EXPECT_FALSE(decode_admin_response("garbage", &ok, &text));
}

TEST(ControlSocket, ServesCommandsOverTheSocket) {
  std::string path = temp_socket_path("serve");
  CommandRegistry registry;
  rpc::CallStats stats;
  stats.add_program(100003, 3, "nfs", {"null", "getattr"});
  stats.record_call(100003, 3, 1, false, std::chrono::microseconds(50));
  add_stats_command(registry, stats);
  ControlSocket sock(path, registry);
  sock.start();

  struct stat st{};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << "the control socket must be private";

  AdminReply table = admin_call(path, {"stats"});
  ASSERT_TRUE(table.ok) << table.text;
  EXPECT_NE(table.text.find("nfs (program 100003) version 3: 1 calls"), std::string::npos)
      << table.text;

  AdminReply reset = admin_call(path, {"stats", "reset"});
  ASSERT_TRUE(reset.ok);
  EXPECT_EQ(stats.snapshot().programs[0].procs[1].calls, 0u);

  AdminReply bad = admin_call(path, {"stats", "sideways"});
  EXPECT_FALSE(bad.ok);
  EXPECT_NE(bad.text.find("usage"), std::string::npos);

  // A client that connects and sends nothing must not block the next one for long.
  int stalled = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un sun{};
  sun.sun_family = AF_UNIX;
  std::snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path.c_str());
  ASSERT_EQ(connect(stalled, reinterpret_cast<sockaddr*>(&sun), sizeof sun), 0);
  auto t0 = std::chrono::steady_clock::now();
  AdminReply help = admin_call(path, {"help"});
  EXPECT_TRUE(help.ok);
  EXPECT_NE(help.text.find("stats"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  close(stalled);
  sock.stop();
  EXPECT_NE(access(path.c_str(), F_OK), 0) << "socket file removed on stop";
  EXPECT_FALSE(admin_call(path, {"help"}).ok);
}

TEST(ControlSocket, ReplacesStaleSocketButNotOtherFiles) {
  std::string path = temp_socket_path("stale");
  CommandRegistry registry;
  {
    ControlSocket first(path, registry);
    first.start();
  }
  {
    // Simulate a crash leaving the socket file behind: bind one and never clean it up.
    ControlSocket second(path, registry);
    second.start();
    EXPECT_TRUE(admin_call(path, {"help"}).ok);
  }
  std::ofstream(path) << "not a socket";
  ControlSocket third(path, registry);
  EXPECT_THROW(third.start(), std::runtime_error);
  unlink(path.c_str());
}

// Runs a shell command, returning its exit status and standard output.
int run_command(const std::string& cmd, std::string* out) {
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(NasdAdminCli, PrintsCommandOutputAndExitStatus) {
  std::string path = temp_socket_path("cli");
  CommandRegistry registry;
  rpc::CallStats stats;
  stats.add_program(100005, 3, "mount", {"null", "mnt"});
  stats.record_call(100005, 3, 1, false, std::chrono::microseconds(9));
  add_stats_command(registry, stats);
  ControlSocket sock(path, registry);
  sock.start();
  std::string bin = NASD_ADMIN_BIN;

  std::string out;
  EXPECT_EQ(run_command(bin + " --socket " + path + " stats", &out), 0);
  EXPECT_NE(out.find("mount (program 100005) version 3: 1 calls"), std::string::npos) << out;

  out.clear();
  EXPECT_EQ(run_command(bin + " --socket " + path + " help", &out), 0);
  EXPECT_NE(out.find("stats"), std::string::npos) << out;

  out.clear();
  EXPECT_EQ(run_command(bin + " --socket " + path + " frobnicate 2>/dev/null", &out), 1);
  EXPECT_EQ(run_command(bin + " --socket /nonexistent/nasd.sock stats 2>/dev/null", &out), 1);
  EXPECT_EQ(run_command(bin + " 2>/dev/null", &out), 2);  // usage
}

TEST(NasdAdminCli, FindsTheSocketThroughTheConfig) {
  std::string dir = "/tmp/nasd-rpc-test-cli-" + std::to_string(getpid());
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  std::ofstream(dir + "/nasd.conf") << "[node]\ndata_dir = data\nadmin_socket = ctl.sock\n";
  ASSERT_EQ(mkdir((dir + "/data").c_str(), 0700), 0);
  CommandRegistry registry;
  registry.add_command("ping", "answers pong", [](const std::vector<std::string>&) {
    return std::string("pong");
  });
  ControlSocket sock(dir + "/data/ctl.sock", registry);
  sock.start();
  std::string out;
  EXPECT_EQ(run_command(std::string(NASD_ADMIN_BIN) + " --config " + dir + "/nasd.conf ping", &out),
            0);
  EXPECT_EQ(out, "pong\n");
  sock.stop();
  unlink((dir + "/nasd.conf").c_str());
  rmdir((dir + "/data").c_str());
  rmdir(dir.c_str());
}

}  // namespace
}  // namespace nasd::admin
