#include "bench/drill/fault_schedule.h"

#include <algorithm>
#include <random>
#include <sstream>

namespace nasd::drill {

std::string fault_kind_name(FaultKind kind) {
  switch (kind) {
    case FaultKind::Kill9: return "kill9";
    case FaultKind::Sigstop: return "sigstop";
    case FaultKind::Partition: return "partition";
    case FaultKind::Authority: return "authority";
  }
  return "?";
}

std::optional<FaultKind> parse_fault_kind(const std::string& name) {
  for (FaultKind k : {FaultKind::Kill9, FaultKind::Sigstop, FaultKind::Partition, FaultKind::Authority})
    if (fault_kind_name(k) == name) return k;
  return std::nullopt;
}

std::optional<std::vector<FaultKind>> parse_fault_kinds(const std::string& list, std::string* error) {
  std::vector<FaultKind> kinds;
  std::istringstream in(list);
  std::string name;
  while (std::getline(in, name, ',')) {
    if (name.empty()) continue;
    auto k = parse_fault_kind(name);
    if (!k) {
      *error = "unknown fault '" + name + "' (kill9, sigstop, partition, authority)";
      return std::nullopt;
    }
    kinds.push_back(*k);
  }
  if (kinds.empty()) {
    *error = "no fault named";
    return std::nullopt;
  }
  return kinds;
}

std::vector<Fault> random_schedule(const std::vector<FaultKind>& kinds, int rounds, uint64_t seed,
                                   const std::vector<std::string>& nodes) {
  std::mt19937_64 rng(seed);
  std::vector<Fault> out;
  for (int r = 0; r < rounds; ++r) {
    std::vector<FaultKind> order = kinds;
    std::shuffle(order.begin(), order.end(), rng);
    for (FaultKind k : order) out.push_back(Fault{k, nodes[rng() % nodes.size()], 0});
  }
  return out;
}

std::optional<std::vector<Fault>> parse_schedule(std::istream& in, const std::vector<std::string>& nodes,
                                                 std::string* error) {
  std::vector<Fault> out;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::string kind, node, duration, extra;
    if (!(words >> kind)) continue;
    words >> node >> duration >> extra;
    auto fail = [&](const std::string& why) {
      *error = "schedule line " + std::to_string(number) + ": " + why;
      return std::nullopt;
    };
    auto k = parse_fault_kind(kind);
    if (!k) return fail("unknown fault '" + kind + "'");
    if (std::find(nodes.begin(), nodes.end(), node) == nodes.end()) return fail("no node '" + node + "'");
    int ms = 0;
    if (!duration.empty()) {
      if (duration.size() > 8 || duration.find_first_not_of("0123456789") != std::string::npos)
        return fail("duration '" + duration + "' is not milliseconds");
      ms = std::stoi(duration);
    }
    if (!extra.empty()) return fail("unexpected '" + extra + "'");
    out.push_back(Fault{*k, node, ms});
  }
  if (out.empty()) {
    *error = "the schedule names no fault";
    return std::nullopt;
  }
  return out;
}

}  // namespace nasd::drill
