// A request/reply path to one peer node. RemoteVolume and the heartbeat sender talk to this
// interface rather than to sockets, so they can be tested against a fake and so the transport
// can change without touching them.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cluster/interconnect/frame.h"

namespace nasd::interconnect {

enum class CallError {
  None,
  NotConnected,  // no live connection to the peer right now
  Timeout,       // the peer did not answer in time (it may still execute the request)
  Disconnected,  // the connection broke while the request was in flight
  Unsupported,   // the peer has no handler for this message type
  TooLarge,      // the request exceeds the frame size limit
  Stopped,       // the channel is shutting down
};

const char* call_error_name(CallError e);

struct CallOutcome {
  CallError error = CallError::None;
  std::vector<uint8_t> payload;  // the reply, when error == None
  bool ok() const { return error == CallError::None; }
};

class CallChannel {
 public:
  using Completion = std::function<void(CallOutcome)>;

  virtual ~CallChannel() = default;
  // Sends one request and waits for its reply or `timeout`. Thread-safe; many calls may be in
  // flight at once and their replies may come back in any order.
  virtual CallOutcome call(MessageType type, std::vector<uint8_t> payload,
                           std::chrono::milliseconds timeout) = 0;
  // Sends one request and returns at once; `done` gets the reply or the error exactly once,
  // on the channel's own thread (or on this one, for a call that fails before it is sent). It
  // must not block: it runs where the channel reads its replies. The default waits in place
  // (for channels that have no thread of their own, such as test doubles).
  virtual void call_async(MessageType type, std::vector<uint8_t> payload,
                          std::chrono::milliseconds timeout, Completion done) {
    done(call(type, std::move(payload), timeout));
  }
  // As call_async, for a caller that must not wait at all (an event-loop thread): false, with
  // nothing sent and `done` dropped uncalled, when the request cannot leave at once (no link,
  // or a link whose socket has no room); the caller then takes its path that may wait. True
  // when `done` has run or will run exactly once. The default: never at once.
  virtual bool try_call_async(MessageType type, std::vector<uint8_t> payload,
                              std::chrono::milliseconds timeout, Completion done) {
    return false;
  }
};

}  // namespace nasd::interconnect
