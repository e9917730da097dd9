// A node's part of the scale-out volume, alive for as long as the node runs, whether or not it
// coordinates the volume: its own drives (<data_dir>/ifs-<volume id>/drive-<i>.units), the unit
// service that lets the coordinator reach them over the interconnect, and the coordinator's way
// to every node's drives (RemoteUnits) with a view of which nodes and drives are alive.
//
// Liveness: every node is asked for its drives' health every probe interval; a node silent for
// kMissedProbes probes in a row is dead (unit calls to it then answer Unreachable at once, so
// reads rebuild from parity instead of waiting for a timeout each), and alive again as soon as
// it answers. The view starts with every node alive: a node that is really gone is found after
// the first probes.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <optional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cluster/scaleout/direct_reader.h"
#include "cluster/scaleout/ifs_cluster.h"
#include "cluster/scaleout/unit_service.h"
#include "fs/volume.h"
#include "util/task_queue.h"

namespace nasd::scaleout {

class IfsVolume;

class IfsNode : public IfsCluster, public UnitAccess {
 public:
  struct Options {
    std::string dir;                 // this node's drives
    uint64_t volume = 0;
    uint32_t self = 0;               // this node's id
    std::vector<uint32_t> nodes;     // every node's id (this one included)
    uint32_t drives = 4;
    std::chrono::milliseconds call_timeout{2000};
    std::chrono::milliseconds probe_interval{300};
    std::chrono::milliseconds layout_timeout{1000};  // a layout not answered by then: forward
    CompactionPolicy compaction;     // this node's drives (drive_compaction.h)
  };
  static constexpr int kMissedProbes = 3;

  // Opens (creates) the node's drives. nullptr and *error when they cannot be opened.
  static std::unique_ptr<IfsNode> open(Options options, std::string* error);
  ~IfsNode() override;

  // Serves this node's drives to the other nodes (before the interconnect starts).
  void attach(interconnect::InterconnectServer& server);
  void add_peer(uint32_t node, interconnect::CallChannel* channel);
  // A node that joined the running cluster (a role = storage [member] added to the config):
  // its drives become part of the topology once it answers a probe (dead until then, so
  // nothing is placed on a node that is not up yet). The coordinator's protection thread sees
  // the new topology and starts the rebalance job. No-op for a known node.
  void add_node(uint32_t node, interconnect::CallChannel* channel);
  bool knows(uint32_t node) const;
  void start();  // the prober, and the compactor of this node's drives
  void stop();

  // IfsCluster
  UnitAccess* units() override { return this; }
  Topology topology() override;
  uint32_t drives_per_node() const override { return options_.drives; }
  void coordinating(std::shared_ptr<IfsVolume> volume) override { serve_layouts(std::move(volume)); }

  // UnitAccess: RemoteUnits, short-circuited for nodes found dead.
  UnitStatus put(const UnitPlace& at, const UnitKey& key, const uint8_t* data, uint32_t len) override;
  UnitStatus get(const UnitPlace& at, const UnitKey& key, std::vector<uint8_t>* out) override;
  UnitStatus remove(const UnitPlace& at, const UnitKey& key) override;
  UnitStatus sync(const UnitPlace& at) override;
  UnitStatus list(const UnitPlace& at, const UnitKey& from, uint32_t max, std::vector<UnitKey>* out,
                  bool* more) override;

  NodeUnits* local() { return local_.get(); }

  // --- direct reads
  // The volume this node coordinates right now (nullptr: none; set once its journal replay is
  // done, cleared before it is closed or abandoned); it answers other nodes' layout requests.
  void serve_layouts(std::shared_ptr<IfsVolume> volume);
  // Asked after every layout taken here, before it is sent: false (the lease is gone) answers
  // JUKEBOX. Set before attach(); the default refuses every layout.
  void set_lease_check(std::function<bool()> may_serve);
  // Answers a READ of the volume here: the layout from `coordinator`, the groups from their
  // holders, in parallel. True with *status and the out-parameters as the coordinator's READ
  // would have set them; false when it could not (no answer in layout_timeout, JUKEBOX, the
  // groups still unreadable after kLayoutAttempts layouts): the caller forwards the READ.
  bool read_direct(uint32_t coordinator, const fs::OpContext& ctx, fs::InodeId id,
                   uint64_t offset, uint32_t count, std::vector<uint8_t>* data, bool* eof,
                   std::optional<fs::Attr>* attr, fs::Status* status);
  static constexpr int kLayoutAttempts = 3;
  struct DirectReadStats {
    uint64_t direct = 0;          // READs answered here from the units
    uint64_t fallbacks = 0;       // READs handed to the forwarded path
    uint64_t retried = 0;         // layouts asked again (groups gone meanwhile)
    uint64_t layouts_served = 0;  // layouts this node answered as coordinator
  };
  DirectReadStats direct_read_stats() const;

 private:
  IfsNode(Options options, std::unique_ptr<NodeUnits> local);
  bool dead(uint32_t node) const;
  void probe_loop();
  void compact_loop();
  void handle_layout(interconnect::IncomingRequest request);

  const Options options_;
  std::unique_ptr<NodeUnits> local_;
  std::unique_ptr<UnitServer> server_;
  RemoteUnits remote_;

  mutable std::mutex mu_;
  std::vector<uint32_t> nodes_;          // guarded by mu_: options_.nodes, then joined ones
  std::map<uint32_t, NodeState> view_;   // guarded by mu_
  std::map<uint32_t, int> missed_;       // guarded by mu_
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::thread prober_;
  std::thread compactor_;

  DirectReader reader_{this};
  mutable std::mutex layout_mu_;
  std::shared_ptr<IfsVolume> coordinating_;              // guarded by layout_mu_
  std::function<bool()> may_serve_;                      // guarded by layout_mu_
  std::map<uint32_t, interconnect::CallChannel*> peers_; // guarded by layout_mu_
  util::TaskQueue layout_pool_;
  std::atomic<uint64_t> direct_{0}, fallbacks_{0}, retried_{0}, layouts_served_{0};
};

}  // namespace nasd::scaleout
