// TEST SUPPORT: a scale-out cluster in one process: `nodes` nodes of `drives` drives each in a
// scratch folder, reached through LocalUnits. kill(node) stands for a dead node (its units
// answer Unreachable and the topology shows it dead); delete_drive removes a backing file;
// add_node stands for a node joining the running cluster.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cluster/scaleout/ifs_cluster.h"

namespace nasd::scaleout::testing {

class LocalIfsCluster : public IfsCluster {
 public:
  explicit LocalIfsCluster(int nodes = 4, uint32_t drives = 4, std::string dir = "")
      : drives_(drives) {
    if (dir.empty()) {
      char tmpl[] = "/tmp/nasd-ifs-test.XXXXXX";
      dir_ = mkdtemp(tmpl);
      owned_ = true;
    } else {
      dir_ = dir;
    }
    for (int i = 1; i <= nodes; i++) {
      std::unique_ptr<NodeUnits> n;
      std::string err;
      const std::string d = dir_ + "/n" + std::to_string(i);
      std::filesystem::create_directories(d);
      if (!NodeUnits::open(d, 100, uint32_t(i), drives, &n, &err)) throw std::runtime_error(err);
      units_.add(n.get());
      nodes_.push_back(std::move(n));
      down_.push_back(false);
    }
  }
  ~LocalIfsCluster() override {
    nodes_.clear();
    if (owned_) std::filesystem::remove_all(dir_);
  }
  const std::string& dir() const { return dir_; }

  UnitAccess* units() override { return &units_; }
  uint32_t drives_per_node() const override { return drives_; }
  Topology topology() override {
    std::lock_guard lock(mu_);
    Topology t;
    for (size_t i = 0; i < nodes_.size(); i++) {
      NodeState n;
      n.id = uint32_t(i + 1);
      n.alive = !down_[i];
      for (uint32_t d = 0; d < drives_; d++) n.drives.push_back(DriveState{!down_[i] && nodes_[i]->drive_healthy(d)});
      t.nodes.push_back(n);
    }
    return t;
  }
  void kill(uint32_t node) {
    std::lock_guard lock(mu_);
    down_[node - 1] = true;
    units_.set_down(node, true);
  }
  // A node joins (as a storage node joins a running cluster): its fresh drives appear in the
  // topology with the next id. Returns the id.
  uint32_t add_node() {
    std::lock_guard lock(mu_);
    const uint32_t id = uint32_t(nodes_.size() + 1);
    std::unique_ptr<NodeUnits> n;
    std::string err;
    const std::string d = dir_ + "/n" + std::to_string(id);
    std::filesystem::create_directories(d);
    if (!NodeUnits::open(d, 100, id, drives_, &n, &err)) throw std::runtime_error(err);
    units_.add(n.get());
    nodes_.push_back(std::move(n));
    down_.push_back(false);
    return id;
  }
  void delete_drive(uint32_t node, uint32_t drive) {
    std::filesystem::remove(dir_ + "/n" + std::to_string(node) + "/drive-" + std::to_string(drive) + ".units");
  }

 private:
  std::string dir_;
  bool owned_ = false;
  uint32_t drives_;
  std::mutex mu_;
  std::vector<std::unique_ptr<NodeUnits>> nodes_;
  std::vector<bool> down_;
  LocalUnits units_;
};

}  // namespace nasd::scaleout::testing
