#include "cluster/failover.h"

#include <chrono>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "cluster/interconnect/router.h"
#include "cluster/membership/lease_authority.h"
#include "cluster/membership/membership_service.h"
#include "cluster/volume_fence.h"
#include "util/log.h"

namespace nasd::cluster {
namespace {

using std::chrono::milliseconds;

membership::PairConfig pair_config(const FailoverWiring& w, const std::set<uint32_t>& home,
                                   const std::set<uint32_t>& partner_home) {
  membership::PairConfig c;
  c.self = w.self;
  c.partner = w.partner.name;
  c.home.assign(home.begin(), home.end());
  c.partner_home.assign(partner_home.begin(), partner_home.end());
  c.heartbeat_interval_ms = w.options.heartbeat_ms;
  c.missed_heartbeats = w.options.missed_heartbeats;
  c.lease_ms = w.options.lease_ms;
  // Renew early and stop trusting a lease well before it can run out at the authority.
  c.renew_after_ms = w.options.lease_ms / 4;
  c.safety_margin_ms = w.options.lease_ms / 4;
  c.retry_ms = std::min<int64_t>(500, w.options.lease_ms / 8);
  c.auto_failback = w.options.auto_failback;
  c.startup_grace_ms = w.options.startup_grace_ms;
  return c;
}

}  // namespace

Failover::Failover(FailoverWiring wiring) : w_(std::move(wiring)) {
  std::set<std::string> partner_names(w_.partner.volumes.begin(), w_.partner.volumes.end());
  for (const ConfigSection* s : w_.config->sections("volume")) {
    const uint32_t id = s->get_u32("id", 0);
    sections_[id] = s;
    (partner_names.count(s->name()) ? partner_home_ : home_).insert(id);
    trusted_until_[id] = std::make_shared<std::atomic<int64_t>>(0);
    bounds_[id] = std::make_shared<ServedBounds>();
    w_.router->set_fence(id, [this, id] { return lease_trusted_now(id); });
  }
  mirror_ = std::make_unique<PartnerMirror>(w_.data_dir + "/partner-nvram.img", w_.mirror_mode,
                                            w_.options.mirror_host, w_.options.mirror_port,
                                            w_.mirror_server);
  std::filesystem::create_directories(w_.options.shared_dir + "/leases");  // the fences
  leases_ = w_.authority;

  membership::MembershipHooks hooks;
  hooks.open = [this](uint32_t v) { open_volume(v); };
  hooks.start_routing = [this](uint32_t v) { w_.router->set_owner(v, w_.self); };
  hooks.serving = [this](uint32_t v) { bind_address_of(v); };
  hooks.stop_routing = [this](uint32_t v) { w_.router->set_owner(v, w_.partner.name); };
  hooks.close = [this](uint32_t v, bool lease_held) { close_volume(v, lease_held); };
  hooks.lease_trusted = [this](uint32_t v, std::chrono::steady_clock::time_point until) {
    auto it = trusted_until_.find(v);
    if (it != trusted_until_.end()) it->second->store(until.time_since_epoch().count());
    bounds_.at(v)->trusted_until(until);
  };
  membership::MembershipOptions mo;
  mo.pair = pair_config(w_, home_, partner_home_);
  try {
    membership_ = std::make_unique<membership::MembershipService>(mo, w_.partner_channel, leases_,
                                                                  std::move(hooks));
  } catch (const std::invalid_argument& e) {
    throw ConfigError(std::string("[cluster] ") + e.what());
  }
}

Failover::~Failover() { stop(); }

void Failover::attach(interconnect::InterconnectServer& server) { membership_->attach(server); }

void Failover::start() {
  mirror_->start();
  membership_->start();
  util::log("cluster").info("failover: pair " + w_.self + "/" + w_.partner.name + ", shared folder " +
         w_.options.shared_dir + ", failback " +
         (w_.options.auto_failback ? "auto" : "manual"));
}

void Failover::stop() {
  {
    std::lock_guard lock(stop_mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  stop_cv_.notify_all();
  membership_->stop();  // closes what is open (hooks) and releases the leases
  w_.home_server->release();
  w_.partner_server->release();
  mirror_->stop();
}

const ConfigSection& Failover::section_of(uint32_t id) const { return *sections_.at(id); }

bool Failover::lease_trusted_now(uint32_t id) const {
  auto it = trusted_until_.find(id);
  const bool trusted = it != trusted_until_.end() &&
                       std::chrono::steady_clock::now().time_since_epoch().count() < it->second->load();
  // Every call and write that passes counts as serving, whatever the deadline said: the serving
  // log's checker must see a node that acted past its lease.
  if (trusted) bounds_.at(id)->served_now();
  return trusted;
}

VirtualServer& Failover::server_of(uint32_t id) {
  return is_home(id) ? *w_.home_server : *w_.partner_server;
}

void Failover::open_volume(uint32_t id) {
  membership::Lease lease;
  std::string lease_error;
  // Before the open: the roll-forward and the replay write to the volume already.
  bounds_.at(id)->write_start(w_.serving_log, section_of(id).name(),
                              leases_->inspect(id, &lease, &lease_error) && lease.holder == w_.self ? lease.epoch : 0);
  milliseconds backoff(500);
  while (!try_open(id)) {
    std::unique_lock lock(stop_mu_);
    if (stopping_ || !lease_trusted_now(id)) {
      util::log("cluster").warn("volume " + section_of(id).name() + ": not opened, and no longer ours to retry");
      return;
    }
    util::log("cluster").warn("volume " + section_of(id).name() + ": retrying the open in " +
           std::to_string(backoff.count()) + " ms; until then it answers NFS3ERR_JUKEBOX");
    stop_cv_.wait_for(lock, backoff, [this] { return stopping_; });
    backoff = std::min(backoff * 2, milliseconds(8000));
  }
}

bool Failover::try_open(uint32_t id) {
  const ConfigSection& section = section_of(id);
  std::string copy;
  bool opened = false;
  try {
    // First the fence: a write the previous owner had begun must be done before we read.
    const auto owned = [this, id] { return lease_trusted_now(id); };
    std::string error;
    // With etcd the lease's epoch (an etcd revision, larger for every new holder) is the
    // fence's token; the file authority's fence counts its own.
    std::optional<uint64_t> epoch;
    const bool epochs = leases_->epochs_fence();
    if (epochs) {
      membership::Lease lease;
      if (!leases_->inspect(id, &lease, &error))
        throw std::runtime_error("reading the lease for its epoch: " + error);
      if (lease.holder != w_.self)
        throw std::runtime_error("the lease is held by " +
                                 (lease.holder.empty() ? std::string("nobody") : lease.holder));
      epoch = lease.epoch;
    }
    auto fence = VolumeFence::take(
        VolumeFence::fence_path(w_.options.shared_dir + "/leases", section.name(), epochs),
        w_.self, owned, milliseconds(w_.options.lease_ms), &error, epoch);
    if (!fence) throw std::runtime_error("taking the fence: " + error);
    if (!is_home(id)) {
      // A takeover: the partner's acknowledged operations that its file system may not hold
      // yet are in this node's copy of its NVRAM.
      copy = w_.data_dir + "/takeover-" + section.name() + ".img";
      switch (mirror_->copy_to(copy, &error)) {
        case PartnerMirror::Copy::Copied:
          break;
        case PartnerMirror::Copy::NothingMirrored:
          util::log("cluster").warn("volume " + section.name() + ": no copy of the partner's NVRAM to replay (" +
                 error + ")");
          copy.clear();
          break;
        case PartnerMirror::Copy::Failed:
          throw std::runtime_error("copying the partner's NVRAM: " + error);
      }
    }
    w_.router->add_local(w_.volumes->open(section, *w_.config, w_.options.shared_dir, copy,
                                          std::move(fence), owned));
    opened = true;
    if (w_.volume_opened) w_.volume_opened(id, is_home(id));
  } catch (const std::exception& e) {
    util::log("cluster").error("volume " + section.name() + " could not be opened: " + e.what());
  }
  std::error_code ignored;  // a copy that could not be made may not be removable either
  if (!copy.empty()) std::filesystem::remove(copy, ignored);
  return opened;
}

void Failover::bind_address_of(uint32_t id) {
  {
    std::lock_guard lock(served_mu_);
    served_.insert(id);
  }
  bounds_.at(id)->write_ready(w_.serving_log, section_of(id).name());
  // The partner may still be closing the address (failback), or hang on to it (a hung node):
  // it is claimed until it can be bound.
  server_of(id).claim();
}

void Failover::close_volume(uint32_t id, bool lease_held) {
  bool last_of_its_address = true;
  {
    std::lock_guard lock(served_mu_);
    served_.erase(id);
    for (uint32_t v : served_) last_of_its_address &= is_home(v) != is_home(id);
  }
  // The address goes first, so the partner can take it over as soon as it has the volume.
  if (last_of_its_address) server_of(id).release();
  if (w_.volume_closed) w_.volume_closed(id);
  w_.volumes->close(id, lease_held);
  // After the close (its checkpoint writes under the lease), before the lease is released.
  bounds_.at(id)->write_stop(w_.serving_log, section_of(id).name());
}

std::string Failover::status() const {
  std::ostringstream out;
  out << "node " << w_.self << ", partner " << w_.partner.name << ": "
      << membership_->status() << (membership_->standby() ? " (standby: planned failover)" : "")
      << "\n";
  const int64_t now = leases_->now_ms();
  for (const auto& [id, section] : sections_) {
    out << "volume " << section->name() << " (id " << id << "): home "
        << (is_home(id) ? w_.self : w_.partner.name);
    auto owner = w_.router->owner(id);
    out << ", routed to " << (owner && *owner == w_.self ? "here" : owner ? *owner : "nobody");
    out << (membership_->serving(id) ? ", served here" : "");
    membership::Lease lease;
    std::string error;
    if (leases_->inspect(id, &lease, &error)) {
      if (lease.holder.empty() || lease.expires_ms <= now)
        out << ", lease free";
      else
        out << ", lease " << lease.holder << " epoch " << lease.epoch << " for "
            << (lease.expires_ms - now) << " ms";
    } else {
      out << ", lease unreadable: " << error;
    }
    out << "\n";
  }
  for (const VirtualServer* vs : {w_.home_server.get(), w_.partner_server.get()})
    out << "virtual server " << vs->describe() << ": " << (vs->bound() ? "served here" : "not here")
        << "\n";
  out << mirror_->status() << "\n";
  return out.str();
}

Failover::Report Failover::report() const {
  Report r;
  r.membership = membership_->status();
  r.standby = membership_->standby();
  r.virtual_servers.push_back({w_.self, w_.home_server->describe(), w_.home_server->bound()});
  r.virtual_servers.push_back(
      {w_.partner.name, w_.partner_server->describe(), w_.partner_server->bound()});
  for (const auto& [id, section] : sections_)
    if (membership_->serving(id)) r.serving.push_back(id);
  return r;
}

std::string Failover::failover() {
  membership_->request_failover();
  return "planned failover: " + w_.self + "'s volumes are drained and handed to " +
         w_.partner.name + "; `failback` brings them back\n";
}

std::string Failover::failback() {
  membership_->request_failback(true);
  return "failback requested: " + w_.partner.name + " drains " + w_.self +
         "'s volumes and hands them back\n";
}

}  // namespace nasd::cluster
