// An address that belongs on one of this host's network interfaces while this node serves it:
// an EVS or pool address on a real network (`address = 10.0.4.11/24`, `interface = eth1`).
// The node that serves it puts it on the interface and tells the segment (hosted_address.h);
// without an interface an address stays what it was before, one that some other party (the
// loopback, the administrator) already put on the host and that nasd only binds.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include <sys/socket.h>

namespace nasd::cluster::address {

struct InterfaceAddress {
  std::string interface;  // "eth1"
  std::string address;    // numeric: "10.0.4.11", "fd00:4::11"
  int prefix = 0;         // 24: the subnet the address is added with
  int family = 0;         // AF_INET or AF_INET6
  std::array<uint8_t, 16> bytes{};  // network order; the first 4 for IPv4

  size_t length() const { return family == AF_INET ? 4 : 16; }
  std::string cidr() const { return address + "/" + std::to_string(prefix); }
  std::string describe() const { return cidr() + " on " + interface; }
  bool operator==(const InterfaceAddress& o) const {
    return interface == o.interface && address == o.address && prefix == o.prefix;
  }
};

// A name the kernel could give an interface (1 to 15 bytes, no '/', ':' or white space, not
// "." or ".."), so that a typo is caught by the config, not by a failed ioctl.
bool valid_interface_name(const std::string& name);

// "10.0.4.11/24" (or "fd00::11/64") on `interface`. False and *error (what is wrong, without a
// prefix naming the config line) on a malformed address, a missing or out-of-range prefix, or a
// bad interface name.
bool parse_interface_address(const std::string& cidr, const std::string& interface,
                             InterfaceAddress* out, std::string* error);

// The same for an address given without a prefix and a separate prefix length (pools).
bool make_interface_address(const std::string& address, int prefix, const std::string& interface,
                            InterfaceAddress* out, std::string* error);

// True when `a` lies in the subnet `net`/`prefix` of the same family.
bool in_subnet(const InterfaceAddress& a, const std::array<uint8_t, 16>& net, int family, int prefix);

}  // namespace nasd::cluster::address
