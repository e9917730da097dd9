// PeerClient <-> InterconnectServer over loopback, both ends in this process.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <sys/socket.h>
#include <unistd.h>

#include "cluster/interconnect/frame_stream.h"
#include "cluster/interconnect/hello.h"
#include "cluster/interconnect/interconnect_server.h"
#include "cluster/interconnect/peer_client.h"

namespace nasd::interconnect {
namespace {

using namespace std::chrono_literals;

std::vector<uint8_t> bytes_of(const std::string& s) { return {s.begin(), s.end()}; }
std::string text_of(const std::vector<uint8_t>& b) { return {b.begin(), b.end()}; }

const std::vector<uint8_t> kKey(32, 0x5a);

InterconnectServerOptions server_options(uint16_t port = 0) {
  InterconnectServerOptions o;
  o.port = port;
  o.cluster_name = "test-cluster";
  o.local_node = "node-b";
  o.credentials = {kKey, "node-b"};
  return o;
}

PeerClientOptions client_options(uint16_t port) {
  PeerClientOptions o;
  o.port = port;
  o.cluster_name = "test-cluster";
  o.local_node = "node-a";
  o.expected_peer = "node-b";
  o.credentials = {kKey, "node-a"};
  o.backoff_initial = 10ms;
  o.backoff_max = 100ms;
  return o;
}

// Answers each request with "re:" + its payload, inline.
void install_echo(InterconnectServer& server) {
  server.set_handler(MessageType::VolumeCall, [](IncomingRequest req) {
    req.responder.reply(bytes_of("re:" + text_of(req.payload)));
  });
}

TEST(PeerLink, ManyConcurrentRequestsGetTheirOwnReplies) {
  InterconnectServer server(server_options());
  install_echo(server);
  server.start();
  PeerClient client(client_options(server.port()));
  client.start();
  ASSERT_TRUE(client.wait_connected(5s)) << client.last_error();

  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        std::string msg = std::to_string(t) + "/" + std::to_string(i);
        CallOutcome out = client.call(MessageType::VolumeCall, bytes_of(msg), 5s);
        if (!out.ok() || text_of(out.payload) != "re:" + msg) ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong, 0);
}

TEST(PeerLink, RepliesMatchedOutOfOrder) {
  constexpr int kCalls = 6;
  std::mutex mu;
  std::vector<IncomingRequest> held;
  InterconnectServer server(server_options());
  // Holds every request until all have arrived, then answers them last-first.
  server.set_handler(MessageType::VolumeCall, [&](IncomingRequest req) {
    std::lock_guard lock(mu);
    held.push_back(std::move(req));
    if (held.size() == kCalls) {
      for (auto it = held.rbegin(); it != held.rend(); ++it) {
        it->responder.reply(bytes_of("re:" + text_of(it->payload)));
      }
    }
  });
  server.start();
  PeerClient client(client_options(server.port()));
  client.start();
  ASSERT_TRUE(client.wait_connected(5s));

  std::vector<std::string> replies(kCalls);
  std::vector<std::thread> threads;
  for (int i = 0; i < kCalls; ++i) {
    threads.emplace_back([&, i] {
      CallOutcome out = client.call(MessageType::VolumeCall, bytes_of(std::to_string(i)), 5s);
      replies[i] = out.ok() ? text_of(out.payload) : call_error_name(out.error);
    });
  }
  for (auto& th : threads) th.join();
  for (int i = 0; i < kCalls; ++i) EXPECT_EQ(replies[i], "re:" + std::to_string(i));
}

TEST(PeerLink, PeerRestartIsFollowedByReconnect) {
  auto server = std::make_unique<InterconnectServer>(server_options());
  install_echo(*server);
  server->start();
  uint16_t port = server->port();
  PeerClient client(client_options(port));
  client.start();
  ASSERT_TRUE(client.wait_connected(5s));
  EXPECT_TRUE(client.call(MessageType::VolumeCall, bytes_of("1"), 5s).ok());

  server.reset();  // the peer goes away
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (client.connected() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_FALSE(client.connected());
  CallOutcome down = client.call(MessageType::VolumeCall, bytes_of("2"), 1s);
  EXPECT_EQ(down.error, CallError::NotConnected);

  server = std::make_unique<InterconnectServer>(server_options(port));
  install_echo(*server);
  server->start();
  ASSERT_TRUE(client.wait_connected(5s)) << client.last_error();
  CallOutcome up = client.call(MessageType::VolumeCall, bytes_of("3"), 5s);
  ASSERT_TRUE(up.ok());
  EXPECT_EQ(text_of(up.payload), "re:3");
  EXPECT_EQ(client.connections_made(), 2u);
}

TEST(PeerLink, SilentPeerTimesOutWithoutHanging) {
  std::mutex mu;
  std::vector<IncomingRequest> never_answered;
  InterconnectServer server(server_options());
  // Holds "x" forever; answers anything else.
  server.set_handler(MessageType::VolumeCall, [&](IncomingRequest req) {
    if (text_of(req.payload) != "x") return req.responder.reply(req.payload);
    std::lock_guard lock(mu);
    never_answered.push_back(std::move(req));
  });
  server.start();
  PeerClient client(client_options(server.port()));
  client.start();
  ASSERT_TRUE(client.wait_connected(5s));
  auto start = std::chrono::steady_clock::now();
  CallOutcome out = client.call(MessageType::VolumeCall, bytes_of("x"), 200ms);
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(out.error, CallError::Timeout);
  EXPECT_GE(took, 200ms);
  EXPECT_LT(took, 2s);
  // Nothing at all came back during the wait: the link is dropped as hung and rebuilt; a
  // reply that arrives after the timeout is discarded.
  {
    std::lock_guard lock(mu);
    ASSERT_EQ(never_answered.size(), 1u);
    never_answered[0].responder.reply(bytes_of("late"));
  }
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (client.connections_made() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_EQ(client.connections_made(), 2u);
  ASSERT_TRUE(client.wait_connected(5s));
  CallOutcome next = client.call(MessageType::VolumeCall, bytes_of("y"), 5s);
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(text_of(next.payload), "y");
}

// A request given up on while the peer is busy but answering: a heartbeat's timeout keeps the
// link, but the timeout of a request that may change state aborts the connection before the
// caller hears of it (the caller re-issues it, and the first copy must not run after that:
// link_session.h), and the next connection fences the old one.
TEST(PeerLink, TimeoutOfAStateChangingCallAbortsTheLinkButAHeartbeatTimeoutDoesNot) {
  InterconnectServer server(server_options());
  std::mutex mu;
  std::vector<IncomingRequest> held;
  auto handler = [&](IncomingRequest req) {
    if (text_of(req.payload) != "slow") return req.responder.reply(req.payload);
    std::lock_guard lock(mu);
    held.push_back(std::move(req));
  };
  server.set_handler(MessageType::VolumeCall, handler);
  server.set_handler(MessageType::Heartbeat, handler);
  server.start();
  PeerClient client(client_options(server.port()));
  client.start();
  ASSERT_TRUE(client.wait_connected(5s));
  std::atomic<bool> done{false};
  std::thread chatter([&] {  // other requests keep being answered meanwhile
    while (!done) {
      client.call(MessageType::VolumeCall, bytes_of("fast"), 1s);
      std::this_thread::sleep_for(10ms);
    }
  });
  EXPECT_EQ(client.call(MessageType::Heartbeat, bytes_of("slow"), 300ms).error, CallError::Timeout);
  EXPECT_TRUE(client.connected());
  EXPECT_EQ(client.connections_made(), 1u);
  EXPECT_EQ(client.timeout_aborts(), 0u);

  EXPECT_EQ(client.call(MessageType::VolumeCall, bytes_of("slow"), 300ms).error, CallError::Timeout);
  EXPECT_EQ(client.timeout_aborts(), 1u);
  EXPECT_TRUE(client.wait_connected(5s));
  for (int i = 0; i < 200 && client.connections_made() < 2; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(client.connections_made(), 2u);
  EXPECT_EQ(server.fenced_count(), 1u);
  EXPECT_TRUE(client.call(MessageType::VolumeCall, bytes_of("fast"), 5s).ok());
  done = true;
  chatter.join();
}

TEST(PeerLink, UnknownMessageTypeIsUnsupported) {
  InterconnectServer server(server_options());
  install_echo(server);
  server.start();
  PeerClient client(client_options(server.port()));
  client.start();
  ASSERT_TRUE(client.wait_connected(5s));
  EXPECT_EQ(client.call(MessageType::Heartbeat, {}, 5s).error, CallError::Unsupported);
  EXPECT_TRUE(client.call(MessageType::VolumeCall, bytes_of("ok"), 5s).ok());
}

TEST(PeerLink, OversizedRequestIsRefusedLocally) {
  InterconnectServer server(server_options());
  install_echo(server);
  server.start();
  PeerClientOptions o = client_options(server.port());
  o.limits.max_payload = 1024;
  PeerClient client(o);
  client.start();
  ASSERT_TRUE(client.wait_connected(5s));
  EXPECT_EQ(client.call(MessageType::VolumeCall, std::vector<uint8_t>(2048), 5s).error,
            CallError::TooLarge);
}

TEST(PeerLink, ClusterNameMismatchIsRefusedWithAReason) {
  InterconnectServer server(server_options());
  install_echo(server);
  server.start();
  PeerClientOptions o = client_options(server.port());
  o.cluster_name = "other-cluster";
  PeerClient client(o);
  client.start();
  EXPECT_FALSE(client.wait_connected(300ms));
  EXPECT_NE(client.last_error().find("cluster name mismatch"), std::string::npos)
      << client.last_error();
}

TEST(PeerLink, WrongPeerNameIsRefused) {
  InterconnectServer server(server_options());
  server.start();
  PeerClientOptions o = client_options(server.port());
  o.expected_peer = "node-c";
  PeerClient client(o);
  client.start();
  EXPECT_FALSE(client.wait_connected(300ms));
  EXPECT_NE(client.last_error().find("not node 'node-c'"), std::string::npos)
      << client.last_error();
}

TEST(PeerLink, WrongKeyIsRefusedWithoutAWord) {
  InterconnectServer server(server_options());
  install_echo(server);
  server.start();
  PeerClientOptions o = client_options(server.port());
  o.credentials.key = std::vector<uint8_t>(32, 0x33);
  PeerClient client(o);
  client.start();
  EXPECT_FALSE(client.wait_connected(300ms));
  EXPECT_NE(client.last_error().find("cluster key"), std::string::npos) << client.last_error();
  EXPECT_EQ(client.last_error().find("test-cluster"), std::string::npos) << client.last_error();
  EXPECT_GT(server.refused_count(), 0u);
}

TEST(PeerLink, AKeyHolderThatIsNotAPeerIsRefused) {
  InterconnectServerOptions so = server_options();
  so.peers = {"node-x"};
  InterconnectServer server(so);
  install_echo(server);
  server.start();
  PeerClient client(client_options(server.port()));
  client.start();
  EXPECT_FALSE(client.wait_connected(300ms));
  EXPECT_GT(server.refused_count(), 0u);
}

TEST(PeerLink, AnAddressOutsideAllowedPeersIsClosedAtOnce) {
  InterconnectServerOptions so = server_options();
  std::atomic<int> asked{0};
  so.address_allowed = [&](const std::string& address) {
    ++asked;
    return address != "127.0.0.1";
  };
  InterconnectServer server(so);
  install_echo(server);
  server.start();
  PeerClient client(client_options(server.port()));
  client.start();
  EXPECT_FALSE(client.wait_connected(300ms));
  EXPECT_GT(asked.load(), 0);
  EXPECT_GT(server.refused_count(), 0u);
}

// A host that opens silent connections holds pre-authentication slots of its own address only:
// before, 16 shared slots of 2 s each let it keep the real peer from reconnecting.
TEST(PeerLink, ASilentFloodFromAnotherAddressDoesNotKeepThePeerOut) {
  InterconnectServer server(server_options());
  install_echo(server);
  server.start();
  std::vector<int> flood;
  std::string error;
  for (int i = 0; i < 40; ++i) {
    int fd = connect_tcp("127.0.0.1", server.port(), 1s, &error, "127.0.0.2");
    if (fd >= 0) flood.push_back(fd);
  }
  ASSERT_FALSE(flood.empty()) << error;
  std::this_thread::sleep_for(100ms);  // accepted (or refused) before the peer comes
  PeerClient client(client_options(server.port()));
  client.start();
  EXPECT_TRUE(client.wait_connected(1000ms)) << "the peer waited behind the flood's handshakes";
  EXPECT_GT(server.refused_count(), 0u) << "the flood beyond its own slots was refused";
  for (int fd : flood) ::close(fd);
}

// What an attacker without the key sees: today's hello in the clear is met with silence and a
// close, never a refusal naming the cluster.
TEST(PeerLink, UnauthenticatedHelloGetsNothingBack) {
  InterconnectServer server(server_options());
  install_echo(server);
  server.start();
  std::string error;
  int fd = connect_tcp("127.0.0.1", server.port(), 1s, &error);
  ASSERT_GE(fd, 0);
  Socket raw(fd, 1s);
  Hello forged{kProtocolVersion, "test-cluster", "node-a"};
  ASSERT_TRUE(raw.send_all(encode_frame(MessageType::Hello, 0, encode_hello(forged)), &error));
  uint8_t byte;
  EXPECT_EQ(read_exact(fd, &byte, 1, 3000ms, 1000ms, &error), ReadStatus::Eof) << error;
}

// A frame whose tag does not match (here: replayed from earlier in the stream) ends the link.
TEST(PeerLink, ForgedFrameAfterTheHandshakeDropsTheConnection) {
  InterconnectServer server(server_options());
  std::atomic<int> calls{0};
  server.set_handler(MessageType::VolumeCall, [&](IncomingRequest req) {
    ++calls;
    req.responder.reply({});
  });
  server.start();
  std::string error;
  int fd = connect_tcp("127.0.0.1", server.port(), 1s, &error);
  ASSERT_GE(fd, 0);
  Socket raw(fd, 1s);
  auto session = link::authenticate_client(fd, link::LinkKind::Interconnect, {kKey, "node-a"},
                                           "node-b", 2s, &error);
  ASSERT_TRUE(session) << error;
  link::FrameOpener opener = session->receive;
  auto hello = encode_frame(MessageType::Hello, 1,
                            encode_hello({kProtocolVersion, "test-cluster", "node-a", "main", 7, 1}));
  const link::Tag hello_tag = session->send.seal({hello});
  ASSERT_TRUE(raw.send_all(hello, &error));
  ASSERT_TRUE(raw.send_all(hello_tag, &error));
  Frame answer;
  ASSERT_EQ(read_frame(fd, FrameLimits{}, &answer, &error, &opener), ReadStatus::Ok) << error;
  EXPECT_EQ(answer.header.type, MessageType::HelloAccepted);
  // A call with the hello's tag again: a replay.
  auto call = encode_frame(MessageType::VolumeCall, 2, bytes_of("x"));
  ASSERT_TRUE(raw.send_all(call, &error));
  ASSERT_TRUE(raw.send_all(hello_tag, &error));
  EXPECT_NE(read_frame(fd, FrameLimits{}, &answer, &error, &opener), ReadStatus::Ok);
  EXPECT_EQ(calls.load(), 0);
}

// A hand-driven peer: accepts one connection, completes the hello, reads one request and then
// misbehaves as told.
class FakePeer {
 public:
  FakePeer() {
    std::string error;
    listen_fd_ = listen_tcp("127.0.0.1", 0, &port_, &error);
  }
  ~FakePeer() {
    if (thread_.joinable()) thread_.join();
    ::close(listen_fd_);
  }
  uint16_t port() const { return port_; }

  // `misbehave` gets the connected socket and the request frame it must answer.
  void run(std::function<void(Socket&, const Frame&)> misbehave) {
    thread_ = std::thread([this, misbehave] {
      int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      Socket socket(fd, 1s);
      FrameLimits limits;
      Frame hello, request;
      std::string error;
      auto session = link::authenticate_server(fd, link::LinkKind::Interconnect,
                                               {kKey, "node-b"}, nullptr, 2s, &error);
      if (!session) return;
      socket.seal_with(session->send);
      link::FrameOpener opener = session->receive;
      if (read_frame(fd, limits, &hello, &error, &opener) != ReadStatus::Ok) return;
      Hello me{kProtocolVersion, "test-cluster", "node-b"};
      send_frame(socket, MessageType::HelloAccepted, 0, encode_hello(me), &error);
      if (read_frame(fd, limits, &request, &error, &opener) != ReadStatus::Ok) return;
      misbehave(socket, request);
    });
  }

 private:
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::thread thread_;
};

CallOutcome call_fake(FakePeer& peer, std::chrono::milliseconds* took,
                      std::chrono::milliseconds stall = 5000ms) {
  PeerClientOptions o = client_options(peer.port());
  o.limits.stall_timeout = stall;
  o.backoff_initial = 1000ms;  // no reconnect during the test
  PeerClient client(o);
  client.start();
  EXPECT_TRUE(client.wait_connected(5s)) << client.last_error();
  auto start = std::chrono::steady_clock::now();
  CallOutcome out = client.call(MessageType::VolumeCall, bytes_of("req"), 10s);
  *took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  return out;
}

TEST(PeerLink, HalfWrittenFrameThenCloseFailsTheRequestAtOnce) {
  FakePeer peer;
  peer.run([](Socket& s, const Frame& req) {
    auto frame = encode_frame(MessageType::Reply, req.header.request_id, bytes_of("0123456789"));
    std::string error;
    s.send_all({frame.data(), frame.size() - 4}, &error);
    s.shutdown();
  });
  std::chrono::milliseconds took;
  CallOutcome out = call_fake(peer, &took);
  EXPECT_EQ(out.error, CallError::Disconnected);
  EXPECT_LT(took, 5s);  // long before the 10 s call timeout
}

TEST(PeerLink, HalfWrittenFrameThenSilenceDropsAfterStallTimeout) {
  FakePeer peer;
  std::atomic<bool> release{false};
  peer.run([&](Socket& s, const Frame& req) {
    auto frame = encode_frame(MessageType::Reply, req.header.request_id, bytes_of("0123456789"));
    // Raw bytes: the sealed send_all would add a tag after the half frame.
    ::send(s.fd(), frame.data(), kFrameHeaderBytes + 3, MSG_NOSIGNAL);
    for (int i = 0; i < 500 && !release; ++i) std::this_thread::sleep_for(10ms);
  });
  std::chrono::milliseconds took;
  CallOutcome out = call_fake(peer, &took, 200ms);
  release = true;
  EXPECT_EQ(out.error, CallError::Disconnected);
  EXPECT_GE(took, 200ms);
  EXPECT_LT(took, 3s);
}

TEST(PeerLink, CorruptedFrameDropsTheConnection) {
  FakePeer peer;
  peer.run([](Socket& s, const Frame& req) {
    auto frame = encode_frame(MessageType::Reply, req.header.request_id, bytes_of("payload"));
    frame.back() ^= 0x01;  // CRC no longer matches
    std::string error;
    s.send_all(frame, &error);
    std::this_thread::sleep_for(300ms);  // keep the connection open: only the CRC can tell
  });
  std::chrono::milliseconds took;
  CallOutcome out = call_fake(peer, &took);
  EXPECT_EQ(out.error, CallError::Disconnected);
  EXPECT_LT(took, 3s);
}

TEST(PeerLink, ServerDropsAGarbageSpeakingClientAndKeepsServing) {
  InterconnectServer server(server_options());
  install_echo(server);
  server.start();
  std::string error;
  int fd = connect_tcp("127.0.0.1", server.port(), 1s, &error);
  ASSERT_GE(fd, 0) << error;
  Socket raw(fd, 1s);
  std::vector<uint8_t> garbage(64, 0xee);
  ASSERT_TRUE(raw.send_all(garbage, &error));
  uint8_t b;
  EXPECT_NE(read_exact(fd, &b, 1, 2s, 2s, &error), ReadStatus::Ok);  // server hung up

  PeerClient client(client_options(server.port()));
  client.start();
  ASSERT_TRUE(client.wait_connected(5s));
  EXPECT_TRUE(client.call(MessageType::VolumeCall, bytes_of("fine"), 5s).ok());
}

// A key holder speaking another protocol version hears why it is refused.
TEST(PeerLink, ForeignProtocolVersionGetsAClearRefusal) {
  InterconnectServer server(server_options());
  server.start();
  std::string error;
  int fd = connect_tcp("127.0.0.1", server.port(), 1s, &error);
  ASSERT_GE(fd, 0);
  Socket raw(fd, 1s);
  auto session = link::authenticate_client(fd, link::LinkKind::Interconnect, {kKey, "node-z"},
                                           "node-b", 2s, &error);
  ASSERT_TRUE(session) << error;
  raw.seal_with(session->send);
  link::FrameOpener opener = session->receive;
  Hello future{kProtocolVersion + 1, "test-cluster", "node-z"};
  auto frame = encode_frame(MessageType::Hello, 0, encode_hello(future), kProtocolVersion + 1);
  ASSERT_TRUE(raw.send_all(frame, &error));
  Frame answer;
  ASSERT_EQ(read_frame(fd, FrameLimits{}, &answer, &error, &opener), ReadStatus::Ok) << error;
  EXPECT_EQ(answer.header.type, MessageType::HelloRefused);
  EXPECT_NE(text_of(answer.payload)
                .find("protocol version " + std::to_string(kProtocolVersion + 1) + " not supported"),
            std::string::npos)
      << text_of(answer.payload);
}

TEST(PeerLink, StopFailsInFlightCalls) {
  std::vector<IncomingRequest> held;
  std::mutex mu;
  InterconnectServer server(server_options());
  server.set_handler(MessageType::VolumeCall, [&](IncomingRequest req) {
    std::lock_guard lock(mu);
    held.push_back(std::move(req));
  });
  server.start();
  PeerClient client(client_options(server.port()));
  client.start();
  ASSERT_TRUE(client.wait_connected(5s));
  CallOutcome out;
  std::thread caller([&] { out = client.call(MessageType::VolumeCall, bytes_of("x"), 10s); });
  std::this_thread::sleep_for(100ms);
  client.stop();
  caller.join();
  EXPECT_TRUE(out.error == CallError::Stopped || out.error == CallError::Disconnected)
      << call_error_name(out.error);
}

}  // namespace
}  // namespace nasd::interconnect
