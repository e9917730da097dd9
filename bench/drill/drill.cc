#include "bench/drill/drill.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "bench/drill/serving_check.h"
#include "bench/drill/timeline.h"
#include "bench/drill/verifying_client.h"

namespace nasd::drill {
namespace {

void sleep_ms(int64_t ms) {
  if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

std::string clock_text(int64_t ms) {
  std::time_t s = ms / 1000;
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03lld UTC", buf, static_cast<long long>(ms % 1000));
  return out;
}

std::string seconds_text(int64_t ms) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(ms < 10000 ? 2 : 1) << ms / 1000.0 << " s";
  return o.str();
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class Drill {
 public:
  Drill(const DrillOptions& o, const std::vector<ClusterNode>& nodes, std::ostream& out)
      : o_(o), nodes_(nodes), out_(out) {}
  int run();

 private:
  const ClusterNode& node(const std::string& name) const {
    for (const ClusterNode& n : nodes_)
      if (n.name == name) return n;
    throw std::invalid_argument("no node " + name);
  }
  bool start_clients();
  std::vector<ServingInterval> intervals(int64_t now, std::vector<std::string>* notes) const;
  // Each node alive and serving its home volumes, nobody else serving them; else why not.
  bool healthy(std::string* why) const;
  bool wait_healthy(int64_t since_ms, FaultReport* r);
  // Injects the fault (and the one with it, at once) and lifts it.
  void inject(FaultReport& r);
  void inject_one(FaultReport& r, const Fault& f, const std::string& table, std::string* error);
  void inject_link_fault(FaultReport& r, const Fault& f, NetFault net, const std::string& table,
                         std::string* error);
  void note(FaultReport& r, const std::string& action);  // an action, from either fault's thread
  void measure(FaultReport& r, int64_t until_ms);
  void verify(FaultReport& r);
  void check_serving(FaultReport& r);
  void print(const FaultReport& r);
  void write_files();

  const DrillOptions& o_;
  const std::vector<ClusterNode>& nodes_;
  std::ostream& out_;
  std::mutex actions_mu_;  // a report's actions and kills_ while two faults run at once
  std::map<std::string, std::vector<int64_t>> kills_;  // node -> when seen dead after kill -9
  std::vector<std::unique_ptr<VerifyingClient>> clients_;
  std::vector<FaultReport> reports_;
  std::vector<std::string> notes_;
  int64_t start_ms_ = 0;
  std::thread restart_;  // a killed node's restart (start-node.sh), joined after the heal
  std::mutex restart_mu_;
  std::string restart_error_, restart_note_;  // guarded by restart_mu_
};

bool Drill::start_clients() {
  const auto assigned = client_volumes(nodes_, std::max(1, o_.clients_per_node));
  const int64_t stamp = unix_ms() / 1000;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    for (const std::string& v : assigned[i]) {
      ClientOptions c;
      c.name = nodes_[i].name + "-" + v;
      c.target.server = nodes_[i].address;
      c.target.nfs_port = nodes_[i].nfs_port;
      c.target.mount_port = nodes_[i].mount_port;
      c.target.export_path = o_.export_prefix + v;
      c.target.text = "nfs://" + c.target.server + c.target.export_path;
      c.dir_name = "drill-" + c.name + "-" + std::to_string(stamp);
      c.seed = o_.seed * 1000 + clients_.size();
      c.call_timeout_ms = o_.call_timeout_ms;
      c.retry_budget_ms = o_.retry_budget_ms;
      c.op_delay_us = o_.op_delay_us;
      auto client = std::make_unique<VerifyingClient>(c);
      std::string error;
      if (!client->setup(&error)) {
        out_ << "cannot start client " << c.name << ": " << error << "\n";
        return false;
      }
      clients_.push_back(std::move(client));
    }
  }
  for (auto& c : clients_) c->start();
  out_ << clients_.size() << " verifying clients:";
  for (auto& c : clients_) out_ << " " << c->options().name;
  out_ << "\n";
  return true;
}

std::vector<ServingInterval> Drill::intervals(int64_t now, std::vector<std::string>* notes) const {
  std::vector<ServingInterval> all;
  for (const ClusterNode& n : nodes_) {
    NodeServingLog log{n.name, read_text(n.data_dir + "/serving.log"), {}};
    auto k = kills_.find(n.name);
    if (k != kills_.end()) log.kills = k->second;
    auto some = serving_intervals(log, now, notes);
    all.insert(all.end(), some.begin(), some.end());
  }
  return all;
}

// A node whose NVRAM mirror link is down acknowledges from its own NVRAM only (`[nvram]
// mirror_policy = continue`, DEGRADED): if it died then, its partner would take its volumes over
// without those records (cluster/README.md says so). A fault injected before the mirror is back
// would be a second fault on top of the first, so the cluster is healthy only once every node
// that mirrors is connected again and caught up ("none" for a node with no partner, e.g. a
// standby).
static bool mirror_in_sync(const ClusterNode& n, const NodeTools& tools, std::string* why) {
  std::string out;
  if (!admin_command(n, tools, "cluster", &out)) {
    *why = "node " + n.name + " does not answer nasd-admin cluster";
    return false;
  }
  const size_t at = out.find("NVRAM mirror: ");
  if (at == std::string::npos) return true;  // NVRAM off
  const std::string line = out.substr(at, out.find('\n', at) - at);
  if (line.rfind("NVRAM mirror: none", 0) == 0) return true;
  // Connected is not enough: the records acknowledged while DEGRADED are still being sent
  // (the lag). In sync, the lag is only the calls in flight, far below this.
  constexpr uint64_t kInSyncLag = 1 << 20;
  const std::string connected = "NVRAM mirror: connected, lag ";
  if (line.rfind(connected, 0) == 0 &&
      std::strtoull(line.c_str() + connected.size(), nullptr, 10) < kInSyncLag)
    return true;
  *why = "node " + n.name + "'s " + line;
  return false;
}

bool Drill::healthy(std::string* why) const {
  std::vector<std::string> notes;
  const auto all = intervals(unix_ms(), &notes);
  std::map<std::string, std::set<std::string>> open;  // volume -> nodes with an open interval
  for (const ServingInterval& iv : all)
    if (iv.ended == "open") open[iv.volume].insert(iv.node);
  for (const ClusterNode& n : nodes_) {
    std::string error;
    const pid_t pid = node_pid(n, &error);
    if (!pid || process_dead(pid)) {
      *why = "node " + n.name + " is not running";
      return false;
    }
    for (const std::string& v : n.volumes) {
      if (open[v] != std::set<std::string>{n.name}) {
        *why = "volume " + v + " is served by {";
        for (const std::string& s : open[v]) *why += " " + s;
        *why += " }, not by " + n.name + " alone";
        return false;
      }
    }
  }
  for (const ClusterNode& n : nodes_)
    if (!mirror_in_sync(n, o_.tools, why)) return false;
  return true;
}

// Waits until healthy, asking a node whose home volumes are elsewhere for failback (again every
// few seconds: a node that just woke may first have to notice that it lost its lease).
bool Drill::wait_healthy(int64_t since_ms, FaultReport* r) {
  const int64_t deadline = unix_ms() + o_.heal_timeout_ms;
  std::map<std::string, int64_t> asked;
  std::string why;
  while (unix_ms() < deadline) {
    if (healthy(&why)) {
      if (r) r->healed_ms = unix_ms() - since_ms;
      return true;
    }
    std::vector<std::string> notes;
    const auto all = intervals(unix_ms(), &notes);
    for (const ClusterNode& n : nodes_) {
      bool home_elsewhere = false;
      for (const std::string& v : n.volumes) {
        bool here = false, there = false;
        for (const ServingInterval& iv : all) {
          if (iv.ended != "open" || iv.volume != v) continue;
          (iv.node == n.name ? here : there) = true;
        }
        home_elsewhere |= there && !here;
      }
      if (home_elsewhere && unix_ms() - asked[n.name] >= 3000) {
        std::string output;
        asked[n.name] = unix_ms();
        const bool ok = admin_command(n, o_.tools, "failback", &output);
        if (r) {
          output = output.substr(0, output.find('\n'));
          r->actions.push_back("+" + seconds_text(unix_ms() - since_ms) + " failback on " + n.name + ": " +
                               (ok ? "asked" : "refused (" + output + ")"));
        }
      }
    }
    sleep_ms(200);
  }
  out_ << "  not healed within " << seconds_text(o_.heal_timeout_ms) << ": " << why << "\n";
  return false;
}

void Drill::inject(FaultReport& r) {
  r.at_ms = unix_ms();
  // A second fault at the same time (--faults random): its own thread and nftables table.
  std::string with_error;
  std::thread with;
  if (!r.fault.with.empty())
    with = std::thread([&] { inject_one(r, r.fault.with.front(), std::string(kDrillTable) + "_with", &with_error); });
  std::string error;
  inject_one(r, r.fault, kDrillTable, &error);
  if (with.joinable()) with.join();
  if (!with_error.empty()) error += (error.empty() ? "" : "; ") + with_error;
  r.injection_error = error;
}

void Drill::note(FaultReport& r, const std::string& action) {
  std::lock_guard lock(actions_mu_);
  r.actions.push_back(action);
}

void Drill::inject_one(FaultReport& r, const Fault& f, const std::string& table, std::string* error) {
  const ClusterNode& victim = node(f.node);
  switch (f.kind) {
    case FaultKind::Kill9: {
      int64_t dead = 0;
      if (!kill_node(victim, &dead, error)) break;
      {
        std::lock_guard lock(actions_mu_);
        kills_[victim.name].push_back(dead);
      }
      note(r, "+" + seconds_text(dead - r.at_ms) + " " + victim.name + " dead");
      sleep_ms(f.duration_ms ? f.duration_ms : o_.kill_down_ms);
      note(r, "+" + seconds_text(unix_ms() - r.at_ms) + " restarting " + victim.name);
      // In the background: start-node.sh waits for the node to settle, while the heal loop may
      // already ask it for failback once its admin socket answers.
      restart_ = std::thread([this, &victim, at = r.at_ms] {
        std::string e;
        const bool ok = restart_node(victim, o_.tools, &e);
        std::lock_guard lock(restart_mu_);
        restart_error_ = ok ? "" : e;
        restart_note_ = "+" + seconds_text(unix_ms() - at) + " " + victim.name + (ok ? " started" : " did not start");
      });
      break;
    }
    case FaultKind::Sigstop:
      if (!signal_node(victim, SIGSTOP, error)) break;
      sleep_ms(f.duration_ms ? f.duration_ms : o_.pause_ms);
      signal_node(victim, SIGCONT, error);
      note(r, "+" + seconds_text(unix_ms() - r.at_ms) + " SIGCONT to " + victim.name);
      break;
    case FaultKind::Partition:
      if (!run_nft(partition_script(nodes_, victim.name, table), error)) break;
      sleep_ms(f.duration_ms ? f.duration_ms : o_.partition_ms);
      run_nft(heal_script(table), error);
      note(r, "+" + seconds_text(unix_ms() - r.at_ms) + " partition lifted");
      break;
    case FaultKind::Authority: {
      const std::string script = authority_cut_script(nodes_, victim.name, error, table);
      if (script.empty() || !run_nft(script, error)) break;
      sleep_ms(f.duration_ms ? f.duration_ms : o_.authority_cut_ms);
      run_nft(heal_script(table), error);
      note(r, "+" + seconds_text(unix_ms() - r.at_ms) + " authority reachable again");
      break;
    }
    default:
      if (auto net = net_fault(f.kind)) inject_link_fault(r, f, *net, table, error);
      break;
  }
}

// Loss and one-way cuts stay for the fault's length; a flapping link is cut and restored every
// flap period until then. The table is always deleted at the end.
void Drill::inject_link_fault(FaultReport& r, const Fault& f, NetFault net, const std::string& table,
                              std::string* error) {
  const std::string script = link_fault_script(nodes_, f.node, net, o_.loss_percent, error, table);
  if (script.empty()) return;
  const int64_t until = r.at_ms + (f.duration_ms ? f.duration_ms : o_.net_fault_ms);
  const std::string link = net_link_name(net.link);
  if (net.action != NetAction::Flap) {
    if (!run_nft(script, error)) return;
    sleep_ms(until - unix_ms());
    run_nft(heal_script(table), error);
    note(r, "+" + seconds_text(unix_ms() - r.at_ms) + " " + link + " link of " + f.node +
                        " whole again");
    return;
  }
  int flaps = 0;
  const int half = std::max(10, o_.flap_ms);
  while (unix_ms() < until) {
    if (!run_nft(script, error)) return;
    sleep_ms(std::min<int64_t>(half, until - unix_ms()));
    std::string ignored;
    run_nft(heal_script(table), &ignored);
    ++flaps;
    sleep_ms(std::min<int64_t>(half, until - unix_ms()));
  }
  note(r, "+" + seconds_text(unix_ms() - r.at_ms) + " " + link + " link of " + f.node + " down " +
                      std::to_string(flaps) + " times for " + std::to_string(half) + " ms, up again");
}

// Takeover time, stalls and when every client acknowledged again, from the serving logs and
// the clients' acknowledgements between the fault and `until_ms`.
void Drill::measure(FaultReport& r, int64_t until_ms) {
  std::vector<std::string> notes;
  const auto all = intervals(unix_ms(), &notes);
  // Volumes a victim (the fault's node, and the node of the fault with it) served when the
  // fault came, with that node.
  std::set<std::string> hit = {r.fault.node};
  for (const Fault& w : r.fault.with) hit.insert(w.node);
  std::map<std::string, std::string> victims;
  for (const ServingInterval& iv : all)
    if (hit.count(iv.node) && iv.start_ms <= r.at_ms && iv.end_ms >= r.at_ms) victims[iv.volume] = iv.node;
  for (const auto& [v, was_on] : victims) {
    // The first interval of another node that began after the fault; serving from its ready
    // line (opened, replayed, routed), fencing from its start line.
    const ServingInterval* first = nullptr;
    for (const ServingInterval& iv : all)
      if (iv.volume == v && iv.node != was_on && iv.start_ms >= r.at_ms &&
          (!first || iv.start_ms < first->start_ms))
        first = &iv;
    if (!first) continue;
    // The lease: the first of the victim's volumes another node started on (the others wait
    // for the opens before them on that node's volumes thread); serving: the last one ready.
    r.takeover_ms = r.takeover_ms < 0 ? first->start_ms - r.at_ms : std::min(r.takeover_ms, first->start_ms - r.at_ms);
    if (first->ready_ms) r.serving_ms = std::max(r.serving_ms, first->ready_ms - r.at_ms);
    r.takeover_detail += (r.takeover_detail.empty() ? "" : ", ") + v + " by " + first->node + ": lease after " +
                         seconds_text(first->start_ms - r.at_ms) + ", serving after " +
                         (first->ready_ms ? seconds_text(first->ready_ms - r.at_ms)
                                          : std::string("never (handed back before its open finished)"));
  }
  r.all_acking_ms = 0;
  for (const auto& c : clients_) {
    const auto acks = c->ack_times();
    int64_t prev = r.at_ms, longest = 0, first_after = -1;
    for (auto it = std::upper_bound(acks.begin(), acks.end(), r.at_ms); it != acks.end() && *it <= until_ms; ++it) {
      longest = std::max(longest, *it - prev);
      prev = *it;
      if (first_after < 0) first_after = *it - r.at_ms;
    }
    longest = std::max(longest, until_ms - prev);
    if (longest > r.longest_stall_ms) {
      r.longest_stall_ms = longest;
      r.stalled_client = c->options().name;
    }
    if (first_after < 0) r.all_acking_ms = -1;
    else if (r.all_acking_ms >= 0) r.all_acking_ms = std::max(r.all_acking_ms, first_after);
  }
}

void Drill::verify(FaultReport& r) {
  for (const auto& c : clients_) {
    const int64_t before = unix_ms();
    if (!c->pause(o_.retry_budget_ms + o_.call_timeout_ms + 5000))
      r.verify_errors.push_back(c->options().name + ": still inside a call, verified as far as acknowledged");
    if (unix_ms() - before > r.pause_ms) {
      r.pause_ms = unix_ms() - before;
      r.slowest_pause = c->options().name;
    }
  }
  const int64_t paused = unix_ms();
  for (const auto& c : clients_) r.gave_up += c->stats().gave_up;
  struct VerifyTime {
    FaultReport& r;
    int64_t from;
    ~VerifyTime() { r.verify_ms = unix_ms() - from; }
  } timing{r, paused};
  for (const auto& c : clients_) {
    r.acknowledged += c->stats().acknowledged;
    bool counted = false;
    for (const ClusterNode& n : nodes_) {
      bench::Target through = c->options().target;
      through.server = n.address;
      through.nfs_port = n.nfs_port;
      through.mount_port = n.mount_port;
      VerifyResult v = c->verify(through, o_.verify_budget_ms);
      if (!v.error.empty()) {
        r.verify_errors.push_back(c->options().name + " through " + n.name + ": " + v.error);
        continue;
      }
      if (!counted) r.checked += v.checked;
      counted = true;
      r.lost += v.lost.size();
      for (const std::string& l : v.lost) r.lost_lines.push_back(c->options().name + " through " + n.name + ": " + l);
    }
  }
  for (const auto& c : clients_) c->resume();
}

void Drill::check_serving(FaultReport& r) {
  std::vector<std::string> notes;
  const auto all = intervals(unix_ms(), &notes);
  r.intervals = all.size();
  for (const ServingOverlap& o : find_overlaps(all, o_.skew_ms)) r.overlaps.push_back(o.describe());
  for (const std::string& n : notes)
    if (std::find(notes_.begin(), notes_.end(), n) == notes_.end()) {
      notes_.push_back(n);
      out_ << "  note: " << n << "\n";
    }
}

void Drill::print(const FaultReport& r) {
  const std::string kind = fault_kind_name(r.fault.kind);
  out_ << "fault " << r.index << "/" << o_.schedule.size() << ": " << kind << " of node " << r.fault.node
       << " at " << clock_text(r.at_ms);
  if (r.fault.kind == FaultKind::Sigstop)
    out_ << " for " << seconds_text(r.fault.duration_ms ? r.fault.duration_ms : o_.pause_ms);
  if (r.fault.kind == FaultKind::Partition)
    out_ << " for " << seconds_text(r.fault.duration_ms ? r.fault.duration_ms : o_.partition_ms);
  if (r.fault.kind == FaultKind::Authority)
    out_ << " (cut off from the etcd authority only) for "
         << seconds_text(r.fault.duration_ms ? r.fault.duration_ms : o_.authority_cut_ms);
  if (auto net = net_fault(r.fault.kind)) {
    out_ << " for " << seconds_text(r.fault.duration_ms ? r.fault.duration_ms : o_.net_fault_ms);
    if (net->action == NetAction::Loss) out_ << " (" << o_.loss_percent << "% of its packets)";
    if (net->action == NetAction::Flap) out_ << " (down and up every " << o_.flap_ms << " ms)";
  }
  if (r.fault.kind == FaultKind::Kill9)
    out_ << ", restarted after " << seconds_text(r.fault.duration_ms ? r.fault.duration_ms : o_.kill_down_ms);
  for (const Fault& w : r.fault.with)
    out_ << ", together with " << fault_kind_name(w.kind) << " of node " << w.node;
  out_ << "\n";
  if (!r.injection_error.empty()) out_ << "  NOT INJECTED: " << r.injection_error << "\n";
  out_ << "  actions:        ";
  for (const std::string& a : r.actions) out_ << " " << a << ";";
  out_ << "\n";
  out_ << "  takeover:        " << (r.takeover_ms < 0 ? "none (no other node took the victim's volumes)" : r.takeover_detail)
       << "\n";
  out_ << "  clients:         longest stall " << seconds_text(r.longest_stall_ms) << " (" << r.stalled_client
       << "), every client acknowledging again after "
       << (r.all_acking_ms < 0 ? std::string("never") : seconds_text(r.all_acking_ms)) << "\n";
  out_ << "  healed:          "
       << (r.healed_ms < 0 ? std::string("NO") : "every volume on its home node, every mirror connected, after " + seconds_text(r.healed_ms))
       << "\n";
  out_ << "  verified:        " << r.acknowledged << " acknowledged operations, " << r.checked
       << " acknowledged facts checked through each of " << nodes_.size() << " node(s): " << r.lost << " lost\n";
  out_ << "  checking:        clients paused after " << seconds_text(r.pause_ms) << " (slowest "
       << (r.slowest_pause.empty() ? std::string("-") : r.slowest_pause) << "), read back in "
       << seconds_text(r.verify_ms) << "; " << r.gave_up << " call(s) out of retry budget so far\n";
  for (const std::string& l : r.lost_lines) out_ << "    LOST " << l << "\n";
  for (const std::string& e : r.verify_errors) out_ << "    UNVERIFIED " << e << "\n";
  out_ << "  serving:         " << r.intervals << " intervals, " << r.overlaps.size() << " overlaps\n";
  for (const std::string& o : r.overlaps) out_ << "    OVERLAP " << o << "\n";
  out_.flush();
}

void Drill::write_files() {
  std::filesystem::create_directories(o_.out_dir);
  {
    std::ofstream csv(o_.out_dir + "/faults.csv");
    csv << "index,fault,node,at_unix_ms,injected,takeover_ms,serving_ms,longest_stall_ms,all_acking_ms,healed_ms,"
           "acknowledged,checked,lost,overlaps,with\n";
    for (const FaultReport& r : reports_) {
      csv << r.index << "," << fault_kind_name(r.fault.kind) << "," << r.fault.node << "," << r.at_ms << ","
          << (r.injection_error.empty() ? 1 : 0) << "," << r.takeover_ms << "," << r.serving_ms << "," << r.longest_stall_ms << ","
          << r.all_acking_ms << "," << r.healed_ms << "," << r.acknowledged << "," << r.checked << "," << r.lost
          << "," << r.overlaps.size() << ",";
      for (const Fault& w : r.fault.with) csv << fault_kind_name(w.kind) << " " << w.node;  // the one at once
      csv << "\n";
    }
  }
  std::vector<int64_t> acks;
  for (const auto& c : clients_) {
    auto a = c->ack_times();
    acks.insert(acks.end(), a.begin(), a.end());
  }
  std::vector<TimelineMark> marks;
  for (const FaultReport& r : reports_)
    marks.push_back({r.at_ms, std::to_string(r.index) + " " + fault_kind_name(r.fault.kind) + " " + r.fault.node});
  const auto seconds = ops_per_second(acks, start_ms_, unix_ms());
  {
    std::ofstream csv(o_.out_dir + "/ops.csv");
    write_ops_csv(csv, seconds, start_ms_);
  }
  std::string error;
  if (plot_ops(o_.out_dir + "/ops.csv", marks, start_ms_, o_.out_dir + "/ops.svg", &error) != 0)
    out_ << "no plot: " << error << "\n";
}

int Drill::run() {
  start_ms_ = unix_ms();
  out_ << "nasd-drill: " << nodes_.size() << " node(s) from " << o_.cluster_file << ", authority "
       << o_.authority << ", " << o_.schedule.size() << " fault(s), seed " << o_.seed << "\n";
  std::string why;
  if (!wait_healthy(start_ms_, nullptr)) {
    out_ << "the cluster is not healthy before the drill\n";
    return 1;
  }
  if (!start_clients()) return 1;
  sleep_ms(o_.settle_ms);
  bool ok = true;
  int index = 0;
  for (const Fault& f : o_.schedule) {
    FaultReport r;
    r.index = ++index;
    r.fault = f;
    inject(r);
    const bool healed = wait_healthy(r.at_ms, &r);
    if (restart_.joinable()) {
      restart_.join();
      std::lock_guard lock(restart_mu_);
      r.actions.push_back(restart_note_);
      if (r.injection_error.empty()) r.injection_error = restart_error_;
    }
    sleep_ms(o_.settle_ms);  // the load runs on, so stalls and recovery show
    measure(r, unix_ms());
    verify(r);
    check_serving(r);
    print(r);
    ok &= r.injection_error.empty() && healed && r.lost == 0 && r.overlaps.empty() && r.verify_errors.empty();
    reports_.push_back(r);
    if (!healed) break;  // later faults would only measure the earlier one
  }
  for (auto& c : clients_) c->stop();
  write_files();
  uint64_t lost = 0, overlaps = 0, checked = 0, acked = 0;
  int64_t worst_takeover = -1, worst_serving = -1, worst_stall = 0;
  for (const FaultReport& r : reports_) {
    lost += r.lost;
    overlaps = r.overlaps.size();  // each check covers the whole drill so far
    checked = r.checked;
    acked = r.acknowledged;
    worst_takeover = std::max(worst_takeover, r.takeover_ms);
    worst_serving = std::max(worst_serving, r.serving_ms);
    worst_stall = std::max(worst_stall, r.longest_stall_ms);
  }
  out_ << "summary: " << reports_.size() << "/" << o_.schedule.size() << " faults, " << acked
       << " acknowledged operations, " << checked << " acknowledged facts checked at the end, " << lost
       << " lost, " << overlaps << " serving overlaps, longest takeover "
       << (worst_takeover < 0 ? std::string("none") : seconds_text(worst_takeover)) << " (lease), "
       << (worst_serving < 0 ? std::string("none") : seconds_text(worst_serving)) << " (serving), longest client stall "
       << seconds_text(worst_stall) << "\n";
  out_ << "files: " << o_.out_dir << "/{faults.csv,ops.csv,ops.svg}\n";
  out_ << (ok ? "PASS" : "FAIL") << "\n";
  return ok ? 0 : 1;
}

}  // namespace

int run_drill(const DrillOptions& options, const std::vector<ClusterNode>& nodes, std::ostream& out) {
  Drill d(options, nodes, out);
  return d.run();
}

}  // namespace nasd::drill
