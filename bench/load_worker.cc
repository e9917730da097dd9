#include "bench/load_worker.h"

#include <poll.h>

#include <algorithm>

#include "bench/clock.h"
#include "bench/fileset_builder.h"
#include "bench/fileset_cleaner.h"
#include "bench/pacing.h"
#include "bench/rpc_batch.h"

namespace nasd::bench {

namespace {
constexpr int64_t kLateNs = 1000000;          // sent more than 1 ms after its due time
constexpr int64_t kMaxWaitNs = 20000000;      // never sleep longer than 20 ms between checks
}  // namespace

LoadWorker::LoadWorker(std::vector<Target> targets, const OpMix& mix, const WorkerOptions& options)
    : targets_(std::move(targets)), sampler_(mix), options_(options), rng_(options.seed * 7919 + options.id) {}

LoadWorker::~LoadWorker() {
  // Destroying a context answers its outstanding calls with a cancel, which lands in
  // on_reply: do it while everything that callback touches is still alive.
  sessions_.clear();
}

bool LoadWorker::connect(std::string* error) {
  for (const Target& t : targets_) {
    auto s = NfsSession::open(t, options_.timeout_ms, error);
    if (!s) return false;
    sessions_.push_back(std::move(s));
  }
  return true;
}

bool LoadWorker::build_fileset(const FilesetShape& shape, const std::string& workdir, std::string* error) {
  filesets_.resize(sessions_.size());
  for (size_t t = 0; t < sessions_.size(); ++t) {
    std::string owner = "p" + std::to_string(options_.id) + "t" + std::to_string(t);
    if (!nasd::bench::build_fileset(*sessions_[t], shape, workdir, owner, &filesets_[t], error)) {
      *error = targets_[t].text + ": " + *error;
      return false;
    }
  }
  for (size_t t = 0; t < sessions_.size(); ++t) {
    executors_.push_back(std::make_unique<OpExecutor>(*sessions_[t], filesets_[t], *this, options_.executor, options_.id));
  }
  return true;
}

bool LoadWorker::remove_fileset(std::string* error) {
  for (size_t t = 0; t < filesets_.size(); ++t) {
    if (!nasd::bench::remove_fileset(*sessions_[t], filesets_[t], error)) {
      *error = targets_[t].text + ": " + *error;
      return false;
    }
  }
  return true;
}

bool LoadWorker::remove_workdir(std::string* error) {
  for (size_t t = 0; t < filesets_.size(); ++t) {
    if (!nasd::bench::remove_workdir(*sessions_[t], filesets_[t], error)) {
      *error = targets_[t].text + ": " + *error;
      return false;
    }
  }
  return true;
}

uint64_t LoadWorker::fileset_bytes() const {
  uint64_t n = 0;
  for (const Fileset& f : filesets_) n += f.bytes;
  return n;
}

size_t LoadWorker::in_flight() const {
  size_t n = 0;
  for (const auto& e : executors_) n += e->in_flight();
  return n;
}

void LoadWorker::on_reply(OpType op, int status, int64_t sent_ns, int64_t received_ns, uint64_t bytes) {
  if (status == 0) {
    live_.ok.fetch_add(1, std::memory_order_relaxed);
    live_.latency_ns.fetch_add(static_cast<uint64_t>(received_ns - sent_ns), std::memory_order_relaxed);
  } else {
    live_.errors.fetch_add(1, std::memory_order_relaxed);
  }
  if (!timeline_) return;
  // A reply belongs to the step whose measured interval it arrived in; warmups count nowhere.
  if (auto step = timeline_->measured_step_at(received_ns); step && *step < stats_.size()) {
    stats_[*step].record_reply(op, received_ns - sent_ns, status, bytes);
  }
}

void LoadWorker::service(int64_t wait_ns) {
  std::vector<pollfd> fds;
  for (const auto& s : sessions_) {
    fds.push_back({rpc_get_fd(s->rpc()), static_cast<short>(rpc_which_events(s->rpc())), 0});
  }
  timespec ts{static_cast<time_t>(wait_ns / 1000000000), static_cast<long>(wait_ns % 1000000000)};
  if (ppoll(fds.data(), fds.size(), &ts, nullptr) <= 0) return;
  for (size_t i = 0; i < fds.size(); ++i) {
    if (fds[i].revents && rpc_service(sessions_[i]->rpc(), fds[i].revents) < 0 && !broken_) {
      broken_ = true;
      failure_ = "process " + std::to_string(options_.id) + ": connection to " + targets_[i].text +
                 " failed: " + rpc_error_text(sessions_[i]->rpc());
    }
  }
}

void LoadWorker::run(const Timeline& timeline, const std::vector<double>& step_rates) {
  timeline_ = &timeline;
  stats_.assign(timeline.steps(), StepStats{});
  first_issue_ns_.assign(timeline.steps(), 0);
  const double phase = static_cast<double>(options_.id) / static_cast<double>(std::max<size_t>(1, options_.workers));
  size_t rotation = options_.id;  // workers start on different targets
  std::optional<size_t> current;
  PacingSchedule schedule;
  uint64_t issued = 0;

  for (int64_t now = monotonic_ns(); now < timeline.end() && !broken_; now = monotonic_ns()) {
    std::optional<size_t> step = timeline.step_at(now);
    if (!step) {  // before the start
      service(std::min(kMaxWaitNs, timeline.step_start(0) - now));
      continue;
    }
    if (step != current) {
      current = step;
      double share = step_rates[*step] / static_cast<double>(std::max<size_t>(1, options_.workers));
      schedule = PacingSchedule(timeline.step_start(*step), share, phase);
      issued = 0;
    }
    uint64_t due = schedule.due_by(now);
    while (issued < due && in_flight() < options_.max_in_flight) {
      StepStats& st = stats_[*step];
      if (now - schedule.due(issued) > kLateNs) ++st.late_issues;
      if (first_issue_ns_[*step] == 0) first_issue_ns_[*step] = now;
      size_t t = rotation++ % executors_.size();
      if (executors_[t]->issue(sampler_.draw(rng_), rng_)) {
        ++st.issued;
      } else {
        ++refused_;
      }
      ++issued;
    }
    // Sleep until the next request is due; at the in-flight cap only a reply can make room, and
    // a reply wakes the poll anyway.
    int64_t wait = issued < due ? kMaxWaitNs
                                : std::clamp<int64_t>(schedule.due(issued) - monotonic_ns(), 0, kMaxWaitNs);
    service(wait);
  }
  // Drain: replies still count if they land inside the last measured interval, and the cancel
  // path on destruction must not find calls outstanding that we could still have waited for.
  int64_t give_up = monotonic_ns() + int64_t{options_.timeout_ms} * 1000000;
  while (in_flight() > 0 && !broken_ && monotonic_ns() < give_up) service(kMaxWaitNs);
  timeline_ = nullptr;  // the caller's timeline ends with run(); later cancels are not measured
}

}  // namespace nasd::bench
