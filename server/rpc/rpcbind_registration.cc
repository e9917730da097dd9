#include "server/rpc/rpcbind_registration.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <rpc/rpc.h>
#include <rpc/rpcb_prot.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace nasd::rpc {

RpcbindMode parse_rpcbind_mode(std::string_view text) {
  if (text == "off" || text == "no" || text == "false") return RpcbindMode::Off;
  if (text == "auto") return RpcbindMode::Auto;
  if (text == "on" || text == "yes" || text == "true") return RpcbindMode::On;
  throw std::invalid_argument("rpcbind must be auto, on or off, not '" + std::string(text) + "'");
}

RpcbindRegistration::RpcbindRegistration(Options options) : options_(std::move(options)) {}

RpcbindRegistration::~RpcbindRegistration() { remove_all(); }

std::string RpcbindRegistration::universal_address(const util::SocketAddress& address) {
  char host[INET6_ADDRSTRLEN] = "";
  const void* raw = address.storage.ss_family == AF_INET6
                        ? static_cast<const void*>(
                              &reinterpret_cast<const sockaddr_in6*>(&address.storage)->sin6_addr)
                        : static_cast<const void*>(
                              &reinterpret_cast<const sockaddr_in*>(&address.storage)->sin_addr);
  inet_ntop(address.storage.ss_family, raw, host, sizeof host);
  uint16_t port = address.port();
  return std::string(host) + "." + std::to_string(port >> 8) + "." + std::to_string(port & 0xff);
}

namespace {

// Connects to rpcbind's Unix socket within `timeout`; -1 and `error` set on failure.
int connect_local(const std::string& path, std::chrono::milliseconds timeout, std::string* error) {
  sockaddr_un sun{};
  sun.sun_family = AF_UNIX;
  if (path.size() >= sizeof sun.sun_path) {
    *error = "rpcbind socket path too long";
    return -1;
  }
  std::memcpy(sun.sun_path, path.c_str(), path.size() + 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    *error = std::string("socket: ") + strerror(errno);
    return -1;
  }
  int rc = connect(fd, reinterpret_cast<sockaddr*>(&sun), sizeof sun);
  if (rc < 0 && (errno == EINPROGRESS || errno == EAGAIN)) {
    pollfd p{fd, POLLOUT, 0};
    do {
      rc = poll(&p, 1, static_cast<int>(timeout.count()));
    } while (rc < 0 && errno == EINTR);
    int soerr = 0;
    socklen_t len = sizeof soerr;
    if (rc == 1) getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len);
    if (rc != 1 || soerr != 0) {
      errno = rc == 1 ? soerr : ETIMEDOUT;
      rc = -1;
    } else {
      rc = 0;
    }
  }
  if (rc < 0) {
    *error = "cannot reach rpcbind at " + path + ": " + strerror(errno);
    close(fd);
    return -1;
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);  // libtirpc expects a blocking socket
  return fd;
}

}  // namespace

bool RpcbindRegistration::call(uint32_t proc, const Entry& entry, bool* result,
                               std::string* error) {
  int fd = connect_local(options_.socket_path, options_.timeout, error);
  if (fd < 0) return false;
  sockaddr_un sun{};
  sun.sun_family = AF_UNIX;
  std::memcpy(sun.sun_path, options_.socket_path.c_str(), options_.socket_path.size() + 1);
  netbuf nb{sizeof sun, sizeof sun, &sun};
  CLIENT* client = clnt_vc_create(fd, &nb, RPCBPROG, RPCBVERS, 0, 0);
  if (client == nullptr) {
    *error = std::string("rpcbind client: ") + clnt_spcreateerror("rpcbind");
    close(fd);
    return false;
  }
  clnt_control(client, CLSET_FD_CLOSE, nullptr);
  std::string owner = std::to_string(geteuid());
  rpcb args{};
  args.r_prog = entry.prog;
  args.r_vers = entry.vers;
  args.r_netid = const_cast<char*>(entry.netid.c_str());
  args.r_addr = const_cast<char*>(entry.uaddr.c_str());
  args.r_owner = owner.data();
  bool_t reply = FALSE;
  timeval tv{static_cast<time_t>(options_.timeout.count() / 1000),
             static_cast<suseconds_t>((options_.timeout.count() % 1000) * 1000)};
  clnt_stat st = clnt_call(client, proc, reinterpret_cast<xdrproc_t>(xdr_rpcb),
                           reinterpret_cast<char*>(&args), reinterpret_cast<xdrproc_t>(xdr_bool),
                           reinterpret_cast<char*>(&reply), tv);
  if (st != RPC_SUCCESS) *error = std::string("rpcbind call failed: ") + clnt_sperrno(st);
  clnt_destroy(client);
  *result = reply != FALSE;
  return st == RPC_SUCCESS;
}

bool RpcbindRegistration::add(uint32_t prog, uint32_t vers, bool tcp, const util::SocketAddress& address,
                              std::string* note) {
  if (options_.mode == RpcbindMode::Off) {
    if (note) *note = "rpcbind registration is off";
    return false;
  }
  if (unreachable_) {
    if (note) *note = "rpcbind not reachable; registration skipped";
    return false;
  }
  bool v6 = address.storage.ss_family == AF_INET6;
  Entry e{prog, vers, tcp ? (v6 ? "tcp6" : "tcp") : (v6 ? "udp6" : "udp"),
          universal_address(address)};
  std::string error;
  bool ok = false;
  // A stale entry from an earlier run would make SET fail; UNSET first ("false" is fine).
  if (call(RPCBPROC_UNSET, e, &ok, &error) && call(RPCBPROC_SET, e, &ok, &error) && !ok)
    error = "rpcbind refused to register program " + std::to_string(prog) + " version " +
            std::to_string(vers) + " on " + e.netid;
  if (error.empty()) {
    registered_.push_back(std::move(e));
    return true;
  }
  if (options_.mode == RpcbindMode::On) throw std::runtime_error(error);
  unreachable_ = true;
  if (note) *note = error + "; registration skipped";
  return false;
}

void RpcbindRegistration::remove_all() {
  for (const Entry& e : registered_) {
    bool ok = false;
    std::string error;
    call(RPCBPROC_UNSET, e, &ok, &error);
  }
  registered_.clear();
}

}  // namespace nasd::rpc
