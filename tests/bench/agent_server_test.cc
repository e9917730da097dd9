// The agent on a real socket (loopback, a port the kernel picks): it refuses a wrong key, garbage
// and oversized frames without stopping, answers out-of-order and malformed requests with an
// Error, and fails a Prepare whose target cannot be mounted; it only ever does load steps.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "bench/agent_channel.h"
#include "bench/agent_protocol.h"
#include "bench/agent_server.h"
#include "bench/agent_session.h"
#include "util/net.h"

namespace nasd::bench::agent {
namespace {

using namespace std::chrono_literals;

const std::vector<uint8_t> kKey(32, 3);

class AgentServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    AgentServerOptions o;
    o.host = "127.0.0.1";
    o.port = 0;
    server_ = std::make_unique<AgentServer>(o, link::Credentials{kKey, "lg1"});
    std::string error;
    ASSERT_TRUE(server_->listen(&error)) << error;
    thread_ = std::thread([this] { server_->serve(); });
  }
  void TearDown() override {
    server_->stop();
    if (thread_.joinable()) thread_.join();
  }
  std::unique_ptr<Channel> connect(const std::vector<uint8_t>& key, const std::string& name = "lg1") {
    std::string error;
    return connect_agent("127.0.0.1", server_->port(), name, {key, "coordinator"}, 2000ms, &error);
  }
  // One request, its reply's type (and the reply).
  MessageType ask(Channel& c, const std::vector<uint8_t>& request, std::vector<uint8_t>* reply) {
    std::string error;
    EXPECT_TRUE(c.send(request, &error)) << error;
    EXPECT_EQ(c.receive(reply, 5000ms, &error), util::ReadStatus::Ok) << error;
    MessageType t{};
    EXPECT_TRUE(peek_type(*reply, &t));
    return t;
  }
  // The agent still answers a properly keyed coordinator.
  void expect_alive() {
    auto c = connect(kKey);
    ASSERT_TRUE(c);
    std::vector<uint8_t> reply;
    EXPECT_EQ(ask(*c, encode(ClockProbe{5}), &reply), MessageType::kClockReply);
  }

  std::unique_ptr<AgentServer> server_;
  std::thread thread_;
};

TEST_F(AgentServerTest, WrongKeyOrWrongNameIsRefused) {
  EXPECT_FALSE(connect(std::vector<uint8_t>(32, 4)));
  EXPECT_FALSE(connect(kKey, "lg2"));  // the agent is lg1: a relayed session fails too
  expect_alive();
}

TEST_F(AgentServerTest, GarbageAndOversizedFramesDoNotStopIt) {
  std::string error;
  int fd = util::connect_tcp("127.0.0.1", server_->port(), 2000ms, &error);
  ASSERT_GE(fd, 0) << error;
  const char junk[] = "GET / HTTP/1.0\r\n\r\n";
  ASSERT_GT(::send(fd, junk, sizeof junk, MSG_NOSIGNAL), 0);
  char buf[16];
  EXPECT_LE(::recv(fd, buf, sizeof buf, 0), 0);  // closed without a word
  ::close(fd);
  {
    auto c = connect(kKey);
    ASSERT_TRUE(c);
    uint8_t header[4] = {0xff, 0xff, 0xff, 0x7f};  // 2 GiB
    ASSERT_EQ(::send(c->fd(), header, 4, MSG_NOSIGNAL), 4);
    std::vector<uint8_t> reply;
    EXPECT_NE(c->receive(&reply, 5000ms, &error), util::ReadStatus::Ok);  // dropped
  }
  expect_alive();
}

TEST_F(AgentServerTest, OutOfOrderAndMalformedRequestsGetAnError) {
  {
    auto c = connect(kKey);
    ASSERT_TRUE(c);
    std::vector<uint8_t> reply;
    ASSERT_EQ(ask(*c, encode(Step{0, 1, 0, 1000000000, 1}), &reply), MessageType::kError);
    Error e;
    std::string error;
    ASSERT_TRUE(decode(reply, &e, &error));
    EXPECT_NE(e.message.find("out of order"), std::string::npos) << e.message;
  }
  {
    auto c = connect(kKey);
    ASSERT_TRUE(c);
    std::vector<uint8_t> reply;
    std::vector<uint8_t> bad = encode(ClockProbe{1});
    bad.push_back(0);  // trailing byte
    ASSERT_EQ(ask(*c, bad, &reply), MessageType::kError);
  }
  {
    auto c = connect(kKey);
    ASSERT_TRUE(c);
    std::vector<uint8_t> reply;
    ASSERT_EQ(ask(*c, {static_cast<uint8_t>(MessageType::kStepDone)}, &reply), MessageType::kError);  // not a request
  }
  expect_alive();
}

TEST(AgentSessionTest, PrepareWithAnUnreachableTargetFailsCleanly) {
  AgentSession session("lg1");
  Prepare p;
  p.targets = {"nfs://127.0.0.1/none?nfsport=1&mountport=1"};
  p.workdir = "w";
  p.timeout_ms = 500;
  p.mix_percent[0] = 100;
  bool close = false;
  auto reply = session.handle(encode(p), &close);
  MessageType t;
  ASSERT_TRUE(peek_type(reply, &t));
  EXPECT_EQ(t, MessageType::kError);
  EXPECT_TRUE(close);
  // After a failed Prepare nothing but a new session goes on.
  reply = session.handle(encode_build(), &close);
  ASSERT_TRUE(peek_type(reply, &t));
  EXPECT_EQ(t, MessageType::kError);
}

}  // namespace
}  // namespace nasd::bench::agent
