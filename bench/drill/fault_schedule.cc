#include "bench/drill/fault_schedule.h"

#include <algorithm>
#include <random>
#include <sstream>

namespace nasd::drill {

namespace {

constexpr FaultKind kAllKinds[] = {
    FaultKind::Kill9,           FaultKind::Sigstop,          FaultKind::Partition,
    FaultKind::Authority,       FaultKind::LossInterconnect, FaultKind::LossMirror,
    FaultKind::LossClient,      FaultKind::OneWayInterconnect, FaultKind::OneWayMirror,
    FaultKind::OneWayClient,    FaultKind::FlapInterconnect, FaultKind::FlapMirror,
    FaultKind::FlapClient,
};

std::string all_kind_names() {
  std::string out;
  for (FaultKind k : kAllKinds) out += (out.empty() ? "" : ", ") + fault_kind_name(k);
  return out;
}

}  // namespace

std::optional<NetFault> net_fault(FaultKind kind) {
  switch (kind) {
    case FaultKind::LossInterconnect: return NetFault{NetAction::Loss, NetLink::Interconnect};
    case FaultKind::LossMirror: return NetFault{NetAction::Loss, NetLink::Mirror};
    case FaultKind::LossClient: return NetFault{NetAction::Loss, NetLink::Client};
    case FaultKind::OneWayInterconnect: return NetFault{NetAction::OneWay, NetLink::Interconnect};
    case FaultKind::OneWayMirror: return NetFault{NetAction::OneWay, NetLink::Mirror};
    case FaultKind::OneWayClient: return NetFault{NetAction::OneWay, NetLink::Client};
    case FaultKind::FlapInterconnect: return NetFault{NetAction::Flap, NetLink::Interconnect};
    case FaultKind::FlapMirror: return NetFault{NetAction::Flap, NetLink::Mirror};
    case FaultKind::FlapClient: return NetFault{NetAction::Flap, NetLink::Client};
    default: return std::nullopt;
  }
}

std::string net_link_name(NetLink link) {
  switch (link) {
    case NetLink::Interconnect: return "interconnect";
    case NetLink::Mirror: return "mirror";
    case NetLink::Client: return "client";
  }
  return "?";
}

std::string fault_kind_name(FaultKind kind) {
  switch (kind) {
    case FaultKind::Kill9: return "kill9";
    case FaultKind::Sigstop: return "sigstop";
    case FaultKind::Partition: return "partition";
    case FaultKind::Authority: return "authority";
    default: break;
  }
  if (auto n = net_fault(kind)) {
    const char* action = n->action == NetAction::Loss ? "loss" : n->action == NetAction::OneWay ? "oneway" : "flap";
    return std::string(action) + "-" + net_link_name(n->link);
  }
  return "?";
}

std::optional<FaultKind> parse_fault_kind(const std::string& name) {
  for (FaultKind k : kAllKinds)
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
      *error = "unknown fault '" + name + "' (" + all_kind_names() + ")";
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
    for (FaultKind k : order) out.push_back(Fault{k, nodes[rng() % nodes.size()], 0, {}});
  }
  return out;
}

std::vector<Fault> random_faults(const std::vector<FaultKind>& kinds, int count, uint64_t seed,
                                 const std::vector<std::string>& nodes) {
  std::mt19937_64 rng(seed);
  std::vector<Fault> out;
  if (kinds.empty() || nodes.empty()) return out;
  for (int i = 0; i < count; ++i) {
    Fault f{kinds[rng() % kinds.size()], nodes[rng() % nodes.size()], 0, {}};
    if (nodes.size() > 1 && rng() % 3 == 0) {
      std::vector<FaultKind> second;
      for (FaultKind k : kinds)
        if (!(k == FaultKind::Kill9 && f.kind == FaultKind::Kill9)) second.push_back(k);
      std::string other = f.node;
      while (other == f.node) other = nodes[rng() % nodes.size()];
      if (!second.empty()) f.with.push_back(Fault{second[rng() % second.size()], other, 0, {}});
    }
    out.push_back(std::move(f));
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
    out.push_back(Fault{*k, node, ms, {}});
  }
  if (out.empty()) {
    *error = "the schedule names no fault";
    return std::nullopt;
  }
  return out;
}

}  // namespace nasd::drill
