// A primary's side of the stale-mirror mark, as a pure state machine (no threads, no clocks but
// the `now_ms` it is given): may the node acknowledge a stable write its NVRAM mirror does not
// hold? Only once the authority records that the mirror is stale (Placement::stale_mirrors),
// so that the partner will not take the node's volumes over from that copy (cluster_member.h).
//
// Invariants:
//   - unmirrored() admits a write only in state Stale, which is entered only when a Record
//     request was answered "written", and left before a Clear request is sent: every admitted
//     unmirrored write is covered by a mark that was stored before it was acknowledged and is
//     not cleared until the mirror holds it.
//   - A Clear is sent only when the mirror holds every record up to or past the highest
//     position admitted unmirrored (and, for a node that just started, past the end of the log
//     it found: an earlier run may have left unmirrored acknowledged records and a mark).
//   - A node that just started may hold its Clear back until it settled() (it opened its own
//     volumes again, cluster_member.h): the mark keeps the partner away from them meanwhile,
//     while it has not heard from this run yet. Holding a Clear back never admits anything.
//   - A failed Record (authority unreachable) is never taken as written: the writes waiting on
//     it are refused (the journal answers JUKEBOX), and so is every unmirrored write for
//     `retry_ms` after, so a lost authority costs one bounded attempt per interval, not a hang.
//   - Unknown (after a start, a failed Record or a failed Clear): a mark may or may not stand.
//     It behaves as "not recorded" for admitting and as "marked" for clearing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nasd::membership {

class StaleMirrorMark {
 public:
  enum class State { Unknown, Clean, Recording, Stale, Clearing };
  enum class Verdict { Admit, Wait, Refuse };
  struct Action {
    enum class Kind { Record, Clear };
    Kind kind;
    uint64_t request = 0;
    uint64_t since = 0;  // Record: the first position the mirror may lack
  };

  // `log_end`: the end of the log when the journal was opened (records before it may be an
  // earlier run's unmirrored acknowledgements).
  // `hold_clear_until_settled`: send no Clear before settled() (see the invariants).
  StaleMirrorMark(uint64_t log_end, int64_t retry_ms, bool hold_clear_until_settled = false);

  // The journal would acknowledge records up to `end` that its mirror does not hold. Wait: ask
  // again after the next answer (or give up at the caller's deadline: refuse).
  Verdict unmirrored(int64_t now_ms, uint64_t end);
  // The mirror holds every record before `end`.
  void mirror_holds(uint64_t end);
  // The node opened its own volumes again after its start: a Clear held back may go now.
  void settled();
  void record_answered(uint64_t request, bool written);
  void clear_answered(uint64_t request, bool cleared);
  // The node read the placement and found no mark of its own, from a read that began after
  // every Record answered so far: a mark the admin cleared must be written again before the
  // next unmirrored acknowledgement.
  void mark_absent();

  std::vector<Action> take_actions();
  State state() const { return state_; }
  uint64_t admitted_end() const { return admitted_end_; }
  static const char* state_name(State s);

 private:
  State state_ = State::Unknown;
  uint64_t admitted_end_ = 0;   // every unmirrored admission is below this
  uint64_t in_flight_ = 0;      // the Record or Clear request waiting for its answer
  uint64_t next_request_ = 1;
  uint64_t since_ = 0;          // first unmirrored position of the current mark
  int64_t refuse_until_ = 0;
  uint64_t mirror_end_ = 0;     // the mirror holds every record before this (last told)
  bool clear_held_;             // no Clear before settled()
  int64_t now_ = 0;
  const int64_t retry_ms_;
  std::vector<Action> actions_;
};

}  // namespace nasd::membership
