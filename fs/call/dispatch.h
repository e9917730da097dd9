// The one dispatch from a call struct onto fs::Volume: the owning node runs a forwarded request
// with it, the NVRAM journal runs a live mutation and a replayed record with it
// (fs::JournalTarget::apply_journalled). Kept apart from sockets and NVRAM so it can be tested
// and reused alone.
#pragma once

#include <optional>

#include "fs/call/calls.h"
#include "fs/volume.h"

namespace nasd::fs::call {

// Makes exactly the one Volume call `req` describes and returns every out-parameter.
VolumeReply execute_volume_call(fs::Volume& volume, const VolumeRequest& req);

// The same call made with the volume's non-blocking attempt (fs::Volume::try_*), for a caller
// that must not wait (the interconnect's reader thread): the reply when the volume answered at
// once, std::nullopt when the call has no attempt or the attempt would wait -- then nothing
// happened, and the caller runs execute_volume_call where waiting is fine. The reads have
// attempts (GETATTR, LOOKUP, ACCESS, READ, READLINK, READDIR, FSSTAT), and so do WRITE and
// COMMIT: inside a resumable call (util/resumable_call.h) a stable one may park on its NVRAM
// commit, and the reply is then a placeholder to discard until the run after the answer. The
// name-space mutations have none here: the owner runs them where the journal may wait.
std::optional<VolumeReply> try_execute_volume_call(fs::Volume& volume, const VolumeRequest& req);
// Whether calls of `op` have an attempt at all: a caller may skip decoding the others.
bool has_attempt(VolumeOp op);

// The reply for a call that never reached a volume (unknown volume, overload, bad request).
VolumeReply refused_volume_call(VolumeOp op, fs::Status status);

}  // namespace nasd::fs::call
