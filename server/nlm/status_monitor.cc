#include "server/nlm/status_monitor.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "util/durable_file.h"

namespace nasd::nlm {
namespace {

constexpr size_t kMaxLoaded = size_t{1} << 20;

bool storable(const std::string& s) {
  if (s.empty() || s.size() > 1024 || s == "-") return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    auto u = static_cast<unsigned char>(c);
    return u > ' ' && u != 0x7f;
  });
}

// Replaced atomically and durably (the state number must only grow across restarts, and a
// client recorded before its lock was granted must be notified after a crash).
void write_file(const std::string& path, const std::string& text) {
  std::string error;
  if (!util::write_file_durably(path, text, &error)) throw std::runtime_error(error);
}

std::string line_of(const MonitoredHost& h) { return h.address + " " + h.name + "\n"; }

}  // namespace

StatusMonitor::StatusMonitor(std::string dir, size_t max_hosts, size_t max_per_address)
    : dir_(std::move(dir)), max_hosts_(max_hosts), max_per_address_(max_per_address) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) throw std::runtime_error("cannot create " + dir_ + ": " + ec.message());
  int64_t previous = 0;
  std::ifstream in(dir_ + "/state");
  if (in) in >> previous;
  if (previous < 0 || previous > INT32_MAX - 4) previous = 0;
  // Odd means "up"; each start moves to the next odd number.
  state_ = static_cast<int32_t>(previous % 2 == 1 ? previous + 2 : previous + 1);
  write_file(dir_ + "/state", std::to_string(state_) + "\n");
  // The node's list has no third field (a volume's list has): a line with one counts as its
  // client, once.
  for (MonitoredHost& h : load_hosts(dir_ + "/clients")) {
    h.called.clear();
    if (hosts_.size() < max_hosts_ && std::find(hosts_.begin(), hosts_.end(), h) == hosts_.end())
      hosts_.push_back(std::move(h));
  }
  std::lock_guard lock(mu_);
  rewrite_locked();  // compacted once per start
}

int32_t StatusMonitor::state() const {
  std::lock_guard lock(mu_);
  return state_;
}

int32_t StatusMonitor::advance_state() {
  std::lock_guard lock(mu_);
  if (state_ <= INT32_MAX - 2) state_ += 2;
  write_file(dir_ + "/state", std::to_string(state_) + "\n");
  return state_;
}

size_t StatusMonitor::names_at_locked(const std::string& address) const {
  return static_cast<size_t>(std::count_if(hosts_.begin(), hosts_.end(),
                                           [&](const MonitoredHost& h) { return h.address == address; }));
}

bool StatusMonitor::monitor(const std::string& name, const std::string& address) {
  if (!storable(name) || !storable(address)) return false;
  std::lock_guard lock(mu_);
  auto it = std::find_if(hosts_.begin(), hosts_.end(), [&](const MonitoredHost& h) {
    return h.name == name && h.address == address;
  });
  if (it != hosts_.end()) return true;
  if (hosts_.size() >= max_hosts_ || names_at_locked(address) >= max_per_address_) return false;
  MonitoredHost h{name, address};
  // Written before it counts: a failed write leaves the list as it was.
  if (log_lines_ + 1 > 2 * (hosts_.size() + 1) + 16) {
    hosts_.push_back(h);
    try {
      rewrite_locked();
    } catch (...) {
      hosts_.pop_back();
      throw;
    }
  } else {
    append_locked(line_of(h));
    hosts_.push_back(h);
  }
  return true;
}

bool StatusMonitor::monitored(const std::string& name, const std::string& address) const {
  std::lock_guard lock(mu_);
  return std::any_of(hosts_.begin(), hosts_.end(), [&](const MonitoredHost& h) {
    return h.name == name && h.address == address;
  });
}

bool StatusMonitor::full_for(const std::string& address) const {
  std::lock_guard lock(mu_);
  return hosts_.size() >= max_hosts_ || names_at_locked(address) >= max_per_address_;
}

void StatusMonitor::forget(const std::vector<MonitoredHost>& gone) {
  if (gone.empty()) return;
  std::set<std::pair<std::string, std::string>> keys;
  for (const MonitoredHost& h : gone) keys.insert({h.name, h.address});
  std::lock_guard lock(mu_);
  size_t before = hosts_.size();
  std::erase_if(hosts_, [&](const MonitoredHost& h) { return keys.count({h.name, h.address}); });
  if (hosts_.size() != before) rewrite_locked();
}

void StatusMonitor::unmonitor(const std::string& name) {
  std::lock_guard lock(mu_);
  size_t before = hosts_.size();
  std::erase_if(hosts_, [&](const MonitoredHost& h) { return h.name == name; });
  if (hosts_.size() != before) rewrite_locked();
}

void StatusMonitor::unmonitor_all() {
  std::lock_guard lock(mu_);
  hosts_.clear();
  rewrite_locked();
}

std::vector<MonitoredHost> StatusMonitor::hosts() const {
  std::lock_guard lock(mu_);
  return hosts_;
}

std::vector<MonitoredHost> StatusMonitor::load_hosts(const std::string& path) {
  std::vector<MonitoredHost> out;
  std::ifstream in(path);
  std::string line;
  // Lines are read as long as they come (a log may hold removals), but the list is bounded.
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    MonitoredHost h;
    std::string first;
    if (!(fields >> first)) continue;
    bool removal = first == "-";
    if (removal) {
      if (!(fields >> h.address)) continue;
    } else {
      h.address = first;
    }
    if (!(fields >> h.name) || !storable(h.name) || !storable(h.address)) continue;
    if (fields >> h.called && !storable(h.called)) continue;  // optional (a volume's list)
    std::string extra;
    if (fields >> extra) continue;
    auto same = std::find(out.begin(), out.end(), h);
    if (removal) {
      if (same != out.end()) out.erase(same);
    } else if (same == out.end() && out.size() < kMaxLoaded) {
      out.push_back(std::move(h));
    }
  }
  return out;
}

void StatusMonitor::rewrite_locked() {
  std::string text;
  for (const auto& h : hosts_) text += line_of(h);
  write_file(dir_ + "/clients", text);
  log_lines_ = hosts_.size();
}

// One line at the end of the log, on disk before it returns. A crash may leave the last line
// torn; it was never acknowledged (the lock it preceded was not granted), and a torn line reads
// as malformed or as an entry that holds nothing (notified once, then forgotten).
void StatusMonitor::append_locked(const std::string& line) {
  const std::string path = dir_ + "/clients";
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) throw std::runtime_error("open " + path + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::write(fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int e = errno;
      ::close(fd);
      throw std::runtime_error("write " + path + ": " + std::strerror(e));
    }
    done += static_cast<size_t>(n);
  }
  bool synced = ::fdatasync(fd) == 0;
  int e = errno;
  ::close(fd);
  if (!synced) throw std::runtime_error("fdatasync " + path + ": " + std::strerror(e));
  log_lines_++;
}

}  // namespace nasd::nlm
