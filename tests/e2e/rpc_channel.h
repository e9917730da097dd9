// One libnfs rpc_context connected to a loopback port, with a synchronous call: it queues a raw
// libnfs request (rpc_nfs3_*_async, rpc_mount3_*_async) and drives the socket until the reply
// arrives or a deadline passes. This is what lets a test issue each procedure with exactly the
// arguments it wants, and see the reply exactly as decoded.
#pragma once

#include <nfsc/libnfs.h>  // defines EXTERN, which the raw headers need
#include <nfsc/libnfs-raw.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace nasd::e2e {

// A call that produced no decoded reply: connection trouble, a timeout, or an RPC-level
// rejection (PROG_MISMATCH, GARBAGE_ARGS, AUTH_ERROR...).
class RpcError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Credential {
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::vector<uint32_t> groups;
};

class RpcChannel {
 public:
  RpcChannel(uint16_t port, const Credential& cred,
             std::chrono::milliseconds timeout = std::chrono::seconds(15))
      : RpcChannel("127.0.0.1", port, cred, timeout) {}
  // The same to another address (the failover tools talk to a node's service address).
  RpcChannel(const std::string& host, uint16_t port, const Credential& cred,
             std::chrono::milliseconds timeout = std::chrono::seconds(15));
  ~RpcChannel();
  RpcChannel(const RpcChannel&) = delete;
  RpcChannel& operator=(const RpcChannel&) = delete;

  void set_credential(const Credential& cred);
  const Credential& credential() const { return cred_; }

  // `issue(rpc, cb, private_data)` queues the request; `on_reply(data)` runs with libnfs's
  // decoded reply, which is only valid during that call, so it copies what it needs.
  using Issue = std::function<int(rpc_context*, rpc_cb, void*)>;
  using OnReply = std::function<void(void* data)>;
  // `what` names the call in error messages ("LOOKUP", "MNT").
  void call(const char* what, const Issue& issue, const OnReply& on_reply);

  // NFS3ERR_JUKEBOX ("try again later", RFC 1813) is a valid answer to almost any call, and a
  // client sends the call again after a pause. Off by default: a server the test started
  // itself has no reason to give it. Against a cluster under load (NASD_E2E_TARGET) the
  // fixture allows up to `budget` of retrying per call (Nfs3Client does the retrying) and
  // reports how many calls needed it.
  void set_jukebox_retry(std::chrono::milliseconds budget) { jukebox_budget_ = budget; }
  std::chrono::milliseconds jukebox_budget() const { return jukebox_budget_; }
  void count_jukebox_retry() {
    ++jukebox_retries_;
    ++process_jukebox_retries_;
  }
  uint64_t jukebox_retries() const { return jukebox_retries_; }
  // Over every channel of this process.
  static uint64_t process_jukebox_retries() { return process_jukebox_retries_; }

 private:
  struct Pending;
  static void on_complete(rpc_context* rpc, int status, void* data, void* private_data);
  void wait(Pending* p, const char* what);

  rpc_context* rpc_ = nullptr;
  Credential cred_;
  std::chrono::milliseconds timeout_;
  bool broken_ = false;  // after a timeout or disconnect: libnfs state is unknown, refuse calls
  std::chrono::milliseconds jukebox_budget_{0};
  uint64_t jukebox_retries_ = 0;
  static inline std::atomic<uint64_t> process_jukebox_retries_{0};
  // Requests still queued inside libnfs when we gave up on them; freed after the context.
  std::list<std::unique_ptr<Pending>> abandoned_;
};

}  // namespace nasd::e2e
