#include "bench/disk_written.h"

#include <fstream>
#include <iterator>
#include <sstream>

namespace nasd::bench {

std::optional<uint64_t> parse_diskstats_bytes_written(const std::string& diskstats,
                                                      const std::string& device) {
  // "major minor name reads merged sectors ms writes merged sectors-written ...".
  std::istringstream lines(diskstats);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream in(line);
    std::string major, minor, name;
    if (!(in >> major >> minor >> name) || name != device) continue;
    std::string field;
    for (int n = 4; n <= 10; ++n) {
      if (!(in >> field)) return std::nullopt;
    }
    try {
      return static_cast<uint64_t>(std::stoull(field)) * 512;
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::optional<uint64_t> disk_bytes_written(const std::string& device) {
  std::ifstream f("/proc/diskstats");
  if (!f) return std::nullopt;
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return parse_diskstats_bytes_written(text, device);
}

}  // namespace nasd::bench
