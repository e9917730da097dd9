#include "cluster/membership/stale_mirror_mark.h"

#include <algorithm>

namespace nasd::membership {

StaleMirrorMark::StaleMirrorMark(uint64_t log_end, int64_t retry_ms,
                                 bool hold_clear_until_settled)
    : admitted_end_(log_end), retry_ms_(retry_ms), clear_held_(hold_clear_until_settled) {}

const char* StaleMirrorMark::state_name(State s) {
  switch (s) {
    case State::Unknown: return "unknown";
    case State::Clean: return "clean";
    case State::Recording: return "recording";
    case State::Stale: return "stale";
    case State::Clearing: return "clearing";
  }
  return "?";
}

StaleMirrorMark::Verdict StaleMirrorMark::unmirrored(int64_t now_ms, uint64_t end) {
  now_ = std::max(now_, now_ms);
  switch (state_) {
    case State::Stale:
      admitted_end_ = std::max(admitted_end_, end);
      return Verdict::Admit;
    case State::Unknown:
    case State::Clean:
      if (now_ < refuse_until_) return Verdict::Refuse;
      state_ = State::Recording;
      in_flight_ = next_request_++;
      since_ = end;
      actions_.push_back({Action::Kind::Record, in_flight_, end});
      return Verdict::Wait;
    case State::Recording:
    case State::Clearing:  // the mark must be written again once this clear is done
      return Verdict::Wait;
  }
  return Verdict::Refuse;
}

void StaleMirrorMark::mirror_holds(uint64_t end) {
  mirror_end_ = end;
  if (clear_held_) return;  // settled() asks again with the last end told
  if (state_ != State::Stale && state_ != State::Unknown) return;
  if (end < admitted_end_) return;
  state_ = State::Clearing;
  in_flight_ = next_request_++;
  actions_.push_back({Action::Kind::Clear, in_flight_, 0});
}

void StaleMirrorMark::settled() {
  if (!clear_held_) return;
  clear_held_ = false;
  mirror_holds(mirror_end_);
}

void StaleMirrorMark::record_answered(uint64_t request, bool written) {
  if (state_ != State::Recording || request != in_flight_) return;
  in_flight_ = 0;
  if (written) {
    state_ = State::Stale;
  } else {
    state_ = State::Unknown;  // it may have been stored after all
    refuse_until_ = now_ + retry_ms_;
  }
}

void StaleMirrorMark::clear_answered(uint64_t request, bool cleared) {
  if (state_ != State::Clearing || request != in_flight_) return;
  in_flight_ = 0;
  state_ = cleared ? State::Clean : State::Unknown;
}

void StaleMirrorMark::mark_absent() {
  // Safe in every state but a Record in flight (its answer decides) and a Clear (same).
  if (state_ == State::Stale) state_ = State::Clean;
}

std::vector<StaleMirrorMark::Action> StaleMirrorMark::take_actions() {
  std::vector<Action> out;
  out.swap(actions_);
  return out;
}

}  // namespace nasd::membership
