#include "cluster/address/arp_frame.h"

#include <cstring>

namespace nasd::cluster::address {
namespace {

constexpr uint16_t kEtherTypeArp = 0x0806, kEtherTypeIpv4 = 0x0800, kHardwareEthernet = 1;
constexpr size_t kEthernetHeader = 14, kArpBody = 28, kMinimumFrame = 60;
constexpr Mac kBroadcast = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

void put16(std::vector<uint8_t>* out, uint16_t v) {
  out->push_back(static_cast<uint8_t>(v >> 8));
  out->push_back(static_cast<uint8_t>(v));
}
template <size_t N>
void put(std::vector<uint8_t>* out, const std::array<uint8_t, N>& bytes) {
  out->insert(out->end(), bytes.begin(), bytes.end());
}
uint16_t get16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }

}  // namespace

std::vector<uint8_t> encode_arp(uint16_t op, const Mac& frame_destination, const Mac& sender_mac,
                                const Ipv4& sender_ip, const Mac& target_mac, const Ipv4& target_ip) {
  std::vector<uint8_t> f;
  f.reserve(kMinimumFrame);
  put(&f, frame_destination);
  put(&f, sender_mac);
  put16(&f, kEtherTypeArp);
  put16(&f, kHardwareEthernet);
  put16(&f, kEtherTypeIpv4);
  f.push_back(6);  // hardware address length
  f.push_back(4);  // protocol address length
  put16(&f, op);
  put(&f, sender_mac);
  put(&f, sender_ip);
  put(&f, target_mac);
  put(&f, target_ip);
  f.resize(kMinimumFrame, 0);
  return f;
}

std::vector<uint8_t> gratuitous_arp(const Mac& mac, const Ipv4& ip) {
  return encode_arp(kArpRequest, kBroadcast, mac, ip, Mac{}, ip);
}

std::vector<uint8_t> arp_probe(const Mac& mac, const Ipv4& ip) {
  return encode_arp(kArpRequest, kBroadcast, mac, Ipv4{}, Mac{}, ip);
}

std::optional<ArpPacket> decode_arp(const uint8_t* frame, size_t n) {
  if (n < kEthernetHeader + kArpBody) return std::nullopt;
  if (get16(frame + 12) != kEtherTypeArp) return std::nullopt;
  const uint8_t* a = frame + kEthernetHeader;
  if (get16(a) != kHardwareEthernet || get16(a + 2) != kEtherTypeIpv4 || a[4] != 6 || a[5] != 4)
    return std::nullopt;
  ArpPacket p;
  std::memcpy(p.frame_source.data(), frame + 6, 6);
  p.op = get16(a + 6);
  std::memcpy(p.sender_mac.data(), a + 8, 6);
  std::memcpy(p.sender_ip.data(), a + 14, 4);
  std::memcpy(p.target_mac.data(), a + 18, 6);
  std::memcpy(p.target_ip.data(), a + 24, 4);
  if (p.op != kArpRequest && p.op != kArpReply) return std::nullopt;
  return p;
}

bool conflicts_with_probe(const ArpPacket& p, const Ipv4& ip, const Mac& own) {
  if (p.sender_mac == own || p.frame_source == own) return false;
  if (p.sender_ip == ip) return true;
  return p.op == kArpRequest && p.sender_ip == Ipv4{} && p.target_ip == ip;
}

}  // namespace nasd::cluster::address
