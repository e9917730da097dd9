// A call from the server to a client (GRANTED, a _RES reply, SM_NOTIFY), held as bytes so that
// it can be made here or handed to another node to make.
//
// Why another node: an NLM client matches a GRANTED callback to its blocked request by the
// address the callback comes from, which must be the address the client sent the LOCK to (Linux
// lockd ignores any other, and the client then learns of the grant only by polling). When the
// client called node F and F forwarded the call to the volume's owner O (cluster/
// nlm_forwarding.h), O's callback must therefore leave from F: O hands it to F (the `relay`),
// which sends it from the address the client called (`from`). server/nlm knows nothing of
// nodes: a relay is an opaque name the cluster gave the call (rpc::CallContext::callback_relay)
// and a CallbackRelay it installed.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nasd::nlm {

// Where a client's callbacks go. Kept with a blocked lock (lock_manager.h) and carried with it
// when its volume moves.
struct CallbackRoute {
  std::string host;   // the client's numeric address: its portmapper and service are there
  std::string from;   // the numeric local address the client called ("": any address)
  std::string relay;  // who received the client's call ("": this server)
};

struct CallbackCall {
  CallbackRoute route;
  uint32_t prog = 0, vers = 0, proc = 0;
  std::vector<uint8_t> args;  // the call's arguments, XDR-encoded
  // True when the reply is an nlm4_res whose status the caller acts on (GRANTED); false when
  // the reply is void or ignored (the _RES calls, SM_NOTIFY).
  bool wants_status = false;
  // GRANTED and SM_NOTIFY: a lock is lost when they are not made, so they never wait behind
  // the _RES replies, which any client can cause by the thousand (callback_sender.h).
  bool urgent = false;
};

inline CallbackCall callback_to(CallbackRoute route, uint32_t prog, uint32_t vers,
                                uint32_t proc) {
  CallbackCall call;
  call.route = std::move(route);
  call.prog = prog;
  call.vers = vers;
  call.proc = proc;
  return call;
}

// The client's answer: its nlm4_res status (0 when !wants_status), or nullopt when the call
// could not be made or was not answered in time (the sender retries).
using CallbackAnswer = std::optional<uint32_t>;

// Makes a call whose `relay` names another server. Implemented by the cluster.
class CallbackRelay {
 public:
  virtual ~CallbackRelay() = default;
  virtual CallbackAnswer relay(const CallbackCall& call, std::chrono::milliseconds timeout) = 0;
};

}  // namespace nasd::nlm
