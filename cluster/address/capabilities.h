// Whether this process may manage addresses: CAP_NET_ADMIN (netlink: add and remove interface
// addresses) and CAP_NET_RAW (packet sockets: ARP probes, gratuitous ARP, neighbour
// advertisements). Checked once at start-up when an address names an interface, so that a node
// started without them says which one it lacks instead of failing its first takeover.
#pragma once

#include <string>

namespace nasd::cluster::address {

// "" when both are in the effective set, else the missing ones: "CAP_NET_ADMIN, CAP_NET_RAW".
std::string missing_address_capabilities();

}  // namespace nasd::cluster::address
