#include "tests/e2e/rpc_channel.h"

#include <poll.h>

namespace nasd::e2e {
namespace {
// libnfs returns NULL when no error text was recorded.
std::string error_text(rpc_context* rpc) {
  const char* e = rpc ? rpc_get_error(rpc) : nullptr;
  return e ? e : "connection lost";
}
}  // namespace

struct RpcChannel::Pending {
  bool done = false;
  int status = RPC_STATUS_ERROR;
  std::string error;
  OnReply on_reply;
};

void RpcChannel::on_complete(rpc_context*, int status, void* data, void* private_data) {
  auto* p = static_cast<Pending*>(private_data);
  p->done = true;
  p->status = status;
  if (status == RPC_STATUS_SUCCESS) {
    if (p->on_reply) p->on_reply(data);
  } else if (status == RPC_STATUS_ERROR && data) {
    p->error = static_cast<const char*>(data);
  } else {
    p->error = status == RPC_STATUS_TIMEOUT ? "timed out" : "cancelled";
  }
}

RpcChannel::RpcChannel(const std::string& host, uint16_t port, const Credential& cred,
                       std::chrono::milliseconds timeout)
    : timeout_(timeout) {
  rpc_ = rpc_init_context();
  if (!rpc_) throw RpcError("rpc_init_context failed");
  set_credential(cred);
  auto p = std::make_unique<Pending>();
  if (rpc_connect_async(rpc_, host.c_str(), port, on_complete, p.get()) != 0) {
    std::string err = error_text(rpc_);
    rpc_destroy_context(rpc_);
    rpc_ = nullptr;
    throw RpcError("connect to " + host + ":" + std::to_string(port) + ": " + err);
  }
  try {
    wait(p.get(), "connect");
  } catch (...) {
    abandoned_.push_back(std::move(p));
    rpc_destroy_context(rpc_);
    rpc_ = nullptr;
    abandoned_.clear();
    throw;
  }
}

RpcChannel::~RpcChannel() {
  if (rpc_) rpc_destroy_context(rpc_);
  abandoned_.clear();
}

void RpcChannel::set_credential(const Credential& cred) {
  cred_ = cred;
  std::vector<uint32_t> groups = cred.groups;
  AUTH* auth = libnfs_authunix_create("nasd-e2e", cred.uid, cred.gid,
                                      static_cast<uint32_t>(groups.size()),
                                      groups.empty() ? nullptr : groups.data());
  rpc_set_auth(rpc_, auth);  // the context owns and frees it
}

void RpcChannel::call(const char* what, const Issue& issue, const OnReply& on_reply) {
  if (broken_) throw RpcError(std::string(what) + ": channel unusable after an earlier failure");
  auto p = std::make_unique<Pending>();
  p->on_reply = on_reply;
  if (issue(rpc_, on_complete, p.get()) != 0)
    throw RpcError(std::string(what) + ": cannot queue: " + error_text(rpc_));
  Pending* raw = p.get();
  abandoned_.push_back(std::move(p));  // stays alive until we know libnfs is done with it
  wait(raw, what);
  abandoned_.pop_back();
}

void RpcChannel::wait(Pending* p, const char* what) {
  auto deadline = std::chrono::steady_clock::now() + timeout_;
  while (!p->done) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      broken_ = true;
      throw RpcError(std::string(what) + ": no reply within " +
                     std::to_string(timeout_.count()) + " ms");
    }
    pollfd pfd{rpc_get_fd(rpc_), static_cast<short>(rpc_which_events(rpc_)), 0};
    int r = poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left.count(), 100)));
    if (r < 0 && errno != EINTR) {
      broken_ = true;
      throw RpcError(std::string(what) + ": poll failed");
    }
    if (rpc_service(rpc_, r > 0 ? pfd.revents : 0) < 0) {
      broken_ = true;
      throw RpcError(std::string(what) + ": " + error_text(rpc_));
    }
  }
  if (p->status != RPC_STATUS_SUCCESS) {
    throw RpcError(std::string(what) + " failed: " + p->error);
  }
}

}  // namespace nasd::e2e
