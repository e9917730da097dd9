// Logged-in sessions of the management page. A session id is 32 random bytes (hex) sent only as
// an HttpOnly, SameSite=Strict cookie; each session has its own CSRF token that every POST must
// echo in a header, compared in constant time. Sessions end after `idle_ms` without a request,
// at logout, or when more than kMaxSessions exist (the least recently used goes).
//
// Pure: no clock and no threads of its own (the caller passes `now_ms` and holds no lock: the
// store locks itself), so tests can age sessions at will.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace nasd::http {

class SessionStore {
 public:
  static constexpr size_t kMaxSessions = 64;
  explicit SessionStore(int64_t idle_ms = 30 * 60 * 1000) : idle_ms_(idle_ms) {}

  struct Created {
    std::string id, csrf;
  };
  Created create(int64_t now_ms);
  // The session's CSRF token when `id` names a live session (its idle timer restarts).
  std::optional<std::string> touch(const std::string& id, int64_t now_ms);
  void remove(const std::string& id);
  size_t size() const;

 private:
  struct Session {
    std::string csrf;
    int64_t last_ms = 0;
  };
  void expire(int64_t now_ms);  // mu_ held
  const int64_t idle_ms_;
  mutable std::mutex mu_;
  std::map<std::string, Session> sessions_;
};

}  // namespace nasd::http
