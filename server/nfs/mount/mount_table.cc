#include "server/nfs/mount/mount_table.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "util/durable_file.h"

namespace nasd::nfs {

MountTable::MountTable(std::string file) : file_(std::move(file)) {
  if (file_.empty()) return;
  std::ifstream in(file_);
  if (!in) {
    if (errno == ENOENT) return;
    throw std::runtime_error("mount table " + file_ + ": " + std::strerror(errno));
  }
  std::string line;
  while (std::getline(in, line)) {
    auto space = line.find(' ');
    if (space == std::string::npos || space == 0 || space + 1 >= line.size()) continue;
    MountEntry e{line.substr(0, space), line.substr(space + 1)};
    if (entries_.size() < kMaxEntries &&
        std::find(entries_.begin(), entries_.end(), e) == entries_.end())
      entries_.push_back(e);
  }
}

bool MountTable::add(const std::string& host, const std::string& path) {
  std::lock_guard lock(mu_);
  MountEntry e{host, path};
  if (std::find(entries_.begin(), entries_.end(), e) != entries_.end()) return true;
  if (entries_.size() >= kMaxEntries) return false;
  entries_.push_back(std::move(e));
  return save_locked();
}

bool MountTable::remove(const std::string& host, const std::string& path) {
  std::lock_guard lock(mu_);
  auto it = std::remove(entries_.begin(), entries_.end(), MountEntry{host, path});
  if (it == entries_.end()) return true;
  entries_.erase(it, entries_.end());
  return save_locked();
}

bool MountTable::remove_host(const std::string& host) {
  std::lock_guard lock(mu_);
  auto it = std::remove_if(entries_.begin(), entries_.end(),
                           [&](const MountEntry& e) { return e.host == host; });
  if (it == entries_.end()) return true;
  entries_.erase(it, entries_.end());
  return save_locked();
}

std::vector<MountEntry> MountTable::entries() const {
  std::lock_guard lock(mu_);
  return entries_;
}

bool MountTable::save_locked() const {
  if (file_.empty()) return true;
  std::string text;
  for (const auto& e : entries_) text += e.host + " " + e.path + "\n";
  // Replaced atomically and durably: a crash leaves the old table or the new one.
  std::string error;
  return util::write_file_durably(file_, text, &error);
}

}  // namespace nasd::nfs
