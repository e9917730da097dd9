#include "cluster/scaleout/ifs_node.h"

#include <sys/stat.h>

namespace nasd::scaleout {

std::unique_ptr<IfsNode> IfsNode::open(Options options, std::string* error) {
  ::mkdir(options.dir.c_str(), 0700);
  std::unique_ptr<NodeUnits> local;
  if (!NodeUnits::open(options.dir, options.volume, options.self, options.drives, &local, error))
    return nullptr;
  return std::unique_ptr<IfsNode>(new IfsNode(std::move(options), std::move(local)));
}

IfsNode::IfsNode(Options options, std::unique_ptr<NodeUnits> local)
    : options_(std::move(options)), local_(std::move(local)),
      server_(std::make_unique<UnitServer>(local_.get())),
      remote_(local_.get(), options_.call_timeout), nodes_(options_.nodes) {
  for (uint32_t id : options_.nodes) {
    NodeState n;
    n.id = id;
    n.alive = true;
    n.drives.assign(options_.drives, DriveState{true});
    view_[id] = n;
  }
}

IfsNode::~IfsNode() { stop(); }

void IfsNode::attach(interconnect::InterconnectServer& server) { server_->attach(server); }

void IfsNode::add_peer(uint32_t node, interconnect::CallChannel* channel) { remote_.add_peer(node, channel); }

void IfsNode::add_node(uint32_t node, interconnect::CallChannel* channel) {
  {
    std::lock_guard lock(mu_);
    if (view_.count(node)) return;
  }
  // The channel first: the prober may reach the node as soon as it is in nodes_.
  remote_.add_peer(node, channel);
  std::lock_guard lock(mu_);
  NodeState n;
  n.id = node;
  n.alive = false;
  n.drives.assign(options_.drives, DriveState{true});
  view_[node] = n;
  missed_[node] = kMissedProbes;
  nodes_.push_back(node);
}

bool IfsNode::knows(uint32_t node) const {
  std::lock_guard lock(mu_);
  return view_.count(node) > 0;
}

void IfsNode::start() {
  prober_ = std::thread([this] { probe_loop(); });
}

void IfsNode::stop() {
  {
    std::lock_guard lock(stop_mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (prober_.joinable()) prober_.join();
}

void IfsNode::probe_loop() {
  for (;;) {
    std::vector<uint32_t> nodes;
    {
      std::lock_guard lock(mu_);
      nodes = nodes_;
    }
    for (uint32_t id : nodes) {
      std::vector<bool> health = remote_.health(id);
      std::lock_guard lock(mu_);
      NodeState& n = view_[id];
      if (health.empty()) {
        if (++missed_[id] >= kMissedProbes) n.alive = false;
        continue;
      }
      missed_[id] = 0;
      n.alive = true;
      for (size_t d = 0; d < n.drives.size(); d++) n.drives[d].healthy = d < health.size() && health[d];
    }
    std::unique_lock lock(stop_mu_);
    if (stop_cv_.wait_for(lock, options_.probe_interval, [&] { return stopping_; })) return;
  }
}

Topology IfsNode::topology() {
  std::lock_guard lock(mu_);
  Topology t;
  for (const auto& [id, n] : view_) t.nodes.push_back(n);
  return t;
}

bool IfsNode::dead(uint32_t node) const {
  std::lock_guard lock(mu_);
  auto it = view_.find(node);
  return it == view_.end() || !it->second.alive;
}

UnitStatus IfsNode::put(const UnitPlace& at, const UnitKey& key, const uint8_t* data, uint32_t len) {
  return dead(at.node) ? UnitStatus::Unreachable : remote_.put(at, key, data, len);
}
UnitStatus IfsNode::get(const UnitPlace& at, const UnitKey& key, std::vector<uint8_t>* out) {
  return dead(at.node) ? UnitStatus::Unreachable : remote_.get(at, key, out);
}
UnitStatus IfsNode::remove(const UnitPlace& at, const UnitKey& key) {
  return dead(at.node) ? UnitStatus::Unreachable : remote_.remove(at, key);
}
UnitStatus IfsNode::sync(const UnitPlace& at) {
  return dead(at.node) ? UnitStatus::Unreachable : remote_.sync(at);
}

}  // namespace nasd::scaleout
