// The export table: every [export PATH] section of the configuration, with its volume name
// resolved to the volume id through the [volume NAME] sections.
#pragma once

#include <sys/socket.h>

#include <deque>
#include <memory>
#include <shared_mutex>
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
  explicit Exports(std::vector<ExportPolicy> exports);
  Exports(const Exports& other) : exports_(other.snapshot_deque()) {}

  // Keys of an [export PATH] section: volume, clients, access (rw|ro, default ro),
  // squash (root|all|none, default root), anonuid, anongid (default 65534).
  // Throws ConfigError for an unknown key, a missing volume or clients key, a volume without
  // a [volume NAME] section or `id`, a bad value, or the same path exported twice.
  static std::shared_ptr<Exports> from_config(const Config& config);

  // The policy for a call from `peer` on volume `volume_id`: the first export of that volume,
  // in configuration order, that lists the peer. nullptr when none does.
  const ExportPolicy* for_volume(uint32_t volume_id, const sockaddr_storage& peer) const;

  // The export whose path is the longest component-wise prefix of `components`; `*matched`
  // gets the number of components that belong to the export path. nullptr when none.
  const ExportPolicy* for_path(const std::vector<std::string>& components,
                               size_t* matched) const;

  // Adds an export while the server runs (a volume created by the admin command). Policies
  // are never removed, and a deque never moves its elements, so the pointers for_volume() and
  // for_path() returned stay valid. Throws ConfigError when the path is exported already.
  void add(ExportPolicy policy);

  // A snapshot, in configuration order.
  std::vector<ExportPolicy> all() const;

 private:
  std::deque<ExportPolicy> snapshot_deque() const;

  mutable std::shared_mutex mu_;
  std::deque<ExportPolicy> exports_;
};

}  // namespace nasd::nfs
