#include "cluster/address/address_announcer.h"

#include <thread>

#include "cluster/address/neighbor_advert.h"

namespace nasd::cluster::address {

bool announce_address(unsigned ifindex, const LinkInfo& link, const InterfaceAddress& a,
                      const AnnounceTiming& timing, std::string* error) {
  PacketSocket s;
  if (!s.open(ifindex, 0, error)) return false;
  std::vector<uint8_t> frame;
  if (a.family == AF_INET) {
    Ipv4 ip;
    std::copy(a.bytes.begin(), a.bytes.begin() + 4, ip.begin());
    frame = gratuitous_arp(link.mac, ip);
  } else {
    frame = unsolicited_neighbor_advert(link.mac, a.bytes);
  }
  int sent = 0;
  for (int i = 0; i < timing.count; ++i) {
    if (i > 0) std::this_thread::sleep_for(timing.interval);
    if (s.send(frame, error)) ++sent;
  }
  return sent > 0;
}

}  // namespace nasd::cluster::address
