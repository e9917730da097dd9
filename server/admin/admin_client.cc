#include "server/admin/admin_client.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "server/admin/admin_protocol.h"

namespace nasd::admin {

AdminReply admin_call(const std::string& socket_path, const std::vector<std::string>& words,
                      int timeout_ms) {
  std::string request;
  try {
    request = encode_admin_request(words);
  } catch (const std::invalid_argument& e) {
    return {false, std::string(e.what()) + "\n"};
  }
  sockaddr_un sun{};
  sun.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof sun.sun_path) return {false, "socket path too long\n"};
  std::memcpy(sun.sun_path, socket_path.c_str(), socket_path.size() + 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return {false, std::string("socket: ") + strerror(errno) + "\n"};
  if (connect(fd, reinterpret_cast<sockaddr*>(&sun), sizeof sun) < 0) {
    AdminReply r{false, "cannot connect to " + socket_path + ": " + strerror(errno) +
                            " (is nasd running?)\n"};
    close(fd);
    return r;
  }
  AdminReply reply;
  size_t off = 0;
  while (off < request.size()) {
    ssize_t n = send(fd, request.data() + off, request.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close(fd);
      return {false, std::string("send: ") + strerror(errno) + "\n"};
    }
    off += static_cast<size_t>(n);
  }
  std::string bytes;
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    int rc = poll(&p, 1, timeout_ms);
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) {
      close(fd);
      return {false, "timed out waiting for the daemon\n"};
    }
    char buf[8192];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    bytes.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  if (!decode_admin_response(bytes, &reply.ok, &reply.text)) reply.ok = false;
  return reply;
}

}  // namespace nasd::admin
