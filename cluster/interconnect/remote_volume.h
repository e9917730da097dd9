// A Volume whose calls run on another node: each call's request is one VolumeCall message over
// the interconnect to the volume's owner, which executes it (permission checks included, for the
// credential passed along) and sends back every out-parameter.
//
// When the owner cannot be reached or does not answer in time the call returns Jukebox, so the
// NFS client backs off and retries instead of hanging or seeing a hard error; by the time it
// retries, a failover may have moved the volume and the router sends the retry elsewhere.
//
// A call made from an NFS executor thread does not hold that thread while the owner works:
// the request goes out on the link (pipelined and batched with the other calls to that owner,
// peer_client.h), the NFS call parks (util/resumable_call.h) and runs again when the reply,
// the link's failure or the deadline (call_timeout) arrives. Every call in flight needs one of
// the owner's forward slots (forward_slots.h); with none free it is Jukebox at once, so a
// paused or slow owner costs at most `slots` parked calls, and no threads. Calls made outside
// the NFS executor (DESCRIBE, tests, admin) wait in place, bounded the same way.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>

#include "cluster/interconnect/call_channel.h"
#include "cluster/interconnect/forward_slots.h"
#include "fs/call/calls.h"
#include "fs/volume.h"

namespace nasd::interconnect {

struct RemoteVolumeOptions {
  std::chrono::milliseconds call_timeout{5000};
  // DESCRIBE (root, limits) is asked for at most this often while the owner is unreachable.
  std::chrono::milliseconds describe_timeout{1000};
  // Forwarded calls that may be in flight to one owner at once (the router shares one
  // ForwardSlots per owner among its volumes). Calls made outside the NFS executor wait in
  // place and hold a thread; those made by NFS procedures park and hold none.
  size_t max_in_flight = 256;
  // The owner's slots; a RemoteVolume of its own when null.
  std::shared_ptr<ForwardSlots> slots;
};

class RemoteVolume : public fs::Volume {
 public:
  RemoteVolume(uint32_t volume_id, std::shared_ptr<CallChannel> owner,
               RemoteVolumeOptions options = {});

  uint32_t id() const override { return volume_id_; }
  // Root and limits are the owner's, fetched once (DESCRIBE) and cached; until the owner has
  // answered they are defaults, and root() is {0, 0} (a handle no volume issues).
  fs::InodeId root() const override;
  fs::VolumeLimits limits() const override;
  // The owner's current verifier, refreshed from every reply.
  uint64_t write_verifier() const override { return verifier_.load(); }

  // Asks the owner for root and limits now; false when it could not be reached.
  bool describe() const;
  const ForwardSlots& slots() const { return *slots_; }

  // Sends the request to the owner and returns its reply (a reply without result when the
  // call never reached the owner's volume). Inside a resumable call (util/resumable_call.h, the
  // NFS executor's) it does not wait: the first run sends the request and parks the call, the
  // next run takes the answer. Elsewhere it waits in place.
  fs::call::VolumeReply call(const fs::call::VolumeRequest& req) override;
  // The attempt, inside a resumable call only (elsewhere it would block), for every procedure:
  // the answer when it is already in (the run that resumes a parked call on the thread that
  // brought the answer, rpc::CallDispatcher::resume); else, when the run may park (the first
  // run, on the NFS event loop), the request is sent without waiting and the call parks; else
  // (no room on the link, or a run that may not park) "would block", and the call goes to the
  // executor. The owner commits a WRITE or COMMIT, whatever its stability, and runs a
  // name-space mutation exactly as a call forwarded from the executor (same request bytes,
  // client call identity included), so the only wait here is the round trip and the call parks
  // on it like a READ. Failover between the park and the rerun: cluster/README.md
  // ("Forwarding").
  std::optional<fs::call::VolumeReply> try_call(const fs::call::VolumeRequest& req) override;

 private:
  // Sends and waits for the reply or `timeout`, holding this thread.
  fs::call::VolumeReply forward_waiting(const fs::call::VolumeRequest& req,
                                        std::chrono::milliseconds timeout) const;
  std::vector<uint8_t> request_bytes(const fs::call::VolumeRequest& req) const;
  void ensure_described() const;

  const uint32_t volume_id_;
  const std::shared_ptr<CallChannel> owner_;
  const RemoteVolumeOptions options_;
  const std::shared_ptr<ForwardSlots> slots_;
  mutable std::atomic<uint64_t> verifier_{0};
  mutable std::mutex describe_mu_;
  mutable std::optional<fs::call::DescribeResult> described_;
};

}  // namespace nasd::interconnect
