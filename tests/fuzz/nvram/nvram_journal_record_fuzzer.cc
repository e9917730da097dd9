// libFuzzer target for the NVRAM journal record decoder: the record header (magic, position,
// version, length, CRC) and the Call payload inside it (nvram/call_record.h). A record that
// decodes must re-encode to the same payload; anything else must be rejected without a crash,
// an over-read or an allocation sized by the input.
//   build-fuzz/tests/fuzz/nvram/nvram_journal_record_fuzzer -max_total_time=60 <corpus> \
//       tests/fuzz/nvram/seeds
#include <cstddef>
#include <cstdint>

#include "nvram/call_record.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return nasd::nvram::fuzz_journal_record(data, size);
}
