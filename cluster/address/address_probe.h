// The probe before an address is taken, so that an address some other host on the segment
// already holds is refused instead of stolen: for IPv4 RFC 5227's ARP probes (sender 0.0.0.0)
// and a watch for anyone answering or announcing it; for IPv6 RFC 4862's duplicate address
// detection (neighbour solicitations from ::) and a watch for an advertisement of it. The RFC's timing (1 to 2 s between
// probes) is for hosts that configure themselves at leisure; a takeover is waited for by
// clients, so the counts are ours (ProbeTiming), a few hundred milliseconds in all.
#pragma once

#include <chrono>
#include <string>

#include "cluster/address/interface_address.h"
#include "cluster/address/packet_socket.h"

namespace nasd::cluster::address {

struct ProbeTiming {
  int probes = 3;
  std::chrono::milliseconds interval{100};  // between probes
  std::chrono::milliseconds wait{200};      // after the last one
};

enum class ProbeResult { Free, InUse, Failed };

// Probes `a` on the link `link`. InUse: *error names the MAC that holds it.
// Failed: *error says why no probe could be made (CAP_NET_RAW, ...).
ProbeResult probe_address(unsigned ifindex, const LinkInfo& link, const InterfaceAddress& a,
                          const ProbeTiming& timing, std::string* error);

}  // namespace nasd::cluster::address
