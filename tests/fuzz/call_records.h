// How the service fuzzers cut one input into a series of calls: each record is a selector byte
// (which procedure), a flags byte (credentials, peer, version), a 16-bit big-endian length and
// that many argument bytes (cut short at the end of the input). Many calls per input let the
// fuzzer build state (mount, create, lock) that later calls then use.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace nasd::fuzz {

template <typename RunCall>
void for_each_call_record(const uint8_t* data, size_t size, int max_calls, RunCall&& run_call) {
  size_t pos = 0;
  for (int n = 0; n < max_calls && pos + 4 <= size; n++) {
    const uint8_t selector = data[pos], flags = data[pos + 1];
    size_t len = (size_t{data[pos + 2]} << 8) | data[pos + 3];
    pos += 4;
    len = std::min(len, size - pos);
    run_call(selector, flags, std::vector<uint8_t>(data + pos, data + pos + len));
    pos += len;
  }
}

}  // namespace nasd::fuzz
