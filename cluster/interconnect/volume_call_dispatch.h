// Replays a decoded forwarded call on a real Volume: the owning node's half of a forwarded
// request. Kept apart from the server so it can be tested (and reused) without sockets.
#pragma once

#include "cluster/interconnect/volume_calls.h"
#include "fs/volume.h"

namespace nasd::interconnect {

// Makes exactly the one Volume call `req` describes and returns every out-parameter.
VolumeReply execute_volume_call(fs::Volume& volume, const VolumeRequest& req);

// The reply for a call that never reached a volume (unknown volume, overload, bad request).
VolumeReply refused_volume_call(VolumeOp op, fs::Status status);

}  // namespace nasd::interconnect
