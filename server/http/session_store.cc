#include "server/http/session_store.h"

#include "server/http/password.h"

namespace nasd::http {

void SessionStore::expire(int64_t now_ms) {
  for (auto it = sessions_.begin(); it != sessions_.end();)
    it = now_ms - it->second.last_ms > idle_ms_ ? sessions_.erase(it) : std::next(it);
}

SessionStore::Created SessionStore::create(int64_t now_ms) {
  Created c{random_token_hex(32), random_token_hex(32)};
  std::lock_guard lock(mu_);
  expire(now_ms);
  while (sessions_.size() >= kMaxSessions) {
    auto oldest = sessions_.begin();
    for (auto it = sessions_.begin(); it != sessions_.end(); ++it)
      if (it->second.last_ms < oldest->second.last_ms) oldest = it;
    sessions_.erase(oldest);
  }
  sessions_[c.id] = Session{c.csrf, now_ms};
  return c;
}

std::optional<std::string> SessionStore::touch(const std::string& id, int64_t now_ms) {
  std::lock_guard lock(mu_);
  expire(now_ms);
  // Look up by comparing every id in constant time: a timing difference must not tell an
  // attacker how much of a guessed id was right.
  Session* found = nullptr;
  for (auto& [sid, s] : sessions_)
    if (constant_time_equal(sid, id)) found = &s;
  if (!found) return std::nullopt;
  found->last_ms = now_ms;
  return found->csrf;
}

void SessionStore::remove(const std::string& id) {
  std::lock_guard lock(mu_);
  for (auto it = sessions_.begin(); it != sessions_.end(); ++it)
    if (constant_time_equal(it->first, id)) {
      sessions_.erase(it);
      return;
    }
}

size_t SessionStore::size() const {
  std::lock_guard lock(mu_);
  return sessions_.size();
}

}  // namespace nasd::http
