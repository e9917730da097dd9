// TEST FIXTURE ONLY: a Volume double whose every out-parameter is a hash of all its inputs
// (the credential and every argument). Calling the same method on a
// local EchoVolume and through RemoteVolume -> VolumeServer -> EchoVolume must give identical
// results, so any argument or result field lost on the wire shows up as a difference.
// It can also be told to sleep (a slow owner) and records what it was last called with.
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>

#include "fs/typed_volume.h"
#include "fs/volume.h"

namespace nasd::cluster::testing {

class EchoVolume : public fs::TypedVolume {
 public:
  explicit EchoVolume(uint32_t id, uint64_t verifier = 0x5eed) : id_(id), verifier_(verifier) {}

  void set_delay(std::chrono::milliseconds d) { delay_ms_ = d.count(); }
  void set_verifier(uint64_t v) { verifier_ = v; }
  // Status every call returns (out-parameters are filled regardless, as on real errors).
  void set_status(fs::Status s) { status_ = s; }
  // Whether try_getattr answers (as a volume whose inode is cached) instead of "would block".
  void set_answers_inline(bool yes) { answers_inline_ = yes; }
  // Number of calls made and the hash of the last call's inputs.
  uint64_t calls() const { return calls_; }
  uint64_t last_input_hash() const { return last_hash_; }

  uint32_t id() const override { return id_; }
  fs::InodeId root() const override { return {2, 7}; }
  fs::VolumeLimits limits() const override;
  uint64_t write_verifier() const override { return verifier_; }

  fs::Status getattr(const fs::OpContext& ctx, fs::InodeId id, fs::Attr* out) override;
  std::optional<fs::Status> try_getattr(const fs::OpContext& ctx, fs::InodeId id,
                                        fs::Attr* out) override {
    if (!answers_inline_ || delay_ms_ != 0) return std::nullopt;
    inline_calls_.fetch_add(1);
    return getattr(ctx, id, out);
  }
  // Calls answered through try_getattr.
  uint64_t inline_calls() const { return inline_calls_; }
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

 private:
  class Hash;
  fs::Status finish(uint64_t input_hash);

  const uint32_t id_;
  std::atomic<uint64_t> verifier_;
  std::atomic<int64_t> delay_ms_{0};
  std::atomic<fs::Status> status_{fs::Status::Ok};
  std::atomic<uint64_t> calls_{0};
  std::atomic<uint64_t> inline_calls_{0};
  std::atomic<bool> answers_inline_{false};
  std::atomic<uint64_t> last_hash_{0};
};

}  // namespace nasd::cluster::testing
