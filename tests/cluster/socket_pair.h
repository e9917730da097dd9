// TEST FIXTURE ONLY: two connected stream sockets (AF_UNIX), for the frame readers' tests: one
// end to write a stream by hand, the other for the reader under test. Both close with it.
#pragma once

#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace nasd::interconnect::testing {

struct SocketPair {
  int writer = -1, reader = -1;
  SocketPair() {
    int fds[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    writer = fds[0];
    reader = fds[1];
  }
  ~SocketPair() {
    if (writer >= 0) ::close(writer);
    if (reader >= 0) ::close(reader);
  }
  SocketPair(const SocketPair&) = delete;
  SocketPair& operator=(const SocketPair&) = delete;
  // The peer closes its end: the reader sees end of file after what was written.
  void close_writer() {
    ::close(writer);
    writer = -1;
  }
};

}  // namespace nasd::interconnect::testing
