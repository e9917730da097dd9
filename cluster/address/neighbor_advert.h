// The IPv6 counterparts of the ARP frames (RFC 4861, 4862): the unsolicited neighbour
// advertisement that moves an address (7.2.6: to all nodes, ff02::1, with the Override flag so
// that caches replace the old MAC, and the target link-layer address option), the duplicate
// address detection probe (4862 5.4.2: a neighbour solicitation from ::, to the target's
// solicited-node group), and the decoder that recognises an answer to it. Pure; whole frames.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "cluster/address/arp_frame.h"

namespace nasd::cluster::address {

using Ipv6 = std::array<uint8_t, 16>;

std::vector<uint8_t> unsolicited_neighbor_advert(const Mac& mac, const Ipv6& target);
std::vector<uint8_t> neighbor_solicitation_probe(const Mac& mac, const Ipv6& target);
// The Ethernet group a node holding `target` listens on (33:33:ff + its last 3 bytes).
Mac solicited_node_mac(const Ipv6& target);

constexpr uint8_t kNeighborSolicitation = 135, kNeighborAdvertisement = 136;

struct NdPacket {
  uint8_t type = 0;  // kNeighborSolicitation or kNeighborAdvertisement
  Mac frame_source{};
  Ipv6 source{}, target{};
};
// A neighbour solicitation or advertisement in a received frame (IPv6 without extension
// headers, hop limit 255, ICMPv6 code 0), or nullopt. Never reads past `n`.
std::optional<NdPacket> decode_neighbor_discovery(const uint8_t* frame, size_t n);
// RFC 4862 5.4.3-5.4.4: while probing `target` from `own`, another host's advertisement for it
// (it holds it) or its own probe for it (it wants it now) is a conflict.
bool conflicts_with_nd_probe(const NdPacket& p, const Ipv6& target, const Mac& own);

// RFC 4443 2.3: the ICMPv6 checksum over the pseudo-header (source, destination, length, next
// header 58) and `message` (whose checksum field must be zero).
uint16_t icmpv6_checksum(const Ipv6& source, const Ipv6& destination, const uint8_t* message, size_t n);

}  // namespace nasd::cluster::address
