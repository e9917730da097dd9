// A scratch folder for the NLM fuzzers, which write the status monitor's small files on every
// input: in memory when /dev/shm exists, one per process, removed at exit. Never freed, so that
// the exit handler that removes it can still read it.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace nasd::nlm::fuzz {

inline const std::string& scratch_dir() {
  static const std::string* dir = [] {
    std::filesystem::path base = std::filesystem::exists("/dev/shm")
                                     ? std::filesystem::path("/dev/shm")
                                     : std::filesystem::temp_directory_path();
    auto* d = new std::string((base / ("nasd-nlm-fuzz-" + std::to_string(getpid()))).string());
    std::filesystem::create_directories(*d);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(scratch_dir(), ec);
    });
    return d;
  }();
  return *dir;
}

}  // namespace nasd::nlm::fuzz
