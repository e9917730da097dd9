#include "util/handshake_slots.h"

namespace nasd::util {

bool HandshakeSlots::try_take(const std::string& source) {
  std::lock_guard lock(mu_);
  if (in_use_ >= total_) return false;
  size_t& mine = by_source_[source];
  if (mine >= per_source_) return false;
  ++mine;
  ++in_use_;
  return true;
}

void HandshakeSlots::release(const std::string& source) {
  std::lock_guard lock(mu_);
  auto it = by_source_.find(source);
  if (it == by_source_.end() || it->second == 0) return;
  --in_use_;
  if (--it->second == 0) by_source_.erase(it);
}

size_t HandshakeSlots::in_use() const {
  std::lock_guard lock(mu_);
  return in_use_;
}

}  // namespace nasd::util
