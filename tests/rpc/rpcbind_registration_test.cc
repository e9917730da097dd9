// rpcbind registration against a stand-in rpcbind (libtirpc's own server side on a private
// Unix socket), so the test neither needs nor disturbs a system rpcbind on port 111.
#include "server/rpc/rpcbind_registration.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <rpc/rpc.h>
#include <rpc/rpcb_prot.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "server/rpc/rpc_server.h"
#include "tests/rpc/echo_service.h"

// libtirpc's svcunix_create keeps a few bytes that svc_destroy never frees; not ours to fix.
extern "C" const char* __lsan_default_suppressions() { return "leak:svcunix_create\n"; }

namespace nasd::rpc {
namespace {

struct SeenCall {
  uint32_t proc, prog, vers;
  std::string netid, uaddr;
};

std::mutex g_mu;
std::vector<SeenCall> g_calls;
bool g_refuse_set = false;

bool_t xdr_nothing(XDR*, void*) { return TRUE; }

void fake_rpcbind_dispatch(svc_req* req, SVCXPRT* xprt) {
  if (req->rq_proc == NULLPROC) {
    svc_sendreply(xprt, reinterpret_cast<xdrproc_t>(xdr_nothing), nullptr);
    return;
  }
  rpcb args{};
  if (!svc_getargs(xprt, reinterpret_cast<xdrproc_t>(xdr_rpcb), reinterpret_cast<char*>(&args))) {
    svcerr_decode(xprt);
    return;
  }
  bool_t result = TRUE;
  {
    std::lock_guard lock(g_mu);
    g_calls.push_back({static_cast<uint32_t>(req->rq_proc), static_cast<uint32_t>(args.r_prog),
                       static_cast<uint32_t>(args.r_vers), args.r_netid, args.r_addr});
    if (req->rq_proc == RPCBPROC_SET && g_refuse_set) result = FALSE;
  }
  svc_freeargs(xprt, reinterpret_cast<xdrproc_t>(xdr_rpcb), reinterpret_cast<char*>(&args));
  svc_sendreply(xprt, reinterpret_cast<xdrproc_t>(xdr_bool), reinterpret_cast<char*>(&result));
}

class FakeRpcbind {
 public:
  FakeRpcbind() : path_("/tmp/nasd-rpc-test-rpcbind-" + std::to_string(getpid()) + ".sock") {
    unlink(path_.c_str());
    xprt_ = svcunix_create(RPC_ANYSOCK, 0, 0, const_cast<char*>(path_.c_str()));
    if (xprt_ == nullptr) throw std::runtime_error("svcunix_create failed");
    svc_register(xprt_, RPCBPROG, RPCBVERS, fake_rpcbind_dispatch, 0);
    {
      std::lock_guard lock(g_mu);
      g_calls.clear();
      g_refuse_set = false;
    }
    thread_ = std::thread([this] {
      while (!stop_) {
        int n = poll(svc_pollfd, svc_max_pollfd, 50);
        if (n > 0) svc_getreq_poll(svc_pollfd, n);
      }
    });
  }
  ~FakeRpcbind() {
    stop_ = true;
    thread_.join();
    svc_unregister(RPCBPROG, RPCBVERS);
    svc_destroy(xprt_);
    unlink(path_.c_str());
  }
  const std::string& path() const { return path_; }
  std::vector<SeenCall> calls() const {
    std::lock_guard lock(g_mu);
    return g_calls;
  }

 private:
  std::string path_;
  SVCXPRT* xprt_ = nullptr;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

RpcbindRegistration::Options options(RpcbindMode mode, const std::string& path) {
  RpcbindRegistration::Options o;
  o.mode = mode;
  o.socket_path = path;
  o.timeout = std::chrono::milliseconds(1000);
  return o;
}

TEST(RpcbindRegistration, ParsesModes) {
  EXPECT_EQ(parse_rpcbind_mode("auto"), RpcbindMode::Auto);
  EXPECT_EQ(parse_rpcbind_mode("on"), RpcbindMode::On);
  EXPECT_EQ(parse_rpcbind_mode("off"), RpcbindMode::Off);
  EXPECT_THROW(parse_rpcbind_mode("maybe"), std::invalid_argument);
}

TEST(RpcbindRegistration, UniversalAddress) {
  EXPECT_EQ(RpcbindRegistration::universal_address(util::parse_socket_address("127.0.0.1", 2049)),
            "127.0.0.1.8.1");
  EXPECT_EQ(RpcbindRegistration::universal_address(util::parse_socket_address("::1", 20048)),
            "::1.78.80");
}

TEST(RpcbindRegistration, RegistersAndUnregisters) {
  FakeRpcbind fake;
  {
    RpcbindRegistration reg(options(RpcbindMode::On, fake.path()));
    EXPECT_TRUE(reg.add(100003, 3, true, util::parse_socket_address("127.0.0.1", 2049)));
    EXPECT_TRUE(reg.add(100003, 3, false, util::parse_socket_address("127.0.0.1", 2049)));
    EXPECT_EQ(reg.registered_count(), 2u);
  }  // destructor unregisters
  auto calls = fake.calls();
  ASSERT_EQ(calls.size(), 6u);  // UNSET+SET twice, then two UNSETs
  EXPECT_EQ(calls[0].proc, uint32_t{RPCBPROC_UNSET});
  EXPECT_EQ(calls[1].proc, uint32_t{RPCBPROC_SET});
  EXPECT_EQ(calls[1].prog, 100003u);
  EXPECT_EQ(calls[1].vers, 3u);
  EXPECT_EQ(calls[1].netid, "tcp");
  EXPECT_EQ(calls[1].uaddr, "127.0.0.1.8.1");
  EXPECT_EQ(calls[3].netid, "udp");
  EXPECT_EQ(calls[4].proc, uint32_t{RPCBPROC_UNSET});
  EXPECT_EQ(calls[5].proc, uint32_t{RPCBPROC_UNSET});
}

TEST(RpcbindRegistration, RefusalFailsInModeOn) {
  FakeRpcbind fake;
  {
    std::lock_guard lock(g_mu);
    g_refuse_set = true;
  }
  RpcbindRegistration reg(options(RpcbindMode::On, fake.path()));
  EXPECT_THROW(reg.add(100005, 3, true, util::parse_socket_address("127.0.0.1", 20048)),
               std::runtime_error);
  EXPECT_EQ(reg.registered_count(), 0u);
}

TEST(RpcbindRegistration, AbsentRpcbindIsSkippedQuicklyInAuto) {
  std::string nowhere = "/tmp/nasd-rpc-test-no-rpcbind-" + std::to_string(getpid()) + ".sock";
  RpcbindRegistration reg(options(RpcbindMode::Auto, nowhere));
  auto t0 = std::chrono::steady_clock::now();
  std::string note;
  EXPECT_FALSE(reg.add(100003, 3, true, util::parse_socket_address("127.0.0.1", 2049), &note));
  EXPECT_FALSE(reg.add(100003, 3, false, util::parse_socket_address("127.0.0.1", 2049), &note));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(1500));
  EXPECT_NE(note.find("skipped"), std::string::npos) << note;
}

TEST(RpcbindRegistration, AbsentRpcbindFailsInModeOn) {
  std::string nowhere = "/tmp/nasd-rpc-test-no-rpcbind-" + std::to_string(getpid()) + ".sock";
  RpcbindRegistration reg(options(RpcbindMode::On, nowhere));
  EXPECT_THROW(reg.add(100003, 3, true, util::parse_socket_address("127.0.0.1", 2049)),
               std::runtime_error);
}

TEST(RpcbindRegistration, ModeOffNeverCallsRpcbind) {
  FakeRpcbind fake;
  RpcbindRegistration reg(options(RpcbindMode::Off, fake.path()));
  EXPECT_FALSE(reg.add(100003, 3, true, util::parse_socket_address("127.0.0.1", 2049)));
  EXPECT_TRUE(fake.calls().empty());
}

TEST(RpcbindRegistration, ServerRegistersAndUnregistersOnStop) {
  FakeRpcbind fake;
  RpcServerOptions o;
  o.ports = {0};
  o.workers = 1;
  o.threads = 2;
  o.rpcbind = options(RpcbindMode::On, fake.path());
  RpcServer server(o);
  server.add_service(std::make_shared<testing::EchoService>());
  server.start();
  uint16_t port = server.bound_ports()[0];
  EXPECT_TRUE(server.register_with_rpcbind(testing::kEchoProgram, 1, port));
  server.stop();
  auto calls = fake.calls();
  int sets = 0, unsets_after = 0;
  for (const auto& c : calls) {
    if (c.proc == RPCBPROC_SET) {
      ++sets;
      EXPECT_EQ(c.prog, testing::kEchoProgram);
      EXPECT_EQ(c.uaddr, "127.0.0.1." + std::to_string(port >> 8) + "." +
                             std::to_string(port & 0xff));
    }
  }
  for (size_t i = calls.size() - 2; i < calls.size(); ++i)
    unsets_after += calls[i].proc == RPCBPROC_UNSET;
  EXPECT_EQ(sets, 2);          // tcp and udp
  EXPECT_EQ(unsets_after, 2);  // both removed by stop()
}

}  // namespace
}  // namespace nasd::rpc
