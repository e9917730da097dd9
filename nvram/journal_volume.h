// nvram::JournalVolume: the Volume the router sees for a local volume. Reads pass straight to
// the file system; every mutation is applied to the file system (in memory there) and recorded
// in NVRAM before it is acknowledged, so the file system may write its own state lazily.
//
// Ordering, and why it is safe:
//  1. The volume's mutation lock is taken; the operation gets the next sequence number and runs
//     on the fs as a call struct (fs/call/calls.h) through fs::JournalTarget::apply_journalled
//     with that sequence as its tag. Holding the lock across "run" and "append" makes the
//     volume's log order equal its sequence order equal its execution order, so replay in seq
//     order repeats exactly the history the clients saw.
//  2. The record is appended: the encoded call and the reply the fs gave (call_record.h), which
//     includes results the fs chose, such as the allocated inode that replay forces through
//     fs::JournalTag::created. Only successful operations are logged: a failed one changed
//     nothing, and its unused seq is a harmless gap.
//  3. The lock is released, then the caller waits for the group commit of its record. A commit
//     covers a complete prefix of the log, so when an operation is acknowledged, every
//     operation it could depend on (all earlier ones of this volume) is committed as well.
//     Another client may see the effect of an operation before it is committed (the fs has it
//     in memory); it can then only be lost together with an operation that was never
//     acknowledged, which NFS allows just like a reply lost in a crash.
//  4. If the log stays full for space_wait, the fs is flushed instead (durable_seq >= seq): the
//     operation is then durable without a record, and later records still apply on top of it.
//     A call with a deadline (a forwarded one: VolumeRequest::deadline) instead waits for room
//     before it runs, only until its deadline, and is refused JUKEBOX unrun when none came.
//  5. The fs only ever becomes durable up to some seq; after a crash the journal replays the
//     records above that, each exactly once.
// UNSTABLE writes are logged like the rest but do not wait for the commit (in process mode they
// are durable once copied); COMMIT waits until the volume's latest record is committed and does
// not touch the fs, whose own sync is exactly the work NVRAM exists to defer.
//
// On the event loop (try_write, try_commit) "waits for the commit" never blocks the loop: the
// commit is either made in place when it costs no I/O (Journal::try_committed: process mode, no
// mirror), or the call parks (util/resumable_call.h) and the journal's committer thread
// delivers the status once the group commit (and the mirror's ack) covers the record; the
// dispatcher then runs the call again and this volume answers that run from the stored reply,
// without applying or journalling anything twice. Either way the reply is built only from a
// status the journal gave after the commit, so "log before reply" holds as for the pool.
//
// An acknowledge gate (optional) is asked once a record is committed and before "done" goes
// back: a cluster node passes "I still hold this volume's lease". A node that was paused while
// its record was in flight may find, when it runs again, that its partner has taken the volume
// over from a copy of the mirror that the record may have missed; answering JUKEBOX then sends
// the client to the new owner instead of acknowledging something the new owner never saw.
// Checking after the commit is what makes it sound: a record committed (mirrored) before a
// successful check reached the mirror before the lease could lapse, so before any takeover copy.
//
// A mutation that names its client call (fs/call_identity.h: the NFS program's, or a forwarding
// node's carried over the interconnect) runs at most once on this volume: copies of it -- the
// client's retransmission forwarded again by another node after the first forwarder died, a
// dead forwarder's copy arriving late, a retransmission after a restart or takeover -- get the
// first copy's reply (answered_calls.h). The answers come back from the journal and the carried
// reply window at recover(), so they move with the volume as the reply cache does.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "fs/call/calls.h"
#include "fs/call/recovered_call_sink.h"
#include "fs/journal_target.h"
#include "fs/wrapped_volume.h"
#include "nvram/answered_calls.h"
#include "nvram/journal.h"
#include "nvram/replay.h"
#include "util/resumable_call.h"

namespace nasd::nvram {

class JournalVolume : public fs::WrappedVolume {
 public:
  // Attaches `target` to the journal. Mutations answer NFS3ERR_JUKEBOX until recover() ran.
  JournalVolume(std::shared_ptr<Journal> journal, std::shared_ptr<fs::JournalTarget> target,
                std::function<bool()> acknowledge_gate = {});
  ~JournalVolume() override;

  // Replays the journal's records for this volume (seq > target durable_seq, in seq order),
  // flushes the fs, trims, and opens the volume for mutations. Call once, before serving.
  //
  // The reply cache moves with the data: every record of the volume that carries a client
  // call's identity (fs/call_identity.h) -- replayed or already durable, both were executed
  // and answered, except one from before a takeover (before_a_takeover(), below) -- goes to
  // `sink` with its reply, and so does each of `carried_replies`
  // (Call payloads from the reply window a previous owner handed over, see reply_window()).
  // All of them also seed this volume's own reply window.
  ReplayReport recover(fs::RecoveredCallSink* sink = nullptr,
                       const std::vector<std::vector<uint8_t>>& carried_replies = {});

  // The most recent kReplyWindow acknowledged calls that carry a client identity (and those
  // recover() found), as Call payloads (call_record.h), oldest first. The journal trims its
  // records once the fs has them, so a volume handed over cleanly (planned failover, failback,
  // stop) would lose its replies; the node saves this window beside the volume and the next
  // opener passes it to recover() as carried_replies.
  static constexpr size_t kReplyWindow = 1024;
  std::vector<std::vector<uint8_t>> reply_window() const;

  // Saves the reply window (the node writes it to the volume's .replies file) whenever it
  // changed, before the journal may trim the records of its calls: at the end of recover() and
  // after every flush of the journal's write-behind. Without it a crash after a routine trim
  // would forget the replies of calls no longer in NVRAM, and their retransmissions would run
  // again. Set before recover(); `saver` runs on the journal's write-behind thread.
  using WindowSaver = std::function<void(const std::vector<std::vector<uint8_t>>&)>;
  void save_window_before_trims(WindowSaver saver);

  // Refuses every further mutation (NFS3ERR_JUKEBOX) and returns once none is running on the
  // fs. Everything executed is then in the fs's memory, so a flush after seal() makes the whole
  // history durable without the records: the clean hand-over of a failback or planned failover.
  void seal();

  // After a takeover (recover() of the volume on the node that replayed a copy of the previous
  // owner's NVRAM): moves the volume's sequence kOwnerGap past everything seen. Why: the
  // previous owner may hold records beyond that copy. None was acknowledged (a record is
  // mirrored before its reply, or the stale-mirror mark refuses the takeover), but its own
  // journal still replays every record above the fs's durable seq when it opens the volume
  // again (a failback, a restart, or the reopen after a lost lease), on top of this owner's
  // history: an old WRITE over a newer one a client was told is stable. Every mutation this
  // owner acknowledges now has a larger seq than any of those; once one is in the fs (a flush,
  // the clean close of a hand-over, or the replay of this node's NVRAM after its death), the
  // old records are at or below the durable seq and skipped. Before that this owner has
  // changed nothing, and replaying the old records is as harmless as their late success.
  // A log holds fewer than 2^32 records (kMaxRegionSize), far fewer than kOwnerGap; 2^40 leaves
  // room for 2^24 takeovers in a seq. (It was 2^32 before before_a_takeover() needed the
  // margin; seqs only grow, so volumes made with the old gap keep working.) Call after
  // recover().
  //
  // `durable_now`: also journal one no-op with the new seq -- an empty SETATTR of the root,
  // which changes its ctime only -- and flush the fs. For a node whose own journal is off
  // (its mutations are written through and carry no seq), with the copy's journal.
  static constexpr uint64_t kOwnerGap = uint64_t{1} << 40;
  fs::Status skip_past_previous_owner(bool durable_now);

  // Whether a record of this node's NVRAM at `seq` dates from before a takeover of the volume,
  // given the volume's durable seq: more than half a kOwnerGap below it. recover() skips such a
  // record (it is at or below the durable seq) and also keeps its reply out of the reply cache.
  // Why: a takeover's copy of the mirror may lack it (in flight when this node stopped), so it
  // may have been refused with JUKEBOX -- or never answered -- and its effect is in no file
  // system. Handing its reply on would answer the client's retransmission "done" for a change
  // that exists nowhere. The calls the new owner did have come back with its reply window
  // (carried_replies). Why the test is sound: the new owner's first seq is kOwnerGap past every
  // record of the copy, and this node's records beyond the copy are fewer than a region holds
  // (below 2^32, far below kOwnerGap / 2), so every one of them is more than kOwnerGap / 2
  // below any seq the new owner made durable; a record of the current owners' own history that
  // far below the durable seq is billions of mutations old, and no client still waits for its
  // reply.
  static bool before_a_takeover(uint64_t seq, uint64_t durable_seq) {
    return seq + kOwnerGap / 2 < durable_seq;
  }

  const std::shared_ptr<fs::JournalTarget>& target() const { return target_; }

  // Reads, id(), root(), limits() and write_verifier() (the fs's: it changes at every start, so
  // clients resend what was only UNSTABLE) pass straight to the fs (fs::WrappedVolume). The
  // mutations are journalled (the request as it was handed in, for this volume); COMMIT waits
  // for the journal instead of syncing the fs.
  fs::call::VolumeReply call(const fs::call::VolumeRequest& req) override;
  // A WRITE on the event loop, journalled exactly like call()'s (steps 1-3 above): "would
  // block" when the mutation lock is taken, when the log lacks room with a margin
  // (Journal::has_room_now), or when the fs's try_write would block -- before any sequence is
  // used or anything applied. UNSTABLE is answered at once. A stable WRITE is taken only when
  // its commit cannot hold the loop: in a resumable call that may park, or when commits are
  // made in memory; after the append it is answered when try_committed() says so, else it
  // parks until the committer thread delivers the commit's status (see above).
  // COMMIT on the event loop: the file's attributes from the fs's try_getattr, then the
  // volume's latest record committed already or in place, else a park as above. The reads
  // pass to the fs's attempts; the other mutations have none (fs::WrappedVolume).
  std::optional<fs::call::VolumeReply> try_call(const fs::call::VolumeRequest& req) override;

 private:
  // A call that names its client call (fs/call_identity.h) runs at most once: a copy of one
  // this volume has answered gets that reply, a copy of one still running waits for it (up to
  // kCopyWait, then Jukebox), and only the first runs (run_journalled). See answered_calls.h.
  fs::call::VolumeReply journalled(const fs::call::VolumeRequest& req, bool wait);
  // Runs `req` on the fs under the mutation lock as the next sequence and journals it with its
  // reply. Waits for the commit when `wait`. The reply's status is the acknowledged one.
  fs::call::VolumeReply run_journalled(const fs::call::VolumeRequest& req, bool wait);
  // The request as this volume runs and records it: `req`, for this volume's id.
  fs::call::VolumeRequest own(const fs::call::VolumeRequest& req) const;
  // WRITE and COMMIT, blocking and attempted (see call() and try_call()).
  fs::call::VolumeReply write_call(const fs::call::VolumeRequest& req);
  std::optional<fs::call::VolumeReply> try_write_call(const fs::call::VolumeRequest& req);
  fs::call::VolumeReply commit_call(const fs::call::VolumeRequest& req);
  std::optional<fs::call::VolumeReply> try_commit_call(const fs::call::VolumeRequest& req);
  fs::Status write_through(uint64_t seq);
  // Adds a Call payload to the reply window (under the window's own lock).
  void remember_reply(std::vector<uint8_t> payload);
  // The commit's status, or NFS3ERR_JUKEBOX if the acknowledge gate closed meanwhile.
  fs::Status acknowledged(fs::Status committed) const;
  // After a stable call's record (ticket) is appended, on a thread that must not wait:
  // `reply` (status Ok) with the commit's status when try_committed() answers; else parks
  // `call` on `wait` and hands `reply` to the committer, returning the placeholder Jukebox.
  // Precondition: `call` may park, or commits are made in memory (then this may wait for
  // another thread's in-memory commit).
  fs::Status answer_when_committed(uint64_t ticket, fs::call::VolumeReply* reply,
                                   util::ResumableCall* call, std::optional<size_t> wait);

  const std::shared_ptr<Journal> journal_;
  const std::shared_ptr<fs::JournalTarget> target_;
  const uint32_t id_;  // the fs's, read once for the journal's bookkeeping
  const std::function<bool()> acknowledge_gate_;

  // Timed: a call with a deadline (VolumeRequest::deadline) waits for it only until then.
  mutable std::timed_mutex mutation_mu_;
  bool accepting_ = false;     // guarded by mutation_mu_: after recover(), until seal()
  uint64_t next_seq_ = 1;      // guarded by mutation_mu_
  // The latest record, for COMMIT: written under mutation_mu_, read without it (a WRITE's
  // reply leaves after its store, so a COMMIT that follows it sees at least its ticket).
  std::atomic<uint64_t> last_ticket_{0};
  // The reply window, shared with the journal's before-trim hook (which may outlive this).
  struct ReplyWindow {
    std::mutex mu;
    std::deque<std::vector<uint8_t>> entries;  // guarded by mu
    uint64_t changes = 0;                      // guarded by mu
    std::mutex save_mu;                        // one save at a time
    uint64_t saved = 0;                        // guarded by save_mu: `changes` last saved
    WindowSaver saver;                         // set once, before recover()
    void save_if_changed();
  };
  std::shared_ptr<ReplyWindow> window_ = std::make_shared<ReplyWindow>();
  // Every identified call's answer, seeded by recover() from the journal and the carried window.
  // Holds more than the window: it keeps failures too, and costs no disk.
  static constexpr size_t kAnsweredCalls = 4 * kReplyWindow;
  static constexpr std::chrono::milliseconds kCopyWait{1000};
  AnsweredCalls answered_{kAnsweredCalls};
};

}  // namespace nasd::nvram
