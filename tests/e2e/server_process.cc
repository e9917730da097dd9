#include "tests/e2e/server_process.h"

#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "tests/e2e/net_util.h"
#include "tests/e2e/raw_rpc.h"

#ifndef NASD_E2E_DEFAULT_BIN
#define NASD_E2E_DEFAULT_BIN ""
#endif
#ifndef NASD_E2E_DEFAULT_ADMIN_BIN
#define NASD_E2E_DEFAULT_ADMIN_BIN ""
#endif

namespace nasd::e2e {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

constexpr uint16_t kRpcbindPort = 111;

// True when `prog` version 3 answers a NULL call on `port`: an open port alone can be a
// listener the kernel has not yet torn down after a kill -9.
bool answers_null(uint16_t port, uint32_t prog) {
  try {
    raw::TcpConnection conn(port);
    raw::Call c;
    c.xid = raw::next_xid();
    c.prog = prog;
    auto r = conn.call(c, std::chrono::seconds(1));
    return r && r->reply_stat == raw::kMsgAccepted && r->accept_stat == raw::kSuccess;
  } catch (const std::exception&) {
    return false;
  }
}

// ganesha refuses to start unless it can register with rpcbind. When none is running we start
// one for the life of the test process and stop it at exit; an rpcbind someone else runs is
// used as it is and left alone.
class RpcbindForGanesha {
 public:
  static void ensure(const std::filesystem::path& log) {
    static std::mutex mu;
    static std::unique_ptr<RpcbindForGanesha> instance;
    std::lock_guard<std::mutex> lock(mu);
    if (tcp_port_open(kRpcbindPort)) return;
    std::string bin = find_executable("rpcbind");
    if (bin.empty()) throw std::runtime_error("ganesha mode needs rpcbind, which is not installed");
    instance = std::make_unique<RpcbindForGanesha>();
    instance->child_ = ChildProcess::spawn({bin, "-f"}, log);
    for (int i = 0; i < 500 && !tcp_port_open(kRpcbindPort); ++i) {
      if (instance->child_.exited())
        throw std::runtime_error("rpcbind exited: " + file_tail(log, 2000));
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!tcp_port_open(kRpcbindPort)) throw std::runtime_error("rpcbind did not open port 111");
  }
  ~RpcbindForGanesha() { child_.terminate(std::chrono::seconds(3)); }

 private:
  ChildProcess child_;
};

}  // namespace

std::optional<ServerChoice> ServerChoice::from_environment(std::string* why_not) {
  ServerChoice c;
  std::string which = env("NASD_E2E_SERVER");
  if (which == "ganesha") {
    c.kind = ServerKind::Ganesha;
    c.binary = find_executable(env("NASD_GANESHA_BIN").empty() ? "ganesha.nfsd"
                                                                : env("NASD_GANESHA_BIN"));
    if (c.binary.empty())
      throw std::runtime_error("NASD_E2E_SERVER=ganesha but ganesha.nfsd was not found");
    return c;
  }
  if (!which.empty() && which != "nasd")
    throw std::runtime_error("NASD_E2E_SERVER must be 'nasd' or 'ganesha', not '" + which + "'");
  c.binary = !env("NASD_BIN").empty() ? env("NASD_BIN") : std::string(NASD_E2E_DEFAULT_BIN);
  c.admin_binary = !env("NASD_ADMIN_BIN").empty() ? env("NASD_ADMIN_BIN")
                                                  : std::string(NASD_E2E_DEFAULT_ADMIN_BIN);
  if (c.binary.empty()) {
    *why_not = "no nasd binary: the build has no `nasd` target yet and NASD_BIN is not set "
               "(NASD_E2E_SERVER=ganesha runs the suite against nfs-ganesha)";
    return std::nullopt;
  }
  if (find_executable(c.binary).empty())
    throw std::runtime_error("nasd binary " + c.binary + " is missing or not executable");
  return c;
}

ServerProcess::ServerProcess(ServerChoice choice, std::filesystem::path root)
    : choice_(std::move(choice)), root_(std::move(root)) {
  layout_.data_dir = root_ / "data";
  std::filesystem::create_directories(layout_.data_dir);
  config_path_ = root_ / (choice_.kind == ServerKind::Nasd ? "nasd.conf" : "ganesha.conf");
  log_path_ = root_ / "server.log";
  pick_free_ports(&layout_.nfs_port, &layout_.mount_port);
  // Each test node its own metrics and management port, none the default 8049 a real node uses.
  do layout_.http_port = pick_free_port();
  while (layout_.http_port == layout_.nfs_port || layout_.http_port == layout_.mount_port);
  write_config();
}

ServerProcess::~ServerProcess() { stop(); }

void ServerProcess::write_config() {
  std::ofstream out(config_path_);
  if (choice_.kind == ServerKind::Nasd) {
    out << nasd_config_text(layout_);
  } else {
    std::filesystem::create_directories(ganesha_export_dir(layout_));
    std::filesystem::create_directories(layout_.data_dir / "recovery");
    out << ganesha_config_text(layout_);
  }
  if (!out) throw std::runtime_error("cannot write " + config_path_.string());
}

void ServerProcess::rewrite_config(const std::string& text) {
  if (choice_.kind != ServerKind::Nasd) throw std::logic_error("rewrite_config is for nasd");
  const std::filesystem::path tmp = config_path_.string() + ".tmp";
  {
    std::ofstream out(tmp);
    out << text;
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
  }
  std::filesystem::rename(tmp, config_path_);  // the server never reads half a file
}

void ServerProcess::start() {
  if (running()) throw std::logic_error("server already running");
  std::vector<std::string> argv;
  if (choice_.kind == ServerKind::Nasd) {
    argv = {choice_.binary, "--config", config_path_.string()};
  } else {
    RpcbindForGanesha::ensure(root_ / "rpcbind.log");
    argv = {choice_.binary, "-F", "-f", config_path_.string(), "-L", log_path_.string(),
            "-p", (root_ / "ganesha.pid").string()};
  }
  {
    std::ofstream(log_path_, std::ios::app) << "---- e2e: starting " << choice_.name() << "\n";
  }
  child_ = ChildProcess::spawn(argv, log_path_);
  wait_until_ready(std::chrono::seconds(30));
}

void ServerProcess::wait_until_ready(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (child_.exited()) {
      last_exit_ = child_.describe_status();
      throw std::runtime_error(std::string(choice_.name()) + " exited during start-up (" +
                               last_exit_ + "); log tail:\n" + log_tail());
    }
    if (answers_null(layout_.nfs_port, raw::kNfsProgram) &&
        answers_null(layout_.mount_port, raw::kMountProgram))
      return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  child_.kill9();
  throw std::runtime_error(std::string(choice_.name()) + " did not answer NULL on ports " +
                           std::to_string(layout_.nfs_port) + "/" +
                           std::to_string(layout_.mount_port) + " in time; log tail:\n" +
                           log_tail());
}

bool ServerProcess::stop(std::chrono::milliseconds grace) {
  if (child_.exited()) return child_.exited_cleanly();
  child_.terminate(grace);
  last_exit_ = child_.describe_status();
  return child_.exited_cleanly();
}

void ServerProcess::kill9() {
  child_.kill9();
  last_exit_ = child_.describe_status();
  // The kernel may keep a killed process's listening sockets for a moment (io_uring tears its
  // rings down asynchronously); connections made then are reset. The crash is complete once
  // the ports are closed.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (tcp_port_open(layout_.nfs_port) || tcp_port_open(layout_.mount_port)) {
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("ports still open 10 s after kill -9");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

bool ServerProcess::restart() {
  bool clean = stop();
  start();
  return clean;
}

bool ServerProcess::running() { return !child_.exited(); }

std::string ServerProcess::log_tail(size_t bytes) const { return file_tail(log_path_, bytes); }

std::string ServerProcess::url(const std::string& path, const std::string& extra_query) const {
  std::string u = std::string("nfs://127.0.0.1") + kExportPath + path +
                  "?nfsport=" + std::to_string(layout_.nfs_port) +
                  "&mountport=" + std::to_string(layout_.mount_port) + "&version=3";
  if (!extra_query.empty()) u += "&" + extra_query;
  return u;
}

}  // namespace nasd::e2e
