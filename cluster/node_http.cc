// The node's side of the management HTTP listener (server/http): what it shows of the rooms the
// listener cannot see — volumes, NVRAM, cluster, exports — as JSON members and Prometheus
// families, read from the same structures the admin commands print.
#include <string>

#include "cluster/interconnect/router.h"
#include "cluster/node.h"
#include "cluster/scaleout/ifs_volume.h"
#include "nvram/journal.h"
#include "server/http/management_server.h"
#include "server/nfs/exports/exports.h"
#include "util/log.h"

namespace nasd::cluster {
namespace {

const char* squash_name(nfs::Squash s) {
  switch (s) {
    case nfs::Squash::Root: return "root";
    case nfs::Squash::All: return "all";
    default: return "none";
  }
}

}  // namespace

void Node::start_http() {
  http::ManagementWiring w;
  w.options = http::HttpOptions::from_config(*plan_.config.section("node"), plan_.node.data_dir);
  if (!w.options.enabled()) return;
  w.node_name = plan_.node.name;
  w.commands = commands_.get();
  w.stats = stats_;
  w.node_status = [this](http::JsonWriter& j) { write_status_json(j); };
  w.node_metrics = [this] { return metric_families(); };
  w.log = [](const std::string& line) { util::log("http").info(line); };
  http_ = std::make_unique<http::ManagementServer>(std::move(w));
  http_->start();
}

std::string Node::volume_name(uint32_t id) const {
  for (const PlannedVolume& v : plan_.volumes)
    if (v.id == id) return v.name;
  return std::to_string(id);
}

const char* Node::cluster_mode() const {
  switch (plan_.role) {
    case NodeRole::Alone: return "alone";
    case NodeRole::StaticCluster: return "static";
    case NodeRole::FailoverCluster: return "failover";
  }
  return "?";
}

void Node::write_status_json(http::JsonWriter& j) const {
  j.key("cluster").begin_object();
  j.field("mode", cluster_mode()).field("name", plan_.cluster ? plan_.cluster->name : std::string());
  j.key("peers").begin_array();
  for (const auto& [name, up] : deployment_->peer_links())
    j.begin_object().field("name", name).field("up", up).end_object();
  j.end_array();
  if (auto report = deployment_->failover_report()) {
    const ClusterFailover::Report& f = *report;
    j.field("membership", f.membership).field("standby", f.standby);
    j.key("virtual_servers").begin_array();
    for (const auto& a : f.virtual_servers)
      j.begin_object().field("name", a.node).field("address", a.address).field("here", a.here).end_object();
    j.end_array();
  }
  j.key("volumes").begin_array();
  if (const interconnect::ClusterRouter* router = deployment_->router()) {
    for (uint32_t id : router->volume_ids()) {
      auto owner = router->owner(id);
      j.begin_object().field("id", id).field("name", volume_name(id));
      j.field("owner", owner ? *owner : std::string());
      j.field("here", owner && *owner == plan_.node.name).end_object();
    }
  }
  j.end_array();
  j.end_object();

  j.key("volumes").begin_array();
  for (const auto& v : hosted_->reports()) {
    const auto& r = v.report;
    j.begin_object()
        .field("id", v.id)
        .field("name", v.name)
        .field("failed", r.failed)
        .field("capacity_bytes", r.capacity_bytes)
        .field("used_bytes", r.used_bytes)
        .field("segments", r.segments)
        .field("free_segments", r.free_segments)
        .field("live_inodes", r.live_inodes)
        .field("max_inodes", r.max_inodes)
        .field("cleaner_passes", r.cleaner_passes)
        .field("cleaned_segments", r.cleaned_segments)
        .field("checkpoints", r.checkpoints)
        .end_object();
  }
  j.end_array();

  j.key("nvram").begin_object().field("enabled", journal_ != nullptr);
  if (journal_) {
    nvram::JournalStats s = journal_->stats();
    j.field("mode", nvram::durability_mode_name(journal_->options().mode))
        .field("log_bytes", s.log_bytes)
        .field("used_bytes", s.used_bytes)
        .field("live_records", s.live_records)
        .field("commits", s.commits)
        .field("records_committed", s.records_committed)
        .field("commit_p50_us", journal_->commit_latency().percentile_upper_us(50))
        .field("commit_p99_us", journal_->commit_latency().percentile_upper_us(99));
    j.key("mirror").begin_object()
        .field("configured", s.mirror_configured)
        .field("connected", s.mirror_connected)
        .field("degraded", s.degraded)
        .field("lag_bytes", s.mirror_lag_bytes)
        .end_object();
  }
  j.end_object();

  j.key("exports").begin_array();
  for (const auto& e : exports_->all())
    j.begin_object()
        .field("path", e.path)
        .field("volume", e.volume_name)
        .field("access", e.read_only ? "ro" : "rw")
        .field("squash", squash_name(e.squash))
        .end_object();
  j.end_array();
}

http::MetricFamilies Node::metric_families() const {
  http::MetricFamilies m;
  size_t info = m.gauge("nasd_node_info", "This node: its name, cluster and mode (alone, static, ha)");
  m.add(info, {{"node", plan_.node.name}, {"cluster", plan_.cluster ? plan_.cluster->name : ""}, {"mode", cluster_mode()}}, 1);

  // Volumes open on this node.
  size_t cap = m.gauge("nasd_volume_capacity_bytes", "Space for data in the volume");
  size_t used = m.gauge("nasd_volume_used_bytes", "Space the volume's live data uses");
  size_t segs = m.gauge("nasd_volume_segments", "Log segments of the volume");
  size_t free_segs = m.gauge("nasd_volume_free_segments", "Log segments free for writing");
  size_t inodes = m.gauge("nasd_volume_inodes", "Live inodes");
  size_t max_inodes = m.gauge("nasd_volume_inodes_max", "Inodes the volume can hold");
  size_t failed = m.gauge("nasd_volume_failed", "1 when an I/O error made the volume read-only");
  size_t flushes = m.counter("nasd_volume_log_flushes_total", "Log units written");
  size_t syncs = m.counter("nasd_volume_log_syncs_total", "fdatasync calls on the backing store");
  size_t cps = m.counter("nasd_volume_checkpoints_total", "Checkpoints written");
  size_t passes = m.counter("nasd_volume_cleaner_passes_total", "Cleaner passes");
  size_t cleaned = m.counter("nasd_volume_cleaner_segments_reclaimed_total", "Segments the cleaner freed");
  size_t copied = m.counter("nasd_volume_cleaner_blocks_copied_total", "Live blocks the cleaner moved");
  size_t cache = m.gauge("nasd_volume_block_cache_bytes", "Bytes in the block cache");
  size_t hits = m.counter("nasd_volume_block_cache_hits_total", "Block cache hits");
  size_t misses = m.counter("nasd_volume_block_cache_misses_total", "Block cache misses");
  size_t adopted = m.counter("nasd_volume_block_cache_adopted_pages_total",
                             "WRITE pages kept as cache blocks without a copy");
  for (const auto& v : hosted_->reports()) {
    const auto& r = v.report;
    http::Labels l{{"volume", v.name}};
    m.add(cap, l, double(r.capacity_bytes));
    m.add(used, l, double(r.used_bytes));
    m.add(segs, l, double(r.segments));
    m.add(free_segs, l, double(r.free_segments));
    m.add(inodes, l, double(r.live_inodes));
    m.add(max_inodes, l, double(r.max_inodes));
    m.add(failed, l, r.failed ? 1 : 0);
    m.add(flushes, l, double(r.log_flushes));
    m.add(syncs, l, double(r.log_syncs));
    m.add(cps, l, double(r.checkpoints));
    m.add(passes, l, double(r.cleaner_passes));
    m.add(cleaned, l, double(r.cleaned_segments));
    m.add(copied, l, double(r.cleaner_blocks_copied));
    m.add(cache, l, double(r.block_cache_bytes));
    m.add(hits, l, double(r.block_cache_hits));
    m.add(misses, l, double(r.block_cache_misses));
    m.add(adopted, l, double(r.block_cache_adoptions));
  }

  // NVRAM.
  size_t enabled = m.gauge("nasd_nvram_enabled", "1 when the NVRAM journal is on");
  m.add(enabled, {}, journal_ ? 1 : 0);
  if (journal_) {
    nvram::JournalStats s = journal_->stats();
    auto g = [&](const char* name, const char* help, double v) { m.add(m.gauge(name, help), {}, v); };
    auto c = [&](const char* name, const char* help, double v) { m.add(m.counter(name, help), {}, v); };
    g("nasd_nvram_size_bytes", "Size of the journal's log", double(s.log_bytes));
    g("nasd_nvram_used_bytes", "Journal bytes holding records not yet absorbed by the volumes",
      double(s.used_bytes));
    g("nasd_nvram_records", "Records in the journal", double(s.live_records));
    c("nasd_nvram_appends_total", "Records appended", double(s.appends));
    c("nasd_nvram_commits_total", "Group commits", double(s.commits));
    c("nasd_nvram_records_committed_total", "Records made stable by group commits",
      double(s.records_committed));
    c("nasd_nvram_loop_commit_answers_total",
      "Stable calls whose commit was answered on the event loop", double(s.loop_commit_answers));
    c("nasd_nvram_commit_callbacks_total",
      "Stable calls answered by the committer thread instead of a waiting one",
      double(s.commit_callbacks));
    c("nasd_nvram_fs_flushes_total", "Write-behind flushes of the volumes", double(s.fs_flushes));
    c("nasd_nvram_space_waits_total", "Appends that waited for journal space", double(s.space_waits));
    c("nasd_nvram_space_timeouts_total", "Appends that gave up waiting for space",
      double(s.space_timeouts));
    c("nasd_nvram_records_replayed_total", "Records replayed at start or takeover",
      double(s.records_replayed));
    g("nasd_nvram_mirror_configured", "1 when the journal is mirrored to a partner",
      s.mirror_configured ? 1 : 0);
    g("nasd_nvram_mirror_connected", "1 while the mirror link is up", s.mirror_connected ? 1 : 0);
    g("nasd_nvram_mirror_degraded", "1 when stable writes are acknowledged from local NVRAM only",
      s.degraded ? 1 : 0);
    g("nasd_nvram_mirror_lag_bytes", "Journal bytes the mirror has not acknowledged",
      double(s.mirror_lag_bytes));
    c("nasd_nvram_mirror_losses_total", "Times the mirror link was lost", double(s.mirror_losses));
    const nvram::LatencyHistogram& h = journal_->commit_latency();
    std::vector<uint64_t> counts;
    for (size_t i = 0; i < nvram::LatencyHistogram::kBuckets; ++i) counts.push_back(h.bucket(i));
    size_t lat = m.histogram("nasd_nvram_commit_duration_seconds",
                             "Time from a record's append to its group commit");
    m.add_histogram(lat, {}, http::power_of_two_bounds_seconds(counts.size(), 0), counts,
                    double(h.sum_us()) * 1e-6);
  }

  // Scale-out: the volumes coordinated here, and this node's drives.
  size_t ifs_groups = m.gauge("nasd_ifs_groups", "Protection groups of the scale-out volume");
  size_t ifs_degraded = m.gauge("nasd_ifs_groups_degraded", "Groups below full protection");
  size_t ifs_restripe = m.gauge("nasd_ifs_groups_restripe_due",
                                "Groups at full protection in a shape their directory's policy no longer asks for");
  size_t ifs_sweeps = m.counter("nasd_ifs_orphan_sweeps_total", "Orphan sweeps finished since the volume opened here");
  size_t ifs_dropped = m.counter("nasd_ifs_orphan_units_dropped_total",
                                 "Units the orphan sweeps deleted (named by no record, no writer left)");
  for (const auto& [name, h] : hosted_->scaleout_health()) {
    http::Labels l{{"volume", name}};
    m.add(ifs_groups, l, double(h.groups));
    m.add(ifs_degraded, l, double(h.groups_degraded));
    m.add(ifs_restripe, l, double(h.groups_misshaped));
    m.add(ifs_sweeps, l, double(h.sweep.sweeps));
    m.add(ifs_dropped, l, double(h.sweep.units_dropped_total));
  }
  if (auto c = deployment_->drive_compactions()) {
    m.add(m.counter("nasd_ifs_drive_compactions_total", "Scale-out drives of this node compacted"), {},
          double(c->compactions));
    m.add(m.counter("nasd_ifs_drive_compaction_reclaimed_bytes_total",
                    "Bytes the compactions of this node's drives gave back"), {}, double(c->bytes_reclaimed));
  }

  // Cluster.
  size_t peer_up = m.gauge("nasd_cluster_peer_up", "1 while the interconnect link to the peer is up");
  for (const auto& [name, up] : deployment_->peer_links()) m.add(peer_up, {{"peer", name}}, up ? 1 : 0);
  size_t here = m.gauge("nasd_cluster_volume_served_here", "1 when this node serves the volume");
  if (const interconnect::ClusterRouter* router = deployment_->router()) {
    for (uint32_t id : router->volume_ids()) {
      auto owner = router->owner(id);
      m.add(here, {{"volume", volume_name(id)}}, owner && *owner == plan_.node.name ? 1 : 0);
    }
  } else {
    for (const auto& v : hosted_->reports()) m.add(here, {{"volume", v.name}}, 1);
  }
  if (auto report = deployment_->failover_report()) {
    const ClusterFailover::Report& f = *report;
    size_t vs = m.gauge("nasd_cluster_virtual_server_here",
                        "1 when this node answers on the virtual server's address");
    for (const auto& a : f.virtual_servers) m.add(vs, {{"virtual_server", a.node}}, a.here ? 1 : 0);
    m.add(m.gauge("nasd_cluster_standby", "1 after a planned failover, until failback"), {},
          f.standby ? 1 : 0);
  }
  return m;
}

}  // namespace nasd::cluster
