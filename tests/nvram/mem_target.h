// A test double for fs::JournalTarget: a small in-memory file system whose "stable storage" is
// a snapshot taken at flush() (optionally persisted to a file, so that it survives a SIGKILL of
// the process that owns it). crash() throws away everything applied since the last flush, which
// is exactly what the journal must be able to restore. It checks no permissions.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "fs/volume.h"

namespace nasd::nvram::testing {

class MemTarget : public fs::JournalTarget {
 public:
  // With `persist_path`, the durable state is loaded from that file when it exists and written
  // to it (atomically, by rename) at every flush.
  explicit MemTarget(uint32_t id, std::string persist_path = "");

  // --- test hooks
  void crash();                              // back to the state of the last flush
  std::vector<uint64_t> applied_seqs() const;  // journal_seq of each mutation applied this run
  uint64_t flushes() const;
  void set_flush_delay(std::chrono::milliseconds d);
  // Number of file system objects (root included).
  size_t object_count() const;

  // --- JournalTarget
  uint64_t durable_seq() const override;
  fs::Status flush(uint64_t* durable_seq) override;

  uint32_t id() const override { return id_; }
  fs::InodeId root() const override { return {1, 1}; }
  fs::VolumeLimits limits() const override;
  uint64_t write_verifier() const override { return verifier_; }

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
                   std::span<const uint8_t> data, fs::Stability stable, fs::Stability* committed,
                   fs::Wcc* wcc) override;
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
  struct Node {
    uint32_t gen = 1;
    fs::FileType type = fs::FileType::Reg;
    uint32_t mode = 0644, uid = 0, gid = 0, nlink = 1;
    uint32_t rdev_major = 0, rdev_minor = 0;
    uint64_t verifier = 0;
    std::vector<uint8_t> data;                 // file contents
    std::map<std::string, uint64_t> entries;   // directory
    std::string target;                        // symlink
    fs::Time atime, mtime, ctime;
  };
  struct State {
    std::map<uint64_t, Node> nodes;
    uint64_t next_ino = 2;
    uint64_t applied_seq = 0;
  };

  Node* find(fs::InodeId id);
  Node* find_dir(fs::InodeId id, fs::Status* st);
  fs::Attr attr_of(uint64_t ino, const Node& n) const;
  fs::PreAttr pre_of(const Node& n) const;
  void note_applied(const fs::OpContext& ctx);
  fs::Status make_node(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                       Node node, bool exclusive_ok, fs::InodeId* out,
                       std::optional<fs::Attr>* obj_attr, fs::Wcc* dir_wcc);
  void apply_sattr(Node* n, const fs::SetAttr& sa);
  void drop_link(uint64_t ino);
  void save(const State& s) const;
  bool load(State* s) const;

  const uint32_t id_;
  const std::string persist_path_;
  const uint64_t verifier_;
  mutable std::mutex mu_;
  State live_;
  State durable_;
  std::vector<uint64_t> applied_;
  uint64_t flushes_ = 0;
  std::chrono::milliseconds flush_delay_{0};
};

}  // namespace nasd::nvram::testing
