#include "cluster/interconnect/router.h"

#include <mutex>

namespace nasd::interconnect {

ClusterRouter::ClusterRouter(std::string local_node, PeerLookup peers,
                             RemoteVolumeOptions remote)
    : local_node_(std::move(local_node)), peers_(std::move(peers)), remote_options_(remote) {}

ClusterRouter::Entry& ClusterRouter::entry_for(uint32_t volume_id, fs::InodeId root) {
  Entry& e = volumes_[volume_id];
  if (!e.unavailable) {
    e.unavailable = std::make_unique<UnavailableVolume>(volume_id, root);
    e.current = e.unavailable.get();
  }
  return e;
}

void ClusterRouter::add_local(std::shared_ptr<fs::Volume> volume) {
  std::unique_lock lock(mu_);
  Entry& e = entry_for(volume->id(), volume->root());
  if (e.local) e.retired.push_back(std::move(e.local));
  e.local = std::move(volume);
  e.serve_local();
  if (e.owner == local_node_) e.current = e.served.get();
}

void ClusterRouter::Entry::serve_local() {
  if (served && served != local) retired.push_back(std::move(served));
  served = local && fence ? std::make_shared<FencedVolume>(local, fence) : local;
}

void ClusterRouter::add_remote(uint32_t volume_id, fs::InodeId root) {
  std::unique_lock lock(mu_);
  entry_for(volume_id, root);
}

bool ClusterRouter::set_owner(uint32_t volume_id, const std::string& node) {
  std::unique_lock lock(mu_);
  auto it = volumes_.find(volume_id);
  if (it == volumes_.end()) return false;
  Entry& e = it->second;
  if (node.empty()) {
    e.current = e.unavailable.get();
  } else if (node == local_node_) {
    // Owned here but not opened yet (takeover in progress): clients wait.
    e.current = e.served ? e.served.get() : e.unavailable.get();
  } else {
    auto& remote = e.remotes[node];
    if (!remote) {
      std::shared_ptr<CallChannel> channel = peers_ ? peers_(node) : nullptr;
      if (!channel) {
        e.remotes.erase(node);
        return false;
      }
      RemoteVolumeOptions options = remote_options_;
      auto& slots = slots_[node];  // one bound per owner, shared by its volumes
      if (!slots) slots = std::make_shared<ForwardSlots>(options.max_in_flight);
      options.slots = slots;
      remote = std::make_unique<RemoteVolume>(volume_id, std::move(channel), options);
    }
    e.current = remote.get();
  }
  e.owner = node;
  return true;
}

std::optional<std::string> ClusterRouter::owner(uint32_t volume_id) const {
  std::shared_lock lock(mu_);
  auto it = volumes_.find(volume_id);
  if (it == volumes_.end()) return std::nullopt;
  return it->second.owner;
}

bool ClusterRouter::serves_here(uint32_t volume_id) const {
  std::function<bool()> fence;
  {
    std::shared_lock lock(mu_);
    auto it = volumes_.find(volume_id);
    if (it == volumes_.end() || it->second.owner != local_node_) return false;
    fence = it->second.fence;
  }
  return !fence || fence();  // outside the lock: the fence may take its own
}

std::vector<uint32_t> ClusterRouter::volume_ids() const {
  std::shared_lock lock(mu_);
  std::vector<uint32_t> ids;
  for (const auto& [id, e] : volumes_) ids.push_back(id);
  return ids;
}

fs::Volume* ClusterRouter::find(uint32_t volume_id) {
  std::shared_lock lock(mu_);
  auto it = volumes_.find(volume_id);
  if (it == volumes_.end()) return nullptr;
  return it->second.current;
}

bool ClusterRouter::set_fence(uint32_t volume_id, std::function<bool()> may_serve) {
  std::unique_lock lock(mu_);
  auto it = volumes_.find(volume_id);
  if (it == volumes_.end()) return false;
  Entry& e = it->second;
  e.fence = std::move(may_serve);
  const bool was_current = e.served && e.current == e.served.get();
  e.serve_local();
  if (was_current) e.current = e.served.get();
  return true;
}

fs::Volume* ClusterRouter::ServedHere::find(uint32_t volume_id) {
  std::shared_lock lock(router_->mu_);
  auto it = router_->volumes_.find(volume_id);
  if (it == router_->volumes_.end()) return nullptr;
  const Entry& e = it->second;
  if (e.owner == router_->local_node_ && e.served) return e.served.get();
  return e.unavailable.get();
}

}  // namespace nasd::interconnect
