// RpcServer life cycle: configuration, start failures, clean stop under load, and recovery
// from running out of file descriptors.
#include "server/rpc/rpc_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "server/rpc/rpc_server_options.h"
#include "util/net.h"
#include "tests/rpc/echo_service.h"
#include "tests/rpc/rpc_test_client.h"
#include "util/config.h"

namespace nasd::rpc {
namespace {

using namespace testing;

RpcServerOptions quiet_options() {
  RpcServerOptions o;
  o.ports = {0};
  o.workers = 1;
  o.threads = 4;
  o.rpcbind.mode = RpcbindMode::Off;
  return o;
}

std::vector<uint8_t> null_call(uint32_t xid) {
  CallSpec s;
  s.xid = xid;
  s.prog = kEchoProgram;
  s.vers = 1;
  s.proc = kNull;
  return as_record(make_call(s));
}

TEST(RpcServerOptions, ReadFromNodeSection) {
  Config c = Config::parse(
      "[node]\nlisten = 127.0.0.2\nnfs_port = 3049\nmount_port = 3048\nudp = off\n"
      "workers = 3\nthreads = 5\nrpcbind = off\nmax_record = 1M\n");
  RpcServerOptions o = rpc_server_options_from_config(*c.section("node"));
  EXPECT_EQ(o.bind_address, "127.0.0.2");
  EXPECT_EQ(o.ports, (std::vector<uint16_t>{3049, 3048}));
  EXPECT_FALSE(o.udp);
  EXPECT_EQ(o.workers, 3u);
  EXPECT_EQ(o.threads, 5u);
  EXPECT_EQ(o.rpcbind.mode, RpcbindMode::Off);
  EXPECT_EQ(o.tcp.max_record, 1u << 20);
}

TEST(RpcServerOptions, DefaultsMatchTheShippedConfig) {
  RpcServerOptions o = rpc_server_options_from_config(ConfigSection("node", "", 1));
  EXPECT_EQ(o.ports, (std::vector<uint16_t>{2049, 20048}));
  EXPECT_TRUE(o.udp);
  EXPECT_EQ(o.threads, 16u);
  EXPECT_EQ(o.rpcbind.mode, RpcbindMode::Auto);
  EXPECT_EQ(o.tcp.max_record, 2u << 20);
}

TEST(RpcServerOptions, BadValuesAreConfigErrors) {
  for (const char* bad : {"nfs_port = 70000", "rpcbind = sometimes", "threads = 0",
                          "max_record = 12", "workers = -1"}) {
    Config c = Config::parse(std::string("[node]\n") + bad + "\n");
    EXPECT_THROW(rpc_server_options_from_config(*c.section("node")), ConfigError) << bad;
  }
}

TEST(RpcServer, StartFailsCleanlyWhenThePortIsTaken) {
  util::SocketAddress addr = util::parse_socket_address("127.0.0.1", 0);
  int taken = util::open_tcp_listener(addr);
  RpcServerOptions o = quiet_options();
  o.ports = {util::bound_port(taken)};
  RpcServer server(o);
  EXPECT_THROW(server.start(), std::system_error);
  EXPECT_FALSE(server.running());
  close(taken);
}

TEST(RpcServer, BadBindAddressIsRejected) {
  RpcServerOptions o = quiet_options();
  o.bind_address = "not-an-address";
  RpcServer server(o);
  EXPECT_THROW(server.start(), std::invalid_argument);
}

TEST(RpcServer, ServesSeveralPortsAndProgramsEverywhere) {
  RpcServerOptions o = quiet_options();
  o.ports = {0, 0};
  RpcServer server(o);
  server.add_service(std::make_shared<EchoService>());
  EXPECT_THROW(server.add_service(std::make_shared<EchoService>()), std::invalid_argument);
  server.start();
  ASSERT_EQ(server.bound_ports().size(), 2u);
  EXPECT_NE(server.bound_ports()[0], server.bound_ports()[1]);
  for (uint16_t port : server.bound_ports()) {
    TcpTestClient c(port);
    ASSERT_TRUE(c.send_all(null_call(port)));
    auto rec = c.read_record();
    ASSERT_TRUE(rec);
    EXPECT_EQ(parse_reply(*rec).xid, port);
  }
  server.stop();
  EXPECT_THROW(server.start(), std::logic_error);
}

TEST(RpcServer, StopIsPromptWithCallsInFlightAndOpenConnections) {
  RpcServerOptions o = quiet_options();
  o.workers = 2;
  RpcServer server(o);
  auto service = std::make_shared<EchoService>();
  server.add_service(service);
  server.start();
  std::vector<std::unique_ptr<TcpTestClient>> clients;
  for (int i = 0; i < 8; ++i) {
    clients.push_back(std::make_unique<TcpTestClient>(server.bound_ports()[0]));
    CallSpec s;
    s.xid = static_cast<uint32_t>(i);
    s.prog = kEchoProgram;
    s.vers = 1;
    s.proc = kSleepEcho;
    s.args = XdrBuilder().u32(200).opaque(std::string("z")).take();
    ASSERT_TRUE(clients.back()->send_all(as_record(make_call(s))));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto t0 = std::chrono::steady_clock::now();
  server.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
  EXPECT_EQ(service->concurrent.load(), 0) << "stop() lets running procedures finish";
  for (auto& c : clients) EXPECT_TRUE(c->wait_closed(2000));
}

TEST(RpcServer, RecoversAfterRunningOutOfDescriptors) {
  RpcServer server(quiet_options());
  server.add_service(std::make_shared<EchoService>());
  server.start();
  uint16_t port = server.bound_ports()[0];

  // Sockets made before the limit drops can still connect afterwards; the server's accept
  // then needs a descriptor it cannot have.
  std::vector<int> pending;
  for (int i = 0; i < 4; ++i) pending.push_back(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  int highest = *std::max_element(pending.begin(), pending.end());
  rlimit saved{};
  getrlimit(RLIMIT_NOFILE, &saved);
  rlimit tight = saved;
  tight.rlim_cur = static_cast<rlim_t>(highest + 1);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &tight), 0);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(port);
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  for (int fd : pending) connect(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin);
  for (int i = 0; i < 50 && server.stats().counter(TransportCounter::AcceptErrors) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  uint64_t errors = server.stats().counter(TransportCounter::AcceptErrors);
  setrlimit(RLIMIT_NOFILE, &saved);
  EXPECT_GT(errors, 0u) << "the accept should have hit EMFILE";

  // With descriptors back, the connections made meanwhile are served.
  for (size_t i = 0; i < pending.size(); ++i) {
    auto rec = null_call(static_cast<uint32_t>(i));
    ASSERT_EQ(send(pending[i], rec.data(), rec.size(), MSG_NOSIGNAL), ssize_t(rec.size()));
  }
  for (size_t i = 0; i < pending.size(); ++i) {
    uint8_t buf[64];
    timeval tv{5, 0};
    setsockopt(pending[i], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ssize_t n;
    // With SO_RCVTIMEO set, io_uring task-work notifications surface as EINTR; retry those.
    do {
      n = recv(pending[i], buf, sizeof buf, 0);
    } while (n < 0 && errno == EINTR);
    EXPECT_GT(n, 8) << "connection " << i << " was never served: " << strerror(errno);
    if (n > 8) {
      EXPECT_EQ(read_u32(buf, 4), i);
    }
    close(pending[i]);
  }
  server.stop();
}

}  // namespace
}  // namespace nasd::rpc
