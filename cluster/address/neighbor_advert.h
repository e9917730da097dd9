// The IPv6 counterpart of a gratuitous ARP (RFC 4861 7.2.6): an unsolicited neighbour
// advertisement for an address, to all nodes (ff02::1), with the Override flag so that caches
// replace the old MAC, and the target link-layer address option. Pure; a whole Ethernet frame.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "cluster/address/arp_frame.h"

namespace nasd::cluster::address {

using Ipv6 = std::array<uint8_t, 16>;

std::vector<uint8_t> unsolicited_neighbor_advert(const Mac& mac, const Ipv6& target);

// RFC 4443 2.3: the ICMPv6 checksum over the pseudo-header (source, destination, length, next
// header 58) and `message` (whose checksum field must be zero).
uint16_t icmpv6_checksum(const Ipv6& source, const Ipv6& destination, const uint8_t* message, size_t n);

}  // namespace nasd::cluster::address
