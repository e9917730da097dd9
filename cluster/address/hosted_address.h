// One address this node serves on one of its interfaces, for as long as it serves it. The
// order is the point:
//   acquire(): the interface exists and the address is in one of its subnets (when it has
//     any), nobody on the segment answers a probe for it (RFC 5227 ARP, RFC 4862 DAD), the record
//     lists it (so that a crash leaves a trace), the kernel adds it (netlink), and the segment
//     is told (gratuitous ARP / unsolicited neighbour advertisement). Only then does the
//     caller bind its listeners to it (VirtualServer).
//   release(): the kernel removes it, then the record forgets it, *before* the caller stops
//     its listeners and hands the volumes on: clients stop reaching this host at once, and the
//     next owner's probe finds the address free.
// A refused probe is not an error of this node: the address is somebody else's for now (a
// stopped node's host still answers for it until that node wakes and lets go, as a stopped
// process still holds its port on one machine). acquire() fails and VirtualServer::claim
// tries again. Not thread-safe: its VirtualServer calls it under its own lock.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cluster/address/address_announcer.h"
#include "cluster/address/address_probe.h"
#include "cluster/address/address_record.h"
#include "cluster/address/interface_address.h"

namespace nasd::cluster::address {

struct AddressTiming {
  ProbeTiming probe;
  AnnounceTiming announce;
};

class HostedAddress {
 public:
  HostedAddress(InterfaceAddress a, std::shared_ptr<AddressRecord> record, AddressTiming timing = {});

  // False and *error (the whole sentence, address and interface named) when the address cannot
  // be taken now; nothing is left on the interface then.
  bool acquire(std::string* error);
  // False and *error when the kernel refused to remove it (it stays recorded, so the next start
  // removes it).
  bool release(std::string* error);
  // Tells the segment again that the address is here (once, no probe): for when another host
  // may have answered for it meanwhile (see AddressPoolServer). False and *error when not held
  // or not sent.
  bool announce_again(std::string* error);
  bool held() const { return held_; }
  const InterfaceAddress& address() const { return a_; }

 private:
  const InterfaceAddress a_;
  const std::shared_ptr<AddressRecord> record_;
  const AddressTiming timing_;
  bool held_ = false;
};

// Start-up: every interface exists, every address is in a subnet of its interface (when the
// interface has addresses of that family), and the process holds CAP_NET_ADMIN and CAP_NET_RAW.
// Throws std::runtime_error naming the address, the interface or the missing capability.
void check_interface_addresses(const std::vector<InterfaceAddress>& addresses);

// Start-up, before anything is served: removes from the interfaces every address the record
// lists (left by a run of this node that did not stop cleanly) and forgets it. Returns one line
// per address removed, or per one that could not be (for the log).
std::vector<std::string> remove_leftover_addresses(AddressRecord& record);

// Why `a` does not fit its interface now: "" when it does (it exists and `a` is in one of its
// subnets of the same family, or it has none).
std::string interface_mismatch(const InterfaceAddress& a);

}  // namespace nasd::cluster::address
