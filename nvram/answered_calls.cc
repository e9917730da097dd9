#include "nvram/answered_calls.h"

namespace nasd::nvram {

AnsweredCalls::Key AnsweredCalls::key_of(const fs::CallIdentity& identity,
                                         fs::call::VolumeOp op) {
  Key k;
  k.address = identity.address;
  k.family = identity.family;
  k.port = identity.port;
  k.xid = identity.xid;
  k.prog = identity.prog;
  k.vers = identity.vers;
  k.proc = identity.proc;
  k.args_hash = identity.args_hash;
  k.op = op;
  return k;
}

AnsweredCalls::Claim& AnsweredCalls::Claim::operator=(Claim&& o) noexcept {
  if (this != &o) {
    end();
    calls_ = std::exchange(o.calls_, nullptr);
    key_ = o.key_;
    reply_ = std::move(o.reply_);
  }
  return *this;
}

void AnsweredCalls::Claim::end() {
  AnsweredCalls* calls = std::exchange(calls_, nullptr);
  if (calls == nullptr) return;
  std::lock_guard lock(calls->mu_);
  calls->running_.erase(key_);
  if (reply_ && reply_->status != fs::Status::Jukebox) calls->remember_locked(key_, *reply_);
  calls->ended_.notify_all();
}

AnsweredCalls::Turn AnsweredCalls::claim(const Key& key, std::chrono::milliseconds wait) {
  Turn turn;
  std::unique_lock lock(mu_);
  if (!ended_.wait_for(lock, wait, [&] { return running_.count(key) == 0; })) return turn;
  if (auto it = answers_.find(key); it != answers_.end()) {
    turn.answer = it->second.second;
    return turn;
  }
  running_.insert(key);
  turn.claim = Claim(this, key);
  return turn;
}

void AnsweredCalls::remember(const Key& key, const fs::call::VolumeReply& reply) {
  std::lock_guard lock(mu_);
  remember_locked(key, reply);
}

void AnsweredCalls::remember_locked(const Key& key, const fs::call::VolumeReply& reply) {
  const uint64_t serial = ++serial_;
  answers_[key] = {serial, reply};
  order_.push_back({key, serial});
  while (order_.size() > capacity_) {
    const auto& [old, at] = order_.front();
    // Only the entry this position put there: a later answer to the same key stays.
    if (auto it = answers_.find(old); it != answers_.end() && it->second.first == at)
      answers_.erase(it);
    order_.pop_front();
  }
}

size_t AnsweredCalls::size() const {
  std::lock_guard lock(mu_);
  return answers_.size();
}

}  // namespace nasd::nvram
