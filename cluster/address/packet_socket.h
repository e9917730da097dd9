// An AF_PACKET socket on one interface: whole Ethernet frames out, and in (for one EtherType),
// which is how ARP and neighbour advertisements for an address not yet (or no longer) the
// kernel's are sent and watched. Opening one needs CAP_NET_RAW.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "cluster/address/arp_frame.h"
#include "cluster/address/interface_address.h"

namespace nasd::cluster::address {

// The link under an interface: its MAC, and whether it is Ethernet at all (a loopback or a
// tunnel has no ARP: nothing to probe or announce there).
struct LinkInfo {
  bool ethernet = false;
  Mac mac{};
};
bool link_info(const std::string& interface, LinkInfo* out, std::string* error);

class PacketSocket {
 public:
  PacketSocket() = default;
  PacketSocket(const PacketSocket&) = delete;
  PacketSocket& operator=(const PacketSocket&) = delete;
  ~PacketSocket();

  // Bound to `ifindex`, receiving frames of `ethertype` (host order; 0 receives nothing).
  bool open(unsigned ifindex, uint16_t ethertype, std::string* error);
  bool send(const std::vector<uint8_t>& frame, std::string* error);
  // Receives frames sent to the Ethernet multicast `group` too (a NIC filters the groups no
  // one has joined); left when the socket closes.
  bool join_group(const Mac& group, std::string* error);
  // One frame into `buf` within `timeout`: its length, 0 on timeout, -1 on error.
  ssize_t receive(uint8_t* buf, size_t n, std::chrono::milliseconds timeout);

 private:
  int fd_ = -1;
  unsigned ifindex_ = 0;
};

}  // namespace nasd::cluster::address
