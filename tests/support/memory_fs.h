// TEST FIXTURE ONLY: a small in-memory file system for the NFS service tests, the NFS fuzzer and
// the NVRAM journal tests. It keeps a tree of inodes in maps, checks POSIX permissions for the
// credential it is given (fs/permission.h, the rules the real volume uses) and reports WCC data,
// which is all the protocol layer can observe. As an fs::JournalTarget its "stable storage" is a
// snapshot taken at flush() (optionally persisted to a file, so that it survives a SIGKILL of
// the process that owns it); crash() throws away everything applied since the last flush, which
// is exactly what the journal must be able to restore. The daemon never uses it.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "fs/permission.h"
#include "fs/journal_target.h"

namespace nasd::test_support {

struct MemoryFsOptions {
  uint64_t write_verifier = 0x0123456789abcdefull;
  // File data is stored densely, so keep files small.
  uint64_t max_file_size = 64ull << 20;
  // The root directory belongs to uid 0 with this mode.
  uint32_t root_mode = 0755;
  // With a path, the durable state is loaded from that file when it exists and written to it
  // (atomically, by rename) at every flush.
  std::string persist_path;
};

class MemoryFs : public fs::JournalTarget {
 public:
  static constexpr uint64_t kRootIno = 1;

  explicit MemoryFs(uint32_t id, MemoryFsOptions options = {});

  // --- test hooks
  size_t inode_count() const;  // root included
  // The most recent `max_entries` a READDIR asked for.
  uint32_t last_readdir_max_entries() const;
  void crash();                                // back to the state of the last flush
  std::vector<uint64_t> applied_seqs() const;  // journal_seq of each mutation applied this run
  uint64_t flushes() const;
  void set_flush_delay(std::chrono::milliseconds d);

  // --- JournalTarget
  uint64_t durable_seq() const override;
  fs::Status flush(uint64_t* durable_seq) override;

  uint32_t id() const override { return id_; }
  fs::InodeId root() const override { return {kRootIno, 1}; }
  fs::VolumeLimits limits() const override;
  uint64_t write_verifier() const override { return options_.write_verifier; }

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

 private:
  static constexpr size_t kNameMax = 255;
  // Adding or removing a directory entry needs write and search permission on the directory.
  static constexpr uint32_t kChangeEntries = fs::kWantWrite | fs::kWantExec;

  struct Node {
    fs::Attr attr;
    uint32_t gen = 1;
    std::vector<uint8_t> data;
    std::map<std::string, uint64_t, std::less<>> children;  // directories: name -> ino
    uint64_t parent = kRootIno;
    std::string target;        // symlinks
    uint64_t create_verf = 0;  // files made by EXCLUSIVE CREATE
  };
  // Everything crash() rolls back, and what persistence writes out.
  struct State {
    std::map<uint64_t, Node> nodes;
    uint64_t next_ino = kRootIno + 1;
    uint64_t applied_seq = 0;  // highest journal_seq applied
    int64_t clock = 1000;      // attribute times tick deterministically
  };

  // memory_fs.cc
  Node* find(fs::InodeId id);
  fs::Status find_dir(fs::InodeId id, Node** out);
  fs::Status find_dir_for_change(fs::InodeId id, fs::Wcc* wcc, Node** out);
  bool allowed(const fs::Cred& cred, const Node& n, uint32_t rwx) const;
  fs::Time tick();
  void touch(Node& n, bool data_changed);
  static fs::PreAttr pre(const Node& n);
  void apply(Node& n, const fs::SetAttr& sa);
  void note_applied(const fs::OpContext& ctx);
  // memory_fs_create.cc
  fs::Status check_new_name(const fs::OpContext& ctx, Node& dir, std::string_view name);
  fs::Status make(const fs::OpContext& ctx, Node& dir, uint64_t dir_ino, std::string_view name,
                  fs::FileType type, const fs::SetAttr& sa, fs::InodeId* out, Node** made);
  fs::Status add_entry(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                       fs::FileType type, const fs::SetAttr& sa, fs::InodeId* out,
                       fs::Wcc* dir_wcc, Node** made);
  // memory_fs_names.cc
  void drop_link(uint64_t ino);
  // memory_fs_persist.cc
  void save(const State& s) const;
  bool load(State* s) const;

  const uint32_t id_;
  const MemoryFsOptions options_;
  mutable std::mutex mu_;
  State live_;
  State durable_;
  std::vector<uint64_t> applied_;
  uint64_t flushes_ = 0;
  std::chrono::milliseconds flush_delay_{0};
  uint32_t last_max_entries_ = 0;
};

}  // namespace nasd::test_support
