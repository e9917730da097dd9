// The server side of the Network Status Monitor: this node's state number and the clients that
// hold (or held) locks here, both kept in files so that they outlive a crash.
//
// Why persisted: locks live only in memory. After a restart (kill -9 included) the server must
// tell every client that held locks that it rebooted (SM_NOTIFY with a new, odd state number),
// so that the clients reclaim their locks in the grace period. The list is written before the
// first lock of a new client is granted, so no client that got a lock is ever missing from it.
//
// Files (in `dir`): `state` (the decimal state number), `clients` (one "address name" per line).
// (In a cluster, each volume's clients are also recorded apart -- volume_client_log.h -- for
// the node that takes that volume over.) Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace nasd::nlm {

struct MonitoredHost {
  std::string name;     // the client's caller_name
  std::string address;  // where its NLM and status monitor answer (numeric)
  // The server address it locked at ("": not known, the server's own name applies). Kept only
  // in a volume's client list: after a takeover, SM_NOTIFY names the server the client knows,
  // which is the address it called (a forwarding node's, or the volume's virtual server's).
  std::string called = "";
};

class StatusMonitor {
 public:
  // Loads `dir`/state and `dir`/clients (creating `dir`), moves to the next odd state number
  // and writes it. Throws std::runtime_error when the folder or files cannot be written.
  StatusMonitor(std::string dir, size_t max_hosts);

  int32_t state() const;
  // The state number advances by two (stays odd): SM_SIMU_CRASH.
  int32_t advance_state();
  // Remembers `name` at `address`; writes the list when it changed. False when the list is
  // full or the name cannot be stored (empty, or with white space or control characters).
  bool monitor(const std::string& name, const std::string& address);
  void unmonitor(const std::string& name);
  void unmonitor_all();
  // The address recorded for `name`, or "" when unknown.
  std::string address_of(const std::string& name) const;
  std::vector<MonitoredHost> hosts() const;

  // Reads a `clients` file (this format: one "address name" per line); missing or unreadable:
  // empty.
  static std::vector<MonitoredHost> load_hosts(const std::string& path);

 private:
  void save_hosts_locked() const;

  const std::string dir_;
  const size_t max_hosts_;
  mutable std::mutex mu_;
  int32_t state_ = 1;
  std::vector<MonitoredHost> hosts_;
};

}  // namespace nasd::nlm
