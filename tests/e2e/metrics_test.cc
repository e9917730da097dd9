// The node's management HTTP listener against a real nasd: /metrics is valid Prometheus text
// whose counters move with the NFS calls issued; /api/status shows the node; the login and
// action endpoints refuse what they must (no marker header, no session, a wrong password, a
// wrong CSRF token), rate-limit guessing, and run an action for a logged-in session. nasd only.
#include <cmath>
#include <regex>

#include "server/http/password.h"
#include "server/http/scrape_token.h"
#include "tests/e2e/e2e_fixture.h"
#include "tests/e2e/http_client.h"

namespace nasd::e2e {
namespace {

class MetricsTest : public E2eTest {
 protected:
  void SetUp() override {
    NASD_E2E_NEEDS_OWN_SERVER("counts the calls of its own server on its metrics port");
    E2eTest::SetUp();
    if (is_ganesha()) GTEST_SKIP() << "the metrics endpoint is nasd's";
    // The scraper's read-only token, as an operator makes it (nasd-passwd --token).
    token_ = "Authorization: Bearer " + http::store_new_token_file((server().data_dir() / "http.token").string());
  }
  std::string token_;
  ParsedMetrics scrape() {
    HttpReply r = http_request(server().http_port(), "GET", "/metrics", {token_});
    EXPECT_EQ(r.status, 200) << server().log_tail();
    EXPECT_NE(r.headers["content-type"].find("text/plain; version=0.0.4"), std::string::npos);
    try {
      return parse_prometheus_text(r.body);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not valid exposition format: " << e.what();
      return {};
    }
  }
  static std::map<std::string, std::string> nfs_proc(const std::string& proc) {
    return {{"program", "nfs"}, {"version", "3"}, {"procedure", proc}};
  }
};

TEST_F(MetricsTest, CountersMoveWithTheCallsIssued) {
  ParsedMetrics before = scrape();
  for (const char* family :
       {"nasd_rpc_calls_total", "nasd_rpc_errors_total", "nasd_rpc_call_duration_seconds",
        "nasd_rpc_request_bytes_total", "nasd_rpc_reply_bytes_total", "nasd_nvram_used_bytes",
        "nasd_nvram_commit_duration_seconds", "nasd_volume_used_bytes", "nasd_volume_capacity_bytes",
        "nasd_volume_cleaner_passes_total", "nasd_cluster_volume_served_here", "nasd_node_info"})
    EXPECT_TRUE(before.types.count(family)) << family << " missing";
  EXPECT_EQ(before.types["nasd_rpc_calls_total"], "counter");
  EXPECT_EQ(before.types["nasd_rpc_call_duration_seconds"], "histogram");
  EXPECT_EQ(before.value("nasd_node_info", {{"node", "e2e"}, {"mode", "alone"}}), 1);
  EXPECT_EQ(before.value("nasd_cluster_volume_served_here", {{"volume", "v0"}}), 1);
  EXPECT_GT(before.value("nasd_volume_capacity_bytes", {{"volume", "v0"}}), 1e9);

  const std::string block(32 * 1024, 'm');
  constexpr int kWrites = 8, kReads = 5, kGetattrs = 11;
  Fh f = make_file(root(), "metered");
  for (int i = 0; i < kWrites; ++i)
    ASSERT_EQ(nfs().write(f, uint64_t(i) * block.size(), block, FILE_SYNC).status, NFS3_OK);
  for (int i = 0; i < kReads; ++i) nfs().read(f, 0, uint32_t(block.size()));
  for (int i = 0; i < kGetattrs; ++i) nfs().getattr(f);

  ParsedMetrics after = scrape();
  auto grew = [&](const std::string& name, const std::map<std::string, std::string>& labels) {
    return after.value(name, labels) - before.value(name, labels);
  };
  EXPECT_GE(grew("nasd_rpc_calls_total", nfs_proc("write")), kWrites);
  EXPECT_GE(grew("nasd_rpc_calls_total", nfs_proc("read")), kReads);
  EXPECT_GE(grew("nasd_rpc_calls_total", nfs_proc("getattr")), kGetattrs);
  EXPECT_GE(grew("nasd_rpc_call_duration_seconds_count", nfs_proc("getattr")), kGetattrs);
  EXPECT_GT(grew("nasd_rpc_call_duration_seconds_sum", nfs_proc("write")), 0);
  EXPECT_GE(grew("nasd_rpc_request_bytes_total", nfs_proc("write")), double(kWrites * block.size()));
  EXPECT_GE(grew("nasd_rpc_reply_bytes_total", nfs_proc("read")), double(kReads * block.size()));
  EXPECT_EQ(grew("nasd_rpc_errors_total", nfs_proc("write")), 0);
  EXPECT_GE(grew("nasd_nvram_records_committed_total", {}), kWrites);
  EXPECT_GE(grew("nasd_nvram_commit_duration_seconds_count", {}), 1);
  EXPECT_GT(after.value("nasd_rpc_received_bytes_total"), before.value("nasd_rpc_received_bytes_total"));
}

TEST_F(MetricsTest, StatusShowsTheNodeAndThePageIsServed) {
  HttpReply page = http_request(server().http_port(), "GET", "/");
  EXPECT_EQ(page.status, 200);
  EXPECT_NE(page.body.find("nasd management"), std::string::npos);
  EXPECT_NE(page.headers["content-security-policy"].find("default-src 'self'"), std::string::npos);
  EXPECT_EQ(http_request(server().http_port(), "GET", "/app.js").status, 200);
  EXPECT_EQ(http_request(server().http_port(), "GET", "/nothing").status, 404);
  EXPECT_EQ(http_request(server().http_port(), "GET", "/metrics").status, 401) << "no token, no metrics";
  EXPECT_EQ(http_request(server().http_port(), "GET", "/api/status").status, 401);
  HttpReply head = http_request(server().http_port(), "HEAD", "/metrics", {token_});
  EXPECT_EQ(head.status, 200);
  EXPECT_TRUE(head.body.empty());

  make_file(root(), "seen");
  HttpReply status = http_request(server().http_port(), "GET", "/api/status", {token_});
  ASSERT_EQ(status.status, 200);
  for (const char* want : {"\"node\":\"e2e\"", "\"name\":\"v0\"", "\"path\":\"/r/v0\"",
                           "\"mode\":\"alone\"", "\"id\":\"volumes\"", "\"id\":\"nvram\"",
                           "\"name\":\"CREATE\""})
    EXPECT_NE(status.body.find(want), std::string::npos) << want << " not in " << status.body;
}

TEST_F(MetricsTest, ActionsNeedALoginAndTheSessionsCsrfToken) {
  const uint16_t port = server().http_port();
  const std::string marker = "X-Requested-With: nasd-page";
  const std::string form = "Content-Type: application/x-www-form-urlencoded";
  // No password file yet: logins are refused, the page stays read-only.
  EXPECT_EQ(http_request(port, "POST", "/api/login", {marker, form}, "user=admin&password=x").status, 503);

  const std::string password = "correct horse battery";
  http::store_password_file((server().data_dir() / "http.passwd").string(),
                            http::PasswordHash::make("admin", password, 1000));
  EXPECT_EQ(http_request(port, "POST", "/api/action", {form}, "action=failover").status, 403)
      << "a POST without the page's header (a cross-site form) must be refused";
  EXPECT_EQ(http_request(port, "POST", "/api/action", {marker, form}, "action=failover").status, 401);
  EXPECT_EQ(http_request(port, "POST", "/api/login", {marker, form}, "user=admin&password=wrong").status, 401);

  HttpReply login = http_request(port, "POST", "/api/login", {marker, form},
                                 "user=admin&password=correct+horse+battery");
  ASSERT_EQ(login.status, 200) << login.body;
  const std::string cookie = login.headers["set-cookie"];
  EXPECT_NE(cookie.find("HttpOnly"), std::string::npos);
  EXPECT_NE(cookie.find("SameSite=Strict"), std::string::npos);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(cookie, m, std::regex("nasd_session=([0-9a-f]{64})")));
  const std::string session = "Cookie: nasd_session=" + m[1].str();
  ASSERT_TRUE(std::regex_search(login.body, m, std::regex("\"csrf\":\"([0-9a-f]{64})\"")));
  const std::string csrf = m[1].str();

  EXPECT_EQ(http_request(port, "POST", "/api/action", {marker, form, session}, "action=failover").status, 403)
      << "no CSRF token";
  EXPECT_EQ(http_request(port, "POST", "/api/action",
                         {marker, form, session, "X-CSRF-Token: " + std::string(64, '0')}, "action=failover")
                .status, 403);
  HttpReply session_state = http_request(port, "GET", "/api/session", {session});
  EXPECT_NE(session_state.body.find("\"logged_in\":true"), std::string::npos);
  // A lone node has no partner: the action reaches the same handler as `nasd-admin failover`,
  // which says so.
  HttpReply action = http_request(port, "POST", "/api/action",
                                  {marker, form, session, "X-CSRF-Token: " + csrf}, "action=failover");
  EXPECT_EQ(action.status, 400);
  EXPECT_NE(action.body.find("not one of a failover cluster"), std::string::npos) << action.body;
  EXPECT_EQ(http_request(port, "POST", "/api/action", {marker, form, session, "X-CSRF-Token: " + csrf},
                         "action=reboot").status, 400);

  EXPECT_EQ(http_request(port, "POST", "/api/logout", {marker, session}).status, 200);
  EXPECT_EQ(http_request(port, "POST", "/api/action", {marker, form, session, "X-CSRF-Token: " + csrf},
                         "action=failover").status, 401) << "the session ended at logout";

  // Guessing: after a few failures the address must wait, even with the right password.
  int refused = 0;
  for (int i = 0; i < 6; ++i)
    if (http_request(port, "POST", "/api/login", {marker, form}, "user=admin&password=guess").status == 429)
      ++refused;
  EXPECT_GT(refused, 0);
  EXPECT_EQ(http_request(port, "POST", "/api/login", {marker, form},
                         "user=admin&password=correct+horse+battery").status, 429);
}

}  // namespace
}  // namespace nasd::e2e
