// util/net.h: the socket helpers of every room, over IPv4 and IPv6 loopback.
#include "util/net.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include <gtest/gtest.h>

namespace nasd::util {

using namespace std::chrono_literals;

TEST(Net, HostAndPortSplitForBothFamilies) {
  std::string host;
  uint16_t port = 0;
  ASSERT_TRUE(split_host_port("127.0.0.1:7070", &host, &port));
  EXPECT_EQ(host, "127.0.0.1");
  EXPECT_EQ(port, 7070);
  ASSERT_TRUE(split_host_port("[::1]:2049", &host, &port));
  EXPECT_EQ(host, "::1");
  EXPECT_EQ(port, 2049);
  EXPECT_FALSE(split_host_port("::1:2049", &host, &port)) << "ambiguous without brackets";
  EXPECT_FALSE(split_host_port("host", &host, &port));
  EXPECT_FALSE(split_host_port("h:70000", &host, &port));
  EXPECT_FALSE(split_host_port("[]:1", &host, &port));
}

TEST(Net, AddressesParseAndPrintForBothFamilies) {
  EXPECT_EQ(parse_socket_address("127.0.0.1", 2049).to_string(), "127.0.0.1:2049");
  EXPECT_EQ(parse_socket_address("::1", 2049).to_string(), "[::1]:2049");
  EXPECT_THROW(parse_socket_address("localhost", 1), std::invalid_argument) << "names are never resolved";
  SocketAddress a;
  std::string error;
  EXPECT_FALSE(parse_socket_address("nas.example", 1, &a, &error));
  EXPECT_NE(error.find("nas.example"), std::string::npos);
}

class NetLoopback : public ::testing::TestWithParam<const char*> {};

TEST_P(NetLoopback, ListenConnectSendAndReadExactly) {
  std::string error;
  uint16_t port = 0;
  int listener = listen_tcp(GetParam(), 0, &port, &error);
  if (listener < 0 && std::string(GetParam()) == "::1") GTEST_SKIP() << "no IPv6 loopback: " << error;
  ASSERT_GE(listener, 0) << error;
  ASSERT_NE(port, 0);
  int client = connect_tcp(GetParam(), port, 2s, &error);
  ASSERT_GE(client, 0) << error;
  ASSERT_TRUE(wait_readable(listener, 2s));
  int server = ::accept(listener, nullptr, nullptr);
  ASSERT_GE(server, 0);
  ASSERT_TRUE(send_all(client, "hello", 5, &error)) << error;
  uint8_t buf[8];
  EXPECT_EQ(read_exact(server, buf, 5, 2s, 2s, &error), ReadStatus::Ok) << error;
  EXPECT_EQ(std::string(reinterpret_cast<char*>(buf), 5), "hello");
  EXPECT_EQ(read_exact(server, buf, 1, 50ms, 50ms, &error), ReadStatus::Timeout);
  ASSERT_TRUE(send_all(client, "ab", 2, &error));
  EXPECT_EQ(read_exact(server, buf, 4, 2s, 50ms, &error), ReadStatus::Error) << "a stall mid-message";
  ::close(client);
  EXPECT_EQ(read_exact(server, buf, 1, 2s, 2s, &error), ReadStatus::Eof);
  ::close(server);
  ::close(listener);
}

INSTANTIATE_TEST_SUITE_P(BothFamilies, NetLoopback, ::testing::Values("127.0.0.1", "::1"));

TEST(Net, ConnectingToNothingFailsWithAReason) {
  std::string error;
  uint16_t port = 0;
  int l = listen_tcp("127.0.0.1", 0, &port, &error);
  ASSERT_GE(l, 0);
  ::close(l);  // the port is free again: nobody listens
  EXPECT_LT(connect_tcp("127.0.0.1", port, 1s, &error), 0);
  EXPECT_NE(error.find("127.0.0.1:" + std::to_string(port)), std::string::npos) << error;
}

// A cluster link leaves from the node's own address (127.0.0.0/8 is all loopback, so a second
// address needs no setup): the accepting side sees that address, not the one the route picks.
TEST(Net, AConnectionLeavesFromTheSourceAddressItIsGiven) {
  std::string error;
  uint16_t port = 0;
  int listener = listen_tcp("127.0.0.1", 0, &port, &error);
  ASSERT_GE(listener, 0) << error;
  for (const std::string source : {"127.0.3.7", ""}) {
    int client = connect_tcp("127.0.0.1", port, 2s, &error, source);
    ASSERT_GE(client, 0) << error;
    ASSERT_TRUE(wait_readable(listener, 2s));
    sockaddr_in peer{};
    socklen_t len = sizeof peer;
    int server = ::accept(listener, reinterpret_cast<sockaddr*>(&peer), &len);
    ASSERT_GE(server, 0);
    char text[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &peer.sin_addr, text, sizeof text);
    EXPECT_EQ(std::string(text), source.empty() ? "127.0.0.1" : source);
    ::close(server);
    ::close(client);
  }
  EXPECT_LT(connect_tcp("127.0.0.1", port, 1s, &error, "192.0.2.1"), 0) << "not an address of this host";
  EXPECT_NE(error.find("192.0.2.1"), std::string::npos) << error;
  ::close(listener);
}

}  // namespace nasd::util
