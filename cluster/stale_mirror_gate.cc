#include "cluster/stale_mirror_gate.h"

#include "util/log.h"

namespace nasd::cluster {

using membership::StaleMirrorMark;

StaleMirrorGate::StaleMirrorGate(StaleMirrorGateOptions options,
                                 std::shared_ptr<membership::PlacementStore> store,
                                 membership::Placement from_config, uint64_t log_end,
                                 std::function<void(const membership::Placement&)> written)
    : options_(std::move(options)),
      store_(std::move(store)),
      from_config_(std::move(from_config)),
      written_(std::move(written)),
      mark_(log_end, options_.retry_after.count(), /*hold_clear_until_settled=*/true) {
  worker_ = std::thread([this] { run(); });
}

StaleMirrorGate::~StaleMirrorGate() { stop(); }

void StaleMirrorGate::stop() {
  {
    std::lock_guard lk(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  answered_cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

int64_t StaleMirrorGate::now_ms() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               started_)
      .count();
}

bool StaleMirrorGate::admit_unmirrored(uint64_t end) {
  std::unique_lock lk(mu_);
  const auto deadline = std::chrono::steady_clock::now() + options_.admit_within;
  for (;;) {
    if (stopping_) return false;
    const StaleMirrorMark::Verdict v = mark_.unmirrored(now_ms(), end);
    for (auto& a : mark_.take_actions()) work_.push_back(a);
    work_cv_.notify_one();
    if (v == StaleMirrorMark::Verdict::Admit) return true;
    if (v == StaleMirrorMark::Verdict::Refuse ||
        answered_cv_.wait_until(lk, deadline) == std::cv_status::timeout) {
      ++refusals_;
      return false;
    }
  }
}

void StaleMirrorGate::mirror_holds(uint64_t end) {
  std::lock_guard lk(mu_);
  mark_.mirror_holds(end);
  queue_actions_locked();
}

void StaleMirrorGate::node_settled() {
  std::lock_guard lk(mu_);
  mark_.settled();
  queue_actions_locked();
}

void StaleMirrorGate::queue_actions_locked() {
  bool any = false;
  for (auto& a : mark_.take_actions()) {
    work_.push_back(a);
    any = true;
  }
  if (any) work_cv_.notify_one();
}

void StaleMirrorGate::placement_seen(const membership::Placement& p) {
  std::lock_guard lk(mu_);
  if (mark_.state() == StaleMirrorMark::State::Stale && p.version > marked_version_ &&
      !p.mirror_stale(options_.self)) {
    util::log("cluster").warn("the stale-mirror mark of " + options_.self +
                              " was cleared by someone else: it is written again before the "
                              "next unmirrored acknowledgement");
    mark_.mark_absent();
  }
}

std::string StaleMirrorGate::describe() const {
  std::lock_guard lk(mu_);
  std::string out = std::string("mirror mark ") + StaleMirrorMark::state_name(mark_.state());
  if (mark_.state() == StaleMirrorMark::State::Stale)
    out += " (marked at the authority: " + options_.partner + " must not take over from its copy)";
  if (refusals_) out += ", " + std::to_string(refusals_) + " unmirrored commits refused";
  if (!last_error_.empty()) out += ", last error: " + last_error_;
  return out;
}

void StaleMirrorGate::run() {
  std::unique_lock lk(mu_);
  for (;;) {
    work_cv_.wait(lk, [this] { return stopping_ || !work_.empty(); });
    if (stopping_) return;
    const StaleMirrorMark::Action a = work_.front();
    work_.pop_front();
    lk.unlock();
    const bool record = a.kind == StaleMirrorMark::Action::Kind::Record;
    membership::Placement result;
    std::string why;
    bool nothing_to_clear = false;
    try {
      why = membership::update_placement(
          *store_, from_config_,
          [&](membership::Placement& p) -> std::string {
            if (record) return membership::mark_mirror_stale(p, options_.self, options_.partner, a.since);
            nothing_to_clear = !p.mirror_stale(options_.self);
            if (nothing_to_clear) return "not marked";  // nothing to write
            return membership::clear_mirror_stale(p, options_.self);
          },
          &result);
    } catch (const std::exception& e) {
      why = e.what();
    }
    if (!record && nothing_to_clear && why == "not marked") why.clear();
    if (why.empty() && written_ && !nothing_to_clear) written_(result);
    if (!why.empty())
      util::log("cluster").warn(std::string("stale-mirror mark: cannot ") +
                                (record ? "record" : "clear") + " it at the authority: " + why);
    else if (!nothing_to_clear)
      util::log("cluster").info(std::string("stale-mirror mark ") +
                                (record ? "recorded: the mirror at " + options_.partner +
                                              " lacks acknowledged writes from position " +
                                              std::to_string(a.since)
                                        : "cleared: the mirror at " + options_.partner +
                                              " holds every acknowledged write"));
    lk.lock();
    last_error_ = why;
    if (record) {
      if (why.empty()) marked_version_ = result.version;
      mark_.record_answered(a.request, why.empty());
    } else {
      mark_.clear_answered(a.request, why.empty());
    }
    for (auto& next : mark_.take_actions()) work_.push_back(next);
    answered_cv_.notify_all();
  }
}

}  // namespace nasd::cluster
