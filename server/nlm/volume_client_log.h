// Who holds locks on each volume, kept where whichever node serves the volume next can read it.
//
// Why per volume: in a cluster a volume (with the virtual server it belongs to) moves between
// nodes, and when its owner dies the node that takes it over must tell exactly the clients that
// held locks on it -- not the dead node's other clients, whose volumes went elsewhere -- that the
// server they locked at restarted. LockState records a client here before the first lock or
// share of that client on that volume is granted (the same rule as the status monitor's list),
// so no client that holds a lock is ever missing from its volume's list.
//
// The lock manager knows nothing of nodes or folders; the cluster provides the implementation
// (cluster/volume_lock_files.h: a file per volume in the shared folder). Thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "server/nlm/status_monitor.h"

namespace nasd::nlm {

class VolumeClientLog {
 public:
  virtual ~VolumeClientLog() = default;
  // Durably records that `client` holds (or is about to hold) locks on `volume`. An entry is
  // the client's name, its address and the server address it called: a name is never rebound
  // to another address (status_monitor.h says why). False when it could not be recorded (the
  // list is full, or the write failed: the lock is then refused with NoLocks).
  virtual bool record(uint32_t volume, const MonitoredHost& client) = 0;
  // Forgets entries of clients that hold nothing on `volume` any more (to make room).
  virtual void forget(uint32_t volume, const std::vector<MonitoredHost>& gone) = 0;
  // Every client recorded for `volume`.
  virtual std::vector<MonitoredHost> clients(uint32_t volume) = 0;
};

}  // namespace nasd::nlm
