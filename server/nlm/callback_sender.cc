#include "server/nlm/callback_sender.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "server/nfs/mount/mount_service.h"
#include "server/nlm/xdr/nlm4_prot.h"
#include "util/contained_thread.h"
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
  const uint32_t threads = std::max<uint32_t>(options_.threads, 2);
  for (uint32_t i = 0; i < threads; ++i)
    threads_.push_back(util::contained_thread("nlm", "NLM callback sender",
                                              [this, i] { run(/*urgent_only=*/i == 0); }));
}

CallbackSender::~CallbackSender() { stop(); }

void CallbackSender::set_relay(std::shared_ptr<CallbackRelay> relay) {
  std::lock_guard lock(mu_);
  relay_ = std::move(relay);
}

void CallbackSender::post(CallbackCall call, OnAnswer on_answer, GiveUp give_up) {
  {
    std::lock_guard lock(mu_);
    // Routine jobs may take half the queue in all and max_per_host per address, so that they
    // never leave urgent ones without room.
    bool room = !stopping_ && queued_ < options_.max_queue;
    if (room && !call.urgent) {
      auto h = hosts_.find(call.route.host);
      size_t mine = h == hosts_.end() ? 0 : h->second.routine.size();
      room = routine_queued_ < options_.max_queue / 2 && mine < options_.max_per_host;
    }
    if (room) {
      queue_locked(Job{std::move(call), std::move(on_answer), std::move(give_up), 0,
                       std::chrono::steady_clock::now()});
      return;
    }
    failed_++;
  }
  if (give_up) give_up();  // outside the lock: it may take the caller's
}

void CallbackSender::queue_locked(Job job) {
  HostQueue& q = hosts_[job.call.route.host];
  queued_++;
  if (job.call.urgent) {
    q.urgent.push_back(std::move(job));
  } else {
    routine_queued_++;
    q.routine.push_back(std::move(job));
  }
  cv_.notify_all();
}

void CallbackSender::stop() {
  std::vector<GiveUp> dropped;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    for (auto& [host, q] : hosts_) {
      for (auto* list : {&q.urgent, &q.routine})
        for (Job& j : *list)
          if (j.give_up) dropped.push_back(std::move(j.give_up));
    }
    hosts_.clear();
    queued_ = routine_queued_ = 0;
    cv_.notify_all();
  }
  for (std::thread& t : threads_)
    if (t.joinable()) t.join();
  for (GiveUp& g : dropped) g();
}

uint64_t CallbackSender::sent() const {
  std::lock_guard lock(mu_);
  return sent_;
}

uint64_t CallbackSender::failed() const {
  std::lock_guard lock(mu_);
  return failed_;
}

size_t CallbackSender::queued() const {
  std::lock_guard lock(mu_);
  return queued_;
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

bool CallbackSender::take_locked(bool urgent_only, Job* job,
                                 std::chrono::steady_clock::time_point* next) {
  const auto now = std::chrono::steady_clock::now();
  *next = std::chrono::steady_clock::time_point::max();
  // Urgent jobs first (any address), then routine ones of addresses with none in progress;
  // each pass starts after the address served last, so that every address gets its turn.
  for (bool urgent : {true, false}) {
    if (!urgent && urgent_only) break;
    auto start = hosts_.upper_bound(last_host_);
    for (size_t i = 0; i < hosts_.size(); ++i, ++start) {
      if (start == hosts_.end()) start = hosts_.begin();
      HostQueue& q = start->second;
      if (!urgent && q.routine_running) continue;
      std::deque<Job>& list = urgent ? q.urgent : q.routine;
      auto ready = std::find_if(list.begin(), list.end(), [&](const Job& j) { return j.not_before <= now; });
      for (const Job& j : list) *next = std::min(*next, j.not_before);
      if (ready == list.end()) continue;
      *job = std::move(*ready);
      list.erase(ready);
      queued_--;
      if (!urgent) {
        routine_queued_--;
        q.routine_running = true;
      }
      last_host_ = start->first;
      if (q.empty() && !q.routine_running) hosts_.erase(start);
      return true;
    }
  }
  return false;
}

void CallbackSender::run(bool urgent_only) {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    Job job;
    std::chrono::steady_clock::time_point next;
    if (!take_locked(urgent_only, &job, &next)) {
      if (next == std::chrono::steady_clock::time_point::max()) cv_.wait(lock);
      else cv_.wait_until(lock, next);
      continue;
    }
    std::shared_ptr<CallbackRelay> relay = relay_.lock();
    lock.unlock();
    bool done = attempt(job, relay);
    GiveUp give_up;
    lock.lock();
    if (!job.call.urgent) {
      auto h = hosts_.find(job.call.route.host);
      if (h != hosts_.end()) {
        h->second.routine_running = false;
        if (h->second.empty()) hosts_.erase(h);
      }
      cv_.notify_all();  // the address's next routine job may go now
    }
    if (done) {
      sent_++;
    } else if (++job.attempt < options_.attempts && !stopping_) {
      job.not_before = std::chrono::steady_clock::now() + options_.retry_interval;
      queue_locked(std::move(job));
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
