#include "cluster/address/neighbor_advert.h"

namespace nasd::cluster::address {
namespace {

constexpr uint8_t kIcmpv6 = 58, kTargetLinkLayerOption = 2;
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

namespace {

// An Ethernet frame carrying one ICMPv6 message (its checksum filled in) from `source` to
// `destination`, hop limit 255 (a receiver drops neighbour discovery that crossed a router).
std::vector<uint8_t> icmpv6_frame(const Mac& to, const Mac& from, const Ipv6& source,
                                  const Ipv6& destination, std::vector<uint8_t> icmp) {
  const uint16_t sum = icmpv6_checksum(source, destination, icmp.data(), icmp.size());
  icmp[2] = static_cast<uint8_t>(sum >> 8);
  icmp[3] = static_cast<uint8_t>(sum);
  std::vector<uint8_t> f(to.begin(), to.end());
  f.insert(f.end(), from.begin(), from.end());
  f.push_back(0x86);  // EtherType IPv6
  f.push_back(0xdd);
  f.insert(f.end(), {0x60, 0, 0, 0, static_cast<uint8_t>(icmp.size() >> 8),
                     static_cast<uint8_t>(icmp.size()), kIcmpv6, 255});
  f.insert(f.end(), source.begin(), source.end());
  f.insert(f.end(), destination.begin(), destination.end());
  f.insert(f.end(), icmp.begin(), icmp.end());
  return f;
}

}  // namespace

Mac solicited_node_mac(const Ipv6& target) { return {0x33, 0x33, 0xff, target[13], target[14], target[15]}; }

std::vector<uint8_t> neighbor_solicitation_probe(const Mac& mac, const Ipv6& target) {
  Ipv6 group = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, target[13], target[14], target[15]};
  // Type, code, checksum, reserved, target; no source link-layer option (the source is ::).
  std::vector<uint8_t> icmp = {kNeighborSolicitation, 0, 0, 0, 0, 0, 0, 0};
  icmp.insert(icmp.end(), target.begin(), target.end());
  return icmpv6_frame(solicited_node_mac(target), mac, Ipv6{}, group, std::move(icmp));
}

std::optional<NdPacket> decode_neighbor_discovery(const uint8_t* frame, size_t n) {
  constexpr size_t kIp = 14, kIcmp = kIp + 40;
  if (n < kIcmp + 24) return std::nullopt;
  if (frame[12] != 0x86 || frame[13] != 0xdd || (frame[kIp] >> 4) != 6) return std::nullopt;
  if (frame[kIp + 6] != kIcmpv6 || frame[kIp + 7] != 255) return std::nullopt;
  const size_t payload = static_cast<size_t>(frame[kIp + 4] << 8 | frame[kIp + 5]);
  if (payload < 24 || payload > n - kIcmp) return std::nullopt;
  const uint8_t* icmp = frame + kIcmp;
  if ((icmp[0] != kNeighborSolicitation && icmp[0] != kNeighborAdvertisement) || icmp[1] != 0)
    return std::nullopt;
  NdPacket p;
  p.type = icmp[0];
  std::copy(frame + 6, frame + 12, p.frame_source.begin());
  std::copy(frame + kIp + 8, frame + kIp + 24, p.source.begin());
  std::copy(icmp + 8, icmp + 24, p.target.begin());
  return p;
}

bool conflicts_with_nd_probe(const NdPacket& p, const Ipv6& target, const Mac& own) {
  if (p.frame_source == own || p.target != target) return false;
  if (p.type == kNeighborAdvertisement) return true;
  return p.source == Ipv6{};  // another host's probe; a solicitation from an address only asks
}

std::vector<uint8_t> unsolicited_neighbor_advert(const Mac& mac, const Ipv6& target) {
  // ICMPv6: type, code, checksum, flags + reserved, target, option (type, length 1 = 8 bytes, MAC).
  std::vector<uint8_t> icmp = {kNeighborAdvertisement, 0, 0, 0, kOverride, 0, 0, 0};
  icmp.insert(icmp.end(), target.begin(), target.end());
  icmp.push_back(kTargetLinkLayerOption);
  icmp.push_back(1);
  icmp.insert(icmp.end(), mac.begin(), mac.end());
  return icmpv6_frame(kAllNodesMac, mac, target, kAllNodes, std::move(icmp));
}

}  // namespace nasd::cluster::address
