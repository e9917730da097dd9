#include "tests/e2e/temp_dir.h"

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <vector>

namespace nasd::e2e {

TempDir::TempDir(const std::string& prefix) {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/" + prefix + "-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data()))
    throw std::runtime_error("mkdtemp(" + pattern + "): " + std::strerror(errno));
  path_ = buf.data();
}

TempDir::~TempDir() {
  const char* keep = std::getenv("NASD_E2E_KEEP");
  if (keep && std::string(keep) == "1") {
    std::cerr << "[e2e] keeping " << path_ << "\n";
    return;
  }
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace nasd::e2e
