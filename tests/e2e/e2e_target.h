// A server the suite did not start: NASD_E2E_TARGET=HOST[:NFS_PORT[:MOUNT_PORT]]:/EXPORT, e.g.
// `127.0.1.3:2049:20048:/r/ifs` (node n3 of `deploy/start-cluster.sh --nodes 4 --scale-out`).
// With it set, E2eTest mounts EXPORT on HOST instead of starting a server, and each test works
// in a directory of its own below the export's root, so tests neither see nor disturb each
// other or anything else in the export (the directory is removed afterwards unless
// NASD_E2E_KEEP=1). Tests that need to restart, kill or configure a server of their own skip
// (NASD_E2E_NEEDS_OWN_SERVER in e2e_fixture.h). Without it, nothing changes: every test starts
// its own single server.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace nasd::e2e {

struct E2eTarget {
  std::string host;  // an IPv4 literal: the harness never resolves names
  uint16_t nfs_port = 2049;
  uint16_t mount_port = 20048;
  std::string export_path;  // absolute, as MNT takes it

  // The parsed NASD_E2E_TARGET, or nullopt when it is unset or empty. Throws
  // std::invalid_argument saying what is wrong with a malformed one (a typo must not quietly
  // run the suite against a server of its own instead).
  static std::optional<E2eTarget> from_environment();
  // The same for a given spec; ports default to 2049 and 20048.
  static E2eTarget parse(const std::string& spec);

  // "HOST:NFS_PORT:MOUNT_PORT:/EXPORT", the form parse() reads back.
  std::string describe() const;
  // nfs://HOST/EXPORT<path>?nfsport=P&mountport=Q&version=3[&extra]; `path` is "" or starts
  // with "/".
  std::string url(const std::string& path, const std::string& extra_query = "") const;
};

}  // namespace nasd::e2e
