#include "nvram/journal_volume.h"

#include <algorithm>
#include <array>
#include <atomic>

#include "fs/call/codec.h"
#include "nvram/call_record.h"
#include "util/log.h"

namespace nasd::nvram {

JournalVolume::JournalVolume(std::shared_ptr<Journal> journal,
                             std::shared_ptr<fs::JournalTarget> target,
                             std::function<bool()> acknowledge_gate)
    : fs::WrappedVolume(target),
      journal_(std::move(journal)),
      target_(std::move(target)),
      id_(target_->id()),
      acknowledge_gate_(std::move(acknowledge_gate)) {
  journal_->attach(id_, target_);
}

JournalVolume::~JournalVolume() { journal_->detach(id_, target_.get()); }

void JournalVolume::remember_reply(std::vector<uint8_t> payload) {
  std::lock_guard lk(window_->mu);
  window_->entries.push_back(std::move(payload));
  while (window_->entries.size() > kReplyWindow) window_->entries.pop_front();
  ++window_->changes;
}

std::vector<std::vector<uint8_t>> JournalVolume::reply_window() const {
  std::lock_guard lk(window_->mu);
  return {window_->entries.begin(), window_->entries.end()};
}

void JournalVolume::ReplyWindow::save_if_changed() {
  std::lock_guard save_lock(save_mu);
  std::vector<std::vector<uint8_t>> copy;
  uint64_t at;
  {
    std::lock_guard lk(mu);
    if (changes == saved || !saver) return;
    copy.assign(entries.begin(), entries.end());
    at = changes;
  }
  saver(copy);
  saved = at;
}

void JournalVolume::save_window_before_trims(WindowSaver saver) {
  window_->saver = std::move(saver);
  journal_->set_before_trim(id_, [window = window_] { window->save_if_changed(); });
}

ReplayReport JournalVolume::recover(fs::RecoveredCallSink* sink,
                                    const std::vector<std::vector<uint8_t>>& carried_replies) {
  std::lock_guard lk(mutation_mu_);
  const std::vector<RecordView> records = journal_->recovered(id_);
  // The replies first: a record with an identity was executed and answered whether or not the
  // fs already holds it. Undecodable payloads are the replay's to report.
  const auto hand_on = [&](std::span<const uint8_t> payload) {
    CallRecord call;
    if (!decode_call_record(payload, &call, nullptr) || !call.request.identity) return;
    if (call.request.volume_id != id_) return;
    if (sink) sink->recovered(*call.request.identity, call.request, call.reply);
    answered_.remember(AnsweredCalls::key_of(*call.request.identity, call.request.op()),
                       call.reply);
    remember_reply({payload.begin(), payload.end()});
  };
  for (const auto& payload : carried_replies) hand_on(payload);
  const uint64_t durable = target_->durable_seq();
  uint64_t from_before_takeover = 0;
  for (const RecordView& rec : records) {
    if (rec.type != RecordType::Call) continue;
    if (before_a_takeover(rec.seq, durable)) {
      ++from_before_takeover;
      continue;
    }
    hand_on(rec.payload);
  }
  if (from_before_takeover > 0)
    util::log("nvram").info("volume " + std::to_string(id_) + ": " +
                            std::to_string(from_before_takeover) +
                            " NVRAM records from before a takeover give no reply (the new owner's "
                            "carried replies stand for the calls it had)");
  ReplayReport rep = replay_records(fs::JournalPass{}, *target_, id_, records);
  next_seq_ = std::max({next_seq_, target_->durable_seq(), journal_->max_recovered_seq(id_)}) + 1;
  if (rep.applied > 0 || rep.failed > 0) {
    uint64_t durable = 0;
    fs::Status st = target_->flush(&durable);
    if (st != fs::Status::Ok)
      util::log("nvram").error("volume " + std::to_string(id_) + ": flush after replay failed: " +
               fs::status_name(st) + " (records stay in NVRAM)");
    rep.durable_seq_after = target_->durable_seq();
    util::log("nvram").info("volume " + std::to_string(id_) + ": replayed " + std::to_string(rep.applied) +
             " records (" + std::to_string(rep.skipped) + " already durable, " +
             std::to_string(rep.failed) + " failed), durable seq " +
             std::to_string(rep.durable_seq_before) + " -> " +
             std::to_string(rep.durable_seq_after));
  }
  journal_->release_recovered(id_, rep.applied, rep.failed);
  window_->save_if_changed();  // the trim below drops the records the window was seeded from
  journal_->trim();
  accepting_ = true;
  return rep;
}

static_assert(kMaxRegionSize / sizeof(RecordHeader) < JournalVolume::kOwnerGap / 2,
              "a region could hold more records than a takeover skips, or than "
              "before_a_takeover() tells from the new owner's");

fs::Status JournalVolume::skip_past_previous_owner(bool durable_now) {
  {
    std::lock_guard lk(mutation_mu_);
    next_seq_ += kOwnerGap;
  }
  if (!durable_now) return fs::Status::Ok;
  fs::OpContext root;  // uid 0: an empty SETATTR of the root is always allowed
  fs::call::SetattrArgs nothing;
  nothing.id = target_->root();
  fs::call::VolumeRequest req;  // the node's own call, not a client's: no identity
  req.volume_id = id_;
  req.ctx = root;
  req.args = nothing;
  const fs::call::VolumeReply reply = run_journalled(req, /*wait=*/true);
  if (reply.status != fs::Status::Ok) return reply.status;
  uint64_t durable = 0;
  if (fs::Status st = target_->flush(&durable); st != fs::Status::Ok) return st;
  std::lock_guard lk(mutation_mu_);
  return durable + 1 >= next_seq_ ? fs::Status::Ok : fs::Status::Io;
}

void JournalVolume::seal() {
  // A mutation holds the lock from running on the fs until its record is appended.
  std::lock_guard lk(mutation_mu_);
  accepting_ = false;
}

namespace {

// The call as the fs runs it is what the record keeps, except SETATTR's ctime guard: it was
// checked when the client's call ran, and the replayed object's ctime differs.
fs::call::VolumeRequest recorded_form(const fs::call::VolumeRequest& req) {
  fs::call::VolumeRequest recorded = req;
  if (auto* a = std::get_if<fs::call::SetattrArgs>(&recorded.args)) a->guard_ctime.reset();
  return recorded;
}

fs::call::VolumeReply refused(fs::call::VolumeOp op, fs::Status st) {
  fs::call::VolumeReply r;
  r.op = op;
  r.status = st;
  return r;
}

// A stable call's place among its resumable call's waits (util/resumable_call.h). Every run
// numbers the wait in the same order; a run after a park finds the commit's answer stored.
struct CommitWait {
  util::ResumableCall* call = nullptr;
  std::optional<size_t> wait;
  const util::ResumableCall::Answer* answer = nullptr;

  static CommitWait current() {
    CommitWait w;
    w.call = util::ResumableCall::current();
    if (w.call == nullptr) return w;
    w.wait = w.call->next_wait();
    if (w.wait) w.answer = w.call->answer(*w.wait);
    return w;
  }
  bool may_park() const { return call != nullptr && wait && call->may_park(); }
};

// The reply an earlier run of the call stored when its commit was in (see answer_when_committed).
fs::call::VolumeReply stored_reply(const util::ResumableCall::Answer& answer,
                                   fs::call::VolumeOp op) {
  fs::call::VolumeReply reply;
  if (answer.error != 0 || !fs::call::decode_reply(answer.bytes, op, &reply))
    return refused(op, fs::Status::ServerFault);  // our own encoding: cannot happen
  return reply;
}

}  // namespace

fs::call::VolumeRequest JournalVolume::own(const fs::call::VolumeRequest& req) const {
  // Which client call this is (set by the NFS program, or by the interconnect for a forwarded
  // call) travels in the request: recorded so the reply cache can be rebuilt from the journal.
  fs::call::VolumeRequest ours = req;
  ours.volume_id = id_;
  return ours;
}

fs::call::VolumeReply JournalVolume::journalled(const fs::call::VolumeRequest& req, bool wait) {
  const fs::call::VolumeOp op = req.op();
  // WRITE is idempotent and carries no identity from NFS; only named calls have copies to tie.
  if (!req.identity || op == fs::call::VolumeOp::Write) return run_journalled(req, wait);
  AnsweredCalls::Turn turn =
      answered_.claim(AnsweredCalls::key_of(*req.identity, op), kCopyWait);
  if (turn.answer) return std::move(*turn.answer);  // a copy of a call already answered
  if (!turn.claim) return refused(op, fs::Status::Jukebox);  // another copy still running
  fs::call::VolumeReply reply = run_journalled(req, wait);
  turn.claim.answered(reply);  // published when the claim ends, after the commit wait
  return reply;
}

fs::call::VolumeReply JournalVolume::run_journalled(const fs::call::VolumeRequest& req,
                                                    bool wait) {
  const fs::call::VolumeOp op = req.op();
  if (!journal_->accepts_mutations(id_)) return refused(op, fs::Status::Jukebox);
  thread_local CallRecordPieces pieces;
  pieces.set_request(recorded_form(req));
  // The reply part is bounded by a few attribute sets; refuse before touching the fs: an
  // operation that cannot be journalled must not happen.
  constexpr size_t kReplyBound = 1024;
  if (pieces.size() + kReplyBound > journal_->max_payload()) return refused(op, fs::Status::Io);

  fs::call::VolumeReply reply;
  uint64_t ticket = 0;
  std::vector<uint8_t> window_entry;  // the call's payload, for the window once acknowledged
  {
    // A call that must answer by a deadline (a forwarded one: fs/call_deadline.h) bounds the
    // two waits before it runs -- for the volume (another call may hold it while it waits for
    // space) and for journal space -- and is refused JUKEBOX with nothing changed when either
    // would outlast it. Any other call waits as before (back-pressure, then write-through).
    const std::optional<std::chrono::steady_clock::time_point>& deadline = req.deadline;
    std::unique_lock lk(mutation_mu_, std::defer_lock);
    if (!deadline)
      lk.lock();
    else if (!lk.try_lock_until(*deadline))
      return refused(op, fs::Status::Jukebox);
    if (!accepting_) return refused(op, fs::Status::Jukebox);
    if (deadline && !journal_->wait_for_room(id_, pieces.size() + kReplyBound, *deadline))
      return refused(op, fs::Status::Jukebox);
    const uint64_t seq = next_seq_++;
    fs::JournalTag tag;
    tag.seq = seq;
    reply = target_->apply_journalled(fs::JournalPass{}, tag, req);
    if (reply.status != fs::Status::Ok) return reply;
    pieces.set_reply(reply);
    const std::array<std::span<const uint8_t>, 3> parts{
        std::span<const uint8_t>(pieces.prefix.data()), pieces.data,
        std::span<const uint8_t>(pieces.suffix.data())};
    fs::Status st = journal_->append(id_, seq, RecordType::Call, parts, &ticket);
    if (st != fs::Status::Ok) {
      reply.status = acknowledged(write_through(seq));
      return reply;
    }
    last_ticket_.store(ticket, std::memory_order_release);
    // WRITE is idempotent (no identity from NFS); never copy its data into the window.
    if (req.identity && op != fs::call::VolumeOp::Write && wait) {
      window_entry.assign(pieces.prefix.data().begin(), pieces.prefix.data().end());
      window_entry.insert(window_entry.end(), pieces.suffix.data().begin(),
                          pieces.suffix.data().end());
    }
  }
  if (wait) reply.status = acknowledged(journal_->wait_committed(ticket));
  // Only an acknowledged call joins the window: the window is saved beside the volume for the
  // next opener, and one refused here (its commit or the mirror failed, or the lease lapsed)
  // may be in no copy the next owner replays. Its record, if this node replays it, brings its
  // reply back together with its effect.
  if (!window_entry.empty() && reply.status == fs::Status::Ok)
    remember_reply(std::move(window_entry));
  return reply;
}

fs::Status JournalVolume::acknowledged(fs::Status committed) const {
  if (committed == fs::Status::Ok && acknowledge_gate_ && !acknowledge_gate_())
    return fs::Status::Jukebox;
  return committed;
}

fs::Status JournalVolume::answer_when_committed(uint64_t ticket, fs::call::VolumeReply* reply,
                                                util::ResumableCall* call,
                                                std::optional<size_t> wait) {
  if (std::optional<fs::Status> done = journal_->try_committed(ticket)) {
    reply->status = acknowledged(*done);
    return reply->status;
  }
  if (call == nullptr || !wait || !call->may_park()) {
    // Commits are made in memory here: at most another thread's store of the marker to wait for.
    reply->status = acknowledged(journal_->wait_committed(ticket));
    return reply->status;
  }
  // The reply leaves only from the run after this park, built from the status given here,
  // which the journal gives once the record is committed (and mirrored): log before reply.
  util::ResumableCall::Deliver deliver = call->park(*wait);
  // The stored answer is the call's final one, whoever reads it: the run after the park may
  // find the volume moved and read it through the forwarding proxy, which takes it as the
  // owner's reply. So a WRITE's says FILE_SYNC, as this volume answers it once committed.
  if (auto* w = std::get_if<fs::call::WriteResult>(&reply->result))
    w->committed = fs::Stability::FileSync;
  journal_->when_committed(
      ticket, [deliver = std::move(deliver), answer = std::move(*reply),
               gate = acknowledge_gate_](fs::Status committed) mutable {
        answer.status = committed;
        if (committed == fs::Status::Ok && gate && !gate()) answer.status = fs::Status::Jukebox;
        deliver({0, fs::call::encode_reply(answer)});
      });
  *reply = refused(reply->op, fs::Status::Jukebox);
  return fs::Status::Jukebox;  // a placeholder: the call runs again once the answer is in
}

fs::Status JournalVolume::write_through(uint64_t seq) {
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true))
    util::log("nvram").warn("volume " + std::to_string(id_) +
             ": NVRAM stayed full, writing operations through to the file system");
  uint64_t durable = 0;
  fs::Status st = target_->flush(&durable);
  if (st != fs::Status::Ok) return fs::Status::Io;
  return durable >= seq ? fs::Status::Ok : fs::Status::Io;
}

// --- the calls: mutations journalled, the rest to the fs ----------------------------------------

namespace {

// A WRITE's reply with the stability it achieved (when it succeeded).
fs::call::VolumeReply with_committed(fs::call::VolumeReply reply, fs::Stability committed) {
  if (reply.status == fs::Status::Ok)
    if (auto* r = std::get_if<fs::call::WriteResult>(&reply.result)) r->committed = committed;
  return reply;
}

// The request of a WRITE as it is journalled: NVRAM provides the stability, so the fs never has
// to sync for the client.
fs::call::VolumeRequest as_unstable(fs::call::VolumeRequest req) {
  std::get<fs::call::WriteArgs>(req.args).stable = fs::Stability::Unstable;
  return req;
}

}  // namespace

fs::call::VolumeReply JournalVolume::call(const fs::call::VolumeRequest& req) {
  const fs::call::VolumeOp op = req.op();
  if (op == fs::call::VolumeOp::Write) return write_call(req);
  if (op == fs::call::VolumeOp::Commit) return commit_call(req);
  if (fs::call::is_mutation(op)) return journalled(own(req), true);
  return fs::WrappedVolume::call(req);
}

std::optional<fs::call::VolumeReply> JournalVolume::try_call(const fs::call::VolumeRequest& req) {
  const fs::call::VolumeOp op = req.op();
  if (op == fs::call::VolumeOp::Write) return try_write_call(req);
  if (op == fs::call::VolumeOp::Commit) return try_commit_call(req);
  return fs::WrappedVolume::try_call(req);
}

fs::call::VolumeReply JournalVolume::write_call(const fs::call::VolumeRequest& req) {
  const bool stable_write =
      std::get<fs::call::WriteArgs>(req.args).stable != fs::Stability::Unstable;
  if (stable_write) {
    // A run after the loop's attempt parked on the commit (its resumption went to the pool):
    // the WRITE is done and committed; answer it, never apply it twice.
    const CommitWait w = CommitWait::current();
    if (w.answer)
      return with_committed(stored_reply(*w.answer, fs::call::VolumeOp::Write),
                            fs::Stability::FileSync);
  }
  return with_committed(journalled(as_unstable(own(req)), stable_write),
                        stable_write ? fs::Stability::FileSync : fs::Stability::Unstable);
}

std::optional<fs::call::VolumeReply> JournalVolume::try_write_call(
    const fs::call::VolumeRequest& handed) {
  constexpr fs::call::VolumeOp op = fs::call::VolumeOp::Write;
  const bool stable_write =
      std::get<fs::call::WriteArgs>(handed.args).stable != fs::Stability::Unstable;
  CommitWait w;
  if (stable_write) {
    w = CommitWait::current();
    if (w.answer)  // this call ran before and parked on its commit, which is now in
      return with_committed(stored_reply(*w.answer, op), fs::Stability::FileSync);
    // Its commit must not hold the loop: park, or commit in memory (checked before anything
    // is applied, since a WRITE taken here is answered from here).
    if (!w.may_park() && !journal_->commits_in_memory()) return std::nullopt;
  }
  if (!journal_->accepts_mutations(id_)) return refused(op, fs::Status::Jukebox);
  const fs::call::VolumeRequest req = as_unstable(own(handed));
  thread_local CallRecordPieces pieces;
  pieces.set_request(recorded_form(req));
  constexpr size_t kReplyBound = 1024;  // as in journalled()
  if (pieces.size() + kReplyBound > journal_->max_payload()) return refused(op, fs::Status::Io);

  std::optional<fs::call::VolumeReply> reply;
  uint64_t ticket = 0;  // stays 0 when written through (durable without a record)
  {
    std::unique_lock lk(mutation_mu_, std::try_to_lock);
    if (!lk.owns_lock()) return std::nullopt;
    if (!accepting_) return refused(op, fs::Status::Jukebox);
    if (!journal_->has_room_now(id_, pieces.size() + kReplyBound)) return std::nullopt;
    fs::JournalTag tag;
    tag.seq = next_seq_;
    reply = target_->try_apply_journalled_write(fs::JournalPass{}, tag, req);
    if (!reply) return std::nullopt;  // nothing applied; the sequence stays unused
    const uint64_t seq = next_seq_++;
    if (reply->status == fs::Status::Ok) {
      pieces.set_reply(*reply);
      const std::array<std::span<const uint8_t>, 3> parts{
          std::span<const uint8_t>(pieces.prefix.data()), pieces.data,
          std::span<const uint8_t>(pieces.suffix.data())};
      // Room was checked above; only other volumes filling the margin meanwhile could make
      // this wait, and then it takes the same way out as journalled().
      if (journal_->append(id_, seq, RecordType::Call, parts, &ticket) != fs::Status::Ok)
        reply->status = acknowledged(write_through(seq));
      else
        last_ticket_.store(ticket, std::memory_order_release);
    }
  }
  if (stable_write && reply->status == fs::Status::Ok && ticket != 0) {
    answer_when_committed(ticket, &*reply, w.call, w.wait);
    if (w.call != nullptr && w.call->parked()) return refused(op, fs::Status::Jukebox);
  }
  return with_committed(std::move(*reply),
                        stable_write ? fs::Stability::FileSync : fs::Stability::Unstable);
}

fs::call::VolumeReply JournalVolume::commit_call(const fs::call::VolumeRequest& req) {
  constexpr fs::call::VolumeOp op = fs::call::VolumeOp::Commit;
  // A run after the loop's attempt parked on the commit: answer what it stored.
  if (const CommitWait w = CommitWait::current(); w.answer) return stored_reply(*w.answer, op);
  fs::Attr attr;
  fs::Status st = target_->getattr(req.ctx, std::get<fs::call::CommitArgs>(req.args).id, &attr);
  if (st != fs::Status::Ok) return refused(op, st);
  const uint64_t ticket = last_ticket_.load(std::memory_order_acquire);
  st = acknowledged(journal_->wait_committed(ticket));
  if (st != fs::Status::Ok) return refused(op, st);
  // COMMIT changes no attribute, so the sample taken before waiting is both pre- and post-op.
  fs::call::VolumeReply reply;
  reply.op = op;
  reply.status = fs::Status::Ok;
  reply.result = fs::call::WccResult{fs::Wcc{fs::PreAttr{attr.size, attr.mtime, attr.ctime}, attr}};
  return reply;
}

std::optional<fs::call::VolumeReply> JournalVolume::try_commit_call(
    const fs::call::VolumeRequest& req) {
  constexpr fs::call::VolumeOp op = fs::call::VolumeOp::Commit;
  const CommitWait w = CommitWait::current();
  if (w.answer) return stored_reply(*w.answer, op);
  fs::Attr attr;
  std::optional<fs::Status> got =
      target_->try_getattr(req.ctx, std::get<fs::call::CommitArgs>(req.args).id, &attr);
  if (!got) return std::nullopt;
  if (*got != fs::Status::Ok) return refused(op, *got);
  const uint64_t ticket = last_ticket_.load(std::memory_order_acquire);
  // COMMIT changes no attribute, so the sample taken before waiting is both pre- and post-op.
  fs::call::VolumeReply reply;
  reply.op = op;
  reply.status = fs::Status::Ok;
  reply.result = fs::call::WccResult{fs::Wcc{fs::PreAttr{attr.size, attr.mtime, attr.ctime}, attr}};
  if (!w.may_park()) {
    // Nothing is applied by a COMMIT, so refusing costs nothing: answer here only when the
    // commit is in, or made in place.
    std::optional<fs::Status> done = journal_->try_committed(ticket);
    if (!done) return std::nullopt;
    const fs::Status st = acknowledged(*done);
    return st == fs::Status::Ok ? reply : refused(op, st);
  }
  const fs::Status st = answer_when_committed(ticket, &reply, w.call, w.wait);
  if (w.call->parked()) return refused(op, fs::Status::Jukebox);  // a placeholder
  return st == fs::Status::Ok ? reply : refused(op, st);
}

}  // namespace nasd::nvram
