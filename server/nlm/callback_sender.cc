#include "server/nlm/callback_sender.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "server/nfs/mount/mount_service.h"
#include "server/nlm/xdr/nlm4_prot.h"
#include "util/net.h"

namespace nasd::nlm {
namespace {

// Writes arguments that are already XDR-encoded as they are (their length is a multiple of
// four, so no padding is added).
bool_t put_encoded(XDR* xdrs, void* p) {
  auto* args = static_cast<std::vector<uint8_t>*>(p);
  return xdr_opaque(xdrs, reinterpret_cast<char*>(args->data()), static_cast<u_int>(args->size()));
}

xdrproc_t put_encoded_proc() {
  return reinterpret_cast<xdrproc_t>(reinterpret_cast<void (*)()>(put_encoded));
}

timeval to_timeval(std::chrono::milliseconds t) {
  timeval tv{};
  tv.tv_sec = t.count() / 1000;
  tv.tv_usec = (t.count() % 1000) * 1000;
  return tv;
}

// A UDP client of the call's service at its host. With `from`, the socket is bound to that
// local address first, so that the call leaves from it: the service's address is looked up
// through a client libtirpc makes (which binds its own socket), then called on ours.
CLIENT* client_for(const CallbackCall& call, timeval tv) {
  CLIENT* lookup = clnt_create_timed(call.route.host.c_str(), call.prog, call.vers, "udp", &tv);
  if (!lookup || call.route.from.empty()) return lookup;
  // CLGET_SVC_ADDR points `where` at the client's own copy: taken before the client goes.
  sockaddr_storage service{};
  netbuf where{};
  bool found = clnt_control(lookup, CLGET_SVC_ADDR, reinterpret_cast<char*>(&where)) &&
               where.buf && where.len > 0 && where.len <= sizeof service;
  if (found) std::memcpy(&service, where.buf, where.len);
  clnt_destroy(lookup);
  util::SocketAddress local;
  std::string not_numeric;
  if (!found || !util::parse_socket_address(call.route.from, 0, &local, &not_numeric) ||
      local.family() != service.ss_family)
    return nullptr;
  int fd = ::socket(local.family(), SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return nullptr;
  if (::bind(fd, local.get(), local.length) != 0) {
    ::close(fd);
    return nullptr;
  }
  netbuf to{where.len, where.len, &service};
  CLIENT* client = clnt_dg_create(fd, &to, call.prog, call.vers, 0, 0);
  if (!client) {
    ::close(fd);
    return nullptr;
  }
  clnt_control(client, CLSET_FD_CLOSE, nullptr);
  return client;
}

}  // namespace

std::string called_address(const rpc::CallContext& call) {
  if (call.local_len == 0) return "";
  const std::string host = nfs::peer_host(call.local);
  return util::is_any_address(host) ? "" : host;
}

CallbackSender::CallbackSender(Options options) : options_(options) {
  thread_ = std::thread([this] { run(); });
}

CallbackSender::~CallbackSender() { stop(); }

void CallbackSender::set_relay(std::shared_ptr<CallbackRelay> relay) {
  std::lock_guard lock(mu_);
  relay_ = std::move(relay);
}

void CallbackSender::post(CallbackCall call, OnAnswer on_answer, GiveUp give_up) {
  std::lock_guard lock(mu_);
  if (stopping_) return;
  if (queue_.size() >= options_.max_queue) {
    failed_++;
    return;
  }
  queue_.push_back(Job{std::move(call), std::move(on_answer), std::move(give_up), 0,
                       std::chrono::steady_clock::now()});
  cv_.notify_one();
}

void CallbackSender::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    queue_.clear();
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

uint64_t CallbackSender::sent() const {
  std::lock_guard lock(mu_);
  return sent_;
}

uint64_t CallbackSender::failed() const {
  std::lock_guard lock(mu_);
  return failed_;
}

CallbackAnswer CallbackSender::call_direct(const CallbackCall& call,
                                           std::chrono::milliseconds timeout) {
  timeval tv = to_timeval(timeout);
  CLIENT* client = client_for(call, tv);
  if (!client) return std::nullopt;
  clnt_control(client, CLSET_TIMEOUT, reinterpret_cast<char*>(&tv));
  client->cl_auth = authunix_create_default();
  std::vector<uint8_t> args = call.args;
  CallbackAnswer answer;
  if (call.wants_status) {
    nlm4_res res{};
    if (clnt_call(client, call.proc, put_encoded_proc(),
                  reinterpret_cast<char*>(&args), reinterpret_cast<xdrproc_t>(xdr_nlm4_res),
                  reinterpret_cast<char*>(&res), tv) == RPC_SUCCESS) {
      uint32_t stat;  // the wire value: a client may send any number (see nlm_procs.cc)
      std::memcpy(&stat, &res.stat.stat, sizeof stat);
      xdr_free(reinterpret_cast<xdrproc_t>(xdr_nlm4_res), reinterpret_cast<char*>(&res));
      answer = stat;
    }
  } else if (clnt_call(client, call.proc, put_encoded_proc(),
                       reinterpret_cast<char*>(&args), xdr_void_proc(), nullptr,
                       tv) == RPC_SUCCESS) {
    answer = 0;
  }
  if (client->cl_auth) auth_destroy(client->cl_auth);
  clnt_destroy(client);
  return answer;
}

bool CallbackSender::attempt(Job& job, const std::shared_ptr<CallbackRelay>& relay) {
  CallbackAnswer answer;
  try {
    answer = job.call.route.relay.empty() || !relay ? call_direct(job.call, options_.timeout)
                                              : relay->relay(job.call, options_.timeout);
    if (!answer) return false;
    return !job.on_answer || job.on_answer(*answer);
  } catch (const std::exception&) {
    return true;  // a job that throws is not worth repeating
  }
}

void CallbackSender::run() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    if (queue_.empty()) {
      cv_.wait(lock);
      continue;
    }
    auto now = std::chrono::steady_clock::now();
    auto ready = std::find_if(queue_.begin(), queue_.end(),
                              [&](const Job& j) { return j.not_before <= now; });
    if (ready == queue_.end()) {
      auto next = std::min_element(queue_.begin(), queue_.end(), [](const Job& a, const Job& b) {
        return a.not_before < b.not_before;
      });
      cv_.wait_until(lock, next->not_before);
      continue;
    }
    Job job = std::move(*ready);
    queue_.erase(ready);
    std::shared_ptr<CallbackRelay> relay = relay_.lock();
    lock.unlock();
    bool done = attempt(job, relay);
    GiveUp give_up;
    lock.lock();
    if (done) {
      sent_++;
    } else if (++job.attempt < options_.attempts && !stopping_) {
      job.not_before = std::chrono::steady_clock::now() + options_.retry_interval;
      queue_.push_back(std::move(job));
    } else {
      failed_++;
      give_up = std::move(job.give_up);
    }
    if (give_up) {
      lock.unlock();
      give_up();
      lock.lock();
    }
  }
}

}  // namespace nasd::nlm
