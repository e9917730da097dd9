// The [nlm] section: the lock manager and status monitor of a node.
//
//   [nlm]
//   grace_ms = 45000            # after a start or a volume's failover only reclaims are granted
//   notify_name = 192.0.2.10    # the name SM_NOTIFY gives for this server (default: [node] listen,
//                               # or the host name when that is a wildcard)
//   max_locks = 1048576         # locks + waiting requests + shares, over all clients
//   max_locks_per_host = 65536  # ... of one client address (and 4 KiB each of their bytes)
//   max_locks_per_file = 4096   # ... on one file (and 4 KiB each of their bytes)
//   max_hosts = 4096            # clients the status monitor remembers (idle ones make room)
//   max_names_per_address = 64  # caller_names the status monitor takes from one address
//   callback_timeout_ms = 2000  # per GRANTED / _RES / SM_NOTIFY call to a client
//   callback_attempts = 5       # before a callback is given up
//   callback_threads = 4        # threads calling clients back (one only for GRANTED/SM_NOTIFY)
//   callback_queue_per_host = 64  # _RES replies queued for one client; more are dropped
#pragma once

#include <cstdint>
#include <string>

#include "util/config.h"

namespace nasd::nlm {

struct NlmOptions {
  uint32_t grace_ms = 45000;
  std::string notify_name;
  size_t max_locks = 1 << 20;
  size_t max_locks_per_host = 1 << 16;
  size_t max_locks_per_file = 1 << 12;
  size_t max_hosts = 4096;
  size_t max_names_per_address = 64;
  uint32_t callback_threads = 4;
  size_t callback_queue_per_host = 64;
  uint32_t callback_timeout_ms = 2000;
  uint32_t callback_attempts = 5;
  // Not a config key: the fuzzer turns calls to clients off (they are dropped and counted).
  bool send_callbacks = true;

  // Throws ConfigError for an unknown key or a value out of range.
  static NlmOptions from_config(const Config& config);
};

}  // namespace nasd::nlm
