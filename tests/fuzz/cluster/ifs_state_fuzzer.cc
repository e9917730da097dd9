// libFuzzer target for the scale-out volume's metadata image decoder
// (cluster/scaleout/ifs_state.h): what a coordinator reads from the nodes' drives at open. A
// drive is checksummed, but a checksum only tells damage from accident; the decoder must still
// bound every count and length and refuse rather than crash or allocate without limit. What
// decodes must encode back to the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "cluster/scaleout/ifs_state.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nasd::scaleout::IfsState state;
  std::string why;
  if (!nasd::scaleout::decode_state(data, size, &state, &why)) return 0;
  std::vector<uint8_t> again = nasd::scaleout::encode_state(state);
  nasd::scaleout::IfsState twice;
  if (!nasd::scaleout::decode_state(again.data(), again.size(), &twice, &why)) std::abort();
  if (nasd::scaleout::encode_state(twice) != again) std::abort();
  return 0;
}
