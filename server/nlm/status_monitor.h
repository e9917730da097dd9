// The server side of the Network Status Monitor: this node's state number and the clients that
// hold (or held) locks here, both kept in files so that they outlive a crash.
//
// Why persisted: locks live only in memory. After a restart (kill -9 included) the server must
// tell every client that held locks that it rebooted (SM_NOTIFY with a new, odd state number),
// so that the clients reclaim their locks in the grace period. The list is written before the
// first lock of a new client is granted, so no client that got a lock is ever missing from it.
//
// A client is the pair (caller_name, address it calls from), as the lock manager keys its
// owners (lock_manager.h): one name at two addresses is two entries, and an entry is never
// rebound to another address -- a client that claims another's name gets an entry of its own,
// and the other's SM_NOTIFY still goes to the other. Bounded twice: `max_hosts` entries in all
// and `max_per_address` names per address, so that invented names from one address cannot fill
// the list for everyone; entries that hold no state are forgotten by the lock state when room
// is needed (LockState::record_client).
//
// Files (in `dir`): `state` (the decimal state number), `clients` (a log: "address name" adds an
// entry, "- address name" removes it; appended and fsynced one line per change, so a new client
// costs one short write whatever the list's length, and rewritten whole -- compacted -- when the
// log has grown to twice the list). (In a cluster, each volume's clients are also recorded apart
// -- volume_client_log.h -- for the node that takes that volume over.) Thread-safe.
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
  bool operator==(const MonitoredHost&) const = default;
};

class StatusMonitor {
 public:
  // Loads `dir`/state and `dir`/clients (creating `dir`), moves to the next odd state number
  // and writes it. Throws std::runtime_error when the folder or files cannot be written.
  StatusMonitor(std::string dir, size_t max_hosts, size_t max_per_address = 64);

  int32_t state() const;
  // The state number advances by two (stays odd): SM_SIMU_CRASH.
  int32_t advance_state();
  // Remembers `name` at `address` (durably, before it returns true). False when the list is
  // full, `address` has max_per_address names already, or the name cannot be stored (empty, or
  // with white space or control characters).
  bool monitor(const std::string& name, const std::string& address);
  bool monitored(const std::string& name, const std::string& address) const;
  // Whether one more name at `address` would be refused for lack of room.
  bool full_for(const std::string& address) const;
  // Forgets these entries (name and address); one rewrite of the file.
  void forget(const std::vector<MonitoredHost>& gone);
  // SM_UNMON (every address of `name`) and SM_UNMON_ALL.
  void unmonitor(const std::string& name);
  void unmonitor_all();
  std::vector<MonitoredHost> hosts() const;

  // Reads a client list (this log format; a volume's list has a third field, `called`):
  // entries in the order first added, each once; missing or unreadable: empty. Malformed lines
  // are skipped; at most 2^20 entries are kept.
  static std::vector<MonitoredHost> load_hosts(const std::string& path);

 private:
  void rewrite_locked();
  void append_locked(const std::string& line);
  size_t names_at_locked(const std::string& address) const;

  const std::string dir_;
  const size_t max_hosts_;
  const size_t max_per_address_;
  mutable std::mutex mu_;
  int32_t state_ = 1;
  std::vector<MonitoredHost> hosts_;
  size_t log_lines_ = 0;  // lines in the clients file
};

}  // namespace nasd::nlm
