#include "cluster/address/neighbor_advert.h"

namespace nasd::cluster::address {
namespace {

constexpr uint8_t kIcmpv6 = 58, kNeighborAdvert = 136, kTargetLinkLayerOption = 2;
constexpr uint8_t kOverride = 0x20;  // R=0, S=0 (unsolicited), O=1
constexpr Ipv6 kAllNodes = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
constexpr Mac kAllNodesMac = {0x33, 0x33, 0, 0, 0, 1};  // RFC 2464 7: 33:33 + the low 32 bits

}  // namespace

uint16_t icmpv6_checksum(const Ipv6& source, const Ipv6& destination, const uint8_t* message, size_t n) {
  uint32_t sum = 0;
  auto add = [&](const uint8_t* p, size_t len) {
    for (size_t i = 0; i + 1 < len; i += 2) sum += static_cast<uint32_t>(p[i] << 8 | p[i + 1]);
    if (len % 2) sum += static_cast<uint32_t>(p[len - 1] << 8);
  };
  add(source.data(), 16);
  add(destination.data(), 16);
  sum += static_cast<uint32_t>(n >> 16) + static_cast<uint32_t>(n & 0xffff);
  sum += kIcmpv6;
  add(message, n);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

std::vector<uint8_t> unsolicited_neighbor_advert(const Mac& mac, const Ipv6& target) {
  // ICMPv6: type, code, checksum, flags + reserved, target, option (type, length 1 = 8 bytes, MAC).
  std::vector<uint8_t> icmp = {kNeighborAdvert, 0, 0, 0, kOverride, 0, 0, 0};
  icmp.insert(icmp.end(), target.begin(), target.end());
  icmp.push_back(kTargetLinkLayerOption);
  icmp.push_back(1);
  icmp.insert(icmp.end(), mac.begin(), mac.end());
  const uint16_t sum = icmpv6_checksum(target, kAllNodes, icmp.data(), icmp.size());
  icmp[2] = static_cast<uint8_t>(sum >> 8);
  icmp[3] = static_cast<uint8_t>(sum);

  std::vector<uint8_t> f(kAllNodesMac.begin(), kAllNodesMac.end());
  f.insert(f.end(), mac.begin(), mac.end());
  f.push_back(0x86);  // EtherType IPv6
  f.push_back(0xdd);
  // IPv6 header: version 6, no class or flow; payload length; next header; hop limit 255 (a
  // receiver drops neighbour discovery that crossed a router).
  f.insert(f.end(), {0x60, 0, 0, 0, static_cast<uint8_t>(icmp.size() >> 8),
                     static_cast<uint8_t>(icmp.size()), kIcmpv6, 255});
  f.insert(f.end(), target.begin(), target.end());
  f.insert(f.end(), kAllNodes.begin(), kAllNodes.end());
  f.insert(f.end(), icmp.begin(), icmp.end());
  return f;
}

}  // namespace nasd::cluster::address
