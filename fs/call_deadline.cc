#include "fs/call_deadline.h"

#include <algorithm>

namespace nasd::fs {
namespace {
thread_local std::optional<CallDeadlineScope::Clock::time_point> current_deadline;
}

CallDeadlineScope::CallDeadlineScope(Clock::time_point deadline) : previous_(current_deadline) {
  current_deadline = previous_ ? std::min(*previous_, deadline) : deadline;
}

CallDeadlineScope::~CallDeadlineScope() { current_deadline = previous_; }

std::optional<CallDeadlineScope::Clock::time_point> CallDeadlineScope::current() {
  return current_deadline;
}

}  // namespace nasd::fs
