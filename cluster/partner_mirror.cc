#include "cluster/partner_mirror.h"

#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <stdexcept>

#include "nvram/region_copy.h"
#include "util/contained_thread.h"
#include "util/log.h"

namespace nasd::cluster {

PartnerMirror::PartnerMirror(std::string region_path, nvram::DurabilityMode mode, std::string host,
                             uint16_t port, nvram::MirrorServerOptions options)
    : path_(std::move(region_path)),
      mode_(mode),
      host_(std::move(host)),
      port_(port),
      options_(std::move(options)) {}

PartnerMirror::~PartnerMirror() { stop(); }

void PartnerMirror::start() {
  std::lock_guard lock(mu_);
  resume_wanted_ = false;
  if (!server_) start_locked();
}

void PartnerMirror::stop() {
  std::thread resumer;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    resume_wanted_ = false;
    resumer.swap(resumer_);
  }
  resume_cv_.notify_all();
  if (resumer.joinable()) resumer.join();
  std::lock_guard lock(mu_);
  stop_locked();
  stopping_ = false;  // start() may bring it up again
}

void PartnerMirror::resume_when_quiet() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    if (!resume_wanted_) {
      resume_cv_.wait(lock);
      continue;
    }
    if (std::chrono::steady_clock::now() < resume_at_) {
      resume_cv_.wait_until(lock, resume_at_);  // a later copy moves resume_at_ on
      continue;
    }
    resume_wanted_ = false;
    try {
      if (!server_) start_locked();
    } catch (const std::exception& e) {
      util::log("cluster").error("partner mirror " + path_ + ": not restarted after a takeover copy (" +
                                 e.what() + "); trying again in 1 s");
      resume_wanted_ = true;
      resume_at_ = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    }
  }
}

void PartnerMirror::start_locked() {
  auto server = std::make_unique<nvram::MirrorServer>(path_, mode_, options_);
  // Right after a pause the old socket may linger a moment; a few tries cover it.
  for (int attempt = 0;; ++attempt) {
    try {
      bound_port_ = server->listen(host_, bound_port_ ? bound_port_ : port_);
      break;
    } catch (const std::runtime_error&) {
      if (attempt >= 20) throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  server_ = std::move(server);
  // serve() contains every exception of its connections; contained_thread catches the rest.
  thread_ = util::contained_thread("cluster", "partner mirror", [s = server_.get()] { s->serve(); });
}

void PartnerMirror::stop_locked() {
  if (!server_) return;
  server_->stop();
  if (thread_.joinable()) thread_.join();
  server_.reset();
}

PartnerMirror::Copy PartnerMirror::copy_to(const std::string& path, std::string* error) {
  std::unique_lock lock(mu_);
  const bool was_running = server_ != nullptr || resume_wanted_;
  stop_locked();
  Copy result = Copy::NothingMirrored;
  if (!std::filesystem::exists(path_)) {
    if (error) *error = path_ + ": the partner never mirrored anything here";
  } else if (nvram::LiveCopyStats stats; nvram::copy_live_region(path_, path, &stats, error)) {
    // Only what the replay reads (the header and the live log), not the whole image.
    result = Copy::Copied;
    ++copies_;
    util::log("cluster").info("partner mirror " + path_ + ": copied log [" + std::to_string(stats.head) + ", " +
                              std::to_string(stats.end) + "), " + std::to_string(stats.copied) + " of " +
                              std::to_string(stats.region_size) + " bytes, for the takeover replay");
  } else {
    result = Copy::Failed;
  }
  if (was_running && !stopping_) {
    resume_wanted_ = true;
    resume_at_ = std::chrono::steady_clock::now() + kResumeAfter;
    if (!resumer_.joinable())
      resumer_ = util::contained_thread("cluster", "partner mirror resume", [this] { resume_when_quiet(); });
    resume_cv_.notify_all();
  }
  return result;
}

uint16_t PartnerMirror::port() const {
  std::lock_guard lock(mu_);
  return bound_port_;
}

std::string PartnerMirror::status() const {
  std::lock_guard lock(mu_);
  std::string out =
      "partner mirror: " + path_ + " on " + host_ + ":" + std::to_string(bound_port_);
  if (!server_) return out + (resume_wanted_ ? ", paused for a takeover copy" : ", stopped");
  return out + ", holds records up to log position " + std::to_string(server_->tail()) +
         ", copied for takeover " + std::to_string(copies_) + " time(s), " +
         std::to_string(server_->refused()) + " connection(s) refused";
}

}  // namespace nasd::cluster
