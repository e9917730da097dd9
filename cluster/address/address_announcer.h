// Tells a segment that an address is now at this host: gratuitous ARP for IPv4, an unsolicited
// neighbour advertisement for IPv6, sent `count` times `interval` apart (a switch or a cache
// that missed the first still gets one; keepalived and IPaddr2 repeat theirs the same way).
#pragma once

#include <chrono>
#include <string>

#include "cluster/address/interface_address.h"
#include "cluster/address/packet_socket.h"

namespace nasd::cluster::address {

struct AnnounceTiming {
  int count = 3;
  std::chrono::milliseconds interval{100};
};

// Sends the announcements (blocking for (count - 1) * interval). False and *error when none
// could be sent.
bool announce_address(unsigned ifindex, const LinkInfo& link, const InterfaceAddress& a,
                      const AnnounceTiming& timing, std::string* error);

}  // namespace nasd::cluster::address
