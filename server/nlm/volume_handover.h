// A volume's lock table as it travels with the volume on a planned move: the node that hands the
// volume over writes it beside the volume, the node that opens the volume next reads it and
// adopts it (LockState::adopt_volume), so that every lock, blocked request and share -- and what
// is left of the volume's grace period -- is held at the new owner exactly as before, with no
// grace period and no reclaim.
//
// Encoding (little-endian, util/byte_io.h): the magic "NASDNLM3" (or "NASDNLM2" / "NASDNLM1",
// read only: before owners carried the address their client called from -- taken from the
// client list then -- and before waiters carried a callback route and clients the address they
// called), the volume id, the grace left (ms), then counted lists of locks, waiters, shares
// and the clients that hold them (name and
// the address their status monitor and lock manager answer on). The bytes come from a file on
// the shared folder, so decoding is bounded like any network input: every string and handle is
// at most 1024 bytes (NLM's own limits), every list entry consumes input, and anything malformed
// or left over refuses the whole table (the new owner then starts a grace period instead).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "server/nlm/lock_manager.h"
#include "server/nlm/status_monitor.h"

namespace nasd::nlm {

struct VolumeHandover {
  uint32_t volume = 0;
  VolumeLocks table;
  std::vector<MonitoredHost> clients;  // every host the table names, with its address
};

std::vector<uint8_t> encode_handover(const VolumeHandover& h);
// False (with the reason in *error) when the bytes are not a whole, well-formed table.
bool decode_handover(std::span<const uint8_t> bytes, VolumeHandover* out, std::string* error);

}  // namespace nasd::nlm
