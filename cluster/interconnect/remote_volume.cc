#include "cluster/interconnect/remote_volume.h"

#include "fs/call/codec.h"
#include "fs/call/dispatch.h"
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

// The reply to a forwarded call from its outcome; the owner's verifier is kept from every reply
// that reached the volume.
VolumeReply finish(VolumeOp op, CallError error, std::span<const uint8_t> payload,
                   std::atomic<uint64_t>* verifier) {
  switch (error) {
    case CallError::None: break;
    case CallError::TooLarge: return refused_volume_call(op, fs::Status::Inval);
    case CallError::Unsupported: return refused_volume_call(op, fs::Status::ServerFault);
    // Owner down, slow or restarting: a retry later may well succeed (possibly elsewhere).
    default: return refused_volume_call(op, fs::Status::Jukebox);
  }
  VolumeReply reply;
  if (!decode_reply(payload, op, &reply)) return refused_volume_call(op, fs::Status::ServerFault);
  if (!std::holds_alternative<std::monostate>(reply.result))
    verifier->store(reply.write_verifier);
  return reply;
}

}  // namespace

std::vector<uint8_t> RemoteVolume::request_bytes(const VolumeRequest& req) const {
  // The request as the caller made it -- the client call it serves included, so the owner's
  // journal records it -- for this volume on the owner.
  if (req.volume_id == volume_id_) return encode_request(req);
  VolumeRequest ours = req;
  ours.volume_id = volume_id_;
  return encode_request(ours);
}

VolumeReply RemoteVolume::call(const VolumeRequest& req) {
  const VolumeOp op = req.op();
  util::ResumableCall* call = util::ResumableCall::current();
  if (call == nullptr) return forward_waiting(req, options_.call_timeout);
  // Inside a resumable call: never wait here. The first run sends and parks; the run after the
  // answer arrived takes it (waits are numbered in the order the procedure makes them).
  std::optional<size_t> wait = call->next_wait();
  if (!wait) return refused_volume_call(op, fs::Status::Jukebox);
  if (const util::ResumableCall::Answer* answer = call->answer(*wait))
    return finish(op, static_cast<CallError>(answer->error), answer->bytes, &verifier_);
  // A run that already parked (its result is discarded), or one that must finish in place.
  if (!call->may_park()) return refused_volume_call(op, fs::Status::Jukebox);
  // The owner is slow: do not pile up.
  if (!slots_->try_acquire()) return refused_volume_call(op, fs::Status::Jukebox);
  util::ResumableCall::Deliver deliver = call->park(*wait);
  owner_->call_async(MessageType::VolumeCall, request_bytes(req), options_.call_timeout,
                     [slots = slots_, deliver = std::move(deliver)](CallOutcome outcome) {
                       slots->release();
                       deliver({static_cast<int>(outcome.error), std::move(outcome.payload)});
                     });
  // Not the call's answer: the call runs again once it is in.
  return refused_volume_call(op, fs::Status::Jukebox);
}

VolumeReply RemoteVolume::forward_waiting(const VolumeRequest& req,
                                          std::chrono::milliseconds timeout) const {
  // The owner is slow: do not pile up.
  if (!slots_->try_acquire()) return refused_volume_call(req.op(), fs::Status::Jukebox);
  struct Release {
    ForwardSlots& s;
    ~Release() { s.release(); }
  } release{*slots_};
  CallOutcome outcome = owner_->call(MessageType::VolumeCall, request_bytes(req), timeout);
  return finish(req.op(), outcome.error, outcome.payload, &verifier_);
}

std::optional<VolumeReply> RemoteVolume::try_call(const VolumeRequest& req) {
  const VolumeOp op = req.op();
  util::ResumableCall* call = util::ResumableCall::current();
  if (call == nullptr) return std::nullopt;
  // Numbered like the blocking call's wait: a later run (on the executor, if this attempt
  // would block) numbers its waits from 0 again.
  std::optional<size_t> wait = call->next_wait();
  if (!wait) return refused_volume_call(op, fs::Status::Jukebox);
  if (const util::ResumableCall::Answer* answer = call->answer(*wait))
    return finish(op, static_cast<CallError>(answer->error), answer->bytes, &verifier_);
  // Not answered yet: on the event loop, send without waiting and park the call (the loop takes
  // its next call; the answer's thread resumes this one). A link that cannot take the request at
  // once leaves the call to the executor, which may wait for the socket.
  if (!call->may_park()) return std::nullopt;
  // The owner is slow: do not pile up.
  if (!slots_->try_acquire()) return refused_volume_call(op, fs::Status::Jukebox);
  util::ResumableCall::Deliver deliver = call->park(*wait);
  if (!owner_->try_call_async(MessageType::VolumeCall, request_bytes(req),
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
  // Not the call's answer: the call runs again once it is in.
  return refused_volume_call(op, fs::Status::Jukebox);
}

bool RemoteVolume::describe() const {
  // Waits in place even inside a resumable call: root() and limits() return values, and this
  // is asked once per volume.
  const VolumeReply reply = forward_waiting(
      VolumeRequest{volume_id_, fs::OpContext{}, DescribeArgs{}, std::nullopt, std::nullopt},
      options_.describe_timeout);
  const auto* described = std::get_if<DescribeResult>(&reply.result);
  if (reply.status != fs::Status::Ok || described == nullptr) return false;
  const DescribeResult& r = *described;
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

}  // namespace nasd::interconnect
