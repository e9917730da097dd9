#include "fs/journal_target.h"

#include "fs/call/dispatch.h"

namespace nasd::fs {
namespace {

// The journalled call running on this thread. Volume calls are synchronous and never nest on
// one thread into the same target, but a target may call another volume, so the target is part
// of the key and a previous value is restored.
struct Running {
  const JournalTarget* target = nullptr;
  const JournalTag* tag = nullptr;
};
thread_local Running t_running;

// Makes (target, tag) the running journalled call for its lifetime, then restores the previous.
class RunningScope {
 public:
  RunningScope(const JournalTarget* target, const JournalTag* tag) : saved_(t_running) {
    t_running = Running{target, tag};
  }
  ~RunningScope() { t_running = saved_; }
  RunningScope(const RunningScope&) = delete;
  RunningScope& operator=(const RunningScope&) = delete;

 private:
  const Running saved_;
};

}  // namespace

call::VolumeReply JournalTarget::apply_journalled(const JournalPass&, const JournalTag& tag,
                                                  const call::VolumeRequest& req) {
  RunningScope running(this, &tag);
  return call::dispatch_typed(*this, req);
}

std::optional<call::VolumeReply> JournalTarget::try_apply_journalled_write(
    const JournalPass&, const JournalTag& tag, const call::VolumeRequest& req) {
  const auto* a = std::get_if<call::WriteArgs>(&req.args);
  if (!a) return std::nullopt;
  RunningScope running(this, &tag);
  call::WriteResult r;
  std::optional<Status> st =
      try_write(req.ctx, a->id, a->offset, a->data, a->stable, &r.committed, &r.wcc);
  if (!st) return std::nullopt;
  call::VolumeReply reply;
  reply.op = req.op();
  reply.status = *st;
  reply.result = std::move(r);
  // As dispatch_typed(): sampled after the call.
  reply.write_verifier = write_verifier();
  return reply;
}

const JournalTag* JournalTarget::journal_tag() const {
  return t_running.target == this ? t_running.tag : nullptr;
}

}  // namespace nasd::fs
