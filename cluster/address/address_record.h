// <data_dir>/interface-addresses: the addresses this node has put on interfaces and not yet
// removed, written durably *before* an address is added and rewritten after it is removed. A
// node killed with -9 leaves its addresses on the host's interfaces (the kernel goes on
// answering ARP for them); at its next start the node removes every address this file lists
// before it serves anything (hosted_address.h: remove_leftover_addresses).
//
// Why a file and not a mark on the address itself: an IPv4 label must start with the
// interface's name and fit in 15 bytes, IPv6 addresses carry no label at all, and a file in
// the node's own data folder tells apart two nodes that share a host (tests, a lab), so a node
// never removes an address it did not add, another node's or the administrator's.
//
// Format, one address a line (at most kMaxLines, each at most kMaxLine bytes):
//   # comment
//   eth1 10.0.4.11/24
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "cluster/address/interface_address.h"

namespace nasd::cluster::address {

constexpr size_t kMaxRecordLines = 4096, kMaxRecordLine = 128;

// The addresses in a record's text. Lines that are not "interface address/prefix" are skipped
// and counted in *bad (the file is ours, but a torn or hand-edited line must not stop a node).
std::vector<InterfaceAddress> parse_address_record(const std::string& text, size_t* bad);
std::string format_address_record(const std::vector<InterfaceAddress>& addresses);

class AddressRecord {
 public:
  // Reads `path` (a missing file is an empty record). Throws std::runtime_error when it exists
  // but cannot be read.
  explicit AddressRecord(std::string path);

  std::vector<InterfaceAddress> addresses() const;
  // Durably adds / removes one entry; false and *error when the file cannot be written.
  bool add(const InterfaceAddress& a, std::string* error);
  bool remove(const InterfaceAddress& a, std::string* error);

 private:
  bool write_locked(std::string* error);

  const std::string path_;
  mutable std::mutex mu_;
  std::vector<InterfaceAddress> addresses_;
};

}  // namespace nasd::cluster::address
