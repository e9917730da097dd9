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

}  // namespace

call::VolumeReply JournalTarget::apply_journalled(const JournalPass&, const JournalTag& tag,
                                                  const call::VolumeRequest& req) {
  const Running saved = t_running;
  t_running = Running{this, &tag};
  struct Restore {
    Running saved;
    ~Restore() { t_running = saved; }
  } restore{saved};
  return call::execute_volume_call(*this, req);
}

std::optional<call::VolumeReply> JournalTarget::try_apply_journalled_write(
    const JournalPass&, const JournalTag& tag, const call::VolumeRequest& req) {
  const auto* a = std::get_if<call::WriteArgs>(&req.args);
  if (!a) return std::nullopt;
  const Running saved = t_running;
  t_running = Running{this, &tag};
  struct Restore {
    Running saved;
    ~Restore() { t_running = saved; }
  } restore{saved};
  call::WriteResult r;
  std::optional<Status> st =
      try_write(req.ctx, a->id, a->offset, a->data, a->stable, &r.committed, &r.wcc);
  if (!st) return std::nullopt;
  call::VolumeReply reply;
  reply.op = req.op();
  reply.status = *st;
  reply.result = std::move(r);
  // As execute_volume_call(): sampled after the call.
  reply.write_verifier = write_verifier();
  return reply;
}

const JournalTag* JournalTarget::journal_tag() const {
  return t_running.target == this ? t_running.tag : nullptr;
}

}  // namespace nasd::fs
