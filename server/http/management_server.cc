#include "server/http/management_server.h"

#include <CivetServer.h>

#include <cctype>
#include <chrono>
#include <exception>
#include <optional>

#include <fcntl.h>
#include <unistd.h>

#include "server/http/civetweb_tls.h"
#include "server/http/host_check.h"
#include "server/http/page_assets.h"
#include "server/http/password.h"
#include "server/http/rpc_metrics.h"
#include "server/http/scrape_token.h"
#include "util/secret_key.h"

namespace nasd::http {
namespace {

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

constexpr const char* kCookie = "nasd_session";
constexpr const char* kPageMarker = "nasd-page";

ManagementServer::Response json_response(int status, const std::string& body) {
  ManagementServer::Response r;
  r.status = status;
  r.body = body;
  return r;
}

ManagementServer::Response error_response(int status, const std::string& message) {
  JsonWriter j;
  j.begin_object().field("ok", false).field("error", message).end_object();
  return json_response(status, j.str());
}

// A form field of an application/x-www-form-urlencoded body; "" when absent or too long.
std::string form_var(const std::string& body, const char* name) {
  char buf[1100];
  int n = mg_get_var(body.data(), body.size(), name, buf, sizeof buf);
  return n < 0 ? std::string() : std::string(buf, static_cast<size_t>(n));
}

// Volume and snapshot names: what `nasd-admin` accepts as one word, and nothing a shell or a
// log line could misread.
bool safe_name(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
      return false;
  return s != "." && s != "..";
}

// The answer to an address the login limiter holds back for `wait_ms`.
ManagementServer::Response retry_later(int64_t wait_ms) {
  const std::string seconds = std::to_string((wait_ms + 999) / 1000);
  ManagementServer::Response out =
      error_response(429, "too many failed logins or tokens; try again in " + seconds + " s");
  out.headers.push_back("Retry-After: " + seconds);
  return out;
}

const char* status_text(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 413: return "Payload Too Large";
    case 421: return "Misdirected Request";
    case 429: return "Too Many Requests";
    case 503: return "Service Unavailable";
    default: return "Internal Server Error";
  }
}

}  // namespace

const std::vector<AdminView>& default_admin_views() {
  static const std::vector<AdminView> views = {
      {"cluster", "Cluster", {"cluster"}},
      {"volumes", "Volumes", {"volumes"}},
      {"nvram", "NVRAM", {"nvram"}},
      {"snapshots", "Snapshots", {"snapshot", "list"}},
      {"exports", "Exports", {"exports"}},
      {"locks", "Locks", {"locks"}},
      {"stats", "Statistics", {"stats"}},
  };
  return views;
}

// civetweb's side: turns a connection into a Request and writes the Response back.
class ManagementServer::Handler : public CivetHandler {
 public:
  explicit Handler(ManagementServer* owner) : owner_(owner) {}
  bool handleGet(CivetServer*, mg_connection* conn) override { return serve(conn); }
  bool handlePost(CivetServer*, mg_connection* conn) override { return serve(conn); }
  bool handleHead(CivetServer*, mg_connection* conn) override { return serve(conn); }
  bool handlePut(CivetServer*, mg_connection* conn) override { return serve(conn); }
  bool handleDelete(CivetServer*, mg_connection* conn) override { return serve(conn); }

 private:
  bool serve(mg_connection* conn) {
    Response out;
    bool head_only = false;
    try {
      const mg_request_info* info = mg_get_request_info(conn);
      Request r;
      r.method = info->request_method ? info->request_method : "";
      head_only = r.method == "HEAD";
      r.path = info->local_uri ? info->local_uri : "";
      r.client = info->remote_addr;
      auto header = [&](const char* name) {
        const char* v = mg_get_header(conn, name);
        return v ? std::string(v) : std::string();
      };
      r.host = header("Host");
      r.authorization = header("Authorization");
      r.cookie_header = header("Cookie");
      r.requested_with = header("X-Requested-With");
      r.csrf_header = header("X-CSRF-Token");
      if (info->content_length > static_cast<long long>(kMaxBody)) {
        out = error_response(413, "request body too large");
      } else {
        char buf[kMaxBody + 1];
        size_t got = 0;
        while (got <= kMaxBody) {
          int n = mg_read(conn, buf + got, kMaxBody + 1 - got);
          if (n <= 0) break;
          got += static_cast<size_t>(n);
        }
        if (got > kMaxBody) {
          out = error_response(413, "request body too large");
        } else {
          r.body.assign(buf, got);
          out = owner_->handle(r);
        }
      }
    } catch (const std::exception& e) {
      out = error_response(500, e.what());
    } catch (...) {
      out = error_response(500, "internal error");
    }
    std::string head = "HTTP/1.1 " + std::to_string(out.status) + " " + status_text(out.status) +
                       "\r\nContent-Type: " + out.content_type +
                       "\r\nContent-Length: " + std::to_string(out.body.size()) +
                       "\r\nCache-Control: no-store"
                       "\r\nX-Content-Type-Options: nosniff"
                       "\r\nX-Frame-Options: DENY"
                       "\r\nReferrer-Policy: no-referrer"
                       "\r\nContent-Security-Policy: default-src 'self'; img-src 'self' data:; "
                       "frame-ancestors 'none'; form-action 'self'"
                       "\r\nConnection: close\r\n";
    for (const auto& h : out.headers) head += h + "\r\n";
    head += "\r\n";
    mg_write(conn, head.data(), head.size());
    if (!head_only) mg_write(conn, out.body.data(), out.body.size());
    return true;
  }
  ManagementServer* owner_;
};

ManagementServer::ManagementServer(ManagementWiring wiring) : w_(std::move(wiring)) {
  if (!w_.log) w_.log = [](const std::string&) {};
}

ManagementServer::~ManagementServer() { stop(); }

bool ManagementServer::start() {
  if (!w_.options.enabled() || server_) return false;
  const std::string where = w_.options.listen + ":" + std::to_string(w_.options.port);
  const bool tls = !w_.options.tls_cert.empty();
  if (tls) {
    // The file holds the private key: refused, with the page off, when others can read it.
    const int fd = ::open(w_.options.tls_cert.c_str(), O_RDONLY | O_CLOEXEC);
    std::string refused;
    if (fd < 0) refused = "cannot open " + w_.options.tls_cert;
    try {
      if (fd >= 0) check_private_file(fd, w_.options.tls_cert, "TLS certificate and key");
    } catch (const std::exception& e) {
      refused = e.what();
    }
    if (fd >= 0) ::close(fd);
    std::string why;
    if (refused.empty() && !civetweb_tls_usable(&why)) refused = "http_tls_cert is set but " + why;
    if (!refused.empty()) {
      w_.log("management page and metrics off: " + refused);
      return false;
    }
  }
  handler_ = std::make_unique<Handler>(this);
  // One slow client must not stall the others: civetweb gives each connection a worker until
  // its request is read, so there are kWorkers of them, and a request's headers must arrive
  // whole within kRequestDeadlineMs of its first byte (civetweb's request_timeout_ms bounds
  // the header read as a whole, each later read or write, and a TLS handshake). No keep-alive:
  // a connection serves one request.
  std::vector<std::string> options = {
      "listening_ports", where + (tls ? "s" : ""),
      "num_threads", std::to_string(kWorkers),
      "request_timeout_ms", std::to_string(kRequestDeadlineMs),
      "enable_keep_alive", "no",
      "enable_directory_listing", "no",
  };
  if (tls) {
    options.insert(options.end(), {"ssl_certificate", w_.options.tls_cert,
                                   "ssl_protocol_version", "4"});  // TLS 1.2 and later
  }
  try {
    server_ = std::make_unique<CivetServer>(options);
  } catch (const std::exception& e) {
    w_.log("management page and metrics off: cannot listen on " + w_.options.listen + ":" +
           std::to_string(w_.options.port) + " (" + e.what() + ")");
    server_.reset();
    return false;
  }
  server_->addHandler("/", handler_.get());
  w_.log(std::string("management page on ") + (tls ? "https://" : "http://") + where +
         "/, Prometheus metrics at /metrics (login or the read-only token)");
  return true;
}

void ManagementServer::stop() {
  if (server_) server_->close();
  server_.reset();
  handler_.reset();
}

int ManagementServer::port() const {
  if (!server_) return 0;
  auto ports = server_->getListeningPorts();
  return ports.empty() ? 0 : ports.front();
}

std::string ManagementServer::metrics_text() const {
  MetricFamilies all = rpc_metric_families(w_.stats->snapshot());
  if (w_.node_metrics) all.append(w_.node_metrics());
  return all.text();
}

std::string ManagementServer::status_json() const {
  JsonWriter j;
  j.begin_object();
  j.field("node", w_.node_name).field("time_ms", int64_t{wall_ms()});
  write_rpc_json(j, w_.stats->snapshot());
  if (w_.node_status) w_.node_status(j);
  // The `nasd-admin` views, from the same handlers.
  j.key("admin").begin_array();
  for (const AdminView& v : default_admin_views()) {
    if (!w_.commands || !w_.commands->has(v.words.front())) continue;
    admin::CommandRegistry::Result res = w_.commands->run(v.words);
    j.begin_object().field("id", v.id).field("title", v.title);
    j.key("command").begin_array();
    for (const auto& word : v.words) j.value(word);
    j.end_array().field("ok", res.ok).field("text", res.text).end_object();
  }
  j.end_array();
  j.key("actions").begin_array();
  if (w_.commands && w_.commands->has("failover")) j.value("failover").value("failback");
  if (w_.commands && w_.commands->has("snapshot")) j.value("snapshot-create");
  j.end_array();
  j.end_object();
  return j.str();
}

std::string ManagementServer::session_id(const Request& r) const {
  char buf[128];
  int n = mg_get_cookie(r.cookie_header.c_str(), kCookie, buf, sizeof buf);
  return n <= 0 ? std::string() : std::string(buf, static_cast<size_t>(n));
}

std::optional<ManagementServer::Response> ManagementServer::refuse_reader(const Request& r) {
  std::string id = session_id(r);
  if (!id.empty() && sessions_.touch(id, now_ms())) return std::nullopt;
  std::optional<std::string> presented = bearer_token(r.authorization);
  if (!presented) {
    Response out = error_response(401, "log in first (or send the read-only token: Authorization: Bearer)");
    out.headers.push_back("WWW-Authenticate: Bearer realm=\"nasd\"");
    return out;
  }
  if (int64_t wait = limiter_.wait_ms(r.client, now_ms()); wait > 0) return retry_later(wait);
  TokenFile file = load_token_file(w_.options.token_file);
  if (!file.error.empty()) w_.log("management page: read-only token refused: " + file.error);
  if (file.token && constant_time_equal(*file.token, *presented)) {
    limiter_.succeeded(r.client);
    return std::nullopt;
  }
  limiter_.failed(r.client, now_ms());
  w_.log("management page: wrong read-only token from " + r.client);
  Response out = error_response(401, "wrong token");
  out.headers.push_back("WWW-Authenticate: Bearer realm=\"nasd\", error=\"invalid_token\"");
  return out;
}

ManagementServer::Response ManagementServer::handle(const Request& r) {
  if (!host_allowed(r.host, w_.options.hosts))
    return error_response(421, "this page is not served as '" + r.host +
                                   "' (an IP address, localhost, or a name in [node] http_hosts)");
  if (r.method == "GET" || r.method == "HEAD") {
    if (r.path == "/" || r.path == "/index.html") {
      Response out;
      out.content_type = "text/html; charset=utf-8";
      out.body = kIndexHtml;
      return out;
    }
    if (r.path == "/app.js") {
      Response out;
      out.content_type = "text/javascript; charset=utf-8";
      out.body = kAppJs;
      return out;
    }
    if (r.path == "/app.css") {
      Response out;
      out.content_type = "text/css; charset=utf-8";
      out.body = kAppCss;
      return out;
    }
    if (r.path == "/metrics") {
      if (auto refused = refuse_reader(r)) return *refused;
      Response out;
      out.content_type = "text/plain; version=0.0.4; charset=utf-8";
      out.body = metrics_text();
      return out;
    }
    if (r.path == "/api/status") {
      if (auto refused = refuse_reader(r)) return *refused;
      return json_response(200, status_json());
    }
    if (r.path == "/api/session") return api_session(r);
    return error_response(404, "not found");
  }
  if (r.method != "POST") return error_response(405, "method not allowed");
  if (r.requested_with != kPageMarker)
    return error_response(403, "POST requests come from the management page only");
  if (r.path == "/api/login") return api_login(r);
  if (r.path == "/api/logout") return api_logout(r);
  if (r.path == "/api/action") return api_action(r);
  return error_response(404, "not found");
}

ManagementServer::Response ManagementServer::api_session(const Request& r) {
  std::string id = session_id(r);
  std::optional<std::string> csrf;
  if (!id.empty()) csrf = sessions_.touch(id, now_ms());
  JsonWriter j;
  j.begin_object().field("logged_in", csrf.has_value());
  if (csrf) j.field("csrf", *csrf);
  j.field("login_available", load_password_file(w_.options.password_file).has_value());
  j.end_object();
  return json_response(200, j.str());
}

ManagementServer::Response ManagementServer::api_login(const Request& r) {
  if (int64_t wait = limiter_.wait_ms(r.client, now_ms()); wait > 0) return retry_later(wait);
  auto hash = load_password_file(w_.options.password_file);
  if (!hash)
    return error_response(503, "no admin password is set (nasd-passwd --random " +
                                   w_.options.password_file + ")");
  std::string user = form_var(r.body, "user"), password = form_var(r.body, "password");
  if (!hash->verify(user, password)) {
    limiter_.failed(r.client, now_ms());
    w_.log("management page: failed login from " + r.client);
    return error_response(401, "wrong user or password");
  }
  limiter_.succeeded(r.client);
  SessionStore::Created s = sessions_.create(now_ms());
  w_.log("management page: " + user + " logged in from " + r.client);
  JsonWriter j;
  j.begin_object().field("ok", true).field("csrf", s.csrf).end_object();
  Response out = json_response(200, j.str());
  out.headers.push_back(std::string("Set-Cookie: ") + kCookie + "=" + s.id +
                        "; Path=/; HttpOnly; SameSite=Strict");
  return out;
}

ManagementServer::Response ManagementServer::api_logout(const Request& r) {
  std::string id = session_id(r);
  if (!id.empty()) sessions_.remove(id);
  Response out = json_response(200, "{\"ok\":true}");
  out.headers.push_back(std::string("Set-Cookie: ") + kCookie +
                        "=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0");
  return out;
}

ManagementServer::Response ManagementServer::api_action(const Request& r) {
  std::string id = session_id(r);
  std::optional<std::string> csrf;
  if (!id.empty()) csrf = sessions_.touch(id, now_ms());
  if (!csrf) return error_response(401, "log in first");
  if (!constant_time_equal(*csrf, r.csrf_header)) return error_response(403, "bad CSRF token");
  std::string action = form_var(r.body, "action");
  std::vector<std::string> words;
  if (action == "failover" || action == "failback") {
    words = {action};
  } else if (action == "snapshot-create") {
    std::string volume = form_var(r.body, "volume"), name = form_var(r.body, "name");
    if (!safe_name(volume) || !safe_name(name))
      return error_response(400, "volume and snapshot names: 1-64 letters, digits, '-', '_', '.'");
    words = {"snapshot", "create", volume, name};
  } else {
    return error_response(400, "unknown action");
  }
  if (!w_.commands || !w_.commands->has(words.front()))
    return error_response(400, "this node does not offer '" + words.front() + "'");
  w_.log("management page: action " + action + " from " + r.client);
  admin::CommandRegistry::Result res = w_.commands->run(words);
  JsonWriter j;
  j.begin_object().field("ok", res.ok).field("text", res.text).end_object();
  return json_response(res.ok ? 200 : 400, j.str());
}

}  // namespace nasd::http
