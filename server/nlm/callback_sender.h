// Calls from the server to its clients: GRANTED for a blocked lock that was granted, the _RES
// replies of the asynchronous _MSG procedures, and SM_NOTIFY after a restart or a takeover.
//
// They run on one thread of their own, never on an executor thread: a client that is down costs
// a timeout, and the server must not stall its other clients for it. The client's service is
// found through the portmapper at the client's address (as NLM clients register theirs), and
// called over UDP with libtirpc. A job that fails is retried after `retry_interval`, at most
// `attempts` times; the queue is bounded (a job beyond it is dropped and counted).
#pragma once

#include <rpc/rpc.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace nasd::nlm {

// xdr_void as an xdrproc_t, for calls whose result is empty (void (*)() converts without a
// function-type warning).
inline xdrproc_t xdr_void_proc() {
  return reinterpret_cast<xdrproc_t>(reinterpret_cast<void (*)()>(xdr_void));
}

class CallbackSender {
 public:
  struct Options {
    std::chrono::milliseconds timeout{2000};  // per call, the portmapper lookup included
    uint32_t attempts = 5;
    std::chrono::milliseconds retry_interval{1000};
    size_t max_queue = 4096;
  };
  // Makes the call on a ready client handle; true when the job is done (whatever the client
  // answered), false to retry it later.
  using Call = std::function<bool(CLIENT*, timeval timeout)>;
  // Runs when a job is given up after its last attempt.
  using GiveUp = std::function<void()>;

  explicit CallbackSender(Options options);
  ~CallbackSender();  // stop()

  void post(std::string host, uint32_t prog, uint32_t vers, Call call, GiveUp give_up = {});
  // Drops what is queued and joins the thread. Idempotent.
  void stop();

  uint64_t sent() const;
  uint64_t failed() const;  // given up or dropped

 private:
  struct Job {
    std::string host;
    uint32_t prog, vers;
    Call call;
    GiveUp give_up;
    uint32_t attempt = 0;
    std::chrono::steady_clock::time_point not_before;
  };
  void run();
  bool attempt(Job& job);

  const Options options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  bool stopping_ = false;
  uint64_t sent_ = 0, failed_ = 0;
  std::thread thread_;
};

}  // namespace nasd::nlm
