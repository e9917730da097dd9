// Operator-facing messages of the NVRAM room (one line each, to stderr, prefixed "nvram:").
#pragma once

#include <string>

namespace nasd::nvram {

void log_line(const std::string& message);

}  // namespace nasd::nvram
