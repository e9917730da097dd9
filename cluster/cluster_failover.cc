#include "cluster/cluster_failover.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "cluster/interconnect/router.h"
#include "cluster/membership/cluster_membership_service.h"
#include "cluster/membership/lease_authority.h"
#include "cluster/membership/placement_store.h"
#include "cluster/volume_fence.h"
#include "nvram/journal.h"
#include "util/log.h"

namespace nasd::cluster {
namespace {

using std::chrono::milliseconds;

}  // namespace

ClusterFailover::ClusterFailover(ClusterFailoverWiring wiring) : w_(std::move(wiring)) {
  const ClusterOptions& c = *w_.cluster;
  const FailoverOptions& f = *c.failover;
  const MemberOptions& self = *c.member(w_.self);
  for (const ConfigSection* s : w_.config->sections("volume")) {
    const uint32_t id = s->get_u32("id", 0);
    const EvsOptions* evs = c.evs_of_volume(s->name());
    if (!evs) throw ConfigError("[volume " + s->name() + "] is served by no [evs]");
    sections_[id] = s;
    home_[id] = evs->node;
    evs_[id] = evs->name;
    trusted_until_[id] = std::make_shared<std::atomic<int64_t>>(0);
    bounds_[id] = std::make_shared<ServedBounds>();
    w_.router->set_fence(id, [this, id] { return lease_trusted_now(id); });
  }
  // One copy per covered node, each on its own port.
  for (size_t k = 0; k < self.covers.size(); ++k) {
    const std::string& node = self.covers[k];
    nvram::MirrorServerOptions mo = w_.mirror_server;
    mo.primary = node;
    const std::string image = w_.data_dir + "/mirror-" + node + ".img";
    // A pair node's copy from before the pair ran as a ring of two keeps its records: a
    // takeover right after the upgrade still replays them.
    const std::string pair_image = w_.data_dir + "/partner-nvram.img";
    std::error_code ec;
    if (self.covers.size() == 1 && std::filesystem::exists(pair_image, ec) &&
        !std::filesystem::exists(image, ec)) {
      std::filesystem::rename(pair_image, image, ec);
      if (!ec) util::log("cluster").info("partner-nvram.img is now " + image);
    }
    mirrors_[node] = std::make_unique<PartnerMirror>(image, w_.mirror_mode, self.mirror_host,
                                                     static_cast<uint16_t>(self.mirror_port + k), mo);
  }
  // Every EVS: a planned move may bring any of them here.
  std::map<std::string, std::string> evs_node;
  for (const EvsOptions& e : c.evs) {
    evs_servers_[e.name] = w_.make_evs(e);
    evs_node[e.name] = e.node;
  }
  from_config_ = membership::initial_placement(evs_node, evs_);
  try {
    placement_store_ = membership::make_placement_store(c.authority);
  } catch (const std::invalid_argument& e) {
    throw ConfigError(std::string("[cluster] ") + e.what());
  }
  std::filesystem::create_directories(f.shared_dir + "/leases");  // the storage fences
  const std::shared_ptr<nvram::Journal>& journal = w_.volumes ? w_.volumes->journal() : nullptr;
  if (journal && !self.mirror_to.empty() && !journal->options().mirror.empty() &&
      journal->options().mirror_policy == nvram::MirrorPolicy::Continue) {
    StaleMirrorGateOptions go;
    go.self = w_.self;
    go.partner = self.mirror_to;
    // Longer than one authority call (etcd_timeout_ms, or a file write), shorter than a
    // client's patience: past it the write is refused JUKEBOX and retried.
    go.admit_within = milliseconds(std::max<int64_t>(2000, c.authority.etcd.timeout.count() * 2));
    stale_gate_ = std::make_shared<StaleMirrorGate>(
        go, placement_store_, from_config_, journal->log_end(),
        [this](const membership::Placement& p) {
          if (membership_) membership_->placement_written(p);
        });
    journal->set_unmirrored_gate(stale_gate_);
  }
  leases_ = w_.authority;

  membership::ClusterHooks hooks;
  hooks.open_from = [this](uint32_t v, const std::string& from) { open_volume(v, from); };
  hooks.close_clean = [this](uint32_t v, bool lease_held) { return close_volume(v, lease_held); };
  hooks.placement = [this](const membership::Placement& p) { placement_changed(p); };
  hooks.settled = [this] {
    if (stale_gate_) stale_gate_->node_settled();
  };
  hooks.volume.start_routing = [this](uint32_t v) { w_.router->set_owner(v, w_.self); };
  hooks.volume.serving = [this](uint32_t v) { bind_address_of(v); };
  hooks.volume.lease_trusted = [this](uint32_t v, std::chrono::steady_clock::time_point until) {
    auto it = trusted_until_.find(v);
    if (it != trusted_until_.end()) it->second->store(until.time_since_epoch().count());
    bounds_.at(v)->trusted_until(until);
  };
  hooks.route = [this](uint32_t v, const std::string& node) { w_.router->set_owner(v, node); };

  membership::ClusterMembershipOptions mo;
  membership::ClusterMemberConfig& m = mo.member;
  m.self = w_.self;
  for (const MemberOptions& peer : c.members)
    if (peer.name != w_.self) m.peers.push_back(peer.name);
  m.home = home_;
  m.covers.insert(self.covers.begin(), self.covers.end());
  m.heartbeat_interval_ms = f.heartbeat_ms;
  m.missed_heartbeats = f.missed_heartbeats;
  m.lease_ms = f.lease_ms;
  // As the pair: renew early, stop trusting a lease well before it can run out.
  m.renew_after_ms = f.lease_ms / 4;
  m.safety_margin_ms = f.lease_ms / 4;
  // A refused acquire is retried this soon: after a kill -9 it decides how long after the dead
  // node's lease runs out the survivor holds it. etcd removes an expired lease's key only at its
  // next expiry round (every 500 ms), so with 500 ms here a takeover could take the lease up to
  // 1 s past the lease (5.24 s once in the 4-node drill, target 5 s). One small request per
  // volume per retry, only while a lease is refused or the authority unreachable.
  m.retry_ms = std::clamp<int64_t>(f.lease_ms / 40, 20, 500);
  m.auto_failback = f.auto_failback;
  m.startup_grace_ms = f.startup_grace_ms;
  m.placement_from_authority = true;
  try {
    membership_ = std::make_unique<membership::ClusterMembershipService>(mo, w_.peers, leases_,
                                                                         std::move(hooks));
  } catch (const std::invalid_argument& e) {
    throw ConfigError(std::string("[cluster] ") + e.what());
  }
  membership_->set_placement_store(placement_store_, from_config_);
  // Until the membership knows better, a volume's requests go to its home node.
  for (const auto& [id, home] : home_)
    if (home != w_.self) w_.router->set_owner(id, home);
}

ClusterFailover::~ClusterFailover() { stop(); }

void ClusterFailover::attach(interconnect::InterconnectServer& server) {
  membership_->attach(server);
}

void ClusterFailover::start() {
  for (auto& [node, mirror] : mirrors_) mirror->start();
  membership_->start();
  const MemberOptions& self = *w_.cluster->member(w_.self);
  std::string covers;
  for (const auto& n : self.covers) covers += (covers.empty() ? "" : ",") + n;
  util::log("cluster").info("failover cluster: node " + w_.self +
                            (self.standby ? " (standby)" : self.storage ? " (storage)" : "") +
                            " of " + std::to_string(w_.cluster->members.size()) + ", covers " +
                            (covers.empty() ? "nobody" : covers) + ", mirrored to " +
                            (self.mirror_to.empty() ? "nobody" : self.mirror_to));
}

void ClusterFailover::quiesce() {
  if (membership_) membership_->quiesce();
}

void ClusterFailover::stop() {
  {
    std::lock_guard lock(stop_mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  stop_cv_.notify_all();
  membership_->stop();
  for (auto& [name, vs] : evs_servers_) vs->release();
  for (auto& [node, mirror] : mirrors_) mirror->stop();
  if (stale_gate_) stale_gate_->stop();  // the journal's later unmirrored commits are refused
}

bool ClusterFailover::lease_trusted_now(uint32_t id) const {
  auto it = trusted_until_.find(id);
  const bool trusted = it != trusted_until_.end() &&
                       std::chrono::steady_clock::now().time_since_epoch().count() < it->second->load();
  // Every call and write that passes counts as serving (the serving log's checker must see a
  // node that acted past its lease).
  if (trusted) bounds_.at(id)->served_now();
  return trusted;
}

void ClusterFailover::open_volume(uint32_t id, const std::string& replay_from) {
  membership::Lease lease;
  std::string lease_error;
  // Before the open: the roll-forward and the replay write to the volume already.
  bounds_.at(id)->write_start(w_.serving_log, section_of(id).name(),
                              leases_->inspect(id, &lease, &lease_error) && lease.holder == w_.self ? lease.epoch : 0);
  milliseconds backoff(500);
  while (!try_open(id, replay_from)) {
    std::unique_lock lock(stop_mu_);
    if (stopping_ || !lease_trusted_now(id)) {
      util::log("cluster").warn("volume " + section_of(id).name() +
                                ": not opened, and no longer ours to retry");
      return;
    }
    util::log("cluster").warn("volume " + section_of(id).name() + ": retrying the open in " +
                              std::to_string(backoff.count()) +
                              " ms; until then it answers NFS3ERR_JUKEBOX");
    stop_cv_.wait_for(lock, backoff, [this] { return stopping_; });
    backoff = std::min(backoff * 2, milliseconds(8000));
  }
}

bool ClusterFailover::try_open(uint32_t id, const std::string& replay_from) {
  const ConfigSection& section = section_of(id);
  const std::string& shared = w_.cluster->failover->shared_dir;
  std::string copy;
  bool opened = false;
  try {
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
    auto fence = VolumeFence::take(VolumeFence::fence_path(shared + "/leases", section.name(), epochs),
                                   w_.self, owned, milliseconds(w_.cluster->failover->lease_ms),
                                   &error, epoch);
    if (!fence) throw std::runtime_error("taking the fence: " + error);
    const std::string& home = replay_from;
    if (!home.empty()) {
      // A takeover: the covered node's acknowledged operations that its file system may not
      // hold yet are in this node's copy of its NVRAM.
      auto mirror = mirrors_.find(home);
      if (mirror == mirrors_.end()) throw std::runtime_error("no mirror of " + home + " here");
      copy = w_.data_dir + "/takeover-" + section.name() + ".img";
      switch (mirror->second->copy_to(copy, &error)) {
        case PartnerMirror::Copy::Copied:
          break;
        case PartnerMirror::Copy::NothingMirrored:
          util::log("cluster").warn("volume " + section.name() + ": no copy of " + home +
                                    "'s NVRAM to replay (" + error + ")");
          copy.clear();
          break;
        case PartnerMirror::Copy::Failed:
          throw std::runtime_error("copying " + home + "'s NVRAM: " + error);
      }
    }
    w_.router->add_local(
        w_.volumes->open(section, *w_.config, shared, copy, std::move(fence), owned));
    opened = true;
    if (w_.locks.opened) w_.locks.opened(id);
  } catch (const std::exception& e) {
    util::log("cluster").error("volume " + section.name() + " could not be opened: " + e.what());
  }
  std::error_code ignored;
  if (!copy.empty()) std::filesystem::remove(copy, ignored);
  return opened;
}

void ClusterFailover::bind_address_of(uint32_t id) {
  bounds_.at(id)->write_ready(w_.serving_log, section_of(id).name());
  std::string address;
  {
    std::lock_guard lock(served_mu_);
    served_.insert(id);
    rebind_locked();
    for (const EvsOptions& e : w_.cluster->evs)
      if (e.name == evs_.at(id)) address = e.listen;
  }
  if (w_.locks.serving) w_.locks.serving(id, address);
}

void ClusterFailover::rebind_locked() {
  std::set<std::string> wanted;
  for (uint32_t v : served_) wanted.insert(evs_.at(v));
  for (auto& [name, vs] : evs_servers_) {
    const bool want = wanted.count(name) > 0, have = claimed_evs_.count(name) > 0;
    if (want && !have) {
      vs->claim();
      claimed_evs_.insert(name);
    } else if (!want && have) {
      vs->release();
      claimed_evs_.erase(name);
    }
  }
}

bool ClusterFailover::close_volume(uint32_t id, bool lease_held) {
  {
    // The address goes first, so the next owner can bind it as soon as it has the volume.
    std::lock_guard lock(served_mu_);
    served_.erase(id);
    rebind_locked();
  }
  if (w_.locks.closing) w_.locks.closing(id, lease_held);
  const bool clean = w_.volumes->close(id, lease_held);
  // After the close (its checkpoint writes under the lease), before the lease is released.
  bounds_.at(id)->write_stop(w_.serving_log, section_of(id).name());
  return clean;
}

void ClusterFailover::placement_changed(const membership::Placement& p) {
  if (stale_gate_) stale_gate_->placement_seen(p);
  std::lock_guard lock(served_mu_);
  if (p.version < placement_applied_) return;  // an older record delivered late
  placement_applied_ = p.version;
  for (auto& [id, evs] : evs_) {
    auto v = p.volumes.find(id);
    if (v != p.volumes.end() && evs_servers_.count(v->second.evs)) evs = v->second.evs;
  }
  rebind_locked();
}

std::string ClusterFailover::status() const {
  std::ostringstream out;
  const ClusterOptions& c = *w_.cluster;
  const auto alive = membership_->peers_alive();
  out << "node " << w_.self << ": " << membership_->status()
      << (membership_->standby() ? " (standby: planned failover, its volumes handed over)" : "")
      << "\n";
  const int64_t now = leases_->now_ms();  // the clock the leases' expiry is on
  // EVSes and volumes where the placement at the authority puts them (planned moves).
  const membership::Placement placement = membership_->placement();
  const auto node_of = [&](const EvsOptions& e) {
    auto it = placement.evs.find(e.name);
    return it != placement.evs.end() ? it->second.node : e.node;
  };
  const auto volumes_of = [&](const EvsOptions& e) {
    std::vector<std::string> names;
    if (placement.evs.count(e.name)) {
      for (uint32_t v : placement.volumes_of(e.name)) names.push_back(section_of(v).name());
      return names;
    }
    return e.volumes;
  };
  for (const MemberOptions& m : c.members) {
    out << "member " << m.name << (m.standby ? " (standby)" : m.storage ? " (storage)" : "") << ": ";
    if (m.name == w_.self)
      out << "this node";
    else
      out << (alive.at(m.name) ? "up" : "down (silent)");
    out << ", mirrored to " << (m.mirror_to.empty() ? "nobody" : m.mirror_to + " at " + m.mirror_target);
    if (!m.covers.empty()) {
      out << ", covers";
      for (const auto& n : m.covers) out << " " << n;
    }
    out << "\n";
    for (const EvsOptions& e : c.evs) {
      if (node_of(e) != m.name) continue;
      out << "  evs " << e.name << " " << e.listen << " nfs " << e.nfs_port << " mount "
          << e.mount_port << (e.is_node_address ? " (" + e.node + "'s own address)" : "");
      if (node_of(e) != e.node) out << " (moved here from " << e.node << ")";
      auto vs = evs_servers_.find(e.name);
      out << (vs != evs_servers_.end() && vs->second->bound() ? ": served here" + vs->second->where()
                                                              : std::string(": not here"))
          << "\n";
      for (const std::string& name : volumes_of(e)) {
        uint32_t id = 0;
        for (const auto& [vid, s] : sections_)
          if (s->name() == name) id = vid;
        auto owner = w_.router->owner(id);
        out << "    volume " << name << " (id " << id << "): routed to "
            << (owner && *owner == w_.self ? "here" : owner ? *owner : "nobody")
            << (membership_->serving(id) ? ", served here" : "");
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
    }
  }
  for (const auto& line : placement.pending_moves()) out << "move in progress: " << line << "\n";
  if (placement.version == 0) out << "placement: not read from the authority yet\n";
  for (const auto& [node, mirror] : mirrors_) out << "mirror of " << node << ": " << mirror->status() << "\n";
  for (const auto& [node, m] : placement.stale_mirrors)
    out << "STALE MIRROR: " << node << " acknowledged stable writes that its mirror at " << m.partner
        << " lacks (from journal position " << m.since << "); " << m.partner
        << " will not take its volumes over until " << node
        << " returns and resyncs, or `nasd-admin cluster accept-mirror-loss " << node
        << " --yes-lose-unmirrored-writes`\n";
  if (stale_gate_) out << "this node's " << stale_gate_->describe() << "\n";
  return out.str();
}

std::map<std::string, bool> ClusterFailover::peers_alive() const { return membership_->peers_alive(); }

ClusterFailover::Report ClusterFailover::report() const {
  Report r;
  r.membership = membership_->status();
  r.standby = membership_->standby();
  const membership::Placement placement = membership_->placement();
  for (const EvsOptions& e : w_.cluster->evs) {
    auto vs = evs_servers_.find(e.name);
    auto designated = placement.evs.find(e.name);
    r.virtual_servers.push_back({designated != placement.evs.end() ? designated->second.node : e.node,
                                 e.name + " " + e.listen,
                                 vs != evs_servers_.end() && vs->second->bound()});
  }
  for (const auto& [id, section] : sections_)
    if (membership_->serving(id)) r.serving.push_back(id);
  return r;
}

std::string ClusterFailover::failover() {
  membership_->request_failover();
  const MemberOptions& self = *w_.cluster->member(w_.self);
  return "planned failover: " + w_.self + "'s volumes are drained and handed to " +
         (self.mirror_to.empty() ? std::string("nobody (a standby has none)") : self.mirror_to) +
         "; `failback` brings them back\n";
}

std::string ClusterFailover::failback() {
  membership_->request_failback(true);
  return "failback requested: the node covering " + w_.self +
         " drains its volumes and hands them back\n";
}

}  // namespace nasd::cluster

namespace nasd::cluster {
namespace {

constexpr int64_t kDefaultMoveWaitMs = 30000;
constexpr int64_t kMaxMoveWaitMs = 60000;

// "--wait S" / "--no-wait" after the positional words; throws on anything else.
int64_t parse_wait(const std::vector<std::string>& args, size_t from) {
  int64_t wait = kDefaultMoveWaitMs;
  for (size_t i = from; i < args.size(); ++i) {
    if (args[i] == "--no-wait") {
      wait = 0;
    } else if (args[i] == "--wait" && i + 1 < args.size()) {
      const std::string& s = args[++i];
      if (s.empty() || s.size() > 3 || s.find_first_not_of("0123456789") != std::string::npos)
        throw std::invalid_argument("--wait takes whole seconds (at most 60)");
      wait = std::min<int64_t>(std::stoll(s) * 1000, kMaxMoveWaitMs);
    } else {
      throw std::invalid_argument("unexpected argument " + args[i]);
    }
  }
  return wait;
}

}  // namespace

std::optional<uint32_t> ClusterFailover::volume_id(const std::string& name_or_id) const {
  for (const auto& [id, section] : sections_)
    if (section->name() == name_or_id || std::to_string(id) == name_or_id) return id;
  return std::nullopt;
}

std::string ClusterFailover::propose(
    const std::function<std::string(membership::Placement&)>& change, std::vector<uint32_t> volumes,
    const std::string& what, int64_t wait_ms) {
  membership::Placement written;
  const std::string why = membership::update_placement(*placement_store_, from_config_, change, &written);
  if (!why.empty()) throw std::runtime_error(what + ": " + why);
  membership_->placement_written(written);
  if (wait_ms == 0) return what + ": proposed; `nasd-admin cluster` shows its progress\n";
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + milliseconds(wait_ms);
  std::string pending;
  for (;;) {
    membership::Placement p;
    bool found = false;
    std::string error;
    pending.clear();
    if (!placement_store_->read(&p, &found, &error) || !found) {
      pending = "the placement cannot be read: " + error;
    } else {
      for (uint32_t v : volumes) {
        const std::string node = p.designated(v);
        if (p.moving(v))
          pending = "volume " + section_of(v).name() + " is still being handed over";
        else if (membership_->route(v) != node)
          pending = "volume " + section_of(v).name() + " is not served by " + node + " yet";
        if (!pending.empty()) break;
      }
    }
    if (pending.empty()) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      std::string out = what + ": not finished after " + std::to_string(wait_ms / 1000) +
                        " s (" + pending + "); it goes on in the background.\n";
      for (const auto& line : p.pending_moves()) out += "  pending: " + line + "\n";
      out += "  `cancel` rolls a pending move back.\n";
      return out;
    }
    std::unique_lock lock(stop_mu_);
    if (stop_cv_.wait_for(lock, milliseconds(100), [this] { return stopping_; }))
      throw std::runtime_error("the node is stopping");
  }
  const auto took = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - start);
  std::ostringstream out;
  out << what << ": done in " << took.count() << " ms\n";
  for (uint32_t v : volumes) {
    const std::string node = membership_->route(v);
    out << "  volume " << section_of(v).name() << " (id " << v << ") served by "
        << (node == w_.self ? w_.self + " (here)" : node) << "\n";
  }
  return out.str();
}

std::string ClusterFailover::evs_command(const std::vector<std::string>& args) {
  static const char* kUsage =
      "usage: evs [list] | evs move EVS NODE [--wait SECONDS | --no-wait] | evs cancel EVS";
  std::vector<std::string> nodes;
  for (const MemberOptions& m : w_.cluster->members) nodes.push_back(m.name);
  if (args.size() <= 1 || (args.size() == 2 && args[1] == "list")) {
    membership::Placement p = membership_->placement();
    std::ostringstream out;
    for (const EvsOptions& e : w_.cluster->evs) {
      auto it = p.evs.find(e.name);
      const std::string node = it != p.evs.end() ? it->second.node : e.node;
      out << "evs " << e.name << " " << e.listen << ": designated " << node;
      if (it != p.evs.end() && !it->second.target.empty()) out << ", moving to " << it->second.target;
      std::vector<uint32_t> vols;
      for (uint32_t v : p.volumes_of(e.name)) vols.push_back(v);
      out << ", volumes";
      for (uint32_t v : vols) out << " " << section_of(v).name();
      if (vols.empty()) out << " none";
      auto vs = evs_servers_.find(e.name);
      if (vs != evs_servers_.end() && vs->second->bound()) out << " (served here)";
      out << "\n";
    }
    return out.str();
  }
  if (args[1] == "move" && args.size() >= 4) {
    const std::string evs = args[2], node = args[3];
    const int64_t wait = parse_wait(args, 4);
    std::vector<uint32_t> volumes;
    for (const auto& [id, section] : sections_) {
      std::lock_guard lock(served_mu_);
      if (evs_.at(id) == evs) volumes.push_back(id);
    }
    return propose(
        [&](membership::Placement& p) {
          volumes = p.volumes_of(evs);
          return membership::propose_evs_move(p, evs, node, nodes);
        },
        volumes, "evs " + evs + " to " + node, wait);
  }
  if (args[1] == "cancel" && args.size() == 3) {
    const std::string evs = args[2];
    membership::Placement written;
    const std::string why = membership::update_placement(
        *placement_store_, from_config_,
        [&](membership::Placement& p) { return membership::cancel_evs_move(p, evs); }, &written);
    if (!why.empty()) throw std::runtime_error("evs " + evs + ": " + why);
    membership_->placement_written(written);
    return "evs " + evs + ": move cancelled; its volumes stay with (or go back to) " +
           written.evs.at(evs).node + "\n";
  }
  throw std::invalid_argument(kUsage);
}

std::string ClusterFailover::mirror_command(const std::vector<std::string>& args) {
  static const char* kUsage =
      "usage: cluster | cluster accept-mirror-loss NODE --yes-lose-unmirrored-writes";
  if (args.size() != 3 || args[0] != "accept-mirror-loss" ||
      args[2] != "--yes-lose-unmirrored-writes")
    throw std::invalid_argument(kUsage);
  const std::string node = args[1];
  if (!w_.cluster->member(node)) throw std::invalid_argument("no member named " + node);
  membership::Placement written;
  std::string had;
  const std::string why = membership::update_placement(
      *placement_store_, from_config_,
      [&](membership::Placement& p) {
        if (!p.mirror_stale(node)) return std::string("its mirror is not marked stale");
        had = std::to_string(p.stale_mirrors.at(node).since);
        return membership::clear_mirror_stale(p, node);
      },
      &written);
  if (!why.empty()) throw std::runtime_error(node + ": " + why);
  membership_->placement_written(written);
  util::log("cluster").warn("admin cleared the stale-mirror mark of " + node +
                            ": its covering node may take over from a copy that lacks the "
                            "stable writes it acknowledged from position " + had + " on");
  return node + ": stale-mirror mark cleared; if " + node +
         " is down its covering node takes its volumes over from its copy, and the stable writes " +
         node + " acknowledged from journal position " + had + " on that the copy lacks are lost\n";
}

std::string ClusterFailover::volume_move_command(const std::vector<std::string>& args) {
  static const char* kUsage =
      "usage: volume move VOLUME EVS [--wait SECONDS | --no-wait] | volume cancel-move VOLUME";
  if (args.size() < 3) throw std::invalid_argument(kUsage);
  const std::optional<uint32_t> id = volume_id(args[1]);
  if (!id) throw std::invalid_argument("no volume named " + args[1]);
  const std::string name = section_of(*id).name();
  if (args[0] == "move" && args.size() >= 3) {
    const std::string evs = args[2];
    const int64_t wait = parse_wait(args, 3);
    return propose(
        [&](membership::Placement& p) { return membership::propose_volume_move(p, *id, evs); },
        {*id}, "volume " + name + " to evs " + evs, wait);
  }
  if (args[0] == "cancel-move" && args.size() == 2) {
    membership::Placement written;
    const std::string why = membership::update_placement(
        *placement_store_, from_config_,
        [&](membership::Placement& p) { return membership::cancel_volume_move(p, *id); }, &written);
    if (!why.empty()) throw std::runtime_error("volume " + name + ": " + why);
    membership_->placement_written(written);
    return "volume " + name + ": move cancelled; it stays in evs " + written.volumes.at(*id).evs + "\n";
  }
  throw std::invalid_argument(kUsage);
}

}  // namespace nasd::cluster
