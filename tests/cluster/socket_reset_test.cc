// A forwarder killed with kill -9 leaves none of its unsent requests behind (socket.h,
// Socket::reset_when_closed): a child process connects, writes until its kernel holds bytes the
// peer has not taken yet, and kills itself; the peer, reading only afterwards, must never get
// those bytes (a graceful close would deliver every one of them, then end of file).
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>
#include <vector>

#include "cluster/interconnect/socket.h"

namespace nasd::interconnect {
namespace {

using namespace std::chrono_literals;

TEST(SocketReset, AProcessKilledWithUnsentBytesLeavesNoneOfThemToThePeer) {
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  int small = 16 * 1024;
  setsockopt(listener, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);  // inherited by accept
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listener, 1), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  int report[2];
  ASSERT_EQ(::pipe(report), 0);

  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The "forwarder": no threads, only system calls, then SIGKILL (no close of its own).
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) ::_exit(2);
    Socket socket(fd, 1000ms);
    socket.reset_when_closed();
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    std::vector<uint8_t> chunk(4096, 0x5a);
    uint64_t written = 0;
    for (int idle = 0; idle < 50;) {  // until the peer's window and our send queue are full
      ssize_t n = ::send(fd, chunk.data(), chunk.size(), MSG_NOSIGNAL);
      if (n > 0) {
        written += uint64_t(n);
        idle = 0;
      } else {
        ++idle;
        std::this_thread::sleep_for(2ms);
      }
    }
    int unsent = 0;
    ::ioctl(fd, SIOCOUTQ, &unsent);
    const uint64_t out[2] = {written, uint64_t(unsent)};
    if (::write(report[1], out, sizeof out) != sizeof out) ::_exit(3);
    ::raise(SIGKILL);
    ::_exit(4);
  }
  ::close(report[1]);
  int peer = ::accept(listener, nullptr, nullptr);
  ASSERT_GE(peer, 0);
  uint64_t got[2] = {0, 0};
  ASSERT_EQ(::read(report[0], got, sizeof got), ssize_t(sizeof got));
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  const uint64_t written = got[0], unsent = got[1];
  ASSERT_GT(unsent, 0u) << "the child's kernel held nothing unsent: the test proves nothing";

  std::this_thread::sleep_for(200ms);  // a graceful close would go on delivering meanwhile
  timeval tv{2, 0};
  setsockopt(peer, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  uint64_t read_total = 0;
  std::vector<uint8_t> buf(64 * 1024);
  int end_errno = 0;
  for (;;) {
    ssize_t n = ::read(peer, buf.data(), buf.size());
    if (n > 0) {
      read_total += uint64_t(n);
      continue;
    }
    end_errno = n == 0 ? 0 : errno;
    break;
  }
  EXPECT_LE(read_total, written - unsent)
      << "bytes still unsent in the killed process's kernel reached the peer";
  EXPECT_EQ(end_errno, ECONNRESET) << "the connection ended gracefully, not with a reset";
  ::close(peer);
  ::close(listener);
  ::close(report[0]);
}

}  // namespace
}  // namespace nasd::interconnect
