// The transport-independent path of one call: decode the header, find the service, consult
// the duplicate request cache, run the procedure and encode the reply. TCP connections and UDP
// endpoints differ only in how records arrive and replies leave, so both hand their records here.
//
// Where the procedure runs (run-to-completion): first on the calling event-loop thread through
// Service::dispatch_inline, which answers calls that need no wait (GETATTR of a cached inode)
// and refuses the rest; a refused call goes to the executor pool and its reply is posted back to
// the loop that received it. Both ways share everything around the procedure -- the duplicate
// request cache entry taken before it runs, the reply encoding, the cache's completion and the
// statistics (finish()) -- so a call's answer does not depend on where it ran.
//
// A resumable call (Service::resumable, util/resumable_call.h) may park on the event loop as on
// the executor: a forwarded call (any NFS procedure but FSINFO/PATHCONF) is sent from the loop
// without waiting, and when its answer arrives it is first run again on the thread that brought
// it, through dispatch_inline (resume()); the executor only sees the calls that have to wait.
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <shared_mutex>
#include <vector>

#include <boost/pool/pool_alloc.hpp>

#include "server/rpc/call_header.h"
#include "server/rpc/call_stats.h"
#include "server/rpc/duplicate_request_cache.h"
#include "server/rpc/record_marking.h"
#include "server/rpc/service.h"
#include "util/task_queue.h"

namespace nasd::rpc {

// Where a record came from, as the transport knows it.
struct CallOrigin {
  sockaddr_storage peer{};
  socklen_t peer_len = 0;
  bool tcp = true;
  uint16_t local_port = 0;
  sockaddr_storage local{};  // the address the record arrived at (local_len 0: not known)
  socklen_t local_len = 0;
};

class CallDispatcher {
 public:
  using Clock = std::chrono::steady_clock;
  using Reply = std::shared_ptr<const EncodedReply>;
  // Invoked on an executor thread with the finished reply.
  using ReplyCallback = std::function<void(Reply)>;
  // Makes the callback, called only for a call that leaves the loop (Pending): a call answered
  // where it arrived needs none, and making one (it holds the connection weakly) allocates.
  using ReplyCallbackMaker = std::function<ReplyCallback()>;

  struct Outcome {
    enum Kind {
      SendNow,  // `reply` is ready (rejection or cached reply); send it
      Pending,  // running on the executor; the callback will deliver the reply
      Drop,     // nothing to send (retransmission of a call still executing)
      Close,    // undecodable record: close the connection / drop the datagram
    } kind = Drop;
    Reply reply;
  };

  // `drc` may be null (no duplicate request cache). All pointers must outlive the dispatcher.
  // `run_inline` false sends every call to the executor (Service::dispatch_inline unused).
  CallDispatcher(util::TaskQueue* executor, DuplicateRequestCache* drc, CallStats* stats,
                 bool run_inline = true);

  // Before the first call: makes the program reachable and declares its statistics.
  void add_service(std::shared_ptr<Service> service);
  const std::vector<std::shared_ptr<Service>>& services() const { return services_; }

  // Called on an event loop thread for each complete record. A call answered on this thread
  // comes back as SendNow; `on_reply` is only made and called for Pending. A record answered
  // here goes back to this thread's spare (recycle_record).
  Outcome handle(Record record, const CallOrigin& origin, Clock::time_point received,
                 const ReplyCallbackMaker& make_on_reply);
  Outcome handle(Record record, const CallOrigin& origin, Clock::time_point received,
                 ReplyCallback on_reply) {
    return handle(std::move(record), origin, received,
                  [&on_reply] { return std::move(on_reply); });
  }

  // Where the bulk payload of a call whose record starts with `head` begins in its record
  // (Service::bulk_payload_offset), for the transport's RecordReassembler. Any bytes; cheap.
  std::optional<size_t> locate_payload(std::span<const uint8_t> head) const;
  PayloadLocator payload_locator() const {
    return [this](std::span<const uint8_t> head) { return locate_payload(head); };
  }

  // After this, calls parked on an answer from elsewhere (Service::resumable) are dropped when
  // their answer arrives instead of being run again: the transport that would send their
  // replies is going away. Waits for a resumption under way. Idempotent; call it before the
  // executor stops.
  void close();
  // Calls that are parked right now, and how often a call was parked so far.
  size_t parked() const;
  uint64_t parks() const;
  // Parked calls finished on the thread that brought their answer (see resume()).
  uint64_t inline_resumes() const;

  ~CallDispatcher();

 private:
  struct Call;
  // Whether the dispatcher still takes parked calls back; shared with every parked call, which
  // may outlive the dispatcher.
  struct Lifeline {
    std::shared_mutex mu;
    bool open = true;
    std::atomic<size_t> parked{0};
    std::atomic<uint64_t> parks{0};
    // The reply cache entries of parked calls: close() abandons them, since nobody will
    // complete them, so that a retransmission (to whatever serves the address next, sharing the
    // cache) runs again instead of being dropped as "in progress" until the client gives up.
    // keys_closed (set by close()) makes a call that parks afterwards abandon its entry itself:
    // its run may have sent the request before close() and parked after it.
    std::mutex keys_mu;
    // Node-pooled: a call that parks with a cache entry allocates no tree node.
    std::map<const void*, DrcKey, std::less<const void*>,
             boost::fast_pool_allocator<std::pair<const void* const, DrcKey>>>
        parked_keys;
    bool keys_closed = false;
    std::atomic<uint64_t> inline_resumes{0};
  };

  Service* find(uint32_t prog) const;
  Outcome reject(TransportCounter counter, EncodedReply reply);
  // Where a run's results are written and its reply encoded: from this thread's spare replies
  // (reply_pool.h), so a call answered on the loop that received it allocates neither.
  struct ReplySlot {
    std::shared_ptr<EncodedReply> reply;
    std::vector<uint8_t> results;  // the spare's body buffer: empty, its capacity kept
  };
  static ReplySlot take_slot();
  static void give_back(ReplySlot&& slot);  // unused: back to the spares
  // Everything after the procedure, wherever it ran: encodes the reply into `slot`, completes
  // the duplicate request cache entry and records the call's statistics.
  Reply finish(const CallContext& call, std::span<const uint8_t> args,
               const std::optional<DrcKey>& drc_key, Clock::time_point received,
               DispatchResult result, ReplySlot&& slot);
  // Ends a run of a resumable call: true when it parked (resume() follows once the answer is
  // in; the run's result is not the call's), false when the result is the call's.
  bool park(const std::shared_ptr<Call>& call);
  // One run of `call`'s procedure on this thread; `may_park`: false when it must finish here.
  void run(const std::shared_ptr<Call>& call, bool may_park);
  // The answer a parked call waited for is in: run it again -- first here, on the thread that
  // brought the answer (the interconnect link's reader), through Service::dispatch_inline as
  // the event loop would, so a forwarded call the loop may attempt costs no hop to the
  // executor and back; else on the executor (or here, when the executor takes no more tasks).
  void resume(const std::shared_ptr<Call>& call);
  // The inline attempt of resume(): true when the call was answered.
  bool resume_inline(const std::shared_ptr<Call>& call);

  util::TaskQueue* executor_;
  DuplicateRequestCache* drc_;
  CallStats* stats_;
  const bool run_inline_;
  std::vector<std::shared_ptr<Service>> services_;
  std::shared_ptr<Lifeline> lifeline_ = std::make_shared<Lifeline>();
};

}  // namespace nasd::rpc
