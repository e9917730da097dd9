#include "util/resumable_call.h"

#include <utility>

namespace nasd::util {
namespace {

thread_local ResumableCall* t_current = nullptr;

}  // namespace

ResumableCall* ResumableCall::current() { return t_current; }

ResumableCall::Run::Run(std::shared_ptr<ResumableCall> call, bool may_park)
    : previous_(t_current) {
  {
    std::lock_guard lock(call->mu_);
    call->self_ = call;
    call->next_wait_ = 0;
    call->parked_on_.reset();
    call->answered_ = false;
    call->may_park_ = may_park;
    call->running_ = true;
    ++call->runs_;
  }
  t_current = call.get();
}

ResumableCall::Run::~Run() { t_current = previous_; }

std::optional<size_t> ResumableCall::next_wait() {
  std::lock_guard lock(mu_);
  if (next_wait_ >= kMaxWaits) return std::nullopt;
  return next_wait_++;
}

const ResumableCall::Answer* ResumableCall::answer(size_t k) const {
  std::lock_guard lock(mu_);
  if (k >= kMaxWaits || !answers_[k]) return nullptr;
  return &*answers_[k];  // never reassigned: each wait is parked on, and answered, once
}

bool ResumableCall::may_park() const {
  std::lock_guard lock(mu_);
  return may_park_ && !parked_on_;
}

ResumableCall::Deliver ResumableCall::park(size_t k) {
  std::shared_ptr<ResumableCall> self;
  {
    std::lock_guard lock(mu_);
    parked_on_ = k;
    self = self_.lock();
  }
  return [self, k](Answer answer) { self->deliver(k, std::move(answer)); };
}

void ResumableCall::unpark() {
  std::lock_guard lock(mu_);
  parked_on_.reset();
}

bool ResumableCall::parked() const {
  std::lock_guard lock(mu_);
  return parked_on_.has_value();
}

void ResumableCall::deliver(size_t k, Answer answer) {
  std::function<void()> resume;
  {
    std::lock_guard lock(mu_);
    if (k >= kMaxWaits) return;  // next_wait() never numbers one
    answers_[k] = std::move(answer);
    if (parked_on_ != k) return;
    answered_ = true;
    if (running_ || !resume_) return;  // end_run() resumes
    resume = std::move(resume_);
    resume_ = nullptr;
  }
  resume();
}

bool ResumableCall::end_run(std::function<void()> resume) {
  {
    std::lock_guard lock(mu_);
    running_ = false;
    if (!parked_on_) return false;
    if (!answered_) {
      resume_ = std::move(resume);
      return true;
    }
  }
  resume();  // the answer beat the end of the run
  return true;
}

void ResumableCall::recycle() {
  std::lock_guard lock(mu_);
  for (auto& a : answers_) a.reset();
  self_.reset();
  next_wait_ = 0;
  parked_on_.reset();
  may_park_ = true;
  running_ = false;
  answered_ = false;
  runs_ = 0;
  resume_ = nullptr;
}

size_t ResumableCall::runs() const {
  std::lock_guard lock(mu_);
  return runs_;
}

}  // namespace nasd::util
