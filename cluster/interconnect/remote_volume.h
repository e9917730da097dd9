// A Volume whose calls run on another node: each method becomes one VolumeCall request over the
// interconnect to the volume's owner, which executes it (permission checks included, for the
// credential passed along) and sends back every out-parameter.
//
// When the owner cannot be reached or does not answer in time the call returns Jukebox, so the
// NFS client backs off and retries instead of hanging or seeing a hard error; by the time it
// retries, a failover may have moved the volume and the router sends the retry elsewhere.
//
// A call made from an NFS executor thread does not hold that thread while the owner works:
// the request goes out on the link (pipelined and batched with the other calls to that owner,
// peer_client.h), the NFS call parks (util/resumable_call.h) and runs again when the reply,
// the link's failure or the deadline (call_timeout) arrives. Every call in flight needs one of
// the owner's forward slots (forward_slots.h); with none free it is Jukebox at once, so a
// paused or slow owner costs at most `slots` parked calls, and no threads. Calls made outside
// the NFS executor (DESCRIBE, tests, admin) wait in place, bounded the same way.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>

#include "cluster/interconnect/call_channel.h"
#include "cluster/interconnect/forward_slots.h"
#include "fs/call/calls.h"
#include "fs/volume.h"

namespace nasd::interconnect {

struct RemoteVolumeOptions {
  std::chrono::milliseconds call_timeout{5000};
  // DESCRIBE (root, limits) is asked for at most this often while the owner is unreachable.
  std::chrono::milliseconds describe_timeout{1000};
  // Forwarded calls that may be in flight to one owner at once (the router shares one
  // ForwardSlots per owner among its volumes). Calls made outside the NFS executor wait in
  // place and hold a thread; those made by NFS procedures park and hold none.
  size_t max_in_flight = 256;
  // The owner's slots; a RemoteVolume of its own when null.
  std::shared_ptr<ForwardSlots> slots;
};

class RemoteVolume : public fs::Volume {
 public:
  RemoteVolume(uint32_t volume_id, std::shared_ptr<CallChannel> owner,
               RemoteVolumeOptions options = {});

  uint32_t id() const override { return volume_id_; }
  // Root and limits are the owner's, fetched once (DESCRIBE) and cached; until the owner has
  // answered they are defaults, and root() is {0, 0} (a handle no volume issues).
  fs::InodeId root() const override;
  fs::VolumeLimits limits() const override;
  // The owner's current verifier, refreshed from every reply.
  uint64_t write_verifier() const override { return verifier_.load(); }

  // Asks the owner for root and limits now; false when it could not be reached.
  bool describe() const;
  const ForwardSlots& slots() const { return *slots_; }

  fs::Status getattr(const fs::OpContext& ctx, fs::InodeId id, fs::Attr* out) override;
  fs::Status setattr(const fs::OpContext& ctx, fs::InodeId id, const fs::SetAttr& sa,
                     std::optional<fs::Time> guard_ctime, fs::Wcc* wcc) override;
  fs::Status lookup(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                    fs::InodeId* out, std::optional<fs::Attr>* obj_attr,
                    std::optional<fs::Attr>* dir_attr) override;
  fs::Status access(const fs::OpContext& ctx, fs::InodeId id, uint32_t requested,
                    uint32_t* granted, std::optional<fs::Attr>* attr) override;
  fs::Status readlink(const fs::OpContext& ctx, fs::InodeId id, std::string* target,
                      std::optional<fs::Attr>* attr) override;
  fs::Status read(const fs::OpContext& ctx, fs::InodeId id, uint64_t offset, uint32_t count,
                  std::vector<uint8_t>* data, bool* eof, std::optional<fs::Attr>* attr) override;
  fs::Status write(const fs::OpContext& ctx, fs::InodeId id, uint64_t offset,
                   std::span<const uint8_t> data, fs::Stability stable,
                   fs::Stability* committed, fs::Wcc* wcc) override;
  fs::Status create(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                    fs::CreateMode mode, const fs::SetAttr& sa, uint64_t verifier,
                    fs::InodeId* out, std::optional<fs::Attr>* obj_attr,
                    fs::Wcc* dir_wcc) override;
  fs::Status mkdir(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                   const fs::SetAttr& sa, fs::InodeId* out, std::optional<fs::Attr>* obj_attr,
                   fs::Wcc* dir_wcc) override;
  fs::Status symlink(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                     std::string_view target, const fs::SetAttr& sa, fs::InodeId* out,
                     std::optional<fs::Attr>* obj_attr, fs::Wcc* dir_wcc) override;
  fs::Status mknod(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                   fs::FileType type, const fs::SetAttr& sa, uint32_t rdev_major,
                   uint32_t rdev_minor, fs::InodeId* out, std::optional<fs::Attr>* obj_attr,
                   fs::Wcc* dir_wcc) override;
  fs::Status remove(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                    fs::Wcc* dir_wcc) override;
  fs::Status rmdir(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                   fs::Wcc* dir_wcc) override;
  fs::Status rename(const fs::OpContext& ctx, fs::InodeId from_dir, std::string_view from_name,
                    fs::InodeId to_dir, std::string_view to_name, fs::Wcc* from_wcc,
                    fs::Wcc* to_wcc) override;
  fs::Status link(const fs::OpContext& ctx, fs::InodeId file, fs::InodeId dir,
                  std::string_view name, std::optional<fs::Attr>* file_attr,
                  fs::Wcc* dir_wcc) override;
  fs::Status readdir(const fs::OpContext& ctx, fs::InodeId dir, uint64_t cookie,
                     uint64_t cookieverf, uint32_t max_entries, bool with_attrs,
                     fs::ReaddirResult* out) override;
  fs::Status fsstat(const fs::OpContext& ctx, fs::InodeId id, fs::FsStat* out,
                    std::optional<fs::Attr>* attr) override;
  fs::Status commit(const fs::OpContext& ctx, fs::InodeId id, uint64_t offset, uint32_t count,
                    fs::Wcc* wcc) override;

  // The non-blocking attempts, inside a resumable call only (elsewhere they would block): the
  // answer when it is already in (the run that resumes a parked call on the thread that brought
  // the answer, rpc::CallDispatcher::resume); else, when the run may park (the first run, on the
  // NFS event loop), the request is sent without waiting and the call parks; else (no room on
  // the link, or a run that may not park) "would block", and the call goes to the executor.
  std::optional<fs::Status> try_getattr(const fs::OpContext& ctx, fs::InodeId id,
                                        fs::Attr* out) override;
  std::optional<fs::Status> try_lookup(const fs::OpContext& ctx, fs::InodeId dir,
                                       std::string_view name, fs::InodeId* out,
                                       std::optional<fs::Attr>* obj_attr,
                                       std::optional<fs::Attr>* dir_attr) override;
  std::optional<fs::Status> try_access(const fs::OpContext& ctx, fs::InodeId id,
                                       uint32_t requested, uint32_t* granted,
                                       std::optional<fs::Attr>* attr) override;
  std::optional<fs::Status> try_read(const fs::OpContext& ctx, fs::InodeId id, uint64_t offset,
                                     uint32_t count, std::vector<uint8_t>* data, bool* eof,
                                     std::optional<fs::Attr>* attr) override;
  // WRITE and COMMIT likewise, whatever their stability: the owner commits them, so the only
  // wait here is the round trip, and the call parks on it like a READ. Without these the NFS
  // WRITE went loop -> executor (send, park) -> link reader -> executor (rerun) -> loop.
  std::optional<fs::Status> try_write(const fs::OpContext& ctx, fs::InodeId id, uint64_t offset,
                                      std::span<const uint8_t> data, fs::Stability stable,
                                      fs::Stability* committed, fs::Wcc* wcc) override;
  std::optional<fs::Status> try_commit(const fs::OpContext& ctx, fs::InodeId id, uint64_t offset,
                                       uint32_t count, fs::Wcc* wcc) override;
  // READLINK, READDIR(PLUS) and FSSTAT: read-only, so the same as GETATTR. READDIR carries
  // the NFS layer's `max_entries` as the blocking readdir() does, so the owner bounds the listing
  // identically.
  std::optional<fs::Status> try_readlink(const fs::OpContext& ctx, fs::InodeId id,
                                         std::string* target,
                                         std::optional<fs::Attr>* attr) override;
  std::optional<fs::Status> try_readdir(const fs::OpContext& ctx, fs::InodeId dir,
                                        uint64_t cookie, uint64_t cookieverf,
                                        uint32_t max_entries, bool with_attrs,
                                        fs::ReaddirResult* out) override;
  std::optional<fs::Status> try_fsstat(const fs::OpContext& ctx, fs::InodeId id, fs::FsStat* out,
                                       std::optional<fs::Attr>* attr) override;
  // The name-space mutations likewise: the owner runs each exactly as a call forwarded from the
  // executor (same request bytes, client call identity included), so the only wait here is the
  // round trip. Failover between the park and the rerun: cluster/README.md ("Forwarding").
  std::optional<fs::Status> try_setattr(const fs::OpContext& ctx, fs::InodeId id,
                                        const fs::SetAttr& sa, std::optional<fs::Time> guard_ctime,
                                        fs::Wcc* wcc) override;
  std::optional<fs::Status> try_create(const fs::OpContext& ctx, fs::InodeId dir,
                                       std::string_view name, fs::CreateMode mode,
                                       const fs::SetAttr& sa, uint64_t verifier, fs::InodeId* out,
                                       std::optional<fs::Attr>* obj_attr,
                                       fs::Wcc* dir_wcc) override;
  std::optional<fs::Status> try_mkdir(const fs::OpContext& ctx, fs::InodeId dir,
                                      std::string_view name, const fs::SetAttr& sa,
                                      fs::InodeId* out, std::optional<fs::Attr>* obj_attr,
                                      fs::Wcc* dir_wcc) override;
  std::optional<fs::Status> try_symlink(const fs::OpContext& ctx, fs::InodeId dir,
                                        std::string_view name, std::string_view target,
                                        const fs::SetAttr& sa, fs::InodeId* out,
                                        std::optional<fs::Attr>* obj_attr,
                                        fs::Wcc* dir_wcc) override;
  std::optional<fs::Status> try_mknod(const fs::OpContext& ctx, fs::InodeId dir,
                                      std::string_view name, fs::FileType type,
                                      const fs::SetAttr& sa, uint32_t rdev_major,
                                      uint32_t rdev_minor, fs::InodeId* out,
                                      std::optional<fs::Attr>* obj_attr,
                                      fs::Wcc* dir_wcc) override;
  std::optional<fs::Status> try_remove(const fs::OpContext& ctx, fs::InodeId dir,
                                       std::string_view name, fs::Wcc* dir_wcc) override;
  std::optional<fs::Status> try_rmdir(const fs::OpContext& ctx, fs::InodeId dir,
                                      std::string_view name, fs::Wcc* dir_wcc) override;
  std::optional<fs::Status> try_rename(const fs::OpContext& ctx, fs::InodeId from_dir,
                                       std::string_view from_name, fs::InodeId to_dir,
                                       std::string_view to_name, fs::Wcc* from_wcc,
                                       fs::Wcc* to_wcc) override;
  std::optional<fs::Status> try_link(const fs::OpContext& ctx, fs::InodeId file, fs::InodeId dir,
                                     std::string_view name, std::optional<fs::Attr>* file_attr,
                                     fs::Wcc* dir_wcc) override;

 private:
  // The attempt behind the try_* above: the stored answer of this wait of the current
  // resumable call (the owner's results in *result), or Jukebox after parking on a request
  // sent without waiting, or nullopt ("would block").
  template <class Args>
  std::optional<fs::Status> attempt(const fs::OpContext& ctx, const Args& args,
                                    typename Args::Result* result) const;
  // Forwards `args` and stores the owner's result in *result (left untouched when the call
  // never reached the volume); returns the status to hand to the NFS layer. Inside a resumable
  // call (util/resumable_call.h, the NFS executor's) it does not wait: the first run sends the
  // request and parks the call, the next run takes the answer. Elsewhere it waits in place.
  template <class Args>
  fs::Status forward(const fs::OpContext& ctx, const Args& args,
                     typename Args::Result* result) const;
  // Sends and waits for the reply or `timeout`, holding this thread.
  template <class Args>
  fs::Status forward_waiting(const fs::OpContext& ctx, const Args& args,
                             typename Args::Result* result, std::chrono::milliseconds timeout) const;
  template <class Args>
  std::vector<uint8_t> request_bytes(const fs::OpContext& ctx, const Args& args) const;
  void ensure_described() const;

  const uint32_t volume_id_;
  const std::shared_ptr<CallChannel> owner_;
  const RemoteVolumeOptions options_;
  const std::shared_ptr<ForwardSlots> slots_;
  mutable std::atomic<uint64_t> verifier_{0};
  mutable std::mutex describe_mu_;
  mutable std::optional<fs::call::DescribeResult> described_;
};

}  // namespace nasd::interconnect
