// The owning node's end of forwarded calls: decodes each VolumeCall request, finds the volume
// through a resolver, and runs the call on a small worker pool so that a slow call (a big
// WRITE, a COMMIT waiting for the disk) never holds up the connection's other requests.
//
// A request whose connection was fenced while it waited for a worker (a newer connection from
// the same node was admitted: link_session.h) is dropped unanswered, never run.
//
// Run to completion: a GETATTR, LOOKUP, ACCESS, READ, READLINK, READDIR(PLUS) or FSSTAT is first
// tried on the connection's reader thread with the volume's non-blocking attempt (fs::Volume::try_*, the same one the NFS event
// loop uses); when the volume answers at once (cached inode and blocks, lock free) the reply
// leaves from that thread, without the two thread hand-offs of the pool. An attempt that would
// wait changes nothing, and the call goes to the pool as any other. A WRITE or COMMIT is tried
// there too: an UNSTABLE WRITE is applied and journalled from memory, and a stable WRITE or a
// COMMIT parks on its NVRAM commit (util/resumable_call.h) and is answered from the thread that
// brings the commit in, so no worker sits waiting for a group commit or the mirror.
//
// A forwarded call runs under a deadline (options.answer_within from its arrival), so that the
// owner answers JUKEBOX itself, with the call unrun, rather than wait past the forwarder's own
// timeout, which would reset the link and fail every call in flight on it.
//
// The resolver must only return volumes this node serves itself (see
// ClusterRouter::served_here()), never another proxy: a forwarded call is executed where it
// lands or refused, so two nodes with different ownership views cannot bounce it between them.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "cluster/interconnect/interconnect_server.h"
#include "fs/call/calls.h"
#include "fs/volume.h"
#include "util/resumable_call.h"
#include "util/task_queue.h"

namespace nasd::interconnect {

struct VolumeServerOptions {
  // As many as the NFS executor has ([node] threads, 16 by default): with uniform access half
  // of a node's calls arrive forwarded, and they block on the same disks and NVRAM as its own.
  // Fewer threads here made forwarded calls queue at the owner behind each other.
  size_t threads = 16;
  // Beyond this, calls are answered Jukebox at once; above the default forward_slots (256)
  // of one peer, so a peer within its bound is never refused here.
  size_t max_queued = 1024;
  // The owner answers a forwarded call within this long of its arrival, or refuses it
  // JUKEBOX unrun, where the volume would otherwise wait longer (journal space, the volume's
  // mutation lock: fs/call_deadline.h). Clearly below the forwarder's deadline (the node sets
  // half its forward_timeout), so that a full journal slows a forwarded call exactly as much
  // as a local one instead of timing it out and resetting the link. Zero: no deadline.
  std::chrono::milliseconds answer_within{0};
};

class VolumeServer {
 public:
  // `volumes` must outlive the server.
  VolumeServer(fs::VolumeResolver* volumes, VolumeServerOptions options = {});

  // Registers the VolumeCall handler on `server` (before server.start()). Stop the
  // InterconnectServer before destroying this object.
  void attach(InterconnectServer& server);

  // Handles one request (what the registered handler does); exposed for tests.
  void handle(IncomingRequest request);
  // Calls answered on the reader thread without the pool (for statistics and tests).
  uint64_t inline_calls() const { return inline_calls_.load(std::memory_order_relaxed); }
  // WRITEs and COMMITs that parked on their commit instead of waiting in the pool.
  uint64_t parked_calls() const { return parked_calls_.load(std::memory_order_relaxed); }

 private:
  // A WRITE or COMMIT between its park and its answer. `req` points into request.payload.
  struct ParkedCall {
    std::shared_ptr<util::ResumableCall> resumable;
    IncomingRequest request;
    fs::call::VolumeRequest req;
  };

  // The inline attempt: true when `request` was answered, or parked (it is then moved from).
  bool try_inline(IncomingRequest& request);
  // The volume's attempt at `req` under the caller's identity; nullopt: would wait, or threw.
  std::optional<fs::call::VolumeReply> attempt(const fs::call::VolumeRequest& req);
  // Answers a parked call once its commit is in (on the thread that brought it).
  void resume(ParkedCall& call);
  void execute(const IncomingRequest& request,
               std::optional<std::chrono::steady_clock::time_point> deadline);

  fs::VolumeResolver* const volumes_;
  const std::chrono::milliseconds answer_within_;
  util::TaskQueue pool_;  // bounded: a full queue answers Jukebox at once
  std::atomic<uint64_t> inline_calls_{0};
  std::atomic<uint64_t> parked_calls_{0};
};

}  // namespace nasd::interconnect
