// A running RpcServer on 127.0.0.1 (ephemeral port, TCP and UDP) carrying the EchoService,
// for the loopback tests.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "server/rpc/rpc_server.h"
#include "tests/rpc/echo_service.h"
#include "tests/rpc/rpc_test_client.h"

namespace nasd::rpc::testing {

class LoopbackTest : public ::testing::Test {
 protected:
  virtual void tune(RpcServerOptions&) {}

  void SetUp() override {
    RpcServerOptions o;
    o.bind_address = "127.0.0.1";
    o.ports = {0};
    o.workers = 2;
    o.threads = 8;
    o.tcp.max_record = 256 << 10;
    o.rpcbind.mode = RpcbindMode::Off;
    tune(o);
    service_ = std::make_shared<EchoService>();
    server_ = std::make_unique<RpcServer>(o);
    server_->add_service(service_);
    server_->start();
    port_ = server_->bound_ports().at(0);
  }
  void TearDown() override { server_->stop(); }

  uint64_t counter(TransportCounter c) const { return server_->stats().counter(c); }

  static std::vector<uint8_t> echo_args(const std::string& text) {
    return XdrBuilder().opaque(text).take();
  }
  static std::vector<uint8_t> sleep_args(uint32_t ms, const std::string& text) {
    return XdrBuilder().u32(ms).opaque(text).take();
  }
  static CallSpec call(uint32_t xid, uint32_t proc, std::vector<uint8_t> args = {},
                       uint32_t vers = 1) {
    CallSpec s;
    s.xid = xid;
    s.prog = kEchoProgram;
    s.vers = vers;
    s.proc = proc;
    s.args = std::move(args);
    return s;
  }
  static std::vector<uint8_t> record(const CallSpec& s, const std::vector<size_t>& frags = {}) {
    return as_record(make_call(s), frags);
  }
  // Sends one call on a fresh connection and returns the parsed reply.
  ParsedReply roundtrip(const CallSpec& s) {
    TcpTestClient c(port_);
    EXPECT_TRUE(c.send_all(record(s)));
    auto rec = c.read_record();
    if (!rec) return {};
    return parse_reply(*rec);
  }

  std::shared_ptr<EchoService> service_;
  std::unique_ptr<RpcServer> server_;
  uint16_t port_ = 0;
};

}  // namespace nasd::rpc::testing
