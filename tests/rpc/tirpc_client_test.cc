// A real ONC RPC client (libtirpc's clnt_call) against the server, over TCP and UDP.
#include <arpa/inet.h>
#include <rpc/rpc.h>

#include "tests/rpc/loopback_fixture.h"
#include "util/net.h"

namespace nasd::rpc::testing {
namespace {

sockaddr_in server_address(uint16_t port) {
  return *reinterpret_cast<const sockaddr_in*>(util::parse_socket_address("127.0.0.1", port).get());
}

struct Bytes {
  char* data = nullptr;
  u_int len = 0;
};

bool_t xdr_echo_bytes(XDR* x, Bytes* b) { return xdr_bytes(x, &b->data, &b->len, 1 << 20); }

struct WhoAmI {
  u_int flavor = 0, uid = 0, gid = 0;
  u_int* gids = nullptr;
  u_int ngids = 0;
  char* machine = nullptr;
  u_int machine_len = 0;
};

bool_t xdr_whoami(XDR* x, WhoAmI* w) {
  return xdr_u_int(x, &w->flavor) && xdr_u_int(x, &w->uid) && xdr_u_int(x, &w->gid) &&
         xdr_array(x, reinterpret_cast<char**>(&w->gids), &w->ngids, 16, sizeof(u_int),
                   reinterpret_cast<xdrproc_t>(xdr_u_int)) &&
         xdr_bytes(x, &w->machine, &w->machine_len, 255);
}

// libtirpc declares xdr_void without parameters; a typed stand-in avoids casting that.
bool_t xdr_nothing(XDR*, void*) { return TRUE; }

const timeval kTimeout{5, 0};

TEST_F(LoopbackTest, TirpcTcpClientEchoes) {
  sockaddr_in sin = server_address(port_);
  int sock = RPC_ANYSOCK;
  CLIENT* clnt = clnttcp_create(&sin, kEchoProgram, 1, &sock, 0, 0);
  ASSERT_NE(clnt, nullptr) << clnt_spcreateerror("clnttcp_create");
  for (int i = 0; i < 20; ++i) {
    std::string text = "tirpc call " + std::to_string(i);
    Bytes in{text.data(), static_cast<u_int>(text.size())};
    Bytes out;
    clnt_stat st = clnt_call(clnt, kEcho, reinterpret_cast<xdrproc_t>(xdr_echo_bytes),
                             reinterpret_cast<char*>(&in),
                             reinterpret_cast<xdrproc_t>(xdr_echo_bytes),
                             reinterpret_cast<char*>(&out), kTimeout);
    ASSERT_EQ(st, RPC_SUCCESS) << clnt_sperror(clnt, "echo");
    EXPECT_EQ(std::string(out.data, out.len), text);
    clnt_freeres(clnt, reinterpret_cast<xdrproc_t>(xdr_echo_bytes), reinterpret_cast<char*>(&out));
  }
  clnt_destroy(clnt);
}

TEST_F(LoopbackTest, TirpcAuthSysCredentialIsDecoded) {
  sockaddr_in sin = server_address(port_);
  int sock = RPC_ANYSOCK;
  CLIENT* clnt = clnttcp_create(&sin, kEchoProgram, 2, &sock, 0, 0);
  ASSERT_NE(clnt, nullptr);
  gid_t gids[3] = {10, 20, 30};
  clnt->cl_auth = authunix_create(const_cast<char*>("tirpc-client"), 1001, 2002, 3, gids);
  WhoAmI w;
  clnt_stat st = clnt_call(clnt, kWhoAmI, reinterpret_cast<xdrproc_t>(xdr_nothing), nullptr,
                           reinterpret_cast<xdrproc_t>(xdr_whoami), reinterpret_cast<char*>(&w),
                           kTimeout);
  ASSERT_EQ(st, RPC_SUCCESS) << clnt_sperror(clnt, "whoami");
  EXPECT_EQ(w.flavor, unsigned{kAuthSys});
  EXPECT_EQ(w.uid, 1001u);
  EXPECT_EQ(w.gid, 2002u);
  ASSERT_EQ(w.ngids, 3u);
  EXPECT_EQ(w.gids[2], 30u);
  EXPECT_EQ(std::string(w.machine, w.machine_len), "tirpc-client");
  clnt_freeres(clnt, reinterpret_cast<xdrproc_t>(xdr_whoami), reinterpret_cast<char*>(&w));
  auth_destroy(clnt->cl_auth);
  clnt_destroy(clnt);
}

TEST_F(LoopbackTest, TirpcSeesVersionMismatchRange) {
  sockaddr_in sin = server_address(port_);
  int sock = RPC_ANYSOCK;
  CLIENT* clnt = clnttcp_create(&sin, kEchoProgram, 5, &sock, 0, 0);
  ASSERT_NE(clnt, nullptr);
  clnt_stat st = clnt_call(clnt, kNull, reinterpret_cast<xdrproc_t>(xdr_nothing), nullptr,
                           reinterpret_cast<xdrproc_t>(xdr_nothing), nullptr, kTimeout);
  EXPECT_EQ(st, RPC_PROGVERSMISMATCH);
  rpc_err err{};
  clnt_geterr(clnt, &err);
  EXPECT_EQ(err.re_vers.low, 1u);
  EXPECT_EQ(err.re_vers.high, 2u);
  clnt_destroy(clnt);
}

TEST_F(LoopbackTest, TirpcUdpClientEchoes) {
  sockaddr_in sin = server_address(port_);
  int sock = RPC_ANYSOCK;
  CLIENT* clnt = clntudp_create(&sin, kEchoProgram, 1, timeval{1, 0}, &sock);
  ASSERT_NE(clnt, nullptr) << clnt_spcreateerror("clntudp_create");
  std::string text = "over udp";
  Bytes in{text.data(), static_cast<u_int>(text.size())};
  Bytes out;
  clnt_stat st = clnt_call(clnt, kEcho, reinterpret_cast<xdrproc_t>(xdr_echo_bytes),
                           reinterpret_cast<char*>(&in), reinterpret_cast<xdrproc_t>(xdr_echo_bytes),
                           reinterpret_cast<char*>(&out), kTimeout);
  ASSERT_EQ(st, RPC_SUCCESS) << clnt_sperror(clnt, "udp echo");
  EXPECT_EQ(std::string(out.data, out.len), text);
  clnt_freeres(clnt, reinterpret_cast<xdrproc_t>(xdr_echo_bytes), reinterpret_cast<char*>(&out));
  clnt_destroy(clnt);
}

}  // namespace
}  // namespace nasd::rpc::testing
