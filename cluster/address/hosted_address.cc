#include "cluster/address/hosted_address.h"

#include <stdexcept>

#include "cluster/address/capabilities.h"
#include "cluster/address/netlink_addresses.h"

namespace nasd::cluster::address {

HostedAddress::HostedAddress(InterfaceAddress a, std::shared_ptr<AddressRecord> record, AddressTiming timing)
    : a_(std::move(a)), record_(std::move(record)), timing_(timing) {}

std::string interface_mismatch(const InterfaceAddress& a) {
  std::string error;
  const unsigned index = interface_index(a.interface, &error);
  if (index == 0) return error;
  std::vector<AddressOnLink> on_link;
  if (!list_addresses(index, &on_link, &error)) return error;
  std::string subnets;
  for (const AddressOnLink& o : on_link) {
    if (o.family != a.family || o.bytes == a.bytes) continue;  // itself (a leftover) says nothing
    if (a.family == AF_INET6 && o.bytes[0] == 0xfe && (o.bytes[1] & 0xc0) == 0x80) continue;  // link-local
    if (in_subnet(a, o.bytes, o.family, o.prefix)) return "";
    subnets += (subnets.empty() ? "" : ", ") + o.text;
  }
  if (subnets.empty()) return "";
  return a.address + " is in no subnet of " + a.interface + " (" + subnets + ")";
}

bool HostedAddress::acquire(std::string* error) {
  if (held_) return true;
  const std::string mismatch = interface_mismatch(a_);
  if (!mismatch.empty()) {
    *error = "cannot serve " + a_.describe() + ": " + mismatch;
    return false;
  }
  std::string why;
  const unsigned index = interface_index(a_.interface, &why);
  LinkInfo link;
  if (index == 0 || !link_info(a_.interface, &link, &why)) {
    *error = "cannot serve " + a_.describe() + ": " + why;
    return false;
  }
  if (link.ethernet) {
    switch (probe_address(index, link, a_, timing_.probe, &why)) {
      case ProbeResult::Free:
        break;
      case ProbeResult::InUse:
        *error = why;
        return false;
      case ProbeResult::Failed:
        *error = "cannot probe " + a_.describe() + ": " + why;
        return false;
    }
  }
  // Before any address of ours can be a subnet's first: its removal must not take the others.
  if (a_.family == AF_INET && !promote_secondaries(index, &why)) {
    *error = "cannot serve " + a_.describe() + ": " + why;
    return false;
  }
  // Recorded before it exists, so that no crash leaves it on the interface unrecorded.
  if (!record_->add(a_, &why)) {
    *error = "cannot serve " + a_.describe() + ": recording it: " + why;
    return false;
  }
  if (!add_address(index, a_, &why)) {
    std::string ignored;
    record_->remove(a_, &ignored);
    *error = why;
    return false;
  }
  held_ = true;
  // An announcement that cannot be sent leaves the address served but caches pointing at the
  // old owner until they expire: worth a warning, not a refusal.
  if (link.ethernet && !announce_address(index, link, a_, timing_.announce, &why)) {
    *error = "announcing " + a_.describe() + ": " + why;
  }
  return true;
}

bool HostedAddress::announce_again(std::string* error) {
  if (!held_) {
    *error = a_.describe() + " is not held here";
    return false;
  }
  const unsigned index = interface_index(a_.interface, error);
  LinkInfo link;
  if (index == 0 || !link_info(a_.interface, &link, error)) return false;
  if (!link.ethernet) return true;
  return announce_address(index, link, a_, AnnounceTiming{1, {}}, error);
}

bool HostedAddress::release(std::string* error) {
  if (!held_) return true;
  held_ = false;
  std::string why;
  const unsigned index = interface_index(a_.interface, &why);
  if (index != 0 && !remove_address(index, a_, &why)) {
    *error = why;
    return false;  // still recorded: the next start removes it
  }
  if (!record_->remove(a_, &why)) {
    *error = "forgetting " + a_.describe() + ": " + why;
    return false;
  }
  return true;
}

void check_interface_addresses(const std::vector<InterfaceAddress>& addresses) {
  if (addresses.empty()) return;
  const std::string missing = missing_address_capabilities();
  if (!missing.empty())
    throw std::runtime_error("addresses on interfaces (" + addresses.front().describe() +
                             ", ...) need " + missing +
                             ": run nasd as root or give it these capabilities (deploy/nasd.service)");
  for (const InterfaceAddress& a : addresses) {
    const std::string mismatch = interface_mismatch(a);
    if (!mismatch.empty()) throw std::runtime_error(a.describe() + ": " + mismatch);
  }
}

std::vector<std::string> remove_leftover_addresses(AddressRecord& record) {
  std::vector<std::string> lines;
  for (const InterfaceAddress& a : record.addresses()) {
    std::string error;
    const unsigned index = interface_index(a.interface, &error);
    if (index != 0 && !remove_address(index, a, &error)) {
      lines.push_back("left by an earlier run, not removed: " + a.describe() + ": " + error);
      continue;
    }
    if (!record.remove(a, &error)) {
      lines.push_back("left by an earlier run, removed but not forgotten: " + a.describe() + ": " + error);
      continue;
    }
    lines.push_back("left by an earlier run, removed: " + a.describe());
  }
  return lines;
}

}  // namespace nasd::cluster::address
