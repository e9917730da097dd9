// One item of an export's `clients` list: `*`, an address (IPv4 or IPv6), a CIDR prefix
// (10.0.0.0/8, fd00::/8) or a host name, which is resolved to its addresses when the
// configuration is loaded.
#pragma once

#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace nasd::nfs {

class ClientSpec {
 public:
  // Throws nasd::ConfigError naming `text` when it is neither of the forms above, or a host
  // name that does not resolve.
  static ClientSpec parse(const std::string& text);

  // IPv4-mapped IPv6 peers (::ffff:a.b.c.d) match IPv4 entries.
  bool matches(const sockaddr_storage& peer) const;
  const std::string& text() const { return text_; }

 private:
  struct Network {
    int family = 0;                    // AF_INET or AF_INET6
    std::array<uint8_t, 16> addr{};    // 4 or 16 significant bytes
    int prefix_bits = 0;
  };
  static bool network_contains(const Network& net, int family, const uint8_t* addr);

  std::string text_;
  bool any_ = false;
  std::vector<Network> networks_;
};

}  // namespace nasd::nfs
