#include "cluster/scaleout/scaleout_fsck.h"

#include <sstream>

namespace nasd::scaleout {
namespace {

std::string list(const std::vector<int>& v) {
  std::string s;
  for (int i : v) s += (s.empty() ? "" : ",") + std::to_string(i);
  return s;
}

}  // namespace

FsckReport fsck_groups(GroupIo& io, const std::vector<GroupRecord>& catalog,
                       size_t max_problems) {
  FsckReport r;
  for (const GroupRecord& g : catalog) {
    ++r.groups;
    const GroupHealth h = io.verify_group(g);
    r.units_unreadable += h.unreadable.size();
    r.units_corrupt += h.corrupt.size();
    r.units_bad_parity += h.bad_parity.size();
    if (h.unreadable.empty() && h.bad_parity.empty()) {
      ++r.groups_clean;
      continue;
    }
    (h.readable ? r.groups_degraded : r.groups_unreadable) += 1;
    if (r.problems.size() < max_problems) {
      std::ostringstream o;
      o << "group " << g.group << " of file " << g.file << " @" << g.offset << " v" << g.version
        << " (" << g.shape.data << "+" << g.shape.parity << "): "
        << (h.readable ? "readable" : "UNREADABLE");
      if (!h.unreadable.empty()) o << "; unreadable units " << list(h.unreadable);
      if (!h.corrupt.empty()) o << " (checksum: " << list(h.corrupt) << ")";
      if (!h.bad_parity.empty()) o << "; parity disagrees: units " << list(h.bad_parity);
      r.problems.push_back(o.str());
    }
  }
  return r;
}

std::string format_fsck_report(const FsckReport& r) {
  std::ostringstream o;
  for (const std::string& p : r.problems) o << p << "\n";
  if (r.problems.size() < r.groups - r.groups_clean) {
    o << "... " << (r.groups - r.groups_clean - r.problems.size()) << " more groups with problems\n";
  }
  o << r.groups << " groups: " << r.groups_clean << " clean, " << r.groups_degraded
    << " degraded, " << r.groups_unreadable << " unreadable; units: " << r.units_unreadable
    << " unreadable (" << r.units_corrupt << " checksum), " << r.units_bad_parity
    << " parity disagreeing\n";
  o << (r.clean() ? "clean\n" : "NOT CLEAN\n");
  return o.str();
}

}  // namespace nasd::scaleout
