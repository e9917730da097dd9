#include "cluster/address/address_record.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "util/durable_file.h"

namespace nasd::cluster::address {

std::vector<InterfaceAddress> parse_address_record(const std::string& text, size_t* bad) {
  std::vector<InterfaceAddress> out;
  *bad = 0;
  size_t lines = 0, start = 0;
  while (start < text.size() && lines < kMaxRecordLines) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, std::min(end - start, kMaxRecordLine + 1));
    start = end + 1;
    ++lines;
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.find(' ');
    InterfaceAddress a;
    std::string error;
    if (line.size() > kMaxRecordLine || space == std::string::npos ||
        !parse_interface_address(line.substr(space + 1), line.substr(0, space), &a, &error)) {
      ++*bad;
      continue;
    }
    if (std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
  }
  return out;
}

std::string format_address_record(const std::vector<InterfaceAddress>& addresses) {
  std::string out =
      "# nasd: addresses this node put on interfaces; removed at its next start (do not edit)\n";
  for (const InterfaceAddress& a : addresses) out += a.interface + " " + a.cidr() + "\n";
  return out;
}

AddressRecord::AddressRecord(std::string path) : path_(std::move(path)) {
  std::ifstream in(path_);
  if (!in) return;  // none yet
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw std::runtime_error("cannot read " + path_);
  size_t bad = 0;
  addresses_ = parse_address_record(text.str(), &bad);
}

std::vector<InterfaceAddress> AddressRecord::addresses() const {
  std::lock_guard lock(mu_);
  return addresses_;
}

bool AddressRecord::add(const InterfaceAddress& a, std::string* error) {
  std::lock_guard lock(mu_);
  if (std::find(addresses_.begin(), addresses_.end(), a) != addresses_.end()) return true;
  addresses_.push_back(a);
  return write_locked(error);
}

bool AddressRecord::remove(const InterfaceAddress& a, std::string* error) {
  std::lock_guard lock(mu_);
  auto it = std::find(addresses_.begin(), addresses_.end(), a);
  if (it == addresses_.end()) return true;
  addresses_.erase(it);
  return write_locked(error);
}

bool AddressRecord::write_locked(std::string* error) {
  return util::write_file_durably(path_, format_address_record(addresses_), error);
}

}  // namespace nasd::cluster::address
