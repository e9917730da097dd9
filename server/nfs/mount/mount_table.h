// The MOUNT protocol's record of who mounted what (what DUMP reports), kept in memory and in
// an rmtab-style file so it survives restarts. Like rmtab it is advisory: clients that vanish
// without UMNT stay listed until they UMNTALL.
#pragma once

#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace nasd::nfs {

struct MountEntry {
  std::string host;  // the client's numeric address
  std::string path;  // the directory it mounted, as it asked for it
  bool operator==(const MountEntry&) const = default;
};

class MountTable {
 public:
  // Beyond this many entries new mounts are still served but no longer recorded, so clients
  // mounting ever new subdirectories cannot grow the table without bound.
  static constexpr size_t kMaxEntries = 1024;

  // Loads `file` when it exists (one "host path" per line, path to the end of the line);
  // an empty `file` keeps the table in memory only. Throws std::runtime_error when the file
  // exists but cannot be read.
  explicit MountTable(std::string file);

  // Each returns false when the change could not be saved (or, for add, the table is full);
  // memory is updated regardless.
  bool add(const std::string& host, const std::string& path);
  bool remove(const std::string& host, const std::string& path);
  bool remove_host(const std::string& host);

  std::vector<MountEntry> entries() const;

 private:
  bool save_locked() const;  // writes a temporary file and renames it over `file_`

  const std::string file_;
  mutable std::mutex mu_;
  std::vector<MountEntry> entries_;
};

}  // namespace nasd::nfs
