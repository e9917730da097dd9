// The volumes this node has open, each an LFS over its backing file with the node's NVRAM
// journal in front (or the LFS alone when the journal is off). Opening recovers in order: the
// LFS rolls forward from its last checkpoint; on a takeover, the partner's journal records are
// replayed from this node's copy of the partner's NVRAM; then this node's own records. Only
// then is the volume handed out to be served.
//
// Closing is clean (flush and checkpoint: the volume may move to the partner) or an abandon
// (the lease ran out and the partner may own the volume already: nothing more is written).
//
// The reply cache moves with the data: recovery hands every journalled call with a client
// identity, and its reply, to the node's RecoveredCallSink (the NFS server's duplicate request
// cache). A clean close trims the volume's records, so it first saves the volume's reply window
// in the folder of the volume (<base_dir>/<name>.replies, nvram/reply_window.h); the next opener -- this
// node, or the partner after a planned failover or failback -- hands it on the same way.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "fs/call/recovered_call_sink.h"
#include "fs/lfs/lfs_volume.h"
#include "fs/lfs/write_gate.h"
#include "fs/volume.h"
#include "util/config.h"

namespace nasd::scaleout {
class IfsCluster;
class IfsVolume;
struct IfsHealth;
}

namespace nasd::nvram {
class Journal;
class JournalVolume;
}

namespace nasd::cluster {

class HostedVolumes {
 public:
  // `journal` null: the journal is off and every stable operation is written through.
  // `replies` (may be null) receives the recorded replies of every volume opened.
  explicit HostedVolumes(std::shared_ptr<nvram::Journal> journal,
                         std::shared_ptr<fs::RecoveredCallSink> replies = nullptr);
  ~HostedVolumes();  // abandons whatever is still open (a crash, to the volumes)

  // Opens [volume NAME] (formatting it the first time) with its backing file taken inside
  // `base_dir`. `partner_nvram`: a copy of the partner's NVRAM region to replay first (a
  // takeover). For a shared volume, `write_gate` admits every write to the backing file (the
  // node's fence) and `owned` (its lease) is asked before every journalled mutation is
  // acknowledged. Returns what serves the volume. Throws std::runtime_error naming it.
  std::shared_ptr<fs::Volume> open(const ConfigSection& section, const Config& config,
                                   const std::string& base_dir,
                                   const std::string& partner_nvram = "",
                                   std::shared_ptr<fs::lfs::WriteGate> write_gate = nullptr,
                                   std::function<bool()> owned = {});
  // A [volume] with `type = scaleout` (cluster/scaleout/ifs_volume.h) is opened over `cluster`
  // (this node's IfsNode) instead of a backing file. Set before the first open; outlives this.
  void set_scaleout_cluster(scaleout::IfsCluster* cluster) { scaleout_ = cluster; }
  // Clean: everything made durable, checkpoint written. Otherwise abandoned. No-op if not open.
  // True when the close was clean and worked: every acknowledged operation is in the file
  // system, none is left in this node's NVRAM (a planned move hands the volume over only then).
  bool close(uint32_t id, bool clean);
  void close_all();  // clean, for a node stop
  // The node's journal (null when it is off).
  const std::shared_ptr<nvram::Journal>& journal() const { return journal_; }
  // One block per open volume: the LFS status.
  std::string status() const;
  // `nasd-admin protection [VOLUME]`: every scale-out volume coordinated here, each group's
  // health and the protection pass's progress, taken now (scaleout::ProtectionBoard::render).
  std::string protection_command(const std::vector<std::string>& args) const;
  struct Open {
    uint32_t id;
    std::string name;
    fs::lfs::LfsVolume::Report report;
  };
  // The open volumes' numbers, for metrics and the management page.
  std::vector<Open> reports() const;
  // The scale-out volumes coordinated here, each with its summary (taken now).
  std::vector<std::pair<std::string, scaleout::IfsHealth>> scaleout_health() const;
  // `snapshot create|delete VOLUME NAME`, `snapshot list [VOLUME]` (hosted_snapshots.cc) for the
  // volumes open here; throws std::invalid_argument / runtime_error with the reason.
  std::string snapshot_command(const std::vector<std::string>& args);

 private:
  struct Hosted {
    std::string name;
    std::string replies_file;  // the reply window saved at a clean close
    std::shared_ptr<fs::lfs::LfsVolume> lfs;          // null for a scale-out volume
    std::shared_ptr<scaleout::IfsVolume> ifs;         // null for an LFS volume
    std::shared_ptr<nvram::JournalVolume> journaled;  // null when the journal is off
  };
  bool close_hosted(uint32_t id, Hosted& h, bool clean);

  const std::shared_ptr<nvram::Journal> journal_;
  const std::shared_ptr<fs::RecoveredCallSink> replies_;
  scaleout::IfsCluster* scaleout_ = nullptr;
  mutable std::mutex mu_;
  std::map<uint32_t, Hosted> open_;
};

}  // namespace nasd::cluster
