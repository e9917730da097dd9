#include "cluster/volume_lock_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "server/nlm/status_monitor.h"
#include "util/durable_file.h"

namespace nasd::cluster {
namespace {

// A table holds at most [nlm] max_locks entries of at most a few KiB each; anything larger is
// not one of ours.
constexpr off_t kMaxTableBytes = off_t{1} << 30;

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

}  // namespace

VolumeLockFiles::VolumeLockFiles(std::string dir, std::function<std::string(uint32_t)> volume_name,
                                 size_t max_clients)
    : dir_(std::move(dir)), volume_name_(std::move(volume_name)), max_clients_(max_clients) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
}

std::string VolumeLockFiles::path(uint32_t volume, const char* suffix) const {
  return dir_ + "/" + volume_name_(volume) + suffix;
}

std::vector<nlm::MonitoredHost>& VolumeLockFiles::cached_locked(uint32_t volume) {
  auto it = clients_.find(volume);
  if (it == clients_.end())
    it = clients_.emplace(volume, nlm::StatusMonitor::load_hosts(path(volume, ".clients"))).first;
  return it->second;
}

bool VolumeLockFiles::record(uint32_t volume, const nlm::MonitoredHost& client) {
  std::lock_guard lock(mu_);
  std::vector<nlm::MonitoredHost>& list = cached_locked(volume);
  // One entry per client (name and address) and server address it locked at: after a takeover
  // each is told in the name of the server it knows. Never rebound: another address claiming
  // the name gets its own entry, and the first client is still told at its own address.
  if (std::find(list.begin(), list.end(), client) != list.end()) return true;  // nothing to write
  if (list.size() >= max_clients_) return false;
  std::vector<nlm::MonitoredHost> next = list;
  next.push_back(client);
  if (!write_locked(volume, next)) return false;
  list = std::move(next);
  return true;
}

void VolumeLockFiles::forget(uint32_t volume, const std::vector<nlm::MonitoredHost>& gone) {
  std::lock_guard lock(mu_);
  std::vector<nlm::MonitoredHost>& list = cached_locked(volume);
  std::vector<nlm::MonitoredHost> next = list;
  std::erase_if(next, [&](const nlm::MonitoredHost& h) {
    return std::find(gone.begin(), gone.end(), h) != gone.end();
  });
  if (next.size() != list.size() && write_locked(volume, next)) list = std::move(next);
}

bool VolumeLockFiles::write_locked(uint32_t volume, const std::vector<nlm::MonitoredHost>& list) {
  std::string text;
  for (const auto& h : list)
    text += h.address + " " + h.name + (h.called.empty() ? "" : " " + h.called) + "\n";
  std::string error;
  return util::write_file_durably(path(volume, ".clients"), text, &error);
}

std::vector<nlm::MonitoredHost> VolumeLockFiles::clients(uint32_t volume) {
  std::lock_guard lock(mu_);
  clients_.erase(volume);
  return cached_locked(volume);
}

bool VolumeLockFiles::save_table(uint32_t volume, const std::vector<uint8_t>& bytes,
                                 std::string* error) {
  std::lock_guard lock(mu_);
  return util::write_file_durably(
      path(volume, ".locks"),
      std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), error);
}

std::optional<std::vector<uint8_t>> VolumeLockFiles::take_table(uint32_t volume, std::string* error) {
  std::lock_guard lock(mu_);
  // The list may have grown at the previous owner since this node last read it.
  clients_.erase(volume);
  const std::string p = path(volume, ".locks");
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT) *error = errno_text("open " + p);
    return std::nullopt;
  }
  std::optional<std::vector<uint8_t>> out;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    *error = errno_text("stat " + p);
  } else if (st.st_size > kMaxTableBytes) {
    *error = p + " is larger than any lock table";
  } else {
    std::vector<uint8_t> bytes(static_cast<size_t>(st.st_size));
    size_t got = 0;
    while (got < bytes.size()) {
      ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    if (got == bytes.size()) out = std::move(bytes);
    else *error = errno_text("read " + p);
  }
  ::close(fd);
  // Removed whatever it held: a table is adopted once, and a bad one is not tried again.
  if (::unlink(p.c_str()) != 0 || !util::sync_directory(dir_, error)) {
    // Still there: adopting it now could let a later open adopt it a second time.
    if (error->empty()) *error = errno_text("remove " + p);
    return std::nullopt;
  }
  return out;
}

}  // namespace nasd::cluster
