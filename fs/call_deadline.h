// The deadline of a volume call: the time by which its caller must have the answer, for the
// waits a volume may bound. It exists for calls forwarded over the interconnect: the
// forwarding node gives up on the owner after its forward_timeout (and, for a mutation, resets
// the link so every other call in flight to that owner fails too), while the owner's journal
// may wait far longer (space_wait) for NVRAM space. The owner's VolumeServer puts a deadline
// well inside the forwarder's in the request (fs::call::VolumeRequest::deadline), and the
// volume answers NFS3ERR_JUKEBOX itself -- before running the call, so a retry is always safe
// -- when it could only meet the deadline by waiting past it. The forwarder's timeout then
// fires only for an owner that is truly hung. A volume that knows no bounded wait ignores it;
// a call without one (a local NFS client's call, which merely slows under back-pressure)
// waits as long as it always did.
//
// fs::CallDeadlineScope: the same for a caller of fs::Volume's typed methods, which build the
// request on this thread (fs/volume_methods.cc) and give it the deadline of the open scope.
#pragma once

#include <chrono>
#include <optional>

namespace nasd::fs {

class CallDeadlineScope {
 public:
  using Clock = std::chrono::steady_clock;
  // Sets the deadline of the call running on this thread until destroyed; scopes nest, and an
  // inner scope never extends an outer one's deadline.
  explicit CallDeadlineScope(Clock::time_point deadline);
  ~CallDeadlineScope();
  CallDeadlineScope(const CallDeadlineScope&) = delete;
  CallDeadlineScope& operator=(const CallDeadlineScope&) = delete;

  // The deadline of the call this thread is serving; nullopt when it has none.
  static std::optional<Clock::time_point> current();

 private:
  std::optional<Clock::time_point> previous_;
};

}  // namespace nasd::fs
