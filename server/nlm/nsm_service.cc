#include "server/nlm/nsm_service.h"

#include <netinet/in.h>

#include <exception>

#include "server/nfs/mount/mount_service.h"
#include "server/nfs/xdr/xdr_codec.h"
#include "server/nlm/xdr/sm_prot.h"

namespace nasd::nlm {
namespace {

namespace xdr = nfs::xdr;

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

bool loopback(const sockaddr_storage& peer) {
  if (peer.ss_family == AF_INET)
    return (ntohl(reinterpret_cast<const sockaddr_in&>(peer).sin_addr.s_addr) >> 24) == 127;
  if (peer.ss_family == AF_INET6) {
    const in6_addr& a = reinterpret_cast<const sockaddr_in6&>(peer).sin6_addr;
    return IN6_IS_ADDR_LOOPBACK(&a) || (IN6_IS_ADDR_V4MAPPED(&a) && a.s6_addr[12] == 127);
  }
  return false;
}

}  // namespace

struct NsmService::Procs {
  NsmService& s;
  const rpc::CallContext& call;
  std::span<const uint8_t> args;
  std::vector<uint8_t>* results;

  rpc::DispatchResult null() { return accepted(); }

  rpc::DispatchResult stat() {
    xdr::Decoded<sm_name> a(xdr_sm_name);
    if (!a.decode(args)) return accepted(rpc::AcceptStat::GarbageArgs);
    sm_stat_res res{STAT_SUCC, s.state_->monitor().state()};
    return reply(xdr_sm_stat_res, res, results);
  }

  rpc::DispatchResult mon() {
    xdr::Decoded<sm_mon> a(xdr_sm_mon);
    if (!a.decode(args)) return accepted(rpc::AcceptStat::GarbageArgs);
    bool ok = loopback(call.peer) && a->mon_id.mon_name &&
              s.state_->monitor().monitor(a->mon_id.mon_name, a->mon_id.mon_name);
    sm_stat_res res{ok ? STAT_SUCC : STAT_FAIL, s.state_->monitor().state()};
    return reply(xdr_sm_stat_res, res, results);
  }

  rpc::DispatchResult unmon() {
    xdr::Decoded<sm_mon_id> a(xdr_sm_mon_id);
    if (!a.decode(args)) return accepted(rpc::AcceptStat::GarbageArgs);
    if (loopback(call.peer) && a->mon_name) s.state_->monitor().unmonitor(a->mon_name);
    sm_stat res{s.state_->monitor().state()};
    return reply(xdr_sm_stat, res, results);
  }

  rpc::DispatchResult unmon_all() {
    xdr::Decoded<sm_my_id> a(xdr_sm_my_id);
    if (!a.decode(args)) return accepted(rpc::AcceptStat::GarbageArgs);
    if (loopback(call.peer)) s.state_->monitor().unmonitor_all();
    sm_stat res{s.state_->monitor().state()};
    return reply(xdr_sm_stat, res, results);
  }

  // As if this host had restarted: a new state number, and every client is told.
  rpc::DispatchResult simu_crash() {
    if (!loopback(call.peer)) return accepted();
    s.state_->monitor().advance_state();
    s.state_->notify(s.state_->monitor().hosts(), s.state_->options().notify_name);
    return accepted();
  }

  rpc::DispatchResult notify() {
    xdr::Decoded<sm_stat_chge> a(xdr_sm_stat_chge);
    if (!a.decode(args)) return accepted(rpc::AcceptStat::GarbageArgs);
    if (a->mon_name) {
      s.state_->host_rebooted(a->mon_name, nfs::peer_host(call.peer));
      if (s.forwarder_) s.forwarder_->client_rebooted(a->mon_name, nfs::peer_host(call.peer));
    }
    return accepted();
  }
};

namespace {

using Handler = rpc::DispatchResult (NsmService::Procs::*)();
struct ProcEntry {
  const char* name;
  Handler handler;
};
using P = NsmService::Procs;
const ProcEntry kProcTable[7] = {
    {"NULL", &P::null},        {"STAT", &P::stat},           {"MON", &P::mon},
    {"UNMON", &P::unmon},      {"UNMON_ALL", &P::unmon_all}, {"SIMU_CRASH", &P::simu_crash},
    {"NOTIFY", &P::notify},
};

}  // namespace

std::string_view NsmService::proc_name(uint32_t proc) const {
  return proc < num_procs() ? kProcTable[proc].name : "UNKNOWN";
}

rpc::DispatchResult NsmService::dispatch(const rpc::CallContext& call,
                                         std::span<const uint8_t> args,
                                         std::vector<uint8_t>* results) {
  if (call.vers != kNsmVersion) {
    rpc::DispatchResult r = accepted(rpc::AcceptStat::ProgMismatch);
    r.low_version = r.high_version = kNsmVersion;
    return r;
  }
  if (call.proc >= num_procs()) return accepted(rpc::AcceptStat::ProcUnavail);
  try {
    Procs p{*this, call, args, results};
    return (p.*kProcTable[call.proc].handler)();
  } catch (const std::exception&) {
    return accepted(rpc::AcceptStat::SystemErr);
  }
}

}  // namespace nasd::nlm
