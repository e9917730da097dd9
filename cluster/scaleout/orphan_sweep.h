// The orphan sweep of a scale-out volume, as a pure state machine run by the coordinator: no
// threads, I/O or clocks of its own. The driver (IfsVolume::sweep_now, ifs_sweep.cc) gives it
// a fence and the referenced units, carries out its actions (list a drive's keys a page at a
// time through the unit service, delete units), and feeds it the listings. Tested by
// tests/cluster/scaleout/orphan_sweep_test.cc.
//
// An orphan is a unit on a drive that no record names and that no writer can still record:
// the units of a protection task whose result was lost (its coordinator died before the
// commit's checkpoint, a stale task), of a write-behind that failed or whose coordinator died
// before its checkpoint, and the units delete_group or a garbage deletion could not reach (a
// node down at the time). Nothing else ever deletes them.
//
// When a unit may be dropped (all three):
//   1. no referenced (place, key) names it: `referenced` is every unit of the catalog at the
//      moment the fence was taken, plus the units whose deletion is pending (the volume's
//      garbage: superseded units the newest checkpoint may still name);
//   2. its version is settled under the fence (version_settled): a client-write version of an
//      earlier coordinator epoch (that coordinator is gone; its unrecorded groups are rewritten
//      by the journal's replay under new versions), or of this epoch below `client_floor` (the
//      first version of the write-behind in flight when the fence was taken, or, with none in
//      flight, the next version to be handed out: every later group has a version at or above
//      it); a protection-job version of a pass that has ended (job epoch <= `job_epoch`; the
//      driver holds the pass lock, so no pass runs during a sweep, and a pass's versions are
//      only ever recorded by its own commits);
//   3. it is not of the metadata file (file 0: the checkpoint image keeps its own generations,
//      ifs_image.h).
// Ordering the driver must keep (why 1 and 2 are enough): it takes the fence and `referenced`
// in one step under the volume's lock, after a checkpoint of the live catalog landed (so every
// unit the newest checkpoint names is in the catalog or in the pending garbage), and only then
// lists. A unit listed later is either named in that snapshot (kept), written after it under a
// version at or above the floor or of a later pass (kept), or one no writer will record.
// A unit recorded later under a settled version cannot exist: every recording writer (the
// write-behind, a pass's commit) allocated its versions after, or is fenced by, the floor.
// The checkpoint at the start also persists this coordinator's epoch and the last pass's job
// epoch, so a successor (after a failover) hands out only versions above the fence; and the
// driver deletes nothing more once the volume is abandoned (its lease lost).
// A key is never reused with other content, so dropping an orphan never hits a live unit.
//
// Bounds: at most one listing in flight per drive, kMaxListKeys keys per page, a Drop action
// per page (at most kMaxListKeys units). A drive that cannot be listed (node down, drive
// failed) is skipped this time and counted; the next sweep tries again.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cluster/scaleout/group_record.h"
#include "cluster/scaleout/protection_job.h"

namespace nasd::scaleout {

struct SweepFence {
  uint32_t client_epoch = 0;  // the running coordinator's incarnation (IfsState::epoch)
  uint64_t client_floor = 0;  // client versions of that epoch from this counter on are young
  uint32_t job_epoch = 0;     // protection passes up to this one have ended
};

// Rule 2 above. Client versions: bit 63 | epoch << 40 | n (ifs_state.h client_version); job
// versions: job epoch << 40 | n (protection_job.h).
bool version_settled(const SweepFence& fence, uint64_t version);

// What the sweeps have done, for nasd-admin and the metrics.
struct SweepProgress {
  bool running = false;
  uint64_t sweeps = 0;             // sweeps finished
  uint64_t drives_listed = 0;      // the current (or last) sweep's
  uint64_t drives_skipped = 0;     //   drives that could not be listed
  uint64_t units_seen = 0;
  uint64_t units_referenced = 0;   //   kept: named by the catalog or pending deletion (or
                                   //   the metadata image's)
  uint64_t units_young = 0;        //   kept: a writer may still record them
  uint64_t units_dropped = 0;      //   orphans deleted
  uint64_t units_dropped_total = 0;  // over every sweep since the volume opened (the driver's)
  std::string text() const;        // one line
};

struct SweepAction {
  enum class Kind {
    List,  // list `place` from `from` on (kMaxListKeys at most); report with listed()
    Drop,  // delete `keys` on `place` (orphans; best effort)
  };
  Kind kind = Kind::List;
  UnitPlace place;
  UnitKey from;
  std::vector<UnitKey> keys;
};

class OrphanSweep {
 public:
  // Lists every usable drive of `topology`. `referenced`: rule 1.
  OrphanSweep(SweepFence fence, const std::vector<UnitRef>& referenced, const Topology& topology);

  std::vector<SweepAction> take_actions();
  // The answer to a List of `place`: the page's keys (ascending, from the List's `from` on) and
  // whether more follow; a status other than Ok skips the rest of that drive.
  void listed(const UnitPlace& place, UnitStatus status, const std::vector<UnitKey>& keys,
              bool more);
  bool done() const { return pending_.empty() && actions_.empty(); }
  SweepProgress progress() const { return progress_; }

 private:
  using Place = std::pair<uint32_t, uint32_t>;
  const SweepFence fence_;
  std::set<std::pair<Place, UnitKey>> referenced_;
  std::map<Place, UnitKey> pending_;  // drives with a listing in flight: where it started
  std::vector<SweepAction> actions_;
  SweepProgress progress_;
};

}  // namespace nasd::scaleout
