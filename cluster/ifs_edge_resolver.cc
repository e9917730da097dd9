#include "cluster/ifs_edge_resolver.h"

#include "cluster/interconnect/router.h"
#include "cluster/scaleout/ifs_node.h"
#include "fs/wrapped_volume.h"

namespace nasd::cluster {

// The router's proxy to the coordinator, with READ answered from the units when it can be.
class IfsEdgeResolver::Edge : public fs::WrappedVolume {
 public:
  // `proxy` is kept alive by the router for its lifetime (not owned here).
  Edge(fs::Volume* proxy, scaleout::IfsNode* node, uint32_t coordinator)
      : WrappedVolume(std::shared_ptr<fs::Volume>(std::shared_ptr<fs::Volume>{}, proxy)),
        node_(node), coordinator_(coordinator) {}

  fs::call::VolumeReply call(const fs::call::VolumeRequest& req) override {
    const auto* a = std::get_if<fs::call::ReadArgs>(&req.args);
    if (a == nullptr) return WrappedVolume::call(req);
    fs::call::VolumeReply reply;
    reply.op = fs::call::VolumeOp::Read;
    fs::call::ReadResult r;
    if (node_->read_direct(coordinator_, req.ctx, a->id, a->offset, a->count, &r.data, &r.eof,
                           &r.attr, &reply.status)) {
      reply.result = std::move(r);
      return reply;
    }
    return WrappedVolume::call(req);
  }
  // The event loop's READ would otherwise go to the proxy's attempt (WrappedVolume passes it
  // on), which forwards it to the coordinator: "would block" sends it to the executor, whose
  // call() above answers it from the units (read_direct waits on the holders' unit calls).
  std::optional<fs::call::VolumeReply> try_call(const fs::call::VolumeRequest& req) override {
    if (req.op() == fs::call::VolumeOp::Read) return std::nullopt;
    return WrappedVolume::try_call(req);
  }
  std::optional<fs::Status> try_read_shared(const fs::OpContext&, fs::InodeId, uint64_t, uint32_t,
                                            util::ByteSlices*, bool*, std::optional<fs::Attr>*) override {
    return std::nullopt;
  }

 private:
  scaleout::IfsNode* const node_;
  const uint32_t coordinator_;
};

IfsEdgeResolver::IfsEdgeResolver(std::shared_ptr<interconnect::ClusterRouter> router,
                                 uint32_t volume_id)
    : router_(std::move(router)), volume_id_(volume_id) {}

IfsEdgeResolver::~IfsEdgeResolver() = default;

void IfsEdgeResolver::attach(scaleout::IfsNode* node, std::map<std::string, uint32_t> ids) {
  std::lock_guard lock(mu_);
  node_ = node;
  ids_ = std::move(ids);
}

fs::Volume* IfsEdgeResolver::find(uint32_t volume_id) {
  fs::Volume* v = router_->find(volume_id);
  if (volume_id != volume_id_ || !v) return v;
  const std::optional<std::string> owner = router_->owner(volume_id);
  if (!owner || owner->empty() || *owner == router_->local_node()) return v;
  std::lock_guard lock(mu_);
  auto id = ids_.find(*owner);
  if (!node_ || id == ids_.end()) return v;
  std::unique_ptr<Edge>& edge = edges_[{v, id->second}];
  if (!edge) edge = std::make_unique<Edge>(v, node_, id->second);
  return edge.get();
}

}  // namespace nasd::cluster
