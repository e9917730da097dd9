#include "nvram/log.h"

#include <cstdio>

namespace nasd::nvram {

void log_line(const std::string& message) {
  // One fprintf per line so concurrent messages do not interleave mid-line.
  std::fprintf(stderr, "nvram: %s\n", message.c_str());
}

}  // namespace nasd::nvram
