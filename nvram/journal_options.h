// Settings of the NVRAM journal, read from the [nvram] section of the configuration.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "nvram/region.h"
#include "util/config.h"
#include "util/link_handshake.h"

namespace nasd::nvram {

// What the journal does when its mirror partner is unreachable.
enum class MirrorPolicy {
  Continue,  // keep serving, committing to local NVRAM only (logged as DEGRADED)
  Fail,      // fail mutations with NFS3ERR_JUKEBOX until the partner is back
};

struct JournalOptions {
  std::string path;                  // region file
  uint64_t size = 2ull << 30;        // region bytes (header page + log)
  DurabilityMode mode = DurabilityMode::Process;
  // `mode = off`: no journal. The node runs as an appliance whose NVRAM failed, its volumes
  // writing every stable operation through themselves (kept for benchmarks that measure what
  // the journal buys).
  bool enabled = true;
  // Write-behind asks the file systems to flush once the log is this full (percent)...
  uint32_t flush_threshold_pct = 50;
  // ... and at least this often while it holds records.
  std::chrono::milliseconds flush_interval{5000};
  // Longest a mutation waits for log space before the volume writes it through instead.
  std::chrono::milliseconds space_wait{10000};
  std::string mirror;                // "host:port" of the partner's nasd-mirror; empty = none
  // The mirror link is authenticated (util/link_handshake.h): the key, this side's name and
  // the mirror's name. [nvram] mirror_key (a file, default cluster.key in the data folder,
  // created when missing; give nasd-mirror the same file), mirror_name (default "mirror");
  // this side is "primary". A node of a pair sets these from [cluster] instead.
  // Journal::open reads mirror_key_file (creating it when missing) when the credentials hold
  // no key yet.
  std::string mirror_key_file;
  link::Credentials mirror_credentials{{}, "primary"};
  std::string mirror_peer = "mirror";
  // Where the mirror link leaves from: a cluster node sets its own interconnect address (not a
  // config key); empty: the kernel's choice.
  std::string mirror_source = "";
  MirrorPolicy mirror_policy = MirrorPolicy::Continue;
  // Longest a commit waits for the partner's ack before declaring the mirror lost.
  std::chrono::milliseconds mirror_timeout{2000};

  // Reads [nvram] (every key optional); a relative file is taken inside `data_dir`, the node's
  // resolved data folder (the node owns [node], so the path is resolved in one place).
  // Throws ConfigError naming the key on a bad or unknown value.
  static JournalOptions from_config(const Config& cfg, const std::string& data_dir);
};

}  // namespace nasd::nvram
