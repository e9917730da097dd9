// The cluster name space: which node owns each volume, and the Volume object that reaches it
// from here — the local volume when this node owns it, a RemoteVolume to the owner otherwise.
// Any node therefore accepts any request; failover and failback are just set_owner() calls
// made by the membership layer once fencing allows them.
//
// find() runs on every NFS request, so it only takes a shared lock. The Volume pointers it
// returns stay valid for the router's lifetime even across ownership changes (every proxy it
// ever created is kept), because a request may still be running on the old one.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include "cluster/interconnect/call_channel.h"
#include "cluster/interconnect/fenced_volume.h"
#include "cluster/interconnect/remote_volume.h"
#include "cluster/interconnect/unavailable_volume.h"
#include "fs/volume.h"

namespace nasd::interconnect {

class ClusterRouter : public fs::VolumeResolver {
 public:
  // The channel to a peer node by name; nullptr when the node is unknown.
  using PeerLookup = std::function<std::shared_ptr<CallChannel>(const std::string& node)>;

  ClusterRouter(std::string local_node, PeerLookup peers, RemoteVolumeOptions remote = {});

  // Makes a volume that this node can serve known to the router (it stays unserved here until
  // set_owner names this node). The volume's root is what MOUNT hands out while it moves.
  // Adding a volume again (reopened after a failback and a new takeover) replaces the object
  // find() returns; the old one is kept alive for requests still running on it.
  void add_local(std::shared_ptr<fs::Volume> volume);
  // Declares a volume that lives elsewhere (root as reported by its owner, or {} if unknown).
  void add_remote(uint32_t volume_id, fs::InodeId root = {});

  // Who serves `volume_id` from now on: this node, a peer, or nobody ("") while it moves.
  // False when the volume is unknown or the peer has no channel.
  bool set_owner(uint32_t volume_id, const std::string& node);
  std::optional<std::string> owner(uint32_t volume_id) const;
  // Asked on every call that reaches the local volume (a FencedVolume in front of it): false
  // answers NFS3ERR_JUKEBOX, as if nobody owned it. The membership's lease check, so that a node
  // whose lease ran out while it was not scheduled refuses requests before it has even noticed.
  // False if unknown volume.
  bool set_fence(uint32_t volume_id, std::function<bool()> may_serve);
  // Whether this node serves `volume_id` right now: it owns it and its fence (if any) passes.
  // For calls that do not go through the volume (NLM's lock grants), so that a node paused past
  // its lease grants nothing on a volume another node may own by now.
  bool serves_here(uint32_t volume_id) const;
  std::vector<uint32_t> volume_ids() const;

  // The volume for a request arriving at this node (nullptr: no such volume anywhere).
  fs::Volume* find(uint32_t volume_id) override;

  // Only what this node itself serves: the resolver for VolumeServer. A volume owned
  // elsewhere or by nobody resolves to a Jukebox stand-in, never to a proxy (see VolumeServer).
  fs::VolumeResolver& served_here() { return served_here_; }

  const std::string& local_node() const { return local_node_; }

 private:
  struct Entry {
    std::string owner;  // "" = nobody may serve it right now
    std::shared_ptr<fs::Volume> local;
    std::shared_ptr<fs::Volume> served;                // local, behind `fence` when there is one
    std::vector<std::shared_ptr<fs::Volume>> retired;  // replaced objects, kept alive
    std::unique_ptr<UnavailableVolume> unavailable;
    std::map<std::string, std::unique_ptr<RemoteVolume>> remotes;  // by owner node
    fs::Volume* current = nullptr;                                 // what find() returns
    std::function<bool()> fence;                                   // see set_fence()
    // Rebuilds `served` after `local` or `fence` changed; the old one is retired.
    void serve_local();
  };
  class ServedHere : public fs::VolumeResolver {
   public:
    explicit ServedHere(ClusterRouter* router) : router_(router) {}
    fs::Volume* find(uint32_t volume_id) override;

   private:
    ClusterRouter* router_;
  };

  Entry& entry_for(uint32_t volume_id, fs::InodeId root);

  const std::string local_node_;
  const PeerLookup peers_;
  const RemoteVolumeOptions remote_options_;
  std::map<std::string, std::shared_ptr<ForwardSlots>> slots_;  // per owner node; under mu_
  mutable std::shared_mutex mu_;
  std::map<uint32_t, Entry> volumes_;
  ServedHere served_here_{this};
};

}  // namespace nasd::interconnect
