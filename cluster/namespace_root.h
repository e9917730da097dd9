// The cluster name space root (/r): a read-only directory whose entries are the volumes, each a
// junction to that volume's root (fs::junction_to). Every node has the same one, so LOOKUP and
// READDIRPLUS of /r list every volume wherever the client mounted; the NFS layer turns the
// junctions into the volumes' own root handles. Nothing can be created, removed or written here.
#pragma once

#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "fs/typed_volume.h"
#include "fs/volume.h"

namespace nasd::cluster {

class NamespaceRoot : public fs::TypedVolume {
 public:
  // The volume id file handles of /r carry; no real volume may use it.
  static constexpr uint32_t kVolumeId = 0xFFFFFF00u;

  // `volumes` answers for the entries' attributes (it may forward to their owners).
  explicit NamespaceRoot(fs::VolumeResolver* volumes);

  // Adds entry `name` for `volume_id` (startup, or a volume made by the admin).
  void add_entry(const std::string& name, uint32_t volume_id);

  uint32_t id() const override { return kVolumeId; }
  fs::InodeId root() const override { return kRoot; }
  fs::VolumeLimits limits() const override;
  uint64_t write_verifier() const override { return 0; }

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
                    fs::InodeId* out, std::optional<fs::Attr>* obj_attr, fs::Wcc* dir_wcc) override;
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
  static constexpr fs::InodeId kRoot{1, 1};

  fs::Status check_root(fs::InodeId id) const;
  fs::Attr root_attr() const;
  // A change to /r: refused, with the directory's (unchanged) attributes as WCC data.
  fs::Status refuse_change(fs::InodeId dir, fs::Wcc* wcc) const;
  std::optional<fs::Attr> target_attr(const fs::OpContext& ctx, uint32_t volume_id) const;

  fs::VolumeResolver* const volumes_;
  const fs::Time created_;
  mutable std::mutex mu_;
  std::vector<std::pair<std::string, uint32_t>> entries_;  // in the order added: readdir order
  fs::Time changed_;
};

}  // namespace nasd::cluster
