// The node's management HTTP listener (civetweb): Prometheus metrics and the management page.
//   GET  /metrics       text exposition format: the RPC statistics plus what the node reports
//   GET  /              the page (HTML, JS and CSS embedded in the binary; no external fetch)
//   GET  /api/status    JSON: node, RPC statistics, the node's structured state (volumes,
//                       NVRAM, cluster, exports) and the text of the `nasd-admin` views
//   GET  /api/session   whether this browser is logged in, and its CSRF token
//   POST /api/login     user, password (form-encoded); sets the session cookie
//   POST /api/logout
//   POST /api/action    action = failover | failback | snapshot-create (+ volume, name)
// The page's files and /api/session are open; /metrics and /api/status show exports, clients
// and lock owners, so they need a session cookie or the read-only bearer token
// (`Authorization: Bearer`, scrape_token.h). A POST needs the header
// `X-Requested-With: nasd-page` (a cross-site form cannot send it), and an action also a live
// session cookie (HttpOnly, SameSite=Strict) and that session's CSRF token in `X-CSRF-Token`.
// Every request needs a Host the page is served as (host_check.h: against DNS rebinding).
// Failed logins and wrong tokens are rate-limited per client address (LoginLimiter). With
// `http_tls_cert` the listener speaks HTTPS only.
//
// The page reads state through the admin command registry, the same handlers `nasd-admin`
// runs, so both always agree; actions run those handlers too. Request bodies are bounded
// (kMaxBody) and every handler catches everything: no request can end the process.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "server/admin/command_registry.h"
#include "server/http/http_options.h"
#include "server/http/json_writer.h"
#include "server/http/login_limiter.h"
#include "server/http/metric_families.h"
#include "server/http/session_store.h"
#include "server/rpc/call_stats.h"

class CivetServer;

namespace nasd::http {

struct ManagementWiring {
  HttpOptions options;
  std::string node_name;
  admin::CommandRegistry* commands = nullptr;  // outlives the server
  std::shared_ptr<rpc::CallStats> stats;
  // Writes members ("volumes", "nvram", "cluster", "exports", ...) into the status object.
  std::function<void(JsonWriter&)> node_status;
  // Metric families of the rooms this server cannot see (volumes, NVRAM, cluster).
  std::function<MetricFamilies()> node_metrics;
  std::function<void(const std::string&)> log;
};

// A text view of the page: a titled `nasd-admin` command. Shown when the command exists.
struct AdminView {
  std::string id, title;
  std::vector<std::string> words;
};
// cluster, nvram, volumes, snapshot list, exports, stats: extend here to show more.
const std::vector<AdminView>& default_admin_views();

class ManagementServer {
 public:
  static constexpr size_t kMaxBody = 4096;
  // Worker threads, and how long a request's headers may take to arrive (see start()).
  static constexpr int kWorkers = 32;
  static constexpr int kRequestDeadlineMs = 2000;

  explicit ManagementServer(ManagementWiring wiring);
  ~ManagementServer();  // stop()
  ManagementServer(const ManagementServer&) = delete;
  ManagementServer& operator=(const ManagementServer&) = delete;

  // Binds options.listen:options.port and starts serving. False (logged) when the port cannot
  // be bound: the node serves NFS without its page rather than not at all.
  bool start();
  void stop();
  // The bound port after a successful start(), else 0.
  int port() const;

  // The handlers' logic, callable without HTTP (unit tests).
  std::string status_json() const;
  std::string metrics_text() const;

  struct Request {
    std::string method, path, client, host, authorization, cookie_header, requested_with,
        csrf_header, body;
  };
  struct Response {
    int status = 200;
    std::string content_type = "application/json";
    std::string body;
    std::vector<std::string> headers;  // "Name: value"
  };
  Response handle(const Request& request);

 private:
  class Handler;
  Response api_session(const Request& r);
  Response api_login(const Request& r);
  Response api_logout(const Request& r);
  Response api_action(const Request& r);
  std::string session_id(const Request& r) const;
  // nullopt when `r` may read the node's state (a live session, or the read-only token); else
  // the refusal to send.
  std::optional<Response> refuse_reader(const Request& r);

  ManagementWiring w_;
  SessionStore sessions_;
  LoginLimiter limiter_;
  std::unique_ptr<Handler> handler_;
  std::unique_ptr<CivetServer> server_;
};

}  // namespace nasd::http
