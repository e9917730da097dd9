// The status monitor's files (server/nlm/status_monitor.h), read at every start: `sm/state`
// and `sm/clients` (a log of "address name" and "- address name" lines; a volume's client list
// in the shared folder, cluster/volume_lock_files.h, is read by the same code with a third
// field). Input: the state file's bytes, a zero byte, the client log's bytes. Whatever they
// hold, the monitor must start with an odd state number and a bounded list of distinct,
// storable entries, write that list back so that it reads the same, and keep it so through a
// new client and a forgotten one.
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "server/nlm/status_monitor.h"
#include "tests/fuzz/nlm/scratch_dir.h"

namespace {

using nasd::nlm::fuzz::scratch_dir;

void put(const std::string& path, const uint8_t* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
}

bool storable(const std::string& s) {
  return !s.empty() && s.size() <= 1024 && s != "-" &&
         std::all_of(s.begin(), s.end(), [](char c) {
           auto u = static_cast<unsigned char>(c);
           return u > ' ' && u != 0x7f;
         });
}

void check_list(const std::vector<nasd::nlm::MonitoredHost>& hosts, size_t bound) {
  if (hosts.size() > bound) __builtin_trap();
  for (size_t i = 0; i < hosts.size(); ++i) {
    if (!storable(hosts[i].name) || !storable(hosts[i].address)) __builtin_trap();
    if (!hosts[i].called.empty() && !storable(hosts[i].called)) __builtin_trap();
    for (size_t j = i + 1; j < hosts.size(); ++j)
      if (hosts[i] == hosts[j]) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using nasd::nlm::MonitoredHost;
  using nasd::nlm::StatusMonitor;
  const uint8_t* split = static_cast<const uint8_t*>(std::memchr(data, 0, size));
  const size_t state_size = split ? static_cast<size_t>(split - data) : size;
  const uint8_t* clients = split ? split + 1 : data + size;
  const size_t clients_size = static_cast<size_t>(data + size - clients);
  const std::string dir = scratch_dir() + "/sm";
  std::filesystem::create_directories(dir);
  put(dir + "/state", data, state_size);
  put(dir + "/clients", clients, clients_size);

  // A volume's list: the same reader, the third field allowed.
  check_list(StatusMonitor::load_hosts(dir + "/clients"), size_t{1} << 20);

  constexpr size_t kMaxHosts = 8, kPerAddress = 3;
  StatusMonitor m(dir, kMaxHosts, kPerAddress);
  if (m.state() <= 0 || m.state() % 2 != 1) __builtin_trap();
  std::vector<MonitoredHost> hosts = m.hosts();
  check_list(hosts, kMaxHosts);
  for (const MonitoredHost& h : hosts)
    if (!h.called.empty()) __builtin_trap();  // the status monitor's list has no third field
  if (StatusMonitor::load_hosts(dir + "/clients") != hosts) __builtin_trap();

  // A new client (when there is room) and a forgotten one: the log still reads as the list.
  const bool known = m.monitored("fuzz-client", "192.0.2.1");
  const bool room = !m.full_for("192.0.2.1");
  if (m.monitor("fuzz-client", "192.0.2.1") != (known || room)) __builtin_trap();
  if (!hosts.empty()) m.forget({hosts.front()});
  check_list(m.hosts(), kMaxHosts);
  if (StatusMonitor::load_hosts(dir + "/clients") != m.hosts()) __builtin_trap();
  return 0;
}
