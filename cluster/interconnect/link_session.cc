#include "cluster/interconnect/link_session.h"

namespace nasd::interconnect {

LinkSession::Call& LinkSession::Call::operator=(Call&& o) noexcept {
  if (this != &o) {
    if (session_) session_->end();
    session_ = std::exchange(o.session_, nullptr);
    may_run_ = std::exchange(o.may_run_, false);
  }
  return *this;
}

LinkSession::Call::~Call() {
  if (session_) session_->end();
}

LinkSession::Call LinkSession::begin() {
  std::lock_guard lock(mu_);
  if (fenced_) return Call();
  ++running_;
  return Call(this, true);
}

void LinkSession::end() {
  std::lock_guard lock(mu_);
  if (--running_ == 0) idle_cv_.notify_all();
}

bool LinkSession::fenced() const {
  std::lock_guard lock(mu_);
  return fenced_;
}

size_t LinkSession::running() const {
  std::lock_guard lock(mu_);
  return running_;
}

void LinkSession::fence() {
  {
    std::lock_guard lock(mu_);
    fenced_ = true;
  }
  if (socket_) socket_->shutdown();
}

bool LinkSession::wait_idle(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mu_);
  return idle_cv_.wait_until(lock, deadline, [&] { return running_ == 0; });
}

std::string LinkSessions::admit(const std::shared_ptr<LinkSession>& session,
                                std::chrono::milliseconds drain) {
  const SessionId& id = session->id();
  std::vector<std::shared_ptr<LinkSession>> older;
  {
    std::lock_guard lock(mu_);
    Link& link = links_[{id.peer, id.channel}];
    if (link.incarnation == id.incarnation && id.generation <= link.generation) {
      // This connection's hello was overtaken by a newer one of the same forwarder, which
      // has given up on it: admitting it would fence the connection actually in use.
      return "stale connection (generation " + std::to_string(id.generation) +
             ", generation " + std::to_string(link.generation) + " is newer)";
    }
    for (auto& weak : link.sessions) {
      if (auto s = weak.lock()) older.push_back(std::move(s));
    }
    link.incarnation = id.incarnation;
    link.generation = id.generation;
    link.sessions.clear();
    for (auto& s : older) link.sessions.push_back(s);  // until they are drained and gone
    link.sessions.push_back(session);
    for (auto& s : older) fenced_ += s->fenced() ? 0 : 1;
  }
  for (auto& s : older) s->fence();
  const auto deadline = std::chrono::steady_clock::now() + drain;
  for (auto& s : older) {
    if (!s->wait_idle(deadline)) {
      return "calls of an earlier connection from '" + id.peer + "' still running after " +
             std::to_string(drain.count()) + " ms";
    }
  }
  return "";
}

uint64_t LinkSessions::fenced_count() const {
  std::lock_guard lock(mu_);
  return fenced_;
}

}  // namespace nasd::interconnect
