// The client side of the control socket, used by nasd-admin and by tests.
#pragma once

#include <string>
#include <vector>

namespace nasd::admin {

struct AdminReply {
  bool ok = false;  // false also when the daemon could not be reached (text says why)
  std::string text;
};

// Sends one command and reads the whole reply; gives up after `timeout_ms`.
AdminReply admin_call(const std::string& socket_path, const std::vector<std::string>& words,
                      int timeout_ms = 10000);

}  // namespace nasd::admin
