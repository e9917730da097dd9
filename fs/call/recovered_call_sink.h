// fs::RecoveredCallSink: how the reply cache is rebuilt from the journal without the journal
// knowing the server above it (the one-way flow stays transport -> rpc -> nfs3 -> router ->
// nvram -> fs; cluster/ wires a server-side sink into the volumes it opens).
#pragma once

#include "fs/call/calls.h"
#include "fs/call_identity.h"

namespace nasd::fs {

// Where journal recovery hands each recorded call that carries an identity, with the reply the
// client was given (start, takeover, and the reply window a volume keeps across a clean hand-
// over). Implemented above the journal (server/nfs rebuilds the NFS reply and fills the
// duplicate request cache); called on the recovering thread.
class RecoveredCallSink {
 public:
  virtual ~RecoveredCallSink() = default;
  virtual void recovered(const CallIdentity& identity, const call::VolumeRequest& request,
                         const call::VolumeReply& reply) = 0;
};

}  // namespace nasd::fs
