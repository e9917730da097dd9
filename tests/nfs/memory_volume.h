// TEST FIXTURE ONLY: a small in-memory fs::Volume for the NFS/MOUNT service tests and the
// fuzzer. It keeps a tree of inodes in maps, checks Unix permissions for the credential it
// is given, and reports WCC data, which is all the protocol layer can observe. The daemon
// never uses it; the real volumes are fs/lfs behind the NVRAM journal.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "fs/volume.h"

namespace nasd::nfs::fixture {

class MemoryVolume : public fs::Volume {
 public:
  static constexpr uint64_t kRootIno = 1;

  MemoryVolume(uint32_t id, uint64_t write_verifier = 0x0123456789abcdefull);

  uint32_t id() const override { return id_; }
  fs::InodeId root() const override { return {kRootIno, 1}; }
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

  // Test hooks.
  size_t inode_count() const;
  // The most recent `max_entries` a READDIR asked for.
  uint32_t last_readdir_max_entries() const { return last_max_entries_; }

 private:
  struct Node {
    fs::Attr attr;
    uint32_t gen = 1;
    std::vector<uint8_t> data;
    std::map<std::string, uint64_t, std::less<>> children;  // directories: name -> ino
    uint64_t parent = kRootIno;
    std::string target;        // symlinks
    uint64_t create_verf = 0;  // files made by EXCLUSIVE CREATE
  };

  Node* find(fs::InodeId id);
  fs::Status find_dir(fs::InodeId id, Node** out);
  bool allowed(const fs::Cred& cred, const Node& n, uint32_t rwx) const;
  fs::Time tick();
  void touch(Node& n, bool data_changed);
  static fs::PreAttr pre(const Node& n);
  fs::Status check_new_name(const fs::OpContext& ctx, Node& dir, std::string_view name);
  Node& make(const fs::OpContext& ctx, Node& dir, uint64_t dir_ino, std::string_view name,
             fs::FileType type, const fs::SetAttr& sa, fs::InodeId* out);
  void apply(Node& n, const fs::SetAttr& sa);
  void drop_link(uint64_t ino);

  const uint32_t id_;
  const uint64_t verifier_;
  mutable std::mutex mu_;
  std::map<uint64_t, Node> nodes_;
  uint64_t next_ino_ = kRootIno + 1;
  int64_t clock_ = 1000;
  uint32_t last_max_entries_ = 0;
};

// Resolves volume ids to MemoryVolumes added by the test.
class MemoryResolver : public fs::VolumeResolver {
 public:
  void add(fs::Volume* v) { volumes_[v->id()] = v; }
  fs::Volume* find(uint32_t volume_id) override {
    auto it = volumes_.find(volume_id);
    return it == volumes_.end() ? nullptr : it->second;
  }

 private:
  std::map<uint32_t, fs::Volume*> volumes_;
};

}  // namespace nasd::nfs::fixture
