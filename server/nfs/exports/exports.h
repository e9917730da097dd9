// The export table: every [export PATH] section of the configuration, with its volume name
// resolved to the volume id through the [volume NAME] sections.
//
// The table is an immutable snapshot swapped as a whole (add(), replace()): a call looks its
// policy up once and keeps the shared pointer for its whole run, so a reload never changes the
// rules in the middle of a call, and every call that starts after the swap sees the new rules —
// also for clients that mounted before it, because handles name their export by its stable id
// (export_id_for_path) rather than pointing into a table.
#pragma once

#include <sys/socket.h>

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "server/nfs/exports/export_policy.h"
#include "util/config.h"

namespace nasd::nfs {

// Splits an absolute path into components, dropping empty and "." ones. False for a relative
// path or one containing "..", which an export path or MNT request may not use.
bool split_export_path(std::string_view path, std::vector<std::string>* components);

class Exports {
 public:
  using Policy = std::shared_ptr<const ExportPolicy>;

  // Throws ConfigError when two exports share a path or a handle id.
  explicit Exports(std::vector<ExportPolicy> exports);
  Exports(const Exports& other) : table_(other.snapshot()) {}

  // Keys of an [export PATH] section: volume, clients, access (rw|ro, default ro),
  // squash (root|all|none, default root), secure (yes|no, default yes), anonuid, anongid
  // (default 65534), and `options`, a knfsd-style list (rw, ro, secure, insecure, root_squash,
  // no_root_squash, all_squash) that may restate but not contradict the keys above.
  // Throws ConfigError naming the line for an unknown key or option, a missing volume or
  // clients key, a volume without a [volume NAME] section or `id`, a bad value, or the same
  // path exported twice.
  static std::vector<ExportPolicy> parse(const Config& config);
  static std::shared_ptr<Exports> from_config(const Config& config);

  // The export a handle was issued under, when it still exports `volume_id`; nullptr (the
  // handle is stale) when the export is gone or now names another volume. A handle made
  // before handles named their export (export_id 0) gets the one export of its volume that
  // lists `peer`: nullptr when several do (the client must mount again), and the volume's
  // first export when none does (the caller's allows() check then refuses it).
  Policy for_handle(uint32_t volume_id, uint32_t export_id, const sockaddr_storage& peer) const;

  // The export whose path is the longest component-wise prefix of `components`; `*matched`
  // gets the number of components that belong to the export path. nullptr when none.
  Policy for_path(const std::vector<std::string>& components, size_t* matched) const;

  // The export that governs a client entering volume `volume_id` through a junction (MNT or
  // LOOKUP below /r) at `crossed_path`: the export of that path when it is of that volume and
  // lists `peer`; otherwise the most restrictive export of the volume that lists `peer`
  // (read-only before read-write, stronger squashing first), so crossing never grants more
  // than any export of the volume gives this client. nullptr when none lists `peer`.
  Policy for_crossing(uint32_t volume_id, const std::string& crossed_path,
                      const sockaddr_storage& peer) const;

  // Adds an export while the server runs (a volume created by the admin command). Throws
  // ConfigError when the path (or its handle id) is exported already.
  void add(ExportPolicy policy);
  // Replaces the whole table (a reload); validated like the constructor, and on a throw the
  // old table stays in force.
  void replace(std::vector<ExportPolicy> exports);

  // A snapshot, in configuration order.
  std::vector<ExportPolicy> all() const;

  // Whether some export lists `peer`, from a port it accepts: the rule for calls that name no
  // file (NLM's FREE_ALL and GRANTED_RES, and the _MSG calls whose handle does not resolve),
  // so that a host no export lists cannot make the server do anything for it.
  bool admits(const sockaddr_storage& peer) const;

 private:
  struct Table {
    std::vector<Policy> exports;
  };
  static std::shared_ptr<const Table> build(std::vector<ExportPolicy> exports);
  std::shared_ptr<const Table> snapshot() const;

  mutable std::mutex mu_;  // guards the pointer only; tables are immutable
  std::shared_ptr<const Table> table_;
};

// One export per line, for `nasd-admin exports`:
// "/r/v0 volume=v0 clients=127.0.0.0/8 rw,secure,root_squash anonuid=65534 anongid=65534".
std::string describe_export(const ExportPolicy& e);

}  // namespace nasd::nfs
