// The seam between the ONC RPC transport (server/rpc) and the programs it carries (NFSv3,
// MOUNT v3). The transport reassembles records, parses the call header and credential,
// consults the duplicate request cache, and hands the raw argument bytes to a Service: on the
// event-loop thread itself when the service can answer without waiting (dispatch_inline), else
// on an executor thread. The service decodes its arguments with XDR, runs the procedure and encodes
// the results; the transport wraps them in the reply header.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "util/byte_slices.h"

namespace nasd::rpc {

enum AuthFlavor : uint32_t { kAuthNone = 0, kAuthSys = 1, kAuthShort = 2 };

// accept_stat (RFC 5531).
enum class AcceptStat : uint32_t {
  Success = 0,
  ProgUnavail = 1,
  ProgMismatch = 2,
  ProcUnavail = 3,
  GarbageArgs = 4,
  SystemErr = 5,
};

// auth_stat (RFC 5531), for calls rejected with AUTH_ERROR.
enum class AuthStat : uint32_t {
  Ok = 0,
  BadCred = 1,
  RejectedCred = 2,
  BadVerf = 3,
  RejectedVerf = 4,
  TooWeak = 5,
};

// The caller's identity as it arrived on the wire (before any export squashing).
struct Credential {
  uint32_t flavor = kAuthNone;
  uint32_t stamp = 0;
  std::string machine;
  uint32_t uid = 65534;
  uint32_t gid = 65534;
  std::vector<uint32_t> gids;
};

struct CallContext {
  uint32_t xid = 0;
  uint32_t prog = 0;
  uint32_t vers = 0;
  uint32_t proc = 0;
  Credential cred;
  sockaddr_storage peer{};
  socklen_t peer_len = 0;
  bool tcp = true;
  uint16_t local_port = 0;  // the port the call arrived on
  sockaddr_storage local{};  // the address it arrived at (local_len 0: not known)
  socklen_t local_len = 0;
  // Set only for a call another server received and handed on to this one (the cluster's NLM
  // forwarding): who received it, and the address the client called there. Calls back to the
  // client go through that server (server/nlm/callback_call.h).
  std::string callback_relay;
  std::string callback_from;
};

struct DispatchResult {
  enum Kind { Accepted, AuthError } kind = Accepted;
  AcceptStat accept = AcceptStat::Success;
  AuthStat auth = AuthStat::Ok;
  // For ProgMismatch: the versions this program supports.
  uint32_t low_version = 0, high_version = 0;
  // Bytes that follow `results` on the wire but are handed over as they are instead of being
  // copied into them: a READ's data (already padded to four bytes), possibly references to
  // pinned cache blocks that the transport passes to sendmsg() as they are. Sent only with
  // Success.
  util::ByteSlices tail;
};

class Service {
 public:
  virtual ~Service() = default;
  virtual uint32_t program() const = 0;
  // A short name for statistics and logs ("nfs", "mount"); empty prints the program number.
  virtual std::string_view program_name() const { return {}; }
  virtual uint32_t low_version() const = 0;
  virtual uint32_t high_version() const = 0;
  // Number of procedures in the program (procedures are 0..num_procs()-1), and their names for
  // statistics.
  virtual uint32_t num_procs() const = 0;
  virtual std::string_view proc_name(uint32_t proc) const = 0;
  // True for non-idempotent procedures whose replies the duplicate request cache keeps
  // (CREATE, REMOVE, RENAME, WRITE, ...).
  virtual bool cacheable(uint32_t proc) const = 0;
  // Whether this call of a cacheable() procedure may take an entry in the duplicate request
  // cache: only once its caller passed the program's credential and export checks, so that a
  // host no export lists cannot push other clients' replies out of the cache with garbage
  // calls. A call refused here still runs (and gets its error reply), uncached. Called on the
  // transport thread before the call is queued: it must be cheap and must not block.
  virtual bool may_cache(const CallContext& call, std::span<const uint8_t> args) const {
    (void)call;
    (void)args;
    return true;
  }
  // Where a call's bulk payload starts in its arguments, when the procedure has one that a
  // volume may keep as it is instead of copying it (a WRITE's data); `args` are the first bytes
  // of the arguments, maybe not all of them. The transport then receives the record so that the
  // payload starts on a page boundary (record.h). nullopt: none, or the bytes do not tell.
  // Called on the transport thread before the record is complete, with the header decoded but
  // not checked against exports or credentials: cheap, never blocks, safe with any bytes.
  virtual std::optional<size_t> bulk_payload_offset(const CallContext& call,
                                                    std::span<const uint8_t> args) const {
    (void)call;
    (void)args;
    return std::nullopt;
  }
  // True when dispatch() may be run again from the start for the same call
  // (util/resumable_call.h): everything it does before the call waits for an answer from
  // elsewhere has no effect a client could see twice. The dispatcher then lets such a call park
  // instead of holding its executor thread while a forwarded volume call is under way.
  virtual bool resumable() const { return false; }
  // Decodes `args`, runs the procedure, and appends the XDR-encoded results to `results`
  // (followed on the wire by the returned `tail`, when it has one).
  // Called concurrently from executor threads. `results` is only sent when the returned kind is
  // Accepted and the status Success.
  virtual DispatchResult dispatch(const CallContext& call, std::span<const uint8_t> args,
                                  std::vector<uint8_t>* results) = 0;
  // Run-to-completion: tries the call on the event-loop thread that received it, so that a call
  // answered from memory costs no hand-off to an executor thread and back. Returns what
  // dispatch() would return, or std::nullopt when finishing would mean waiting (a disk read, a
  // lock held by someone else, the network); then nothing the call does has happened yet,
  // `results` is thrown away and the transport runs dispatch() on an executor thread. Same
  // arguments, checks and results as dispatch() -- one procedure, two places to run it --, and
  // it must never wait. The transport has already consulted the duplicate request cache and
  // records the call's statistics either way. The default runs nothing on the loop.
  virtual std::optional<DispatchResult> dispatch_inline(const CallContext& call,
                                                        std::span<const uint8_t> args,
                                                        std::vector<uint8_t>* results) {
    return std::nullopt;
  }
};

}  // namespace nasd::rpc
