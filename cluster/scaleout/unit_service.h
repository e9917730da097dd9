// Stripe units between nodes over the authenticated interconnect (MessageType::UnitCall).
//
// UnitServer is the serving node's end: it decodes each request (unit_codec.h), runs it on
// this node's NodeUnits in a bounded pool (a slow drive never stalls the connection's reader
// thread; a full pool answers IoError at once and the caller treats that unit as unavailable,
// which parity covers), and replies.
//
// RemoteUnits is the calling end: a UnitAccess that reaches this node's own drives directly and
// every other node through its CallChannel (PeerClient). A node that does not answer in time
// or is not connected counts as Unreachable: GroupIo then reads around it from parity and
// writes go on degraded, exactly as for a dead node.
#pragma once

#include <chrono>
#include <map>
#include <mutex>

#include "cluster/interconnect/call_channel.h"
#include "cluster/interconnect/interconnect_server.h"
#include "cluster/scaleout/group_io.h"
#include "cluster/scaleout/unit_codec.h"
#include "util/task_queue.h"

namespace nasd::scaleout {

struct UnitServerOptions {
  size_t threads = 4;
  size_t max_queued = 1024;
};

class UnitServer {
 public:
  // `units` must outlive the server; stop the InterconnectServer before destroying this.
  UnitServer(NodeUnits* units, UnitServerOptions options = {});
  void attach(interconnect::InterconnectServer& server);
  void handle(interconnect::IncomingRequest request);
  // Runs one decoded request against `units` (shared with the local path and the tests).
  static UnitReply execute(NodeUnits& units, const UnitRequest& request);

 private:
  NodeUnits* const units_;
  util::TaskQueue pool_;
};

class RemoteUnits : public UnitAccess {
 public:
  // `local` (this node's drives, id local->node()) and every channel must outlive this.
  RemoteUnits(NodeUnits* local, std::chrono::milliseconds timeout);
  void add_peer(uint32_t node, interconnect::CallChannel* channel);

  UnitStatus put(const UnitPlace& at, const UnitKey& key, const uint8_t* data,
                 uint32_t len) override;
  UnitStatus get(const UnitPlace& at, const UnitKey& key, std::vector<uint8_t>* out) override;
  UnitStatus remove(const UnitPlace& at, const UnitKey& key) override;
  UnitStatus sync(const UnitPlace& at) override;
  UnitStatus list(const UnitPlace& at, const UnitKey& from, uint32_t max, std::vector<UnitKey>* out,
                  bool* more) override;
  // Per-drive health of `node` (empty when it cannot be asked).
  std::vector<bool> health(uint32_t node);

 private:
  UnitReply call(uint32_t node, UnitRequest request);
  NodeUnits* const local_;
  const std::chrono::milliseconds timeout_;
  std::mutex mu_;
  std::map<uint32_t, interconnect::CallChannel*> peers_;
};

}  // namespace nasd::scaleout
