// A fresh folder under /tmp for one test, removed with everything in it afterwards.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace nasd::cluster::testing {

struct ScratchDir {
  std::string path;
  explicit ScratchDir(const std::string& prefix = "nasd-cluster") {
    std::string tmpl = "/tmp/" + prefix + "-XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path = tmpl;
  }
  ~ScratchDir() { std::filesystem::remove_all(path); }
};

}  // namespace nasd::cluster::testing
