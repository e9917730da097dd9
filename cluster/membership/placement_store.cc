#include "cluster/membership/placement_store.h"

#include <stdexcept>

#include "cluster/membership/etcd_placement_store.h"
#include "cluster/membership/file_placement_store.h"

namespace nasd::membership {

std::unique_ptr<PlacementStore> make_placement_store(const AuthorityOptions& options) {
  switch (options.kind) {
    case AuthorityOptions::Kind::File:
      if (options.lease_dir.empty())
        throw std::invalid_argument("the file lease authority needs a folder");
      return std::make_unique<FilePlacementStore>(options.lease_dir);
    case AuthorityOptions::Kind::Etcd:
      return std::make_unique<EtcdPlacementStore>(options.etcd);
  }
  throw std::invalid_argument("unknown lease authority");
}

bool read_or_create_placement(PlacementStore& store, const Placement& from_config,
                              Placement* out, std::string* error) {
  for (int attempt = 0; attempt < 4; ++attempt) {
    bool found = false;
    Placement stored;
    if (!store.read(&stored, &found, error)) return false;
    if (found) {
      *out = reconcile(stored, from_config);
      return true;
    }
    Placement initial = from_config;
    initial.version = 0;
    switch (store.write(initial, error)) {
      case PlacementWrite::Written:
        *out = initial;
        return true;
      case PlacementWrite::Conflict:
        continue;  // another node created it first: read theirs
      case PlacementWrite::Unreachable:
        return false;
    }
  }
  *error = "the placement record keeps changing";
  return false;
}

std::string update_placement(PlacementStore& store, const Placement& from_config,
                             const std::function<std::string(Placement&)>& change,
                             Placement* result, int attempts) {
  std::string error;
  for (int attempt = 0; attempt < attempts; ++attempt) {
    Placement p;
    if (!read_or_create_placement(store, from_config, &p, &error))
      return "the authority cannot be read: " + error;
    std::string why = change(p);
    if (!why.empty()) return why;
    switch (store.write(p, &error)) {
      case PlacementWrite::Written:
        if (result) *result = p;
        return "";
      case PlacementWrite::Conflict:
        continue;
      case PlacementWrite::Unreachable:
        return "the authority cannot be written: " + error;
    }
  }
  return "the placement record keeps changing; try again";
}

}  // namespace nasd::membership
