// ManagementServer::handle() without a socket: routing, the read-only views, and that the
// status reads the admin command registry (what nasd-admin prints).
#include "server/http/management_server.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/http/host_check.h"
#include "server/http/scrape_token.h"

namespace nasd::http {
namespace {

struct Fixture {
  admin::CommandRegistry commands;
  std::unique_ptr<ManagementServer> server;
  std::string token_file = "/tmp/nasd-http-token-" + std::to_string(::getpid());
  std::string token;
  ~Fixture() { ::unlink(token_file.c_str()); }
  Fixture() {
    token = store_new_token_file(token_file);
    commands.add_command("volumes", "", [](const std::vector<std::string>&) { return "volume 0 (v0.lfs)\n"; });
    ManagementWiring w;
    w.options.port = 0;  // never bound here
    w.options.password_file = "/nonexistent/http.passwd";
    w.options.token_file = token_file;
    w.node_name = "n1";
    w.commands = &commands;
    w.stats = std::make_shared<rpc::CallStats>();
    w.stats->add_program(100003, 3, "NFS", {"NULL", "GETATTR"});
    w.node_status = [](JsonWriter& j) { j.key("volumes").begin_array().end_array(); };
    w.node_metrics = [] {
      MetricFamilies m;
      m.add(m.gauge("nasd_node_info", "node"), {{"node", "n1"}}, 1);
      return m;
    };
    server = std::make_unique<ManagementServer>(std::move(w));
  }
  ManagementServer::Response get(const std::string& path, const std::string& authorization = "") {
    ManagementServer::Request r;
    r.method = "GET";
    r.path = path;
    r.host = "127.0.0.1:8049";
    r.client = "127.0.0.1";
    r.authorization = authorization;
    return server->handle(r);
  }
  ManagementServer::Response scrape(const std::string& path) { return get(path, "Bearer " + token); }
};

TEST(ManagementServer, ServesThePageMetricsAndStatus) {
  Fixture f;
  EXPECT_NE(f.get("/").body.find("<title>nasd management</title>"), std::string::npos);
  EXPECT_EQ(f.get("/app.js").content_type, "text/javascript; charset=utf-8");
  auto metrics = f.scrape("/metrics");
  EXPECT_NE(metrics.body.find("nasd_rpc_calls_total"), std::string::npos);
  EXPECT_NE(metrics.body.find("nasd_node_info{node=\"n1\"} 1"), std::string::npos);
  auto status = f.scrape("/api/status").body;
  EXPECT_NE(status.find("\"node\":\"n1\""), std::string::npos) << status;
  // The admin views present on this node, with the very text `nasd-admin volumes` prints;
  // those the node does not offer (cluster, snapshot) are left out.
  EXPECT_NE(status.find(R"({"id":"volumes","title":"Volumes","command":["volumes"],"ok":true,"text":"volume 0 (v0.lfs)\n"})"),
            std::string::npos) << status;
  EXPECT_EQ(status.find("\"id\":\"snapshots\""), std::string::npos);
  EXPECT_NE(status.find("\"actions\":[]"), std::string::npos);
  EXPECT_EQ(f.get("/etc/passwd").status, 404);
}

// The node's state (exports and their clients, lock owners, the cluster) is for the admin and
// the scraper only; the page's files and the session probe stay open so a browser can log in.
TEST(ManagementServer, StateNeedsALoginOrTheReadOnlyToken) {
  Fixture f;
  for (const char* path : {"/metrics", "/api/status"}) {
    auto refused = f.get(path);
    EXPECT_EQ(refused.status, 401) << path;
    EXPECT_EQ(refused.body.find("nasd_node_info"), std::string::npos);
    EXPECT_EQ(refused.body.find("volume 0"), std::string::npos);
    EXPECT_EQ(f.get(path, "Bearer " + std::string(64, '0')).status, 401) << path;
    EXPECT_EQ(f.get(path, "Basic " + f.token).status, 401) << path;
    EXPECT_EQ(f.scrape(path).status, 200) << path;
  }
  EXPECT_EQ(f.get("/").status, 200);
  EXPECT_EQ(f.get("/app.js").status, 200);
  EXPECT_EQ(f.get("/api/session").status, 200);
  // The token reads; it never acts.
  ManagementServer::Request r;
  r.method = "POST";
  r.path = "/api/action";
  r.host = "127.0.0.1";
  r.requested_with = "nasd-page";
  r.authorization = "Bearer " + f.token;
  r.body = "action=failover";
  EXPECT_EQ(f.server->handle(r).status, 401);
}

TEST(ManagementServer, ATokenFileOthersCanReadIsRefused) {
  Fixture f;
  ASSERT_EQ(::chmod(f.token_file.c_str(), 0644), 0);
  EXPECT_EQ(f.scrape("/metrics").status, 401);
  ASSERT_EQ(::chmod(f.token_file.c_str(), 0600), 0);
  EXPECT_EQ(f.scrape("/metrics").status, 200);
}

// DNS rebinding: a page at attacker.example re-pointed at the node sends Host: attacker.example.
TEST(ManagementServer, RefusesHostsItIsNotServedAs) {
  Fixture f;
  ManagementServer::Request r;
  r.method = "GET";
  r.path = "/api/session";
  for (const char* bad : {"attacker.example", "attacker.example:8049", "", "localhost.attacker.example"}) {
    r.host = bad;
    EXPECT_EQ(f.server->handle(r).status, 421) << bad;
  }
  for (const char* good : {"127.0.0.1", "10.0.0.5:8049", "[::1]:8049", "localhost:8049", "LOCALHOST"}) {
    r.host = good;
    EXPECT_EQ(f.server->handle(r).status, 200) << good;
  }
  EXPECT_TRUE(host_allowed("nas1.example.com:8049", {"nas1.example.com"}));
  EXPECT_TRUE(host_allowed("NAS1.example.com.", {"nas1.example.com"}));
  EXPECT_FALSE(host_allowed("nas2.example.com", {"nas1.example.com"}));
  EXPECT_FALSE(host_allowed("[not-an-address]:1", {}));
}

TEST(ManagementServer, RefusesWritesWithoutThePagesHeaderOrASession) {
  Fixture f;
  ManagementServer::Request r;
  r.method = "POST";
  r.path = "/api/action";
  r.host = "127.0.0.1:8049";
  r.body = "action=failover";
  EXPECT_EQ(f.server->handle(r).status, 403);
  r.requested_with = "nasd-page";
  EXPECT_EQ(f.server->handle(r).status, 401);
  r.cookie_header = "nasd_session=" + std::string(64, 'a');
  EXPECT_EQ(f.server->handle(r).status, 401);
  r.method = "PUT";
  EXPECT_EQ(f.server->handle(r).status, 405);
  r.method = "POST";
  r.path = "/api/login";
  r.body = "user=admin&password=x";
  EXPECT_EQ(f.server->handle(r).status, 503) << "no password file: no login";
}

}  // namespace
}  // namespace nasd::http

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace nasd::http {
namespace {

// A port another process holds: the node goes on without its page (logged), never aborts.
TEST(ManagementServer, APortInUseIsLoggedNotFatal) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  admin::CommandRegistry commands;
  std::string logged;
  ManagementWiring w;
  w.options.port = ntohs(a.sin_port);
  w.commands = &commands;
  w.stats = std::make_shared<rpc::CallStats>();
  w.log = [&](const std::string& line) { logged += line; };
  ManagementServer busy(std::move(w));
  EXPECT_FALSE(busy.start());
  EXPECT_NE(logged.find("cannot listen"), std::string::npos) << logged;
  ::close(fd);
}

}  // namespace
}  // namespace nasd::http
