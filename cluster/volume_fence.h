// The storage-side fence of a shared volume: a small fence file next to the leases whose
// token only grows. A node that opens the volume takes the fence (exclusive lock, token + 1)
// and then writes the backing file only while the token is still its own, each batch of writes
// under a shared lock of the same file. Together with the lease this closes the last window of
// a time-based fence: a node paused after its lease check but before its write still holds the
// shared lock, so the next owner's take() waits for that write (or gives up, and retries the
// takeover later) instead of letting it land in the middle of its own; afterwards the token is
// no longer the paused node's, and every further write of it is refused.
//
// The token is either a counter (each take() adds one: the file authority, whose lease files
// sit next to the fence) or the lease's epoch (`lease_epoch` given: the etcd authority, whose
// epochs are etcd revisions and only grow). With epochs a node that lost its lease before it
// took the fence cannot take it any more: the newer owner's larger epoch is already there.
// Epoch fences use their own file (see fence_path) so that tokens of the two kinds never meet.
//
// Open file description locks (F_OFD_SETLK) belong to the descriptor, not the process, so two
// fences in one process exclude each other as two nodes do. The token is not synced to disk:
// the fence orders the processes sharing the folder, and a machine restart restarts all of them.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "fs/lfs/write_gate.h"

namespace nasd::cluster {

class VolumeFence : public fs::lfs::WriteGate {
 public:

  // Takes the fence at `path` (created if missing) for `node`: waits up to `wait` for writes
  // admitted under earlier tokens to finish. Null (and *error) if that does not happen in time
  // or the file cannot be used. Writes are admitted only while `lease_ok` also holds.
  // With `lease_epoch`, the token becomes that epoch, and the take fails if the file already
  // holds a larger one (a later owner's).
  static std::shared_ptr<VolumeFence> take(const std::string& path, const std::string& node,
                                           std::function<bool()> lease_ok,
                                           std::chrono::milliseconds wait,
                                           std::string* error,
                                           std::optional<uint64_t> lease_epoch = std::nullopt);
  // `<lease_dir>/<volume>.fence` for counters, `<volume>.epoch-fence` for lease epochs.
  static std::string fence_path(const std::string& lease_dir, const std::string& volume,
                                bool epochs);
  ~VolumeFence() override;

  bool enter() override;
  void leave() override;

  uint64_t token() const { return token_; }

 private:
  VolumeFence(int fd, std::string path, std::string node, uint64_t token,
              std::function<bool()> lease_ok);

  const int fd_;
  const std::string path_, node_;
  const uint64_t token_;
  const std::function<bool()> lease_ok_;
  bool reported_ = false;  // the "taken over" message is logged once
};

}  // namespace nasd::cluster
