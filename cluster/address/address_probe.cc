#include "cluster/address/address_probe.h"

#include <cstdio>
#include <optional>

#include "cluster/address/neighbor_advert.h"

namespace nasd::cluster::address {
namespace {

constexpr uint16_t kEtherTypeArp = 0x0806, kEtherTypeIpv6 = 0x86dd;

std::string mac_text(const Mac& m) {
  char out[18];
  std::snprintf(out, sizeof out, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
  return out;
}

}  // namespace

ProbeResult probe_address(unsigned ifindex, const LinkInfo& link, const InterfaceAddress& a,
                          const ProbeTiming& timing, std::string* error) {
  const bool v4 = a.family == AF_INET;
  PacketSocket s;
  if (!s.open(ifindex, v4 ? kEtherTypeArp : kEtherTypeIpv6, error)) return ProbeResult::Failed;
  Ipv4 ip;
  std::copy(a.bytes.begin(), a.bytes.begin() + 4, ip.begin());
  // Another host probing for the same address sends to its solicited-node group.
  if (!v4 && !s.join_group(solicited_node_mac(a.bytes), error)) return ProbeResult::Failed;
  const std::vector<uint8_t> probe = v4 ? arp_probe(link.mac, ip) : neighbor_solicitation_probe(link.mac, a.bytes);
  // Who answered, or nullopt: a frame that says another host holds or wants the address.
  const auto conflict = [&](const uint8_t* frame, size_t n) -> std::optional<Mac> {
    if (v4) {
      const auto p = decode_arp(frame, n);
      if (p && conflicts_with_probe(*p, ip, link.mac)) return p->sender_mac;
    } else {
      const auto p = decode_neighbor_discovery(frame, n);
      if (p && conflicts_with_nd_probe(*p, a.bytes, link.mac)) return p->frame_source;
    }
    return std::nullopt;
  };
  uint8_t frame[1600];
  for (int i = 0; i < timing.probes; ++i) {
    if (!s.send(probe, error)) return ProbeResult::Failed;
    const auto until = std::chrono::steady_clock::now() + (i + 1 < timing.probes ? timing.interval : timing.wait);
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      const ssize_t n = s.receive(frame, sizeof frame, left);
      if (n < 0) {
        *error = "receiving on " + a.interface + " failed";
        return ProbeResult::Failed;
      }
      if (n == 0) continue;
      if (const auto holder = conflict(frame, static_cast<size_t>(n))) {
        *error = a.address + " is already in use on " + a.interface + "'s segment by " + mac_text(*holder) +
                 (v4 ? " (an ARP probe was answered)" : " (a duplicate address probe was answered)") + ": not taken";
        return ProbeResult::InUse;
      }
    }
  }
  return ProbeResult::Free;
}

}  // namespace nasd::cluster::address
