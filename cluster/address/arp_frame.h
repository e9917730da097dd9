// The Ethernet frames of RFC 826 ARP that move an IPv4 address between hosts: the gratuitous
// ARP that tells a segment's caches "this address is now at this MAC" (RFC 5227 calls it an
// announcement), the probe that asks whether anyone holds an address before taking it
// (RFC 5227 2.1.1: sender address 0.0.0.0, so no cache learns from it), and the decoder that
// recognises a conflicting answer. Pure: bytes in, bytes out; address_probe.h and
// address_announcer.h put them on the wire.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace nasd::cluster::address {

using Mac = std::array<uint8_t, 6>;
using Ipv4 = std::array<uint8_t, 4>;

constexpr uint16_t kArpRequest = 1, kArpReply = 2;

struct ArpPacket {
  uint16_t op = 0;
  Mac sender_mac{}, target_mac{};
  Ipv4 sender_ip{}, target_ip{};
  Mac frame_source{};  // the Ethernet source, which a relay may have left different
};

// A whole frame (Ethernet header + ARP for Ethernet/IPv4, padded to the 60-byte minimum).
std::vector<uint8_t> encode_arp(uint16_t op, const Mac& frame_destination, const Mac& sender_mac,
                                const Ipv4& sender_ip, const Mac& target_mac, const Ipv4& target_ip);
// Broadcast request "who has `ip`? tell `ip`" from `mac`: the announcement every Linux cache
// takes (an ARP reply would not update caches with arp_accept = 0 either, a request does).
std::vector<uint8_t> gratuitous_arp(const Mac& mac, const Ipv4& ip);
// Broadcast request for `ip` from `mac` with sender address 0.0.0.0.
std::vector<uint8_t> arp_probe(const Mac& mac, const Ipv4& ip);

// The ARP packet in a received frame, or nullopt when the frame is not ARP for Ethernet/IPv4
// or is shorter than one. Never reads past `n`.
std::optional<ArpPacket> decode_arp(const uint8_t* frame, size_t n);

// RFC 5227 2.1.1: while probing `ip` from `own`, a packet means someone else holds or wants the
// address when its sender address is `ip` (an owner answering or announcing), or when it is
// another host's probe for the same `ip`. Our own frames (sender MAC `own`) never conflict.
bool conflicts_with_probe(const ArpPacket& p, const Ipv4& ip, const Mac& own);

}  // namespace nasd::cluster::address
