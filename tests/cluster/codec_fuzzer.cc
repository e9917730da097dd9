// libFuzzer target for the interconnect's own decoders (build with -DNASD_FUZZ=ON and clang):
//   ./cluster_codec_fuzzer -max_total_time=60
// The Volume call codec the interconnect carries has its own target, fs_call_codec_fuzzer
// (tests/fuzz/fs).
#include <cstddef>
#include <cstdint>
#include <string>

#include "cluster/interconnect/hello.h"
#include "cluster/membership/heartbeat.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string error;
  nasd::interconnect::Hello hello;
  nasd::interconnect::decode_hello({data, size}, &hello, &error);
  nasd::membership::Heartbeat hb;
  nasd::membership::decode_heartbeat({data, size}, &hb, &error);
  return 0;
}
