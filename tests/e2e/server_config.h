// Config files for the servers the suite can run against: nasd's INI format
// (deploy/nasd.conf) and, for validating the suite itself, an equivalent nfs-ganesha config
// with a VFS export of a folder.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace nasd::e2e {

// The export every test mounts; both servers publish the same path.
inline constexpr const char* kExportPath = "/r/v0";

struct ServerLayout {
  std::filesystem::path data_dir;  // everything the server keeps
  uint16_t nfs_port = 0;
  uint16_t mount_port = 0;
  uint16_t http_port = 0;  // metrics and management page (nasd); 0: off
};

// A one-node nasd config: one volume exported rw at kExportPath, no root squashing (the tests
// exercise root and non-root credentials themselves) and `secure = no` (their raw sockets use
// unreserved ports), sizes small enough for a test machine.
std::string nasd_config_text(const ServerLayout& layout);
// The same config up to and including [volume v0], without any export: tests of export
// layouts (exports_test.cc) append their own [volume] and [export] sections.
std::string nasd_config_without_exports(const ServerLayout& layout);

// The folder ganesha exports, inside the data dir.
std::filesystem::path ganesha_export_dir(const ServerLayout& layout);
std::string ganesha_config_text(const ServerLayout& layout);

}  // namespace nasd::e2e
