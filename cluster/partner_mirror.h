// This node's copy of its partner's NVRAM: the second card of the HA pair. A MirrorServer keeps
// it in <data_dir>/partner-nvram.img, receiving every journal record of the partner before the
// partner acknowledges it. At a takeover the copy is what gets replayed onto the partner's
// volumes; it is copied first, so that the mirror file itself stays exactly what the partner
// knows it holds, for when the partner comes back.
#pragma once

#include <chrono>
#include <condition_variable>
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
  // partner cannot be acknowledged anyway), and stays paused for kResumeAfter after the last
  // copy: a takeover copies once per volume of the partner, one volume after the other, and
  // restarting the mirror between them (mapping and scanning the whole region, 0.1-0.7 s on
  // the drill's machine) was most of each volume's open.
  // NothingMirrored: the partner never connected here, so there is nothing to replay.
  // Failed (*error says why): there is something, and it could not be copied.
  enum class Copy { Copied, NothingMirrored, Failed };
  Copy copy_to(const std::string& path, std::string* error);

  static constexpr std::chrono::milliseconds kResumeAfter{500};

  std::string status() const;
  // The port bound by the first start() (resolves port 0); kept across pauses.
  uint16_t port() const;

 private:
  void start_locked();
  void stop_locked();
  // Restarts the paused link once no copy came for kResumeAfter (its own thread).
  void resume_when_quiet();

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
  // Paused by copy_to: the link restarts at resume_at_ (resume_when_quiet), unless stopped.
  bool resume_wanted_ = false;
  bool stopping_ = false;
  std::chrono::steady_clock::time_point resume_at_;
  std::condition_variable resume_cv_;
  std::thread resumer_;
};

}  // namespace nasd::cluster
