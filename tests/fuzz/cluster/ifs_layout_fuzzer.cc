// libFuzzer target for the scale-out volume's read layouts a peer can send
// (cluster/scaleout/read_layout.h): every input is decoded as a layout request and as a layout
// reply; what decodes must re-encode to bytes that decode and re-encode the same, and a decoded
// reply is assembled against groups of its records' lengths (bounds of every piece and record).
// Seeds ifs_layout_* in seeds/ (written by IfsLayoutCodec.* with NASD_WRITE_LAYOUT_SEEDS=dir).
#include <cstddef>
#include <cstdint>

#include "cluster/scaleout/read_layout.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return nasd::scaleout::fuzz_layout_codec(data, size);
}
