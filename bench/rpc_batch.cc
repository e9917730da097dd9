#include "bench/rpc_batch.h"

#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <poll.h>

#include <memory>

#include "bench/clock.h"

namespace nasd::bench {

namespace {

// Shared with every call's callback, so a batch abandoned on timeout can still be answered
// later by libnfs without touching freed memory.
struct BatchState {
  BatchReply on_reply;
  size_t in_flight = 0;
  size_t done = 0;
  std::string error;
  int64_t last_progress_ns = 0;
};

struct CallContext {
  std::shared_ptr<BatchState> state;
  size_t index;
};

void on_batch_reply(rpc_context* rpc, int status, void* data, void* private_data) {
  std::unique_ptr<CallContext> call(static_cast<CallContext*>(private_data));
  BatchState& s = *call->state;
  --s.in_flight;
  ++s.done;
  s.last_progress_ns = monotonic_ns();
  if (!s.error.empty()) return;
  if (status == RPC_STATUS_SUCCESS) {
    s.error = s.on_reply(call->index, data);
  } else if (status == RPC_STATUS_ERROR && data) {
    s.error = static_cast<const char*>(data);
  } else {
    s.error = status == RPC_STATUS_TIMEOUT ? "RPC timed out" : "RPC cancelled";
  }
}

}  // namespace

std::string rpc_error_text(rpc_context* rpc) {
  const char* e = rpc_get_error(rpc);
  return e && *e ? e : "no error text from libnfs";
}

bool run_batch(rpc_context* rpc, size_t count, size_t window, const BatchIssue& issue,
               const BatchReply& on_reply, int timeout_ms, std::string* error) {
  auto state = std::make_shared<BatchState>();
  state->on_reply = on_reply;
  state->last_progress_ns = monotonic_ns();
  if (window == 0) window = 1;
  size_t next = 0;
  while (state->done < next || (next < count && state->error.empty())) {
    while (next < count && state->in_flight < window && state->error.empty()) {
      auto* call = new CallContext{state, next};
      if (issue(next, on_batch_reply, call) != 0) {
        delete call;
        state->error = "could not queue request: " + rpc_error_text(rpc);
        break;
      }
      ++state->in_flight;
      ++next;
    }
    if (state->in_flight == 0) break;
    pollfd pfd{rpc_get_fd(rpc), static_cast<short>(rpc_which_events(rpc)), 0};
    int n = poll(&pfd, 1, 100);
    if (n > 0 && rpc_service(rpc, pfd.revents) < 0) {
      if (state->error.empty()) state->error = "connection failed: " + rpc_error_text(rpc);
      break;
    }
    if (monotonic_ns() - state->last_progress_ns > int64_t{timeout_ms} * 1000000) {
      if (state->error.empty()) state->error = "no reply from the server in " + std::to_string(timeout_ms) + " ms";
      break;
    }
  }
  if (!state->error.empty()) {
    *error = state->error;
    return false;
  }
  return true;
}

}  // namespace nasd::bench
