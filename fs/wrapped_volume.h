// A volume that stands in front of another one and forwards every call to it, so that a
// wrapper states only what it changes (a fence, a journal, a counter, a fault injector).
//
// Every call first asks admit(); a status other than Ok is returned as the call's answer and
// the inner volume is not called (the reply carries no result, so the out-parameters of the
// calls as methods stay as the caller initialised them, which the Volume contract allows on any
// error). id(), root(), limits() and write_verifier() are never refused. The wrapper adds no
// locking of its own: it is exactly as thread-safe, and blocks exactly where, the inner volume
// does (plus whatever admit() does). admit() is asked by the non-blocking attempts too
// (event-loop threads), so it must never wait.
#pragma once

#include <memory>
#include <optional>
#include <utility>

#include "fs/call/calls.h"
#include "fs/call/dispatch.h"
#include "fs/volume.h"

namespace nasd::fs {

class WrappedVolume : public Volume {
 public:
  explicit WrappedVolume(std::shared_ptr<Volume> inner) : inner_(std::move(inner)) {}

  Volume& inner() const { return *inner_; }
  const std::shared_ptr<Volume>& inner_ptr() const { return inner_; }

  uint32_t id() const override { return inner_->id(); }
  InodeId root() const override { return inner_->root(); }
  VolumeLimits limits() const override { return inner_->limits(); }
  uint64_t write_verifier() const override { return inner_->write_verifier(); }

  call::VolumeReply call(const call::VolumeRequest& req) override {
    Status st = admit(req.ctx);
    return st != Status::Ok ? call::refused_volume_call(req.op(), st) : inner_->call(req);
  }

  // The attempts pass through like the calls (admit() must not wait either: a fence's lease
  // check reads memory) -- except the name-space mutations' (SETATTR ... LINK), which keep
  // "would block": a wrapper that changes what a mutation does (the journal records it) would
  // otherwise be skipped without a word the day the volume below answers one; a wrapper that
  // wants them on the loop overrides try_call itself. A wrapper that changes what WRITE or
  // COMMIT does (a journal) must override their attempts too.
  std::optional<call::VolumeReply> try_call(const call::VolumeRequest& req) override {
    const call::VolumeOp op = req.op();
    if (call::is_mutation(op) && op != call::VolumeOp::Write) return std::nullopt;
    Status st = admit(req.ctx);
    if (st != Status::Ok) return call::refused_volume_call(req.op(), st);
    return inner_->try_call(req);
  }

  std::optional<Status> try_read_shared(const OpContext& ctx, InodeId id, uint64_t offset,
                                        uint32_t count, util::ByteSlices* data, bool* eof,
                                        std::optional<Attr>* attr) override {
    Status st = admit(ctx);
    return st != Status::Ok ? st
                            : inner_->try_read_shared(ctx, id, offset, count, data, eof, attr);
  }

 protected:
  // Asked before every call reaches the inner volume; the default admits everything.
  virtual Status admit(const OpContext& ctx) { return Status::Ok; }

 private:
  const std::shared_ptr<Volume> inner_;
};

}  // namespace nasd::fs
