#include "tests/e2e/nlm_wire.h"

#include <arpa/inet.h>
#include <poll.h>
#include <rpc/pmap_clnt.h>
#include <rpc/rpc.h>

#include <cstring>

#include "server/nlm/xdr/nlm4_prot.h"
#include "server/nlm/xdr/sm_prot.h"

namespace nasd::e2e::nlmwire {
namespace {

template <typename T>
using XdrFn = bool_t (*)(XDR*, T*);

xdrproc_t void_proc() { return reinterpret_cast<xdrproc_t>(reinterpret_cast<void (*)()>(xdr_void)); }

template <typename T>
std::string encode(XdrFn<T> fn, T value) {
  std::string buf(16384, '\0');
  XDR x;
  xdrmem_create(&x, buf.data(), static_cast<u_int>(buf.size()), XDR_ENCODE);
  bool ok = fn(&x, &value);
  buf.resize(ok ? xdr_getpos(&x) : 0);
  xdr_destroy(&x);
  return buf;
}

template <typename T>
bool decode(XdrFn<T> fn, std::string bytes, T* out) {
  std::memset(out, 0, sizeof(T));
  XDR x;
  xdrmem_create(&x, bytes.data(), static_cast<u_int>(bytes.size()), XDR_DECODE);
  bool ok = fn(&x, out);
  xdr_destroy(&x);
  return ok;
}

template <typename T>
void release(XdrFn<T> fn, T* value) {
  xdr_free(reinterpret_cast<xdrproc_t>(fn), reinterpret_cast<char*>(value));
}

nlm4_netobj obj(const std::string& s) {
  return nlm4_netobj{static_cast<u_int>(s.size()), const_cast<char*>(s.data())};
}

nlm4_lock alock(const LockArgs& a) {
  return nlm4_lock{const_cast<char*>(a.caller.c_str()), obj(a.fh), obj(a.oh), a.svid, a.offset,
                   a.len};
}

std::mutex g_mu;
Callbacks g_callbacks;
std::atomic<bool> g_answer_granted{true};

// The numeric address a call came from.
std::string caller_address(SVCXPRT* xprt) {
  const netbuf* from = svc_getrpccaller(xprt);
  char host[INET6_ADDRSTRLEN] = "";
  if (!from || !from->buf) return "";
  const auto* sa = static_cast<const sockaddr*>(from->buf);
  if (sa->sa_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, host, sizeof host);
  else if (sa->sa_family == AF_INET6)
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr, host, sizeof host);
  return host;
}

void nlm_callback(svc_req* rq, SVCXPRT* xprt) {
  if (rq->rq_proc == 0) {
    svc_sendreply(xprt, void_proc(), nullptr);
    return;
  }
  if (rq->rq_proc == kLockRes || rq->rq_proc == kUnlockRes || rq->rq_proc == 13) {
    nlm4_res r{};
    if (!svc_getargs(xprt, reinterpret_cast<xdrproc_t>(xdr_nlm4_res), reinterpret_cast<char*>(&r))) {
      svcerr_decode(xprt);
      return;
    }
    uint32_t stat;
    std::memcpy(&stat, &r.stat.stat, sizeof stat);
    {
      std::lock_guard lock(g_mu);
      g_callbacks.results.push_back(
          {static_cast<uint32_t>(rq->rq_proc), stat, std::string(r.cookie.nlm4_netobj_val, r.cookie.nlm4_netobj_len)});
    }
    svc_sendreply(xprt, void_proc(), nullptr);
    svc_freeargs(xprt, reinterpret_cast<xdrproc_t>(xdr_nlm4_res), reinterpret_cast<char*>(&r));
    return;
  }
  if (rq->rq_proc == kTestRes) {
    nlm4_testres r{};
    if (!svc_getargs(xprt, reinterpret_cast<xdrproc_t>(xdr_nlm4_testres), reinterpret_cast<char*>(&r))) {
      svcerr_decode(xprt);
      return;
    }
    uint32_t stat;
    std::memcpy(&stat, &r.stat.stat, sizeof stat);
    {
      std::lock_guard lock(g_mu);
      g_callbacks.results.push_back(
          {kTestRes, stat, std::string(r.cookie.nlm4_netobj_val, r.cookie.nlm4_netobj_len)});
    }
    svc_sendreply(xprt, void_proc(), nullptr);
    svc_freeargs(xprt, reinterpret_cast<xdrproc_t>(xdr_nlm4_testres), reinterpret_cast<char*>(&r));
    return;
  }
  if (rq->rq_proc != 5) {  // GRANTED
    svcerr_noproc(xprt);
    return;
  }
  nlm4_testargs a{};
  if (!svc_getargs(xprt, reinterpret_cast<xdrproc_t>(xdr_nlm4_testargs), reinterpret_cast<char*>(&a))) {
    svcerr_decode(xprt);
    return;
  }
  {
    std::lock_guard lock(g_mu);
    g_callbacks.granted.push_back({a.alock.caller_name, a.alock.svid, a.alock.l_offset,
                                   a.alock.l_len, a.exclusive != 0, caller_address(xprt)});
  }
  nlm4_res res{};
  res.cookie = a.cookie;
  res.stat.stat = NLM4_GRANTED;
  if (g_answer_granted)
    svc_sendreply(xprt, reinterpret_cast<xdrproc_t>(xdr_nlm4_res), reinterpret_cast<char*>(&res));
  svc_freeargs(xprt, reinterpret_cast<xdrproc_t>(xdr_nlm4_testargs), reinterpret_cast<char*>(&a));
}

void nsm_callback(svc_req* rq, SVCXPRT* xprt) {
  if (rq->rq_proc == 0) {
    svc_sendreply(xprt, void_proc(), nullptr);
    return;
  }
  if (rq->rq_proc != kSmNotify) {
    svcerr_noproc(xprt);
    return;
  }
  sm_stat_chge a{};
  if (!svc_getargs(xprt, reinterpret_cast<xdrproc_t>(xdr_sm_stat_chge), reinterpret_cast<char*>(&a))) {
    svcerr_decode(xprt);
    return;
  }
  {
    std::lock_guard lock(g_mu);
    g_callbacks.notified.push_back({a.mon_name, a.state});
  }
  svc_sendreply(xprt, void_proc(), nullptr);
  svc_freeargs(xprt, reinterpret_cast<xdrproc_t>(xdr_sm_stat_chge), reinterpret_cast<char*>(&a));
}

}  // namespace

std::string encode_lock(const LockArgs& a) {
  nlm4_lockargs v{obj(a.cookie), a.block, a.exclusive, alock(a), a.reclaim, 3};
  return encode(xdr_nlm4_lockargs, v);
}
std::string encode_unlock(const LockArgs& a) {
  return encode(xdr_nlm4_unlockargs, nlm4_unlockargs{obj(a.cookie), alock(a)});
}
std::string encode_cancel(const LockArgs& a) {
  return encode(xdr_nlm4_cancargs, nlm4_cancargs{obj(a.cookie), a.block, a.exclusive, alock(a)});
}
std::string encode_test(const LockArgs& a) {
  return encode(xdr_nlm4_testargs, nlm4_testargs{obj(a.cookie), a.exclusive, alock(a)});
}
std::string encode_share(const std::string& caller, const std::string& fh, const std::string& oh,
                         Access access, Deny deny) {
  std::string cookie = "cookie";
  nlm4_shareargs v{obj(cookie),
                   {const_cast<char*>(caller.c_str()), obj(fh), obj(oh),
                    static_cast<nlm4_fsh_mode>(deny), static_cast<nlm4_fsh_access>(access)},
                   false};
  return encode(xdr_nlm4_shareargs, v);
}
std::string encode_free_all(const std::string& name, int32_t state) {
  return encode(xdr_nlm4_notify, nlm4_notify{const_cast<char*>(name.c_str()), state});
}
std::string encode_res(const std::string& cookie, uint32_t stat) {
  nlm4_res r{};
  r.cookie = obj(cookie);
  r.stat.stat = static_cast<nlm4_stats>(stat);
  return encode(xdr_nlm4_res, r);
}
std::string encode_sm_notify(const std::string& mon_name, int32_t state) {
  return encode(xdr_sm_stat_chge, sm_stat_chge{const_cast<char*>(mon_name.c_str()), state});
}

uint32_t decode_res(const std::string& bytes) {
  nlm4_res r;
  if (!decode(xdr_nlm4_res, bytes, &r)) return kFailed;
  uint32_t st = r.stat.stat;
  release(xdr_nlm4_res, &r);
  return st;
}

uint32_t decode_shareres(const std::string& bytes) {
  nlm4_shareres r;
  if (!decode(xdr_nlm4_shareres, bytes, &r)) return kFailed;
  uint32_t st = r.stat;
  release(xdr_nlm4_shareres, &r);
  return st;
}

TestOutcome decode_testres(const std::string& bytes) {
  nlm4_testres r;
  TestOutcome out;
  if (!decode(xdr_nlm4_testres, bytes, &r)) return out;
  out.stat = r.stat.stat;
  if (out.stat == kDenied) {
    const nlm4_holder& h = r.stat.nlm4_testrply_u.holder;
    out.exclusive = h.exclusive;
    out.svid = h.svid;
    out.offset = h.l_offset;
    out.len = h.l_len;
  }
  release(xdr_nlm4_testres, &r);
  return out;
}

CallbackServer::CallbackServer(bool answer_granted) {
  {
    std::lock_guard lock(g_mu);
    g_callbacks = Callbacks{};
  }
  g_answer_granted = answer_granted;
  SVCXPRT* nlm = svcudp_create(RPC_ANYSOCK);
  SVCXPRT* nsm = svcudp_create(RPC_ANYSOCK);
  nlm_ = nlm;
  nsm_ = nsm;
  pmap_unset(kNlmProg, kNlmVers);
  pmap_unset(kNsmProg, kNsmVers);
  registered_ = nlm && nsm && svc_register(nlm, kNlmProg, kNlmVers, nlm_callback, IPPROTO_UDP) &&
                svc_register(nsm, kNsmProg, kNsmVers, nsm_callback, IPPROTO_UDP);
  thread_ = std::thread([this] { run(); });
}

CallbackServer::~CallbackServer() {
  stop_ = true;
  thread_.join();
  svc_unregister(kNlmProg, kNlmVers);
  svc_unregister(kNsmProg, kNsmVers);
  if (nlm_) svc_destroy(static_cast<SVCXPRT*>(nlm_));
  if (nsm_) svc_destroy(static_cast<SVCXPRT*>(nsm_));
}

Callbacks CallbackServer::snapshot() {
  std::lock_guard lock(g_mu);
  return g_callbacks;
}

void CallbackServer::run() {
  auto* nlm = static_cast<SVCXPRT*>(nlm_);
  auto* nsm = static_cast<SVCXPRT*>(nsm_);
  while (!stop_) {
    pollfd fds[2] = {{nlm ? nlm->xp_fd : -1, POLLIN, 0}, {nsm ? nsm->xp_fd : -1, POLLIN, 0}};
    if (poll(fds, 2, 50) <= 0) continue;
    for (auto& f : fds)
      if (f.revents & POLLIN) svc_getreq_common(f.fd);
  }
}

}  // namespace nasd::e2e::nlmwire
