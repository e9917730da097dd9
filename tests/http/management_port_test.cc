// The management listener on a real socket, attacked from a second address of the test's own
// loopback (127.0.0.2..; the whole of 127/8 is local): the state needs a login or the token,
// guessing from many addresses never locks the admin out, half-sent requests do not stall the
// others, and with a certificate only TLS is spoken.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "server/http/civetweb_tls.h"
#include "server/http/management_server.h"
#include "server/http/password.h"
#include "server/http/scrape_token.h"

namespace nasd::http {
namespace {

using Clock = std::chrono::steady_clock;

int64_t ms_since(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
}

// A TCP connection to 127.0.0.1:port from `from` (another loopback address).
int connect_from(const std::string& from, int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  ::inet_pton(AF_INET, from.c_str(), &a.sin_addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return ::close(fd), -1;
  a.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return ::close(fd), -1;
  return fd;
}

// Reads until the peer closes or `timeout_ms` passes.
std::string read_all(int fd, int timeout_ms) {
  std::string out;
  const auto start = Clock::now();
  char buf[8192];
  while (ms_since(start) < timeout_ms) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

// A port free on 127.0.0.1 now (the listener treats port 0 as "off").
uint16_t free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

struct Reply {
  int status = 0;
  std::string text;
};

Reply request(const std::string& from, int port, const std::string& method, const std::string& path,
              const std::vector<std::string>& headers = {}, const std::string& body = "") {
  int fd = connect_from(from, port);
  if (fd < 0) return {};
  std::string req = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                    "\r\nConnection: close\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  for (const auto& h : headers) req += h + "\r\n";
  req += "\r\n" + body;
  (void)!::write(fd, req.data(), req.size());
  Reply r;
  r.text = read_all(fd, 10'000);
  ::close(fd);
  if (r.text.rfind("HTTP/1.1 ", 0) == 0) r.status = std::atoi(r.text.c_str() + 9);
  return r;
}

struct Listener {
  admin::CommandRegistry commands;
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("nasd-http-port-" + std::to_string(::getpid()));
  std::string token, logged;
  std::mutex log_mu;
  std::unique_ptr<ManagementServer> server;
  explicit Listener(const std::string& tls_cert = "", bool make_dir = true) {
    if (make_dir) {
      std::filesystem::remove_all(dir);
      std::filesystem::create_directories(dir);
    }
    commands.add_command("exports", "", [](const std::vector<std::string>&) {
      return "/r/v0 rw clients 10.0.0.0/24 squash root\n";
    });
    token = store_new_token_file((dir / "http.token").string());
    store_password_file((dir / "http.passwd").string(), PasswordHash::make("admin", "the admin's password", 1000));
    ManagementWiring w;
    w.options.port = free_port();
    w.options.listen = "127.0.0.1";
    w.options.password_file = (dir / "http.passwd").string();
    w.options.token_file = (dir / "http.token").string();
    w.options.tls_cert = tls_cert;
    w.node_name = "n1";
    w.commands = &commands;
    w.stats = std::make_shared<rpc::CallStats>();
    w.log = [this](const std::string& line) {
      std::lock_guard lock(log_mu);
      logged += line + "\n";
    };
    server = std::make_unique<ManagementServer>(std::move(w));
  }
  ~Listener() {
    server.reset();
    std::filesystem::remove_all(dir);
  }
  int port() const { return server->port(); }
};

TEST(ManagementPort, StateIsRefusedToAnotherAddressWithoutALoginOrTheToken) {
  Listener l;
  ASSERT_TRUE(l.server->start()) << l.logged;
  for (const char* path : {"/api/status", "/metrics"}) {
    Reply r = request("127.0.0.2", l.port(), "GET", path);
    EXPECT_EQ(r.status, 401) << path << ": " << r.text;
    EXPECT_EQ(r.text.find("10.0.0.0/24"), std::string::npos) << "the exports' clients leaked";
    EXPECT_EQ(r.text.find("nasd_rpc_calls_total"), std::string::npos);
    Reply ok = request("127.0.0.2", l.port(), "GET", path, {"Authorization: Bearer " + l.token});
    EXPECT_EQ(ok.status, 200) << path << ": " << ok.text;
  }
  // A logged-in browser reads the status too.
  Reply login = request("127.0.0.3", l.port(), "POST", "/api/login",
                        {"X-Requested-With: nasd-page", "Content-Type: application/x-www-form-urlencoded"},
                        "user=admin&password=the+admin%27s+password");
  ASSERT_EQ(login.status, 200) << login.text;
  const size_t at = login.text.find("nasd_session=");
  ASSERT_NE(at, std::string::npos);
  const std::string cookie = "Cookie: " + login.text.substr(at, login.text.find(';', at) - at);
  Reply status = request("127.0.0.3", l.port(), "GET", "/api/status", {cookie});
  EXPECT_EQ(status.status, 200);
  EXPECT_NE(status.text.find("10.0.0.0/24"), std::string::npos);
}

TEST(ManagementPort, ARebindingHostNameIsRefused) {
  Listener l;
  ASSERT_TRUE(l.server->start()) << l.logged;
  int fd = connect_from("127.0.0.2", l.port());
  ASSERT_GE(fd, 0);
  const std::string req = "GET /metrics HTTP/1.1\r\nHost: rebind.attacker.example:" + std::to_string(l.port()) +
                          "\r\nAuthorization: Bearer " + l.token + "\r\nConnection: close\r\n\r\n";
  (void)!::write(fd, req.data(), req.size());
  std::string reply = read_all(fd, 10'000);
  ::close(fd);
  EXPECT_EQ(reply.rfind("HTTP/1.1 421", 0), 0u) << reply;
  EXPECT_EQ(reply.find("nasd_rpc_calls_total"), std::string::npos);
}

// Three wrong passwords from each of twenty addresses: the old global limit (60 a minute) then
// refused everyone, the admin with the right password included.
TEST(ManagementPort, GuessersOnManyAddressesDoNotLockTheAdminOut) {
  Listener l;
  ASSERT_TRUE(l.server->start()) << l.logged;
  const std::vector<std::string> form = {"X-Requested-With: nasd-page",
                                         "Content-Type: application/x-www-form-urlencoded"};
  for (int a = 10; a < 30; ++a)
    for (int k = 0; k < 3; ++k)
      EXPECT_EQ(request("127.0.0." + std::to_string(a), l.port(), "POST", "/api/login", form,
                        "user=admin&password=guess").status, 401);
  EXPECT_EQ(request("127.0.0.10", l.port(), "POST", "/api/login", form, "user=admin&password=guess").status, 401);
  EXPECT_EQ(request("127.0.0.10", l.port(), "POST", "/api/login", form,
                    "user=admin&password=the+admin%27s+password").status, 429)
      << "a guessing address is still held back";
  Reply admin = request("127.0.0.1", l.port(), "POST", "/api/login", form,
                        "user=admin&password=the+admin%27s+password");
  EXPECT_EQ(admin.status, 200) << admin.text;
}

// Slowloris: connections that send half a request and wait. Before, four of them held civetweb's
// four workers until a 10 s timeout and /metrics waited behind them.
TEST(ManagementPort, HalfSentRequestsDoNotStallTheOthers) {
  Listener l;
  ASSERT_TRUE(l.server->start()) << l.logged;
  std::vector<int> slow;
  for (int i = 0; i < 8; ++i) {
    int fd = connect_from("127.0.0.2", l.port());
    ASSERT_GE(fd, 0);
    const std::string half = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
    (void)!::write(fd, half.data(), half.size());
    slow.push_back(fd);
  }
  ::usleep(200'000);  // the workers have picked the slow connections up
  const auto start = Clock::now();
  Reply r = request("127.0.0.1", l.port(), "GET", "/metrics", {"Authorization: Bearer " + l.token});
  const int64_t took = ms_since(start);
  EXPECT_EQ(r.status, 200) << r.text;
  EXPECT_LT(took, 1000) << "a scrape waited behind half-sent requests";
  // And each half-sent request is dropped at its deadline, not held for ever.
  for (int fd : slow) {
    const auto t = Clock::now();
    read_all(fd, ManagementServer::kRequestDeadlineMs + 3000);
    EXPECT_LT(ms_since(t), ManagementServer::kRequestDeadlineMs + 2500) << "a half-sent request was kept";
    ::close(fd);
  }
}

// With a certificate the listener speaks TLS only; a key file others can read is refused.
TEST(ManagementPort, SpeaksTlsWithACertificateAndRefusesAnOpenKey) {
  if (std::system("command -v openssl >/dev/null 2>&1") != 0) GTEST_SKIP() << "no openssl command to make a certificate";
  const auto dir = std::filesystem::temp_directory_path() / ("nasd-http-port-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string pem = (dir / "page.pem").string();
  const std::string cmd = "cd " + dir.string() +
                          " && openssl req -x509 -newkey rsa:2048 -nodes -keyout k.pem -out c.pem -days 1"
                          " -subj /CN=localhost >/dev/null 2>&1 && cat c.pem k.pem > page.pem && rm k.pem";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  ASSERT_EQ(::chmod(pem.c_str(), 0644), 0);
  {
    Listener open_key(pem, false);
    EXPECT_FALSE(open_key.server->start());
    EXPECT_NE(open_key.logged.find("open to other users"), std::string::npos) << open_key.logged;
  }
  std::filesystem::create_directories(dir);
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  ASSERT_EQ(::chmod(pem.c_str(), 0600), 0);
  Listener l(pem, false);
  std::string why;
  if (!civetweb_tls_usable(&why)) {
    // Debian's civetweb 1.15 with OpenSSL 3 (civetweb_tls.h): refused with the reason, and
    // never served in plain HTTP instead.
    EXPECT_FALSE(l.server->start());
    EXPECT_NE(l.logged.find("SSL_get_peer_certificate"), std::string::npos) << l.logged;
    EXPECT_EQ(connect_from("127.0.0.2", l.server->port() ? l.server->port() : 1), -1);
    GTEST_SKIP() << "civetweb's TLS is unusable here: " << why;
  }
  ASSERT_TRUE(l.server->start()) << l.logged;
  EXPECT_NE(l.logged.find("https://"), std::string::npos);

  Reply plain = request("127.0.0.2", l.port(), "GET", "/api/session");
  EXPECT_EQ(plain.status, 0) << "plain HTTP answered on the TLS port: " << plain.text;

  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  ASSERT_NE(ctx, nullptr);
  int fd = connect_from("127.0.0.2", l.port());
  ASSERT_GE(fd, 0);
  SSL* ssl = SSL_new(ctx);
  SSL_set_fd(ssl, fd);
  ASSERT_EQ(SSL_connect(ssl), 1);
  EXPECT_GE(SSL_version(ssl), TLS1_2_VERSION);
  const std::string req = "GET /metrics HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + l.token +
                          "\r\nConnection: close\r\n\r\n";
  ASSERT_EQ(SSL_write(ssl, req.data(), static_cast<int>(req.size())), static_cast<int>(req.size()));
  std::string reply;
  char buf[4096];
  for (int n; (n = SSL_read(ssl, buf, sizeof buf)) > 0;) reply.append(buf, static_cast<size_t>(n));
  SSL_free(ssl);
  SSL_CTX_free(ctx);
  ::close(fd);
  EXPECT_EQ(reply.rfind("HTTP/1.1 200", 0), 0u) << reply;
  EXPECT_NE(reply.find("nasd_rpc_calls_total"), std::string::npos);
}

}  // namespace
}  // namespace nasd::http
