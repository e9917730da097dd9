// A scratch directory for one test: created fresh under $TMPDIR, removed with everything in it
// when the object goes away (kept when NASD_E2E_KEEP=1, so a failing run can be inspected).
#pragma once

#include <filesystem>
#include <string>

namespace nasd::e2e {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "nasd-e2e");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

}  // namespace nasd::e2e
