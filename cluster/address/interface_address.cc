#include "cluster/address/interface_address.h"

#include <arpa/inet.h>
#include <net/if.h>

namespace nasd::cluster::address {

bool valid_interface_name(const std::string& name) {
  if (name.empty() || name.size() >= IFNAMSIZ || name == "." || name == "..") return false;
  for (unsigned char c : name) {
    if (c <= ' ' || c == '/' || c == ':' || c >= 0x7f) return false;
  }
  return true;
}

bool make_interface_address(const std::string& address, int prefix, const std::string& interface,
                            InterfaceAddress* out, std::string* error) {
  InterfaceAddress a;
  if (inet_pton(AF_INET, address.c_str(), a.bytes.data()) == 1) {
    a.family = AF_INET;
  } else if (inet_pton(AF_INET6, address.c_str(), a.bytes.data()) == 1) {
    a.family = AF_INET6;
  } else {
    *error = "'" + address + "' is not a numeric IPv4 or IPv6 address";
    return false;
  }
  const int max = a.family == AF_INET ? 32 : 128;
  if (prefix < 1 || prefix > max) {
    *error = "prefix /" + std::to_string(prefix) + " of " + address + " is not 1 to " + std::to_string(max);
    return false;
  }
  if (!valid_interface_name(interface)) {
    *error = "interface '" + interface + "' is not an interface name (1 to 15 bytes, no '/', ':' or spaces)";
    return false;
  }
  // The canonical text, so that "10.0.4.011" style spellings and "FD00::0011" compare equal.
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(a.family, a.bytes.data(), text, sizeof text);
  a.address = text;
  a.prefix = prefix;
  a.interface = interface;
  *out = a;
  return true;
}

bool parse_interface_address(const std::string& cidr, const std::string& interface,
                             InterfaceAddress* out, std::string* error) {
  const size_t slash = cidr.find('/');
  if (slash == std::string::npos) {
    *error = "'" + cidr + "' needs its prefix length (a.b.c.d/len): the subnet it is added with";
    return false;
  }
  const std::string len = cidr.substr(slash + 1);
  if (len.empty() || len.size() > 3 || len.find_first_not_of("0123456789") != std::string::npos) {
    *error = "'" + cidr + "': the prefix length after '/' is not a number";
    return false;
  }
  return make_interface_address(cidr.substr(0, slash), std::stoi(len), interface, out, error);
}

bool in_subnet(const InterfaceAddress& a, const std::array<uint8_t, 16>& net, int family, int prefix) {
  if (family != a.family) return false;
  int bits = prefix;
  for (size_t i = 0; i < a.length() && bits > 0; ++i, bits -= 8) {
    const uint8_t mask = bits >= 8 ? 0xff : static_cast<uint8_t>(0xff << (8 - bits));
    if ((a.bytes[i] & mask) != (net[i] & mask)) return false;
  }
  return true;
}

}  // namespace nasd::cluster::address
