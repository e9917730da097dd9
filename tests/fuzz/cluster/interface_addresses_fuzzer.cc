// What a node reads about addresses on interfaces: its state file of addresses it put on
// interfaces (cluster/address/address_record.h; a torn write or a hand edit must not stop a
// node) and the ARP and neighbour discovery frames it hears while it probes (arp_frame.h,
// neighbor_advert.h; any host on the segment can send them). Arbitrary bytes must parse to addresses
// that format and parse to the same again, within the record's bounds, and must decode to an
// ARP or neighbour discovery packet or nothing.
#include <cstddef>
#include <cstdint>
#include <string>

#include "cluster/address/address_record.h"
#include "cluster/address/arp_frame.h"
#include "cluster/address/neighbor_advert.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nasd::cluster::address;
  const std::string text(reinterpret_cast<const char*>(data), size);
  size_t bad = 0;
  const auto addresses = parse_address_record(text, &bad);
  if (addresses.size() > kMaxRecordLines) __builtin_trap();
  size_t bad_again = 0;
  if (parse_address_record(format_address_record(addresses), &bad_again) != addresses || bad_again != 0)
    __builtin_trap();
  if (const auto p = decode_arp(data, size)) {
    if (size < 42 || (p->op != kArpRequest && p->op != kArpReply)) __builtin_trap();
    (void)conflicts_with_probe(*p, Ipv4{10, 0, 4, 11}, Mac{2, 0, 0, 0, 0, 1});
  }
  if (const auto p = decode_neighbor_discovery(data, size)) {
    if (size < 78 || (p->type != kNeighborSolicitation && p->type != kNeighborAdvertisement)) __builtin_trap();
    (void)conflicts_with_nd_probe(*p, p->target, Mac{2, 0, 0, 0, 0, 1});
  }
  return 0;
}
