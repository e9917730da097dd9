#include <gtest/gtest.h>

#include "server/http/login_limiter.h"
#include "server/http/session_store.h"

namespace nasd::http {
namespace {

TEST(SessionStore, SessionsCarryTheirCsrfTokenAndExpireWhenIdle) {
  SessionStore store(1000);
  auto s = store.create(0);
  EXPECT_EQ(s.id.size(), 64u);
  EXPECT_NE(s.id, s.csrf);
  EXPECT_EQ(store.touch(s.id, 900), s.csrf);
  EXPECT_EQ(store.touch(s.id, 1800), s.csrf) << "each request restarts the idle timer";
  EXPECT_FALSE(store.touch(s.id, 2801));
  EXPECT_FALSE(store.touch("", 0));
  auto t = store.create(3000);
  store.remove(t.id);
  EXPECT_FALSE(store.touch(t.id, 3001));
}

TEST(SessionStore, IsBounded) {
  SessionStore store(1'000'000);
  auto first = store.create(0);
  for (size_t i = 1; i <= SessionStore::kMaxSessions; ++i) store.create(int64_t(i));
  EXPECT_EQ(store.size(), SessionStore::kMaxSessions);
  EXPECT_FALSE(store.touch(first.id, 100)) << "the least recently used session went";
}

TEST(LoginLimiter, BacksOffPerAddressAndForgivesASuccess) {
  LoginLimiter l;
  for (int i = 0; i < LoginLimiter::kFreeFailures; ++i) {
    EXPECT_EQ(l.wait_ms("10.0.0.1", 0), 0);
    l.failed("10.0.0.1", 0);
  }
  EXPECT_EQ(l.wait_ms("10.0.0.1", 0), 0);
  l.failed("10.0.0.1", 0);
  EXPECT_EQ(l.wait_ms("10.0.0.1", 0), LoginLimiter::kFirstDelayMs);
  EXPECT_EQ(l.wait_ms("10.0.0.2", 0), 0) << "another address is not affected";
  l.failed("10.0.0.1", 1000);
  EXPECT_EQ(l.wait_ms("10.0.0.1", 1000), 2 * LoginLimiter::kFirstDelayMs) << "the delay doubles";
  for (int i = 0; i < 30; ++i) l.failed("10.0.0.1", 2000);
  EXPECT_EQ(l.wait_ms("10.0.0.1", 2000), LoginLimiter::kMaxDelayMs);
  l.succeeded("10.0.0.1");
  EXPECT_EQ(l.wait_ms("10.0.0.1", 2000), 0);
}

// Failures from other addresses never hold back one that has not failed: a global limit let
// 3 failures from each of 20 addresses lock the real admin out.
TEST(LoginLimiter, ManyAddressesFailingNeverLockOutAnother) {
  LoginLimiter l;
  for (int i = 0; i < 1000; ++i)
    for (int k = 0; k <= LoginLimiter::kFreeFailures; ++k) l.failed("10.1." + std::to_string(i / 200) + "." + std::to_string(i % 200), 5000);
  EXPECT_EQ(l.wait_ms("192.168.0.9", 5001), 0);
  EXPECT_GT(l.wait_ms("10.1.0.7", 5001), 0) << "each guessing address is still slowed";
}

}  // namespace
}  // namespace nasd::http

#include "server/http/http_options.h"

namespace nasd::http {
namespace {

TEST(HttpOptions, BindsTheManagementAddressNeverEveryInterfaceByDefault) {
  auto node = [](const std::string& text) { return Config::parse("[node]\n" + text, "test.conf"); };
  // The NFS address faces the clients: the page does not follow it there.
  Config a = node("listen = 10.0.0.5\n");
  HttpOptions o = HttpOptions::from_config(*a.section("node"), "/d");
  EXPECT_EQ(o.listen, "127.0.0.1");
  EXPECT_EQ(o.token_file, "/d/http.token");
  EXPECT_TRUE(o.tls_cert.empty());
  EXPECT_TRUE(o.hosts.empty());
  Config loop = node("listen = 127.0.1.3\n");
  EXPECT_EQ(HttpOptions::from_config(*loop.section("node"), "/d").listen, "127.0.1.3");
  EXPECT_EQ(o.port, 8049);
  EXPECT_EQ(o.password_file, "/d/http.passwd");
  Config b = node("listen = 0.0.0.0\n");
  EXPECT_EQ(HttpOptions::from_config(*b.section("node"), "/d").listen, "127.0.0.1");
  Config c = node("listen = 0.0.0.0\nhttp_listen = 192.168.1.2\nhttp_port = 0\nhttp_password_file = /etc/p\n");
  o = HttpOptions::from_config(*c.section("node"), "/d");
  EXPECT_EQ(o.listen, "192.168.1.2");
  EXPECT_FALSE(o.enabled());
  EXPECT_EQ(o.password_file, "/etc/p");
  Config e = node("http_listen = 10.0.0.9\nhttp_tls_cert = tls/page.pem\nhttp_hosts = NAS1.example.com, nas1\n"
                  "http_token_file = /etc/nasd/token\n");
  o = HttpOptions::from_config(*e.section("node"), "/d");
  EXPECT_EQ(o.listen, "10.0.0.9");
  EXPECT_EQ(o.tls_cert, "/d/tls/page.pem");
  EXPECT_EQ(o.hosts, (std::vector<std::string>{"nas1.example.com", "nas1"}));
  EXPECT_EQ(o.token_file, "/etc/nasd/token");
  Config f = node("http_hosts = a:b\n");
  EXPECT_THROW(HttpOptions::from_config(*f.section("node"), "/d"), ConfigError);
  Config g = node("http_listen = nas.example\n");
  EXPECT_THROW(HttpOptions::from_config(*g.section("node"), "/d"), ConfigError);
  Config d = node("http_port = 70000\n");
  EXPECT_THROW(HttpOptions::from_config(*d.section("node"), "/d"), ConfigError);
}

}  // namespace
}  // namespace nasd::http
