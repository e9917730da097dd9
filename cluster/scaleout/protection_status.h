// What `nasd-admin ... protection` shows about a scale-out volume: each protection group's
// health and the protection jobs' progress. Pure: computed from the coordinator's job machine
// (its catalog, topology and JobProgress), without I/O, so it can be taken after every job step.
//
// A group's units are "full" on an alive node and healthy drive, "lost" otherwise (a dead node,
// a failed drive). The group is FULL when every unit is and its shape is what the topology
// allows; DEGRADED while it is readable (at most M lost) but not at full protection; LOST when
// more than M units are gone (unreadable until a node comes back). Checksum failures are found
// only by reading (scrub, fsck): they are not in this view.
//
// ProtectionBoard is the seam between the volume that runs the jobs and the node's admin
// socket: the volume publishes a status after every job step or topology change, the admin
// command renders the latest one. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "cluster/scaleout/orphan_sweep.h"
#include "cluster/scaleout/protection_job.h"

namespace nasd::scaleout {

enum class GroupState : uint8_t { Full = 0, Degraded = 1, Lost = 2 };
const char* group_state_name(GroupState s);

struct GroupStatus {
  uint64_t file = 0;
  uint64_t offset = 0;
  uint64_t length = 0;
  uint64_t version = 0;
  GroupShape shape;
  int full_units = 0;
  int lost_units = 0;
  bool balanced = true;
  bool shaped = true;  // in the shape its file's policy asks for (else a restripe is due)
  GroupState state = GroupState::Full;
};

struct ProtectionStatus {
  std::string policy;  // OneFS notation, e.g. +2d:1n
  int nodes_alive = 0;
  int nodes = 0;
  uint64_t groups = 0;
  uint64_t groups_full = 0;
  uint64_t groups_degraded = 0;
  uint64_t groups_lost = 0;
  uint64_t groups_unbalanced = 0;
  uint64_t groups_misshaped = 0;  // full, but not in their file's policy's shape: restripe due
  uint64_t units_lost = 0;
  std::map<uint32_t, uint64_t> units_per_node;  // catalog units on each node (the balance)
  JobProgress job;
  SweepProgress sweep;              // the orphan sweeps (the volume's, not the judge's)
  std::vector<GroupStatus> listed;  // the groups not at full protection first, then the rest
  uint64_t not_listed = 0;          // beyond max_listed
};

// The status of `job`'s catalog on its topology; at most `max_listed` groups are listed.
ProtectionStatus protection_status(const ProtectionJob& job, const ProtectionPolicy& policy,
                                   size_t max_listed);

// The text nasd-admin prints: a summary, the job line, and one line per listed group.
std::string format_protection_status(const std::string& volume, const ProtectionStatus& status);

class ProtectionBoard {
 public:
  void publish(const std::string& volume, ProtectionStatus status);
  void remove(const std::string& volume);
  // The admin command: `protection [VOLUME]`. Arguments are bounded (at most one name of at
  // most 255 bytes); an unknown volume or no scale-out volume on this node is said so.
  std::string render(const std::vector<std::string>& args) const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, ProtectionStatus> volumes_;
};

}  // namespace nasd::scaleout
