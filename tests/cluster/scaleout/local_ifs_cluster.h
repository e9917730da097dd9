// TEST SUPPORT: a scale-out cluster in one process: `nodes` nodes of `drives` drives each in a
// scratch folder, reached through LocalUnits. kill(node) stands for a dead node (its units
// answer Unreachable and the topology shows it dead); delete_drive removes a backing file;
// add_node stands for a node joining the running cluster.
#pragma once

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cluster/scaleout/ifs_cluster.h"

namespace nasd::scaleout::testing {

// LocalUnits with puts refused on chosen nodes while the topology still shows them alive: a
// busy node (its unit pool full, a call timed out) as a cluster under load sees it.
class RefusingUnits : public UnitAccess {
 public:
  explicit RefusingUnits(UnitAccess* inner) : inner_(inner) {}
  // The next `count` puts to `node` answer IoError without landing (-1: every put, until
  // refuse_puts(node, 0)).
  void refuse_puts(uint32_t node, int count) {
    std::lock_guard lock(mu_);
    refuse_[node] = count;
  }
  int refused() {
    std::lock_guard lock(mu_);
    return refused_;
  }
  // The next `count` syncs of `node`'s drives answer IoError without syncing (-1: every one,
  // until fail_syncs(node, 0)), as a drive whose fsync fails: what it was given may be lost.
  void fail_syncs(uint32_t node, int count) {
    std::lock_guard lock(mu_);
    fail_sync_[node] = count;
  }
  int failed_syncs() {
    std::lock_guard lock(mu_);
    return failed_syncs_;
  }
  UnitStatus put(const UnitPlace& at, const UnitKey& key, const uint8_t* data, uint32_t len) override {
    {
      std::lock_guard lock(mu_);
      int& left = refuse_[at.node];
      if (left != 0) {
        if (left > 0) --left;
        ++refused_;
        return UnitStatus::IoError;
      }
    }
    return inner_->put(at, key, data, len);
  }
  UnitStatus get(const UnitPlace& at, const UnitKey& key, std::vector<uint8_t>* out) override {
    return inner_->get(at, key, out);
  }
  UnitStatus remove(const UnitPlace& at, const UnitKey& key) override { return inner_->remove(at, key); }
  UnitStatus sync(const UnitPlace& at) override {
    {
      std::lock_guard lock(mu_);
      int& left = fail_sync_[at.node];
      if (left != 0) {
        if (left > 0) --left;
        ++failed_syncs_;
        return UnitStatus::IoError;
      }
    }
    return inner_->sync(at);
  }
  // While held, every list call waits (counted by lists_waiting) until release_lists(): the
  // orphan sweep stopped between its snapshot and its listing.
  void hold_lists() {
    std::lock_guard lock(mu_);
    hold_ = true;
  }
  void release_lists() {
    {
      std::lock_guard lock(mu_);
      hold_ = false;
    }
    cv_.notify_all();
  }
  int lists_waiting() {
    std::lock_guard lock(mu_);
    return waiting_;
  }
  UnitStatus list(const UnitPlace& at, const UnitKey& from, uint32_t max, std::vector<UnitKey>* out,
                  bool* more) override {
    {
      std::unique_lock lock(mu_);
      ++waiting_;
      cv_.wait_for(lock, std::chrono::seconds(30), [&] { return !hold_; });
      --waiting_;
    }
    return inner_->list(at, from, max, out, more);
  }

 private:
  UnitAccess* const inner_;
  std::mutex mu_;
  std::map<uint32_t, int> refuse_;
  int refused_ = 0;
  std::map<uint32_t, int> fail_sync_;
  int failed_syncs_ = 0;
  std::condition_variable cv_;
  bool hold_ = false;
  int waiting_ = 0;
};

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

  UnitAccess* units() override { return &refusing_; }
  RefusingUnits& refusing() { return refusing_; }
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
  RefusingUnits refusing_{&units_};
};

}  // namespace nasd::scaleout::testing
