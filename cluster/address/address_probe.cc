#include "cluster/address/address_probe.h"

#include <cstdio>

namespace nasd::cluster::address {
namespace {

constexpr uint16_t kEtherTypeArp = 0x0806;

std::string mac_text(const Mac& m) {
  char out[18];
  std::snprintf(out, sizeof out, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
  return out;
}

}  // namespace

ProbeResult probe_address(unsigned ifindex, const LinkInfo& link, const InterfaceAddress& a,
                          const ProbeTiming& timing, std::string* error) {
  PacketSocket s;
  if (!s.open(ifindex, kEtherTypeArp, error)) return ProbeResult::Failed;
  Ipv4 ip;
  std::copy(a.bytes.begin(), a.bytes.begin() + 4, ip.begin());
  const std::vector<uint8_t> probe = arp_probe(link.mac, ip);
  uint8_t frame[1600];
  for (int i = 0; i < timing.probes; ++i) {
    if (!s.send(probe, error)) return ProbeResult::Failed;
    const auto until = std::chrono::steady_clock::now() + (i + 1 < timing.probes ? timing.interval : timing.wait);
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      const ssize_t n = s.receive(frame, sizeof frame, left);
      if (n < 0) {
        *error = "receiving ARP on " + a.interface + " failed";
        return ProbeResult::Failed;
      }
      if (n == 0) continue;
      const auto p = decode_arp(frame, static_cast<size_t>(n));
      if (p && conflicts_with_probe(*p, ip, link.mac)) {
        *error = a.address + " is already in use on " + a.interface + "'s segment by " +
                 mac_text(p->sender_mac) + " (an ARP probe was answered): not taken";
        return ProbeResult::InUse;
      }
    }
  }
  return ProbeResult::Free;
}

}  // namespace nasd::cluster::address
