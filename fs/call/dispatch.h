// The dispatch from a call struct onto the typed methods of a file system (fs::TypedVolume:
// the LFS, the scale-out volume, the test file systems): their call() and try_call(), and the
// NVRAM journal's live mutation and replay (fs::JournalTarget::apply_journalled) run through
// it. Beside it, how a server answers a request for a volume it holds (the owner's
// VolumeServer, test channels). Kept apart from sockets and NVRAM so it can be tested and
// reused alone.
#pragma once

#include <optional>

#include "fs/call/calls.h"
#include "fs/typed_volume.h"
#include "fs/volume.h"

namespace nasd::fs::call {

// Makes exactly the one typed call `req` describes and returns every out-parameter, with the
// volume's write verifier sampled after the call.
VolumeReply dispatch_typed(fs::TypedVolume& volume, const VolumeRequest& req);
// The same with the typed attempts (fs::TypedVolume::try_*): the reply when the volume answered
// at once, std::nullopt when the attempt would wait -- then nothing happened.
std::optional<VolumeReply> try_dispatch_typed(fs::TypedVolume& volume, const VolumeRequest& req);

// A server's answer to `req` for `volume`: the volume's call(), except DESCRIBE, which is the
// volume's facts (root, limits; not an NFS procedure, never refused by a layer), and with the
// serving volume's write verifier sampled after the call, so that a restart between calls
// shows up in this very reply.
VolumeReply execute_volume_call(fs::Volume& volume, const VolumeRequest& req);

// The same made with the volume's non-blocking attempt (fs::Volume::try_call), for a caller
// that must not wait (the interconnect's reader thread): the reply when the volume answered at
// once, std::nullopt when the call is not one a server attempts (has_attempt) or the attempt
// would wait -- then nothing happened, and the caller runs execute_volume_call where waiting
// is fine. The reads have attempts (GETATTR, LOOKUP, ACCESS, READ, READLINK, READDIR, FSSTAT),
// and so do WRITE and COMMIT: inside a resumable call (util/resumable_call.h) a stable one may
// park on its NVRAM commit, and the reply is then a placeholder to discard until the run after
// the answer. The name-space mutations have none here: the owner runs them where the journal
// may wait.
std::optional<VolumeReply> try_execute_volume_call(fs::Volume& volume, const VolumeRequest& req);
// Whether a server attempts calls of `op` at all: a caller may skip decoding the others.
bool has_attempt(VolumeOp op);

// The reply for a call that never reached a volume (unknown volume, overload, bad request).
VolumeReply refused_volume_call(VolumeOp op, fs::Status status);

}  // namespace nasd::fs::call
