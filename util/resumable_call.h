// A call that gives its thread back while it waits for an answer from elsewhere, without being
// written as callbacks: it is run again from the start once the answer is in, and this time the
// wait finds the answer at once ("replay").
//
// Why replay instead of continuations: the NFS procedures are plain blocking functions
// (decode, check the handle, one Volume call, encode), and a forwarded call used to hold its
// executor thread for the whole round trip to the volume's owner. Everything a procedure does
// before its Volume call is pure (decoding, handle and export checks), so running it twice has
// no effect a client can see; the waiting code (RemoteVolume) asks current() whether it runs
// inside a resumable call and, if so, sends its request, parks the call and returns at once.
// The runner (rpc::CallDispatcher) throws that run's result away and runs the call again when
// the answer arrives; the wait then takes the stored answer instead of sending again.
//
// Invariants:
//  - waits are numbered in the order a run makes them (0, 1, ...); a run is deterministic up to
//    each wait, so wait k of the next run is the same request as wait k of this one;
//  - a run parks at most once (its first unanswered wait); any later wait of the same run must
//    return at once without sending (its result is discarded anyway);
//  - the resume function is called exactly once per park, after BOTH the run ended and the
//    answer arrived, from whichever thread did the later of the two; it is then dropped (no
//    reference cycle outlives the park);
//  - at most kMaxWaits waits per call: a call that keeps asking fails its later waits.
// Thread-safe: answers arrive on the transport's thread while the run is on an executor thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace nasd::util {

class ResumableCall {
 public:
  struct Answer {
    int error = 0;               // the waiting code's own error code (0 = answered)
    std::vector<uint8_t> bytes;  // the answer, when error == 0
  };
  using Deliver = std::function<void(Answer)>;
  static constexpr size_t kMaxWaits = 16;

  ResumableCall() = default;
  ResumableCall(const ResumableCall&) = delete;
  ResumableCall& operator=(const ResumableCall&) = delete;

  // The call being run on this thread (see Run), or nullptr: the caller must then wait in place.
  static ResumableCall* current();

  // --- for the code that waits ---
  // Numbers this wait within the current run. nullopt when the call made too many waits.
  std::optional<size_t> next_wait();
  // The answer to wait k, once it has arrived; nullptr before. Every later run needs it again
  // (a run replays all the waits before the one it parks on), so it stays stored; the pointer
  // is valid until the call is destroyed.
  const Answer* answer(size_t k) const;
  // Whether this run may still park: false once it parked, and in runs that must finish where
  // they are (Run's `may_park`).
  bool may_park() const;
  // Parks the run on wait k; the returned function delivers the answer (call it exactly once,
  // from any thread, possibly before the run has ended).
  Deliver park(size_t k);
  // Undoes park() when the request could not be sent after all (its Deliver is dropped, never
  // called): the run did not park, and may still park on a later wait or finish.
  void unpark();

  // --- for the runner ---
  // Makes `call` current() on this thread for one run.
  class Run {
   public:
    Run(std::shared_ptr<ResumableCall> call, bool may_park = true);
    ~Run();
    Run(const Run&) = delete;
    Run& operator=(const Run&) = delete;

   private:
    ResumableCall* previous_;
  };
  // After a run: false when it did not park (its result is the call's). True when it parked:
  // discard the result; `resume` will be called once (maybe right now, on this thread) to run
  // the call again.
  bool end_run(std::function<void()> resume);
  // Whether the run under way (or the last one) parked.
  bool parked() const;
  // Runs made so far (for statistics and tests).
  size_t runs() const;
  // Makes a call whose last run ended without parking new again (no answers, no runs), so that
  // a runner can use it for its next call instead of allocating another. Only for a call
  // nobody else holds -- the caller's shared_ptr is the only one (use_count() == 1): a Deliver
  // still held somewhere holds it too, and must never reach a call reused for another.
  void recycle();

 private:
  void deliver(size_t k, Answer answer);

  // The ResumableCall that owns the call, kept alive by every pending Deliver.
  std::weak_ptr<ResumableCall> self_;
  mutable std::mutex mu_;
  // By wait number. Inline, not a growing container: a call that never waits (most calls on
  // the event loop) then costs no allocation beyond this object, and the references answer()
  // hands out stay valid.
  std::array<std::optional<Answer>, kMaxWaits> answers_;
  size_t next_wait_ = 0;                        // waits made by the current run
  std::optional<size_t> parked_on_;             // the wait this run parked on
  bool may_park_ = true;
  bool running_ = false;
  bool answered_ = false;  // the parked wait's answer is in
  size_t runs_ = 0;
  std::function<void()> resume_;  // set by end_run while the answer is still awaited
};

}  // namespace nasd::util
