// Fuzzers that read a stream the way a server reads its socket (read_frame, Channel::receive,
// FrameReader::fill) get it from here: a socket that holds the bytes and then end-of-file.
#pragma once

#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <span>

namespace nasd::fuzz {

// Returns the reading end of a fresh AF_UNIX stream socket pair after writing as much of
// `bytes` as the socket takes (a 1 MiB send buffer: fuzz inputs are smaller) and closing the
// writing end, or -1 when no socket pair can be made. The caller closes the returned fd.
inline int socket_holding(std::span<const uint8_t> bytes) {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) return -1;
  int buf = 1 << 20;
  setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
  size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = ::send(fds[0], bytes.data() + off, bytes.size() - off, MSG_DONTWAIT);
    if (n <= 0) break;
    off += static_cast<size_t>(n);
  }
  ::shutdown(fds[0], SHUT_WR);
  ::close(fds[0]);
  return fds[1];
}

}  // namespace nasd::fuzz
