#include "server/nlm/status_monitor.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "util/durable_file.h"

namespace nasd::nlm {
namespace {

bool storable(const std::string& s) {
  if (s.empty() || s.size() > 1024) return false;
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

}  // namespace

StatusMonitor::StatusMonitor(std::string dir, size_t max_hosts)
    : dir_(std::move(dir)), max_hosts_(max_hosts) {
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
  hosts_ = load_hosts(dir_ + "/clients");
  if (hosts_.size() > max_hosts_) hosts_.resize(max_hosts_);
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

bool StatusMonitor::monitor(const std::string& name, const std::string& address) {
  if (!storable(name) || !storable(address)) return false;
  std::lock_guard lock(mu_);
  auto it = std::find_if(hosts_.begin(), hosts_.end(),
                         [&](const MonitoredHost& h) { return h.name == name; });
  if (it != hosts_.end()) {
    if (it->address == address) return true;
    it->address = address;
  } else {
    if (hosts_.size() >= max_hosts_) return false;
    hosts_.push_back({name, address});
  }
  save_hosts_locked();
  return true;
}

void StatusMonitor::unmonitor(const std::string& name) {
  std::lock_guard lock(mu_);
  size_t before = hosts_.size();
  std::erase_if(hosts_, [&](const MonitoredHost& h) { return h.name == name; });
  if (hosts_.size() != before) save_hosts_locked();
}

void StatusMonitor::unmonitor_all() {
  std::lock_guard lock(mu_);
  hosts_.clear();
  save_hosts_locked();
}

std::string StatusMonitor::address_of(const std::string& name) const {
  std::lock_guard lock(mu_);
  for (const auto& h : hosts_)
    if (h.name == name) return h.address;
  return "";
}

std::vector<MonitoredHost> StatusMonitor::hosts() const {
  std::lock_guard lock(mu_);
  return hosts_;
}

std::vector<MonitoredHost> StatusMonitor::load_hosts(const std::string& path) {
  std::vector<MonitoredHost> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line) && out.size() < (1u << 20)) {
    std::istringstream fields(line);
    MonitoredHost h;
    if (!(fields >> h.address >> h.name) || !storable(h.name) || !storable(h.address)) continue;
    if (fields >> h.called && !storable(h.called)) continue;  // optional (a volume's list)
    out.push_back(std::move(h));
  }
  return out;
}

void StatusMonitor::save_hosts_locked() const {
  std::string text;
  for (const auto& h : hosts_) text += h.address + " " + h.name + "\n";
  write_file(dir_ + "/clients", text);
}

}  // namespace nasd::nlm
