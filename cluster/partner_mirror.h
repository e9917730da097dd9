// This node's copy of its partner's NVRAM: the second card of the HA pair. A MirrorServer keeps
// it in <data_dir>/partner-nvram.img, receiving every journal record of the partner before the
// partner acknowledges it. At a takeover the copy is what gets replayed onto the partner's
// volumes; it is copied first, so that the mirror file itself stays exactly what the partner
// knows it holds, for when the partner comes back.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "nvram/mirror_server.h"
#include "nvram/region.h"

namespace nasd::cluster {

class PartnerMirror {
 public:
  // `options` carries the cluster key, this node's name and the partner's (the only primary
  // that may connect).
  PartnerMirror(std::string region_path, nvram::DurabilityMode mode, std::string host,
                uint16_t port, nvram::MirrorServerOptions options);
  ~PartnerMirror();  // stop()

  // Binds and serves on its own thread. Throws std::runtime_error when it cannot bind.
  void start();
  void stop();

  // A consistent copy of what the partner's mirror holds, in `path`, for a takeover replay:
  // the header and the live log only (nvram/region_copy.h), so its cost follows the records
  // not yet written behind, not the NVRAM's size. The link is paused while copying (a fenced
  // partner cannot be acknowledged anyway).
  // NothingMirrored: the partner never connected here, so there is nothing to replay.
  // Failed (*error says why): there is something, and it could not be copied.
  enum class Copy { Copied, NothingMirrored, Failed };
  Copy copy_to(const std::string& path, std::string* error);

  std::string status() const;
  // The port bound by the first start() (resolves port 0); kept across pauses.
  uint16_t port() const;

 private:
  void start_locked();
  void stop_locked();

  const std::string path_;
  const nvram::DurabilityMode mode_;
  const std::string host_;
  const uint16_t port_;
  const nvram::MirrorServerOptions options_;
  mutable std::mutex mu_;
  uint16_t bound_port_ = 0;
  std::unique_ptr<nvram::MirrorServer> server_;
  std::thread thread_;
  uint64_t copies_ = 0;
};

}  // namespace nasd::cluster
