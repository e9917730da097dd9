// The decoder of a volume's handed-over lock table (server/nlm/volume_handover.h): its bytes
// come from a file on the shared folder. Arbitrary bytes must be refused or decode to a table
// that encodes to the same bytes (an older "NASDNLM1" or "NASDNLM2" table, read but never
// written, to bytes that decode to the same table); a decoded table is then adopted by a
// bounded lock manager, which must refuse it or hold it without two conflicting locks, and
// count each client's entries as the table has them.
#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>

#include "server/nlm/volume_handover.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nasd::nlm;
  VolumeHandover h;
  std::string error;
  if (!decode_handover(std::span(data, size), &h, &error)) return 0;
  const std::vector<uint8_t> again = encode_handover(h);
  const bool current = size >= 8 && data[7] == '3';  // the magic's version letter
  if (current) {
    if (again.size() != size || !std::equal(again.begin(), again.end(), data)) __builtin_trap();
  } else {
    VolumeHandover h2;
    if (!decode_handover(again, &h2, &error) || encode_handover(h2) != again) __builtin_trap();
  }
  LockManager m(64);
  if (!m.adopt_volume(h.volume, h.table, 1000)) return 0;
  const std::vector<Lock> locks = m.locks();
  for (size_t i = 0; i < locks.size(); ++i)
    for (size_t j = i + 1; j < locks.size(); ++j)
      if (locks[i].file == locks[j].file && !(locks[i].owner == locks[j].owner) &&
          locks[i].range.overlaps(locks[j].range) && (locks[i].exclusive || locks[j].exclusive))
        __builtin_trap();
  if (m.entries() != h.table.entries()) __builtin_trap();
  for (const Lock& l : h.table.locks)
    if (!m.holds(ClientKey{l.owner.address, l.owner.host}, h.volume)) __builtin_trap();
  // Taking it out again gives it back whole.
  if (m.take_volume(h.volume, 1000).entries() != h.table.entries()) __builtin_trap();
  return 0;
}
