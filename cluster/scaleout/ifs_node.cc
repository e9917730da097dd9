#include "cluster/scaleout/ifs_node.h"

#include <sys/stat.h>

#include "cluster/scaleout/ifs_volume.h"
#include "cluster/scaleout/read_layout.h"
#include "util/log.h"

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
      remote_(local_.get(), options_.call_timeout), nodes_(options_.nodes),
      layout_pool_({.threads = 2, .max_queued = 256,
                    .at_stop = util::TaskQueue::AtStop::RunQueued, .room = "scaleout"}) {
  for (uint32_t id : options_.nodes) {
    NodeState n;
    n.id = id;
    n.alive = true;
    n.drives.assign(options_.drives, DriveState{true});
    view_[id] = n;
  }
}

IfsNode::~IfsNode() { stop(); }

void IfsNode::attach(interconnect::InterconnectServer& server) {
  server_->attach(server);
  server.set_handler(interconnect::MessageType::IfsReadLayout,
                     [this](interconnect::IncomingRequest request) { handle_layout(std::move(request)); });
}

void IfsNode::add_peer(uint32_t node, interconnect::CallChannel* channel) {
  remote_.add_peer(node, channel);
  std::lock_guard lock(layout_mu_);
  peers_[node] = channel;
}

void IfsNode::serve_layouts(std::shared_ptr<IfsVolume> volume) {
  std::lock_guard lock(layout_mu_);
  coordinating_ = std::move(volume);
}

void IfsNode::set_lease_check(std::function<bool()> may_serve) {
  std::lock_guard lock(layout_mu_);
  may_serve_ = std::move(may_serve);
}

// On a pool thread (read_layout takes the volume's lock; the connection's reader must not wait
// for it). A full pool answers JUKEBOX: the reader forwards its READ instead.
void IfsNode::handle_layout(interconnect::IncomingRequest request) {
  auto shared = std::make_shared<interconnect::IncomingRequest>(std::move(request));
  auto answer = [this, shared] {
    ReadLayout layout;
    layout.status = fs::Status::Jukebox;
    LayoutRequest req;
    std::shared_ptr<IfsVolume> volume;
    std::function<bool()> may_serve;
    {
      std::lock_guard lock(layout_mu_);
      volume = coordinating_;
      may_serve = may_serve_;
    }
    if (!decode_layout_request(shared->payload, &req)) {
      layout.status = fs::Status::ServerFault;
    } else if (volume && may_serve && req.volume_id == volume->id()) {
      volume->read_layout(req.ctx, req.id, req.offset, req.count, &layout);
      // Taken while this node may still serve the volume: a lease that ran out meanwhile
      // means a new coordinator may already have changed the bytes.
      if (!may_serve()) {
        layout = ReadLayout{};
        layout.status = fs::Status::Jukebox;
      } else {
        layouts_served_++;
      }
    }
    shared->responder.reply(encode_layout_reply(layout));
  };
  if (!layout_pool_.submit(answer)) {
    ReadLayout busy;
    busy.status = fs::Status::Jukebox;
    shared->responder.reply(encode_layout_reply(busy));
  }
}

bool IfsNode::read_direct(uint32_t coordinator, const fs::OpContext& ctx, fs::InodeId id,
                          uint64_t offset, uint32_t count, std::vector<uint8_t>* data, bool* eof,
                          std::optional<fs::Attr>* attr, fs::Status* status) {
  interconnect::CallChannel* channel = nullptr;
  {
    std::lock_guard lock(layout_mu_);
    if (auto it = peers_.find(coordinator); it != peers_.end()) channel = it->second;
  }
  if (!channel || dead(coordinator)) {
    fallbacks_++;
    return false;
  }
  LayoutRequest req;
  req.volume_id = static_cast<uint32_t>(options_.volume);
  req.ctx.cred = ctx.cred;
  req.id = id;
  req.offset = offset;
  req.count = count;
  const std::vector<uint8_t> payload = encode_layout_request(req);
  for (int attempt = 0; attempt < kLayoutAttempts; attempt++) {
    if (attempt > 0) retried_++;
    interconnect::CallOutcome out =
        channel->call(interconnect::MessageType::IfsReadLayout, payload, options_.layout_timeout);
    ReadLayout layout;
    if (!out.ok() || !decode_layout_reply(out.payload, &layout) ||
        layout.status == fs::Status::Jukebox || layout.status == fs::Status::ServerFault)
      break;
    if (layout.status == fs::Status::Ok) {
      std::vector<uint8_t> bytes;
      if (!reader_.read(layout, &bytes, nullptr)) continue;  // units gone since: ask again
      *data = std::move(bytes);
    } else {
      data->clear();
    }
    *status = layout.status;
    *eof = layout.eof;
    *attr = layout.attr;
    direct_++;
    return true;
  }
  fallbacks_++;
  return false;
}

IfsNode::DirectReadStats IfsNode::direct_read_stats() const {
  return DirectReadStats{direct_.load(), fallbacks_.load(), retried_.load(), layouts_served_.load()};
}

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
  if (options_.compaction.check_every.count() > 0) compactor_ = std::thread([this] { compact_loop(); });
}

// Its own thread: a compaction takes as long as copying a drive's live units at the policy's
// rate, and must hold up neither the probes nor anything else.
void IfsNode::compact_loop() {
  for (;;) {
    {
      std::unique_lock lock(stop_mu_);
      if (stop_cv_.wait_for(lock, options_.compaction.check_every, [&] { return stopping_; })) return;
    }
    try {
      const int drive = local_->compact_if_due(options_.compaction);
      if (drive >= 0)
        util::log("ifs").info("node " + std::to_string(options_.self) + ": drive " + std::to_string(drive) +
                              " compacted; " + std::to_string(local_->bytes_reclaimed()) +
                              " bytes reclaimed since start");
    } catch (const std::exception& e) {
      util::log("ifs").error(std::string("compaction: ") + e.what());
    }
  }
}

void IfsNode::stop() {
  {
    std::lock_guard lock(stop_mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (prober_.joinable()) prober_.join();
  if (compactor_.joinable()) compactor_.join();
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

UnitStatus IfsNode::list(const UnitPlace& at, const UnitKey& from, uint32_t max,
                         std::vector<UnitKey>* out, bool* more) {
  out->clear();
  *more = false;
  return dead(at.node) ? UnitStatus::Unreachable : remote_.list(at, from, max, out, more);
}

}  // namespace nasd::scaleout
