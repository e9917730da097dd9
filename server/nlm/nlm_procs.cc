// NLM v4's procedures, one function each, and the table dispatch() runs them from.
#include <cstring>
#include <exception>
#include <string>

#include "server/nfs/mount/mount_service.h"
#include "server/nfs/xdr/xdr_codec.h"
#include "server/nlm/nlm_service.h"
#include "server/nlm/xdr/nlm4_prot.h"

namespace nasd::nlm {
namespace {

namespace xdr = nfs::xdr;

enum Proc : uint32_t {
  kTestRes = 11, kLockRes = 12, kCancelRes = 13, kUnlockRes = 14,
};

rpc::DispatchResult accepted(rpc::AcceptStat stat = rpc::AcceptStat::Success) {
  rpc::DispatchResult r;
  r.accept = stat;
  return r;
}

template <typename T>
rpc::DispatchResult reply(xdr::Routine<T> routine, const T& res, std::vector<uint8_t>* out) {
  return accepted(xdr::append(routine, res, out) ? rpc::AcceptStat::Success
                                                  : rpc::AcceptStat::SystemErr);
}

// A decoded enum's wire value: XDR stores any 32-bit number in an enum field, and reading one
// outside the enumerators through the enum type is undefined behaviour.
template <typename E>
uint32_t wire_value(const E& e) {
  static_assert(sizeof(E) == sizeof(uint32_t));
  uint32_t v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

std::string bytes(const nlm4_netobj& o) { return std::string(o.nlm4_netobj_val, o.nlm4_netobj_len); }

nlm4_netobj netobj(const std::string& s) {
  nlm4_netobj o;
  o.nlm4_netobj_len = static_cast<u_int>(s.size());
  o.nlm4_netobj_val = const_cast<char*>(s.data());
  return o;
}

nlm4_stats to_nlm(LockStatus s) {
  switch (s) {
    case LockStatus::Granted: return NLM4_GRANTED;
    case LockStatus::Denied: return NLM4_DENIED;
    case LockStatus::Blocked: return NLM4_BLOCKED;
    case LockStatus::DeniedGrace: return NLM4_DENIED_GRACE_PERIOD;
    case LockStatus::NoLocks: return NLM4_DENIED_NOLOCKS;
  }
  return NLM4_FAILED;
}

// The owner a call names, at the address it came from: the wire values are the client's to
// choose, the address is not (lock_manager.h).
LockOwner owner_of(const nlm4_lock& l, const std::string& address) {
  return LockOwner{l.caller_name ? l.caller_name : "", l.svid, bytes(l.oh), address};
}

// Sends a _RES call with an nlm4_res body back to the caller's lock manager.
void post_res(LockState& state, CallbackRoute to, uint32_t proc, const std::string& cookie,
              nlm4_stats stat) {
  CallbackCall call = callback_to(std::move(to), kNlmProgram, kNlmVersion, proc);
  nlm4_res res{};
  res.cookie = netobj(cookie);
  res.stat.stat = stat;
  if (xdr::append(xdr_nlm4_res, res, &call.args)) state.callbacks().post(std::move(call));
}

// Thrown by resolve() when the call's volume is served by another node and a forwarder can
// take the call there: it leaves the procedure before anything was changed or sent (every
// procedure resolves its handle first), and dispatch() forwards the call instead.
struct ForwardTo {
  uint32_t volume;
};

}  // namespace

struct NlmService::Procs {
  NlmService& s;
  const rpc::CallContext& call;
  std::span<const uint8_t> args;
  std::vector<uint8_t>* results;
  bool owner_unreachable = false;  // the forwarder could not ask the owner: grace, retry
  mutable bool refused = false;    // the handle's export does not admit the caller

  // Whether a _MSG call's result may be sent back: only to a caller an export admits (the one
  // the handle names, when it resolved), so that a host no export lists cannot make the server
  // call anyone.
  bool may_call_back() const { return !refused && s.exports_->admits(call.peer); }

  std::string peer() const { return nfs::peer_host(call.peer); }
  // Where this caller's callbacks go: back through whoever received its call (a relay when
  // another node forwarded it here), from the address it called (callback_call.h says why).
  CallbackRoute route() const {
    return CallbackRoute{peer(), call.callback_relay.empty() ? called_address(call) : call.callback_from,
                         call.callback_relay};
  }

  // The file a handle names, for a caller some export of its volume lists, on a volume served
  // here.
  nlm4_stats resolve(const nlm4_netobj& fh, FileId* out) const {
    nfs::HandleTarget t;
    auto span = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(fh.nlm4_netobj_val),
                                         fh.nlm4_netobj_len);
    if (s.handles_->decode(span, &t) != fs::Status::Ok) return NLM4_STALE_FH;
    // The export the handle was issued under must still list the caller, from a port it
    // accepts, as for any NFS call on that handle.
    nfs::Exports::Policy policy = s.exports_->for_handle(t.volume_id, t.export_id, call.peer);
    if (!policy) return NLM4_STALE_FH;
    if (!policy->allows(call.peer) || !policy->port_allowed(call.peer)) {
      refused = true;
      return NLM4_FAILED;
    }
    if (!s.serves_volume_(t.volume_id)) {
      if (!s.forwarder_) return NLM4_FAILED;
      if (owner_unreachable) return NLM4_DENIED_GRACE_PERIOD;
      throw ForwardTo{t.volume_id};
    }
    *out = FileId{t.volume_id, t.inode.ino, t.inode.gen};
    return NLM4_GRANTED;
  }

  nlm4_stats resolve_lock(const nlm4_lock& l, bool exclusive, Lock* out) const {
    if (!l.caller_name || !*l.caller_name) return NLM4_FAILED;
    nlm4_stats st = resolve(l.fh, &out->file);
    if (st != NLM4_GRANTED) return st;
    out->owner = owner_of(l, peer());
    out->exclusive = exclusive;
    out->range = ByteRange::from_nlm(l.l_offset, l.l_len);
    return NLM4_GRANTED;
  }

  // TEST's outcome; `holder_oh` keeps the holder's owner handle alive for the encoding.
  void test_core(const nlm4_testargs& a, nlm4_testres* res, std::string* holder_oh) const {
    res->cookie = a.cookie;
    Lock probe;
    nlm4_stats st = resolve_lock(a.alock, a.exclusive, &probe);
    if (st != NLM4_GRANTED) {
      res->stat.stat = st;
      return;
    }
    std::optional<Lock> conflict;
    res->stat.stat = to_nlm(s.state_->test(probe, &conflict));
    if (res->stat.stat == NLM4_DENIED && conflict) {
      *holder_oh = conflict->owner.oh;
      nlm4_holder& h = res->stat.nlm4_testrply_u.holder;
      h.exclusive = conflict->exclusive;
      h.svid = conflict->owner.svid;
      h.oh = netobj(*holder_oh);
      h.l_offset = conflict->range.start;
      h.l_len = conflict->range.nlm_len();
    }
  }

  nlm4_stats lock_core(const nlm4_lockargs& a, bool monitored) const {
    LockRequest r;
    nlm4_stats st = resolve_lock(a.alock, a.exclusive, &r.lock);
    if (st != NLM4_GRANTED) return st;
    if (r.lock.range.empty()) return NLM4_FAILED;
    r.block = a.block && monitored;  // NM_LOCK never blocks (XNFS: its block flag is false)
    r.reclaim = a.reclaim;
    r.fh = bytes(a.alock.fh);
    r.cookie = bytes(a.cookie);
    r.callback = route();
    // An NM_LOCK caller runs no status monitor, but it is recorded all the same (the owner's
    // address is where its FREE_ALL must come from).
    return to_nlm(s.state_->lock(r));
  }

  nlm4_stats cancel_core(const nlm4_cancargs& a) const {
    Lock l;
    nlm4_stats st = resolve_lock(a.alock, a.exclusive, &l);
    if (st != NLM4_GRANTED) return st;
    return s.state_->cancel(l) ? NLM4_GRANTED : NLM4_DENIED;
  }

  nlm4_stats unlock_core(const nlm4_unlockargs& a) const {
    Lock l;
    nlm4_stats st = resolve_lock(a.alock, false, &l);
    if (st != NLM4_GRANTED) return st;
    s.state_->unlock(l.file, l.owner, l.range);
    return NLM4_GRANTED;
  }

  template <typename Args>
  bool decode(xdr::Decoded<Args>& d) const {
    return d.decode(args);
  }

  rpc::DispatchResult null() { return accepted(); }

  rpc::DispatchResult test() {
    xdr::Decoded<nlm4_testargs> a(xdr_nlm4_testargs);
    if (!decode(a)) return accepted(rpc::AcceptStat::GarbageArgs);
    nlm4_testres res{};
    std::string oh;
    test_core(*a, &res, &oh);
    return reply(xdr_nlm4_testres, res, results);
  }

  rpc::DispatchResult lock_with(bool monitored) {
    xdr::Decoded<nlm4_lockargs> a(xdr_nlm4_lockargs);
    if (!decode(a)) return accepted(rpc::AcceptStat::GarbageArgs);
    nlm4_res res{};
    res.cookie = a->cookie;
    res.stat.stat = lock_core(*a, monitored);
    return reply(xdr_nlm4_res, res, results);
  }
  rpc::DispatchResult lock() { return lock_with(true); }
  rpc::DispatchResult nm_lock() { return lock_with(false); }

  rpc::DispatchResult cancel() {
    xdr::Decoded<nlm4_cancargs> a(xdr_nlm4_cancargs);
    if (!decode(a)) return accepted(rpc::AcceptStat::GarbageArgs);
    nlm4_res res{};
    res.cookie = a->cookie;
    res.stat.stat = cancel_core(*a);
    return reply(xdr_nlm4_res, res, results);
  }

  rpc::DispatchResult unlock() {
    xdr::Decoded<nlm4_unlockargs> a(xdr_nlm4_unlockargs);
    if (!decode(a)) return accepted(rpc::AcceptStat::GarbageArgs);
    nlm4_res res{};
    res.cookie = a->cookie;
    res.stat.stat = unlock_core(*a);
    return reply(xdr_nlm4_res, res, results);
  }

  // GRANTED is the server's call to a client; a server holds no client-side locks to grant.
  rpc::DispatchResult granted() {
    xdr::Decoded<nlm4_testargs> a(xdr_nlm4_testargs);
    if (!decode(a)) return accepted(rpc::AcceptStat::GarbageArgs);
    nlm4_res res{};
    res.cookie = a->cookie;
    res.stat.stat = NLM4_DENIED;
    return reply(xdr_nlm4_res, res, results);
  }

  rpc::DispatchResult test_msg() {
    xdr::Decoded<nlm4_testargs> a(xdr_nlm4_testargs);
    if (!decode(a)) return accepted(rpc::AcceptStat::GarbageArgs);
    nlm4_testres res{};
    std::string oh;
    test_core(*a, &res, &oh);
    // The result is sent as TEST_RES; its fields are copied into the callback.
    std::string cookie = bytes(a->cookie);
    nlm4_stats stat = res.stat.stat;
    nlm4_holder h = res.stat.nlm4_testrply_u.holder;
    CallbackCall callback = callback_to(route(), kNlmProgram, kNlmVersion, kTestRes);
    nlm4_testres r{};
    r.cookie = netobj(cookie);
    r.stat.stat = stat;
    if (stat == NLM4_DENIED) {
      r.stat.nlm4_testrply_u.holder = h;
      r.stat.nlm4_testrply_u.holder.oh = netobj(oh);
    }
    if (may_call_back() && xdr::append(xdr_nlm4_testres, r, &callback.args))
      s.state_->callbacks().post(std::move(callback));
    return accepted();
  }

  rpc::DispatchResult lock_msg() {
    xdr::Decoded<nlm4_lockargs> a(xdr_nlm4_lockargs);
    if (!decode(a)) return accepted(rpc::AcceptStat::GarbageArgs);
    nlm4_stats stat = lock_core(*a, true);
    if (may_call_back()) post_res(*s.state_, route(), kLockRes, bytes(a->cookie), stat);
    return accepted();
  }

  rpc::DispatchResult cancel_msg() {
    xdr::Decoded<nlm4_cancargs> a(xdr_nlm4_cancargs);
    if (!decode(a)) return accepted(rpc::AcceptStat::GarbageArgs);
    nlm4_stats stat = cancel_core(*a);
    if (may_call_back()) post_res(*s.state_, route(), kCancelRes, bytes(a->cookie), stat);
    return accepted();
  }

  rpc::DispatchResult unlock_msg() {
    xdr::Decoded<nlm4_unlockargs> a(xdr_nlm4_unlockargs);
    if (!decode(a)) return accepted(rpc::AcceptStat::GarbageArgs);
    nlm4_stats stat = unlock_core(*a);
    if (may_call_back()) post_res(*s.state_, route(), kUnlockRes, bytes(a->cookie), stat);
    return accepted();
  }

  // GRANTED_MSG and the _RES answers to _MSG calls this server never makes: checked, ignored.
  rpc::DispatchResult ignored_testargs() {
    xdr::Decoded<nlm4_testargs> a(xdr_nlm4_testargs);
    return accepted(decode(a) ? rpc::AcceptStat::Success : rpc::AcceptStat::GarbageArgs);
  }
  rpc::DispatchResult ignored_testres() {
    xdr::Decoded<nlm4_testres> a(xdr_nlm4_testres);
    return accepted(decode(a) ? rpc::AcceptStat::Success : rpc::AcceptStat::GarbageArgs);
  }
  rpc::DispatchResult ignored_res() {
    xdr::Decoded<nlm4_res> a(xdr_nlm4_res);
    return accepted(decode(a) ? rpc::AcceptStat::Success : rpc::AcceptStat::GarbageArgs);
  }

  // GRANTED_RES: a client's answer to GRANTED, sent as a separate message.
  rpc::DispatchResult granted_res() {
    xdr::Decoded<nlm4_res> a(xdr_nlm4_res);
    if (!decode(a)) return accepted(rpc::AcceptStat::GarbageArgs);
    if (s.exports_->admits(call.peer))
      s.state_->granted_result(bytes(a->cookie), wire_value(a->stat.stat) == NLM4_GRANTED, peer());
    return accepted();
  }

  rpc::DispatchResult share_or_unshare(bool share) {
    xdr::Decoded<nlm4_shareargs> a(xdr_nlm4_shareargs);
    if (!decode(a)) return accepted(rpc::AcceptStat::GarbageArgs);
    nlm4_shareres res{};
    res.cookie = a->cookie;
    const nlm4_share& sh = a->share;
    Share want;
    nlm4_stats st = (!sh.caller_name || !*sh.caller_name) ? NLM4_FAILED : resolve(sh.fh, &want.file);
    const uint32_t access = wire_value(sh.access), deny = wire_value(sh.mode);
    if (st == NLM4_GRANTED && (access > 3 || deny > 3)) st = NLM4_FAILED;
    if (st == NLM4_GRANTED) {
      want.host = sh.caller_name;
      want.oh = bytes(sh.oh);
      want.address = peer();
      want.access = static_cast<ShareAccess>(access);
      want.deny = static_cast<ShareDeny>(deny);
      if (share) {
        st = to_nlm(s.state_->share(want, a->reclaim, route().from));
      } else {
        s.state_->unshare(want.file, want.host, want.oh, want.address);
      }
    }
    res.stat = st;
    return reply(xdr_nlm4_shareres, res, results);
  }
  rpc::DispatchResult share() { return share_or_unshare(true); }
  rpc::DispatchResult unshare() { return share_or_unshare(false); }

  // FREE_ALL: the client's lock manager restarted and drops everything it held here -- what
  // the name holds at the caller's address, nothing else (over UDP too: a forged packet frees
  // only what its forged source address holds under that name).
  rpc::DispatchResult free_all() {
    xdr::Decoded<nlm4_notify> a(xdr_nlm4_notify);
    if (!decode(a)) return accepted(rpc::AcceptStat::GarbageArgs);
    if (a->name && *a->name && s.exports_->admits(call.peer)) {
      s.state_->host_rebooted(a->name, peer());
      if (s.forwarder_) s.forwarder_->client_rebooted(a->name, peer());
    }
    return accepted();
  }
};

namespace {

using Handler = rpc::DispatchResult (NlmService::Procs::*)();
struct ProcEntry {
  const char* name;
  Handler handler;  // nullptr: not a procedure of version 4
};

using P = NlmService::Procs;
const ProcEntry kProcTable[24] = {
    {"NULL", &P::null},
    {"TEST", &P::test},
    {"LOCK", &P::lock},
    {"CANCEL", &P::cancel},
    {"UNLOCK", &P::unlock},
    {"GRANTED", &P::granted},
    {"TEST_MSG", &P::test_msg},
    {"LOCK_MSG", &P::lock_msg},
    {"CANCEL_MSG", &P::cancel_msg},
    {"UNLOCK_MSG", &P::unlock_msg},
    {"GRANTED_MSG", &P::ignored_testargs},
    {"TEST_RES", &P::ignored_testres},
    {"LOCK_RES", &P::ignored_res},
    {"CANCEL_RES", &P::ignored_res},
    {"UNLOCK_RES", &P::ignored_res},
    {"GRANTED_RES", &P::granted_res},
    {"16", nullptr},
    {"17", nullptr},
    {"18", nullptr},
    {"19", nullptr},
    {"SHARE", &P::share},
    {"UNSHARE", &P::unshare},
    {"NM_LOCK", &P::nm_lock},
    {"FREE_ALL", &P::free_all},
};

}  // namespace

NlmService::NlmService(std::shared_ptr<LockState> state, std::shared_ptr<nfs::HandleCodec> handles,
                       std::shared_ptr<nfs::Exports> exports,
                       std::function<bool(uint32_t)> serves_volume,
                       std::shared_ptr<LockForwarder> forwarder)
    : state_(std::move(state)),
      handles_(std::move(handles)),
      exports_(std::move(exports)),
      serves_volume_(std::move(serves_volume)),
      forwarder_(std::move(forwarder)) {}

std::string_view NlmService::proc_name(uint32_t proc) const {
  return proc < num_procs() ? kProcTable[proc].name : "UNKNOWN";
}

rpc::DispatchResult NlmService::dispatch(const rpc::CallContext& call,
                                         std::span<const uint8_t> args,
                                         std::vector<uint8_t>* results) {
  if (call.vers != kNlmVersion) {
    rpc::DispatchResult r = accepted(rpc::AcceptStat::ProgMismatch);
    r.low_version = r.high_version = kNlmVersion;
    return r;
  }
  if (call.proc >= num_procs() || !kProcTable[call.proc].handler)
    return accepted(rpc::AcceptStat::ProcUnavail);
  const Handler handler = kProcTable[call.proc].handler;
  const size_t before = results->size();
  try {
    try {
      Procs p{*this, call, args, results};
      return (p.*handler)();
    } catch (const ForwardTo& f) {
      results->resize(before);
      if (std::optional<rpc::AcceptStat> stat = forwarder_->forward(f.volume, call, args, results))
        return accepted(*stat);
      results->resize(before);
      Procs p{*this, call, args, results, /*owner_unreachable=*/true};
      return (p.*handler)();
    }
  } catch (const std::exception&) {
    return accepted(rpc::AcceptStat::SystemErr);  // e.g. out of memory
  }
}

}  // namespace nasd::nlm
