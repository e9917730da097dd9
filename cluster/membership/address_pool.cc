#include "cluster/membership/address_pool.h"

namespace nasd::membership {

std::map<std::string, std::string> assign_pool(const std::vector<std::string>& addresses,
                                               const std::vector<std::string>& nodes,
                                               const std::set<std::string>& alive) {
  std::map<std::string, std::string> owner;
  if (nodes.empty()) {
    for (const std::string& a : addresses) owner[a] = "";
    return owner;
  }
  std::map<std::string, int> load;
  std::vector<size_t> orphans;
  for (size_t i = 0; i < addresses.size(); ++i) {
    const std::string& home = nodes[i % nodes.size()];
    if (alive.count(home)) {
      owner[addresses[i]] = home;
      ++load[home];
    } else {
      orphans.push_back(i);
    }
  }
  for (size_t i : orphans) {
    const size_t home = i % nodes.size();
    std::string best;
    for (size_t k = 1; k <= nodes.size(); ++k) {
      const std::string& n = nodes[(home + k) % nodes.size()];
      if (!alive.count(n)) continue;
      if (best.empty() || load[n] < load[best]) best = n;
    }
    owner[addresses[i]] = best;
    if (!best.empty()) ++load[best];
  }
  return owner;
}

}  // namespace nasd::membership
