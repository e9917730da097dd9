// libFuzzer target for the one Volume call codec (fs/call/codec.h): what an interconnect frame
// and a journal record carry. Every input is decoded as a request and as a reply to every op;
// whatever decodes must re-encode stably (fuzz_volume_codec aborts otherwise).
//   build-fuzz/tests/fuzz/fs/fs_call_codec_fuzzer -max_total_time=60 <corpus> tests/fuzz/fs/seeds
#include <cstddef>
#include <cstdint>

#include "fs/call/codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return nasd::fs::call::fuzz_volume_codec(data, size);
}
