// The kernel's addresses on an interface, through rtnetlink (libmnl): list, add and remove,
// the calls `ip addr` makes, without a shell. Each call opens its own netlink socket, so the
// functions are safe from any thread. Errors are returned (the serving path calls these), with
// the capability a refusal means: EPERM from rtnetlink is a missing CAP_NET_ADMIN.
#pragma once

#include <string>
#include <vector>

#include "cluster/address/interface_address.h"

namespace nasd::cluster::address {

// What the kernel holds on one interface (IFA_LOCAL for IPv4, IFA_ADDRESS for IPv6).
struct AddressOnLink {
  int family = 0;
  std::array<uint8_t, 16> bytes{};
  int prefix = 0;
  std::string text;  // "10.0.4.11/24"
};

// The interface's index, or 0 (and *error: "interface eth9 does not exist") when there is none.
unsigned interface_index(const std::string& name, std::string* error);

bool list_addresses(unsigned ifindex, std::vector<AddressOnLink>* out, std::string* error);
// Adds `a` (IPv4 with its subnet's broadcast address; IPv6 without duplicate address detection,
// which would hold the address back "tentative" for a second: the node has the lease). An
// address already there with the same prefix counts as added.
bool add_address(unsigned ifindex, const InterfaceAddress& a, std::string* error);
// Turns the interface's IPv4 promote_secondaries on (net.ipv4.conf.IF.promote_secondaries, set
// through rtnetlink): without it, removing the first address of a subnet (the "primary")
// removes every other address of that subnet with it, so an EVS address leaving an interface
// that has no address of its own in that subnet would take the pool addresses with it.
bool promote_secondaries(unsigned ifindex, std::string* error);
// Removes `a`; an address that is not there counts as removed.
bool remove_address(unsigned ifindex, const InterfaceAddress& a, std::string* error);

}  // namespace nasd::cluster::address
