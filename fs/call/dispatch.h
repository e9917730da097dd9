// The one dispatch from a call struct onto fs::Volume: the owning node runs a forwarded request
// with it, the NVRAM journal runs a live mutation and a replayed record with it
// (fs::JournalTarget::apply_journalled). Kept apart from sockets and NVRAM so it can be tested
// and reused alone.
#pragma once

#include "fs/call/calls.h"
#include "fs/volume.h"

namespace nasd::fs::call {

// Makes exactly the one Volume call `req` describes and returns every out-parameter.
VolumeReply execute_volume_call(fs::Volume& volume, const VolumeRequest& req);

// The reply for a call that never reached a volume (unknown volume, overload, bad request).
VolumeReply refused_volume_call(VolumeOp op, fs::Status status);

}  // namespace nasd::fs::call
