// Registration of the server's programs with the local rpcbind, so that clients which ask
// the portmapper (showmount, mount.nfs without port=, rpcinfo) find them.
//
// Talks RPCBIND v3 to rpcbind's local socket directly, with its own short timeouts, rather
// than through rpcb_set(): that call waits up to a minute for an unresponsive rpcbind, and a
// server must never hang at startup over an optional service. rpcbind only accepts SET and
// UNSET from local callers, which its Unix socket guarantees.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/net.h"

namespace nasd::rpc {

// off: never register. auto: register when rpcbind answers, otherwise carry on.
// on: registration must succeed (start-up fails otherwise).
enum class RpcbindMode { Off, Auto, On };
RpcbindMode parse_rpcbind_mode(std::string_view text);  // throws std::invalid_argument

class RpcbindRegistration {
 public:
  struct Options {
    RpcbindMode mode = RpcbindMode::Auto;
    std::chrono::milliseconds timeout{1000};  // per rpcbind call, connecting included
    std::string socket_path = "/run/rpcbind.sock";
  };

  explicit RpcbindRegistration(Options options);
  ~RpcbindRegistration();  // remove_all()
  RpcbindRegistration(const RpcbindRegistration&) = delete;
  RpcbindRegistration& operator=(const RpcbindRegistration&) = delete;

  // Registers (prog, vers) as reachable over TCP or UDP at `address` (the listener's address
  // and port), replacing any stale registration a previous run left behind. Returns true when
  // registered, false when skipped (mode off, or auto and rpcbind unreachable; `note` then
  // says why). Throws std::runtime_error in mode on when rpcbind is unreachable or refuses.
  bool add(uint32_t prog, uint32_t vers, bool tcp, const util::SocketAddress& address,
           std::string* note = nullptr);
  // Unregisters everything add() registered. Failures are ignored: rpcbind may be gone.
  void remove_all();

  size_t registered_count() const { return registered_.size(); }

  // "127.0.0.1.8.1" for 127.0.0.1 port 2049 (RFC 5665 universal address).
  static std::string universal_address(const util::SocketAddress& address);

 private:
  struct Entry {
    uint32_t prog, vers;
    std::string netid, uaddr;
  };
  bool call(uint32_t proc, const Entry& entry, bool* result, std::string* error);

  Options options_;
  bool unreachable_ = false;  // auto mode remembers a failed contact and stops trying
  std::vector<Entry> registered_;
};

}  // namespace nasd::rpc
