// Calls from the server to its clients: GRANTED for a blocked lock that was granted, the _RES
// replies of the asynchronous _MSG procedures, and SM_NOTIFY after a restart or a takeover.
//
// They run on threads of their own, never on an executor thread: a client that is down costs a
// timeout, and the server must not stall its other clients for it. A call is made here
// (call_direct) or, when it names a relay, handed to the CallbackRelay (callback_call.h says
// why). Made here, the client's service is found through the portmapper at the client's address
// (as NLM clients register theirs) and called over UDP with libtirpc, from the local address the
// client called when the call names one. A job that fails is retried after `retry_interval`, at
// most `attempts` times.
//
// Why several queues: any export client can make the server call it back (a _MSG call costs
// the client one packet and the server up to `attempts` x `timeout` when the client's
// portmapper swallows packets). So jobs are queued per client address, each address has a quota
// of routine jobs (the _RES replies), at most one routine job per address is in progress, and
// urgent jobs (GRANTED, SM_NOTIFY: a lock is lost when they are not made) are taken before any
// routine job and have a thread that takes nothing else. A flood from one address then delays
// only that address's own replies. A job that is refused (queue full) or dropped at stop() runs
// its give-up path, as one given up after its last attempt does.
#pragma once

#include <rpc/rpc.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/nlm/callback_call.h"
#include "server/rpc/service.h"

namespace nasd::nlm {

// xdr_void as an xdrproc_t, for calls whose result is empty (void (*)() converts without a
// function-type warning).
inline xdrproc_t xdr_void_proc() {
  return reinterpret_cast<xdrproc_t>(reinterpret_cast<void (*)()>(xdr_void));
}

// The numeric local address `call` arrived at: where calls back to its client leave from. ""
// when not known, or for a listener on every address (the kernel then picks the source).
std::string called_address(const rpc::CallContext& call);

class CallbackSender {
 public:
  struct Options {
    std::chrono::milliseconds timeout{2000};  // per call, the portmapper lookup included
    uint32_t attempts = 5;
    std::chrono::milliseconds retry_interval{1000};
    size_t max_queue = 4096;    // jobs queued in all (0: every job is refused)
    size_t max_per_host = 64;   // routine jobs queued for one client address
    uint32_t threads = 4;       // at least 2: the first takes urgent jobs only
  };
  // Takes the client's answer: true when the job is done, false to retry it later (a GRANTED
  // answered NLM4_DENIED_GRACE_PERIOD: the client restarted). No handler: any answer will do.
  using OnAnswer = std::function<bool(uint32_t status)>;
  // Runs when a job is given up: after its last attempt, or refused, or dropped at stop().
  using GiveUp = std::function<void()>;

  explicit CallbackSender(Options options);
  ~CallbackSender();  // stop()

  // Where calls that name a relay go; without one they are made here. Held weakly: the relay
  // (the cluster's NLM forwarding) holds the lock state that holds this sender.
  void set_relay(std::shared_ptr<CallbackRelay> relay);
  void post(CallbackCall call, OnAnswer on_answer = {}, GiveUp give_up = {});
  // Makes `call` here, once, within `timeout`, ignoring its relay.
  static CallbackAnswer call_direct(const CallbackCall& call, std::chrono::milliseconds timeout);
  // Drops what is queued (running its give-up paths) and joins the threads. Idempotent.
  void stop();

  uint64_t sent() const;
  uint64_t failed() const;  // given up or dropped
  size_t queued() const;

 private:
  struct Job {
    CallbackCall call;
    OnAnswer on_answer;
    GiveUp give_up;
    uint32_t attempt = 0;
    std::chrono::steady_clock::time_point not_before;
  };
  // One client address's jobs.
  struct HostQueue {
    std::deque<Job> urgent, routine;
    bool routine_running = false;
    bool empty() const { return urgent.empty() && routine.empty(); }
  };
  void run(bool urgent_only);
  // The next job a thread may take now, round robin over the addresses; false (with the time
  // the earliest waiting job becomes ready, or max()) when there is none.
  bool take_locked(bool urgent_only, Job* job, std::chrono::steady_clock::time_point* next);
  void queue_locked(Job job);
  bool attempt(Job& job, const std::shared_ptr<CallbackRelay>& relay);

  const Options options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, HostQueue> hosts_;
  std::string last_host_;  // where the round robin goes on from
  size_t queued_ = 0, routine_queued_ = 0;
  bool stopping_ = false;
  std::weak_ptr<CallbackRelay> relay_;
  uint64_t sent_ = 0, failed_ = 0;
  std::vector<std::thread> threads_;
};

}  // namespace nasd::nlm
