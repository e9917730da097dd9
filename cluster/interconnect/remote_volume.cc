#include "cluster/interconnect/remote_volume.h"

#include "fs/call/codec.h"
#include "util/resumable_call.h"

namespace nasd::interconnect {

// The calls travel in the project's one call encoding (fs/call/codec.h).
using namespace fs::call;

RemoteVolume::RemoteVolume(uint32_t volume_id, std::shared_ptr<CallChannel> owner,
                           RemoteVolumeOptions options)
    : volume_id_(volume_id),
      owner_(std::move(owner)),
      options_(options),
      slots_(options_.slots ? options_.slots
                            : std::make_shared<ForwardSlots>(options_.max_in_flight)) {}

namespace {

// The NFS status for a forwarded call's outcome; stores the volume's results in *result.
template <class Args>
fs::Status finish(CallError error, std::span<const uint8_t> payload, typename Args::Result* result,
                  std::atomic<uint64_t>* verifier) {
  switch (error) {
    case CallError::None: break;
    case CallError::TooLarge: return fs::Status::Inval;
    case CallError::Unsupported: return fs::Status::ServerFault;
    // Owner down, slow or restarting: a retry later may well succeed (possibly elsewhere).
    default: return fs::Status::Jukebox;
  }
  VolumeReply reply;
  if (!decode_reply(payload, Args::kOp, &reply)) return fs::Status::ServerFault;
  if (auto* r = std::get_if<typename Args::Result>(&reply.result)) {
    *result = std::move(*r);
    verifier->store(reply.write_verifier);
  }
  return reply.status;
}

}  // namespace

template <class Args>
std::vector<uint8_t> RemoteVolume::request_bytes(const fs::OpContext& ctx,
                                                 const Args& args) const {
  VolumeRequest req{volume_id_, ctx, args, std::nullopt};
  // The client call being served travels with it, so the owner's journal records it.
  if (const fs::CallIdentity* identity = fs::CallIdentityScope::current())
    req.identity = *identity;
  return encode_request(req);
}

template <class Args>
fs::Status RemoteVolume::forward(const fs::OpContext& ctx, const Args& args,
                                 typename Args::Result* result) const {
  util::ResumableCall* call = util::ResumableCall::current();
  if (call == nullptr) return forward_waiting(ctx, args, result, options_.call_timeout);
  // Inside a resumable call: never wait here. The first run sends and parks; the run after the
  // answer arrived takes it (waits are numbered in the order the procedure makes them).
  std::optional<size_t> wait = call->next_wait();
  if (!wait) return fs::Status::Jukebox;
  if (const util::ResumableCall::Answer* answer = call->answer(*wait))
    return finish<Args>(static_cast<CallError>(answer->error), answer->bytes, result, &verifier_);
  // A run that already parked (its result is discarded), or one that must finish in place.
  if (!call->may_park()) return fs::Status::Jukebox;
  if (!slots_->try_acquire()) return fs::Status::Jukebox;  // the owner is slow: do not pile up
  util::ResumableCall::Deliver deliver = call->park(*wait);
  owner_->call_async(MessageType::VolumeCall, request_bytes(ctx, args), options_.call_timeout,
                     [slots = slots_, deliver = std::move(deliver)](CallOutcome outcome) {
                       slots->release();
                       deliver({static_cast<int>(outcome.error), std::move(outcome.payload)});
                     });
  return fs::Status::Jukebox;  // not the call's answer: the call runs again once it is in
}

template <class Args>
fs::Status RemoteVolume::forward_waiting(const fs::OpContext& ctx, const Args& args,
                                         typename Args::Result* result,
                                         std::chrono::milliseconds timeout) const {
  if (!slots_->try_acquire()) return fs::Status::Jukebox;  // the owner is slow: do not pile up
  struct Release {
    ForwardSlots& s;
    ~Release() { s.release(); }
  } release{*slots_};
  CallOutcome outcome = owner_->call(MessageType::VolumeCall, request_bytes(ctx, args), timeout);
  return finish<Args>(outcome.error, outcome.payload, result, &verifier_);
}

template <class Args>
std::optional<fs::Status> RemoteVolume::attempt(const fs::OpContext& ctx, const Args& args,
                                                typename Args::Result* result) const {
  util::ResumableCall* call = util::ResumableCall::current();
  if (call == nullptr) return std::nullopt;
  // Numbered like the blocking call's wait: a later run (on the executor, if this attempt
  // would block) numbers its waits from 0 again.
  std::optional<size_t> wait = call->next_wait();
  if (!wait) return fs::Status::Jukebox;
  if (const util::ResumableCall::Answer* answer = call->answer(*wait))
    return finish<Args>(static_cast<CallError>(answer->error), answer->bytes, result, &verifier_);
  // Not answered yet: on the event loop, send without waiting and park the call (the loop takes
  // its next call; the answer's thread resumes this one). A link that cannot take the request at
  // once leaves the call to the executor, which may wait for the socket.
  if (!call->may_park()) return std::nullopt;
  if (!slots_->try_acquire()) return fs::Status::Jukebox;  // the owner is slow: do not pile up
  util::ResumableCall::Deliver deliver = call->park(*wait);
  if (!owner_->try_call_async(MessageType::VolumeCall, request_bytes(ctx, args),
                              options_.call_timeout,
                              [slots = slots_, deliver](CallOutcome outcome) {
                                slots->release();
                                deliver({static_cast<int>(outcome.error),
                                         std::move(outcome.payload)});
                              })) {
    slots_->release();
    call->unpark();
    return std::nullopt;
  }
  return fs::Status::Jukebox;  // not the call's answer: the call runs again once it is in
}

std::optional<fs::Status> RemoteVolume::try_getattr(const fs::OpContext& ctx, fs::InodeId id,
                                                    fs::Attr* out) {
  AttrResult r;
  std::optional<fs::Status> s = attempt(ctx, GetattrArgs{id}, &r);
  if (s) *out = r.attr;
  return s;
}

std::optional<fs::Status> RemoteVolume::try_lookup(const fs::OpContext& ctx, fs::InodeId dir,
                                                   std::string_view name, fs::InodeId* out,
                                                   std::optional<fs::Attr>* obj_attr,
                                                   std::optional<fs::Attr>* dir_attr) {
  LookupResult r;
  std::optional<fs::Status> s = attempt(ctx, LookupArgs{dir, name}, &r);
  if (s) {
    *out = r.id;
    *obj_attr = r.obj_attr;
    *dir_attr = r.dir_attr;
  }
  return s;
}

std::optional<fs::Status> RemoteVolume::try_access(const fs::OpContext& ctx, fs::InodeId id,
                                                   uint32_t requested, uint32_t* granted,
                                                   std::optional<fs::Attr>* attr) {
  AccessResult r;
  std::optional<fs::Status> s = attempt(ctx, AccessArgs{id, requested}, &r);
  if (s) {
    *granted = r.granted;
    *attr = r.attr;
  }
  return s;
}

std::optional<fs::Status> RemoteVolume::try_read(const fs::OpContext& ctx, fs::InodeId id,
                                                 uint64_t offset, uint32_t count,
                                                 std::vector<uint8_t>* data, bool* eof,
                                                 std::optional<fs::Attr>* attr) {
  ReadResult r;
  std::optional<fs::Status> s = attempt(ctx, ReadArgs{id, offset, count}, &r);
  if (s) {
    *data = std::move(r.data);
    *eof = r.eof;
    *attr = r.attr;
  }
  return s;
}

std::optional<fs::Status> RemoteVolume::try_write(const fs::OpContext& ctx, fs::InodeId id,
                                                  uint64_t offset, std::span<const uint8_t> data,
                                                  fs::Stability stable, fs::Stability* committed,
                                                  fs::Wcc* wcc) {
  WriteResult r;
  std::optional<fs::Status> s = attempt(ctx, WriteArgs{id, offset, data, stable}, &r);
  if (s) {
    *committed = r.committed;
    *wcc = r.wcc;
  }
  return s;
}

std::optional<fs::Status> RemoteVolume::try_commit(const fs::OpContext& ctx, fs::InodeId id,
                                                   uint64_t offset, uint32_t count,
                                                   fs::Wcc* wcc) {
  WccResult r;
  std::optional<fs::Status> s = attempt(ctx, CommitArgs{id, offset, count}, &r);
  if (s) *wcc = r.wcc;
  return s;
}

std::optional<fs::Status> RemoteVolume::try_readlink(const fs::OpContext& ctx, fs::InodeId id,
                                                     std::string* target,
                                                     std::optional<fs::Attr>* attr) {
  ReadlinkResult r;
  std::optional<fs::Status> s = attempt(ctx, ReadlinkArgs{id}, &r);
  if (s) {
    *target = std::move(r.target);
    *attr = r.attr;
  }
  return s;
}

std::optional<fs::Status> RemoteVolume::try_readdir(const fs::OpContext& ctx, fs::InodeId dir,
                                                    uint64_t cookie, uint64_t cookieverf,
                                                    uint32_t max_entries, bool with_attrs,
                                                    fs::ReaddirResult* out) {
  ReaddirCallResult r;
  std::optional<fs::Status> s =
      attempt(ctx, ReaddirArgs{dir, cookie, cookieverf, max_entries, with_attrs}, &r);
  if (s) *out = std::move(r.listing);
  return s;
}

std::optional<fs::Status> RemoteVolume::try_fsstat(const fs::OpContext& ctx, fs::InodeId id,
                                                   fs::FsStat* out,
                                                   std::optional<fs::Attr>* attr) {
  FsstatResult r;
  std::optional<fs::Status> s = attempt(ctx, FsstatArgs{id}, &r);
  if (s) {
    *out = r.stat;
    *attr = r.attr;
  }
  return s;
}

std::optional<fs::Status> RemoteVolume::try_setattr(const fs::OpContext& ctx, fs::InodeId id,
                                                    const fs::SetAttr& sa,
                                                    std::optional<fs::Time> guard_ctime,
                                                    fs::Wcc* wcc) {
  WccResult r;
  std::optional<fs::Status> s = attempt(ctx, SetattrArgs{id, sa, guard_ctime}, &r);
  if (s) *wcc = r.wcc;
  return s;
}

namespace {

// The out-parameters of CREATE, MKDIR, SYMLINK and MKNOD.
std::optional<fs::Status> created(std::optional<fs::Status> s, CreatedResult& r, fs::InodeId* out,
                                  std::optional<fs::Attr>* obj_attr, fs::Wcc* dir_wcc) {
  if (s) {
    *out = r.id;
    *obj_attr = r.obj_attr;
    *dir_wcc = r.dir_wcc;
  }
  return s;
}

}  // namespace

std::optional<fs::Status> RemoteVolume::try_create(const fs::OpContext& ctx, fs::InodeId dir,
                                                   std::string_view name, fs::CreateMode mode,
                                                   const fs::SetAttr& sa, uint64_t verifier,
                                                   fs::InodeId* out,
                                                   std::optional<fs::Attr>* obj_attr,
                                                   fs::Wcc* dir_wcc) {
  CreatedResult r;
  return created(attempt(ctx, CreateArgs{dir, name, mode, sa, verifier}, &r), r, out, obj_attr,
                 dir_wcc);
}

std::optional<fs::Status> RemoteVolume::try_mkdir(const fs::OpContext& ctx, fs::InodeId dir,
                                                  std::string_view name, const fs::SetAttr& sa,
                                                  fs::InodeId* out,
                                                  std::optional<fs::Attr>* obj_attr,
                                                  fs::Wcc* dir_wcc) {
  CreatedResult r;
  return created(attempt(ctx, MkdirArgs{dir, name, sa}, &r), r, out, obj_attr, dir_wcc);
}

std::optional<fs::Status> RemoteVolume::try_symlink(const fs::OpContext& ctx, fs::InodeId dir,
                                                    std::string_view name,
                                                    std::string_view target,
                                                    const fs::SetAttr& sa, fs::InodeId* out,
                                                    std::optional<fs::Attr>* obj_attr,
                                                    fs::Wcc* dir_wcc) {
  CreatedResult r;
  return created(attempt(ctx, SymlinkArgs{dir, name, target, sa}, &r), r, out, obj_attr,
                 dir_wcc);
}

std::optional<fs::Status> RemoteVolume::try_mknod(const fs::OpContext& ctx, fs::InodeId dir,
                                                  std::string_view name, fs::FileType type,
                                                  const fs::SetAttr& sa, uint32_t rdev_major,
                                                  uint32_t rdev_minor, fs::InodeId* out,
                                                  std::optional<fs::Attr>* obj_attr,
                                                  fs::Wcc* dir_wcc) {
  CreatedResult r;
  return created(attempt(ctx, MknodArgs{dir, name, type, sa, rdev_major, rdev_minor}, &r), r,
                 out, obj_attr, dir_wcc);
}

std::optional<fs::Status> RemoteVolume::try_remove(const fs::OpContext& ctx, fs::InodeId dir,
                                                   std::string_view name, fs::Wcc* dir_wcc) {
  WccResult r;
  std::optional<fs::Status> s = attempt(ctx, RemoveArgs{dir, name}, &r);
  if (s) *dir_wcc = r.wcc;
  return s;
}

std::optional<fs::Status> RemoteVolume::try_rmdir(const fs::OpContext& ctx, fs::InodeId dir,
                                                  std::string_view name, fs::Wcc* dir_wcc) {
  WccResult r;
  std::optional<fs::Status> s = attempt(ctx, RmdirArgs{dir, name}, &r);
  if (s) *dir_wcc = r.wcc;
  return s;
}

std::optional<fs::Status> RemoteVolume::try_rename(const fs::OpContext& ctx, fs::InodeId from_dir,
                                                   std::string_view from_name,
                                                   fs::InodeId to_dir, std::string_view to_name,
                                                   fs::Wcc* from_wcc, fs::Wcc* to_wcc) {
  RenameResult r;
  std::optional<fs::Status> s =
      attempt(ctx, RenameArgs{from_dir, from_name, to_dir, to_name}, &r);
  if (s) {
    *from_wcc = r.from_wcc;
    *to_wcc = r.to_wcc;
  }
  return s;
}

std::optional<fs::Status> RemoteVolume::try_link(const fs::OpContext& ctx, fs::InodeId file,
                                                 fs::InodeId dir, std::string_view name,
                                                 std::optional<fs::Attr>* file_attr,
                                                 fs::Wcc* dir_wcc) {
  LinkResult r;
  std::optional<fs::Status> s = attempt(ctx, LinkArgs{file, dir, name}, &r);
  if (s) {
    *file_attr = r.file_attr;
    *dir_wcc = r.dir_wcc;
  }
  return s;
}

bool RemoteVolume::describe() const {
  DescribeResult r;
  // Waits in place even inside a resumable call: root() and limits() return values, and this
  // is asked once per volume.
  if (forward_waiting(fs::OpContext{}, DescribeArgs{}, &r, options_.describe_timeout) !=
      fs::Status::Ok) {
    return false;
  }
  // An owner that has not opened the volume yet knows no root (older owners answered {0, 0}
  // as if it were one): asked again next time rather than kept.
  if (r.root == fs::InodeId{}) return false;
  std::lock_guard lock(describe_mu_);
  described_ = r;
  return true;
}

void RemoteVolume::ensure_described() const {
  {
    std::lock_guard lock(describe_mu_);
    if (described_) return;
  }
  describe();
}

fs::InodeId RemoteVolume::root() const {
  ensure_described();
  std::lock_guard lock(describe_mu_);
  return described_ ? described_->root : fs::InodeId{};
}

fs::VolumeLimits RemoteVolume::limits() const {
  ensure_described();
  std::lock_guard lock(describe_mu_);
  return described_ ? described_->limits : fs::VolumeLimits{};
}

fs::Status RemoteVolume::getattr(const fs::OpContext& ctx, fs::InodeId id, fs::Attr* out) {
  AttrResult r;
  fs::Status s = forward(ctx, GetattrArgs{id}, &r);
  *out = r.attr;
  return s;
}

fs::Status RemoteVolume::setattr(const fs::OpContext& ctx, fs::InodeId id, const fs::SetAttr& sa,
                                 std::optional<fs::Time> guard_ctime, fs::Wcc* wcc) {
  WccResult r;
  fs::Status s = forward(ctx, SetattrArgs{id, sa, guard_ctime}, &r);
  *wcc = r.wcc;
  return s;
}

fs::Status RemoteVolume::lookup(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                                fs::InodeId* out, std::optional<fs::Attr>* obj_attr,
                                std::optional<fs::Attr>* dir_attr) {
  LookupResult r;
  fs::Status s = forward(ctx, LookupArgs{dir, name}, &r);
  *out = r.id;
  *obj_attr = r.obj_attr;
  *dir_attr = r.dir_attr;
  return s;
}

fs::Status RemoteVolume::access(const fs::OpContext& ctx, fs::InodeId id, uint32_t requested,
                                uint32_t* granted, std::optional<fs::Attr>* attr) {
  AccessResult r;
  fs::Status s = forward(ctx, AccessArgs{id, requested}, &r);
  *granted = r.granted;
  *attr = r.attr;
  return s;
}

fs::Status RemoteVolume::readlink(const fs::OpContext& ctx, fs::InodeId id, std::string* target,
                                  std::optional<fs::Attr>* attr) {
  ReadlinkResult r;
  fs::Status s = forward(ctx, ReadlinkArgs{id}, &r);
  *target = std::move(r.target);
  *attr = r.attr;
  return s;
}

fs::Status RemoteVolume::read(const fs::OpContext& ctx, fs::InodeId id, uint64_t offset,
                              uint32_t count, std::vector<uint8_t>* data, bool* eof,
                              std::optional<fs::Attr>* attr) {
  ReadResult r;
  fs::Status s = forward(ctx, ReadArgs{id, offset, count}, &r);
  *data = std::move(r.data);
  *eof = r.eof;
  *attr = r.attr;
  return s;
}

fs::Status RemoteVolume::write(const fs::OpContext& ctx, fs::InodeId id, uint64_t offset,
                               std::span<const uint8_t> data, fs::Stability stable,
                               fs::Stability* committed, fs::Wcc* wcc) {
  WriteResult r;
  fs::Status s = forward(ctx, WriteArgs{id, offset, data, stable}, &r);
  *committed = r.committed;
  *wcc = r.wcc;
  return s;
}

fs::Status RemoteVolume::create(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                                fs::CreateMode mode, const fs::SetAttr& sa, uint64_t verifier,
                                fs::InodeId* out, std::optional<fs::Attr>* obj_attr,
                                fs::Wcc* dir_wcc) {
  CreatedResult r;
  fs::Status s = forward(ctx, CreateArgs{dir, name, mode, sa, verifier}, &r);
  *out = r.id;
  *obj_attr = r.obj_attr;
  *dir_wcc = r.dir_wcc;
  return s;
}

fs::Status RemoteVolume::mkdir(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                               const fs::SetAttr& sa, fs::InodeId* out,
                               std::optional<fs::Attr>* obj_attr, fs::Wcc* dir_wcc) {
  CreatedResult r;
  fs::Status s = forward(ctx, MkdirArgs{dir, name, sa}, &r);
  *out = r.id;
  *obj_attr = r.obj_attr;
  *dir_wcc = r.dir_wcc;
  return s;
}

fs::Status RemoteVolume::symlink(const fs::OpContext& ctx, fs::InodeId dir,
                                 std::string_view name, std::string_view target,
                                 const fs::SetAttr& sa, fs::InodeId* out,
                                 std::optional<fs::Attr>* obj_attr, fs::Wcc* dir_wcc) {
  CreatedResult r;
  fs::Status s = forward(ctx, SymlinkArgs{dir, name, target, sa}, &r);
  *out = r.id;
  *obj_attr = r.obj_attr;
  *dir_wcc = r.dir_wcc;
  return s;
}

fs::Status RemoteVolume::mknod(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                               fs::FileType type, const fs::SetAttr& sa, uint32_t rdev_major,
                               uint32_t rdev_minor, fs::InodeId* out,
                               std::optional<fs::Attr>* obj_attr, fs::Wcc* dir_wcc) {
  CreatedResult r;
  fs::Status s = forward(ctx, MknodArgs{dir, name, type, sa, rdev_major, rdev_minor}, &r);
  *out = r.id;
  *obj_attr = r.obj_attr;
  *dir_wcc = r.dir_wcc;
  return s;
}

fs::Status RemoteVolume::remove(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                                fs::Wcc* dir_wcc) {
  WccResult r;
  fs::Status s = forward(ctx, RemoveArgs{dir, name}, &r);
  *dir_wcc = r.wcc;
  return s;
}

fs::Status RemoteVolume::rmdir(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                               fs::Wcc* dir_wcc) {
  WccResult r;
  fs::Status s = forward(ctx, RmdirArgs{dir, name}, &r);
  *dir_wcc = r.wcc;
  return s;
}

fs::Status RemoteVolume::rename(const fs::OpContext& ctx, fs::InodeId from_dir,
                                std::string_view from_name, fs::InodeId to_dir,
                                std::string_view to_name, fs::Wcc* from_wcc, fs::Wcc* to_wcc) {
  RenameResult r;
  fs::Status s = forward(ctx, RenameArgs{from_dir, from_name, to_dir, to_name}, &r);
  *from_wcc = r.from_wcc;
  *to_wcc = r.to_wcc;
  return s;
}

fs::Status RemoteVolume::link(const fs::OpContext& ctx, fs::InodeId file, fs::InodeId dir,
                              std::string_view name, std::optional<fs::Attr>* file_attr,
                              fs::Wcc* dir_wcc) {
  LinkResult r;
  fs::Status s = forward(ctx, LinkArgs{file, dir, name}, &r);
  *file_attr = r.file_attr;
  *dir_wcc = r.dir_wcc;
  return s;
}

fs::Status RemoteVolume::readdir(const fs::OpContext& ctx, fs::InodeId dir, uint64_t cookie,
                                 uint64_t cookieverf, uint32_t max_entries, bool with_attrs,
                                 fs::ReaddirResult* out) {
  ReaddirCallResult r;
  fs::Status s = forward(ctx, ReaddirArgs{dir, cookie, cookieverf, max_entries, with_attrs}, &r);
  *out = std::move(r.listing);
  return s;
}

fs::Status RemoteVolume::fsstat(const fs::OpContext& ctx, fs::InodeId id, fs::FsStat* out,
                                std::optional<fs::Attr>* attr) {
  FsstatResult r;
  fs::Status s = forward(ctx, FsstatArgs{id}, &r);
  *out = r.stat;
  *attr = r.attr;
  return s;
}

fs::Status RemoteVolume::commit(const fs::OpContext& ctx, fs::InodeId id, uint64_t offset,
                                uint32_t count, fs::Wcc* wcc) {
  WccResult r;
  fs::Status s = forward(ctx, CommitArgs{id, offset, count}, &r);
  *wcc = r.wcc;
  return s;
}

}  // namespace nasd::interconnect
