// A volume that stands in front of another one and forwards every call to it, so that a
// wrapper states only what it changes (a fence, a journal, a counter, a fault injector).
//
// Every call first asks admit(); a status other than Ok is returned as the call's answer and
// the inner volume is not called (out-parameters stay as the caller initialised them, which the
// Volume contract allows on any error). id(), root(), limits() and write_verifier() are never
// refused. The wrapper adds no locking of its own: it is exactly as thread-safe, and blocks
// exactly where, the inner volume does (plus whatever admit() does). admit() is asked by the
// non-blocking try_* attempts too (event-loop threads), so it must never wait.
#pragma once

#include <memory>
#include <utility>

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

  Status getattr(const OpContext& ctx, InodeId id, Attr* out) override {
    Status st = admit(ctx);
    return st != Status::Ok ? st : inner_->getattr(ctx, id, out);
  }
  Status setattr(const OpContext& ctx, InodeId id, const SetAttr& sa,
                 std::optional<Time> guard_ctime, Wcc* wcc) override {
    Status st = admit(ctx);
    return st != Status::Ok ? st : inner_->setattr(ctx, id, sa, guard_ctime, wcc);
  }
  Status lookup(const OpContext& ctx, InodeId dir, std::string_view name, InodeId* out,
                std::optional<Attr>* obj_attr, std::optional<Attr>* dir_attr) override {
    Status st = admit(ctx);
    return st != Status::Ok ? st : inner_->lookup(ctx, dir, name, out, obj_attr, dir_attr);
  }
  Status access(const OpContext& ctx, InodeId id, uint32_t requested, uint32_t* granted,
                std::optional<Attr>* attr) override {
    Status st = admit(ctx);
    return st != Status::Ok ? st : inner_->access(ctx, id, requested, granted, attr);
  }
  Status readlink(const OpContext& ctx, InodeId id, std::string* target,
                  std::optional<Attr>* attr) override {
    Status st = admit(ctx);
    return st != Status::Ok ? st : inner_->readlink(ctx, id, target, attr);
  }
  Status read(const OpContext& ctx, InodeId id, uint64_t offset, uint32_t count,
              std::vector<uint8_t>* data, bool* eof, std::optional<Attr>* attr) override {
    Status st = admit(ctx);
    return st != Status::Ok ? st : inner_->read(ctx, id, offset, count, data, eof, attr);
  }
  Status write(const OpContext& ctx, InodeId id, uint64_t offset, std::span<const uint8_t> data,
               Stability stable, Stability* committed, Wcc* wcc) override {
    Status st = admit(ctx);
    return st != Status::Ok ? st : inner_->write(ctx, id, offset, data, stable, committed, wcc);
  }
  Status create(const OpContext& ctx, InodeId dir, std::string_view name, CreateMode mode,
                const SetAttr& sa, uint64_t verifier, InodeId* out,
                std::optional<Attr>* obj_attr, Wcc* dir_wcc) override {
    Status st = admit(ctx);
    return st != Status::Ok
               ? st
               : inner_->create(ctx, dir, name, mode, sa, verifier, out, obj_attr, dir_wcc);
  }
  Status mkdir(const OpContext& ctx, InodeId dir, std::string_view name, const SetAttr& sa,
               InodeId* out, std::optional<Attr>* obj_attr, Wcc* dir_wcc) override {
    Status st = admit(ctx);
    return st != Status::Ok ? st : inner_->mkdir(ctx, dir, name, sa, out, obj_attr, dir_wcc);
  }
  Status symlink(const OpContext& ctx, InodeId dir, std::string_view name,
                 std::string_view target, const SetAttr& sa, InodeId* out,
                 std::optional<Attr>* obj_attr, Wcc* dir_wcc) override {
    Status st = admit(ctx);
    return st != Status::Ok
               ? st
               : inner_->symlink(ctx, dir, name, target, sa, out, obj_attr, dir_wcc);
  }
  Status mknod(const OpContext& ctx, InodeId dir, std::string_view name, FileType type,
               const SetAttr& sa, uint32_t rdev_major, uint32_t rdev_minor, InodeId* out,
               std::optional<Attr>* obj_attr, Wcc* dir_wcc) override {
    Status st = admit(ctx);
    return st != Status::Ok ? st
                            : inner_->mknod(ctx, dir, name, type, sa, rdev_major, rdev_minor,
                                            out, obj_attr, dir_wcc);
  }
  Status remove(const OpContext& ctx, InodeId dir, std::string_view name, Wcc* dir_wcc) override {
    Status st = admit(ctx);
    return st != Status::Ok ? st : inner_->remove(ctx, dir, name, dir_wcc);
  }
  Status rmdir(const OpContext& ctx, InodeId dir, std::string_view name, Wcc* dir_wcc) override {
    Status st = admit(ctx);
    return st != Status::Ok ? st : inner_->rmdir(ctx, dir, name, dir_wcc);
  }
  Status rename(const OpContext& ctx, InodeId from_dir, std::string_view from_name,
                InodeId to_dir, std::string_view to_name, Wcc* from_wcc, Wcc* to_wcc) override {
    Status st = admit(ctx);
    return st != Status::Ok
               ? st
               : inner_->rename(ctx, from_dir, from_name, to_dir, to_name, from_wcc, to_wcc);
  }
  Status link(const OpContext& ctx, InodeId file, InodeId dir, std::string_view name,
              std::optional<Attr>* file_attr, Wcc* dir_wcc) override {
    Status st = admit(ctx);
    return st != Status::Ok ? st : inner_->link(ctx, file, dir, name, file_attr, dir_wcc);
  }
  Status readdir(const OpContext& ctx, InodeId dir, uint64_t cookie, uint64_t cookieverf,
                 uint32_t max_entries, bool with_attrs, ReaddirResult* out) override {
    Status st = admit(ctx);
    return st != Status::Ok
               ? st
               : inner_->readdir(ctx, dir, cookie, cookieverf, max_entries, with_attrs, out);
  }
  Status fsstat(const OpContext& ctx, InodeId id, FsStat* out,
                std::optional<Attr>* attr) override {
    Status st = admit(ctx);
    return st != Status::Ok ? st : inner_->fsstat(ctx, id, out, attr);
  }
  Status commit(const OpContext& ctx, InodeId id, uint64_t offset, uint32_t count,
                Wcc* wcc) override {
    Status st = admit(ctx);
    return st != Status::Ok ? st : inner_->commit(ctx, id, offset, count, wcc);
  }

  // The non-blocking attempts pass through like the calls (admit() must not wait either: a
  // fence's lease check reads memory).
  std::optional<Status> try_getattr(const OpContext& ctx, InodeId id, Attr* out) override {
    Status st = admit(ctx);
    return st != Status::Ok ? st : inner_->try_getattr(ctx, id, out);
  }
  std::optional<Status> try_lookup(const OpContext& ctx, InodeId dir, std::string_view name,
                                   InodeId* out, std::optional<Attr>* obj_attr,
                                   std::optional<Attr>* dir_attr) override {
    Status st = admit(ctx);
    return st != Status::Ok ? st : inner_->try_lookup(ctx, dir, name, out, obj_attr, dir_attr);
  }
  std::optional<Status> try_access(const OpContext& ctx, InodeId id, uint32_t requested,
                                   uint32_t* granted, std::optional<Attr>* attr) override {
    Status st = admit(ctx);
    return st != Status::Ok ? st : inner_->try_access(ctx, id, requested, granted, attr);
  }
  std::optional<Status> try_read(const OpContext& ctx, InodeId id, uint64_t offset,
                                 uint32_t count, std::vector<uint8_t>* data, bool* eof,
                                 std::optional<Attr>* attr) override {
    Status st = admit(ctx);
    return st != Status::Ok ? st : inner_->try_read(ctx, id, offset, count, data, eof, attr);
  }
  // A wrapper that changes what write() does (a journal) must override this too.
  std::optional<Status> try_write(const OpContext& ctx, InodeId id, uint64_t offset,
                                  std::span<const uint8_t> data, Stability stable,
                                  Stability* committed, Wcc* wcc) override {
    Status st = admit(ctx);
    return st != Status::Ok ? st
                            : inner_->try_write(ctx, id, offset, data, stable, committed, wcc);
  }
  // Likewise for commit().
  std::optional<Status> try_commit(const OpContext& ctx, InodeId id, uint64_t offset,
                                   uint32_t count, Wcc* wcc) override {
    Status st = admit(ctx);
    return st != Status::Ok ? st : inner_->try_commit(ctx, id, offset, count, wcc);
  }

  std::optional<Status> try_readlink(const OpContext& ctx, InodeId id, std::string* target,
                                     std::optional<Attr>* attr) override {
    Status st = admit(ctx);
    return st != Status::Ok ? st : inner_->try_readlink(ctx, id, target, attr);
  }
  std::optional<Status> try_readdir(const OpContext& ctx, InodeId dir, uint64_t cookie,
                                    uint64_t cookieverf, uint32_t max_entries, bool with_attrs,
                                    ReaddirResult* out) override {
    Status st = admit(ctx);
    return st != Status::Ok ? st
                            : inner_->try_readdir(ctx, dir, cookie, cookieverf, max_entries,
                                                  with_attrs, out);
  }
  std::optional<Status> try_fsstat(const OpContext& ctx, InodeId id, FsStat* out,
                                   std::optional<Attr>* attr) override {
    Status st = admit(ctx);
    return st != Status::Ok ? st : inner_->try_fsstat(ctx, id, out, attr);
  }
  // The name-space mutations' attempts (try_setattr ... try_link) are NOT passed through: they
  // keep the Volume default, "would block". A wrapper that changes what a mutation does (the
  // journal records it) would otherwise be skipped without a word the day the volume below
  // answers one; a wrapper that wants them on the loop overrides them itself.

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
