// The owning node's end of forwarded calls: decodes each VolumeCall request, finds the volume
// through a resolver, and runs the call on a small worker pool so that a slow call (a big
// WRITE, a COMMIT waiting for the disk) never holds up the connection's other requests.
//
// The resolver must only return volumes this node serves itself (see
// ClusterRouter::served_here()), never another proxy: a forwarded call is executed where it
// lands or refused, so two nodes with different ownership views cannot bounce it between them.
#pragma once

#include <cstddef>

#include "cluster/interconnect/interconnect_server.h"
#include "fs/volume.h"
#include "util/task_queue.h"

namespace nasd::interconnect {

struct VolumeServerOptions {
  size_t threads = 4;
  size_t max_queued = 256;  // beyond this, calls are answered Jukebox at once
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

 private:
  void execute(const IncomingRequest& request);

  fs::VolumeResolver* const volumes_;
  util::TaskQueue pool_;  // bounded: a full queue answers Jukebox at once
};

}  // namespace nasd::interconnect
