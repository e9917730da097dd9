// Stands in for a volume that exists in the cluster but that nobody may serve right now: during
// a failover (partner fenced, journal not yet replayed here) or after this node fenced itself.
// Every call answers Jukebox so NFS clients wait and retry; answering Stale instead would make
// them drop their file handles for good.
#pragma once

#include "fs/volume.h"

namespace nasd::interconnect {

class UnavailableVolume : public fs::Volume {
 public:
  UnavailableVolume(uint32_t volume_id, fs::InodeId root) : id_(volume_id), root_(root) {}

  uint32_t id() const override { return id_; }
  fs::InodeId root() const override { return root_; }
  fs::VolumeLimits limits() const override { return {}; }
  uint64_t write_verifier() const override { return 0; }

  fs::Status getattr(const fs::OpContext&, fs::InodeId, fs::Attr*) override { return kBusy; }
  fs::Status setattr(const fs::OpContext&, fs::InodeId, const fs::SetAttr&,
                     std::optional<fs::Time>, fs::Wcc*) override {
    return kBusy;
  }
  fs::Status lookup(const fs::OpContext&, fs::InodeId, std::string_view, fs::InodeId*,
                    std::optional<fs::Attr>*, std::optional<fs::Attr>*) override {
    return kBusy;
  }
  fs::Status access(const fs::OpContext&, fs::InodeId, uint32_t, uint32_t*,
                    std::optional<fs::Attr>*) override {
    return kBusy;
  }
  fs::Status readlink(const fs::OpContext&, fs::InodeId, std::string*,
                      std::optional<fs::Attr>*) override {
    return kBusy;
  }
  fs::Status read(const fs::OpContext&, fs::InodeId, uint64_t, uint32_t, std::vector<uint8_t>*,
                  bool*, std::optional<fs::Attr>*) override {
    return kBusy;
  }
  fs::Status write(const fs::OpContext&, fs::InodeId, uint64_t, std::span<const uint8_t>,
                   fs::Stability, fs::Stability*, fs::Wcc*) override {
    return kBusy;
  }
  fs::Status create(const fs::OpContext&, fs::InodeId, std::string_view, fs::CreateMode,
                    const fs::SetAttr&, uint64_t, fs::InodeId*, std::optional<fs::Attr>*,
                    fs::Wcc*) override {
    return kBusy;
  }
  fs::Status mkdir(const fs::OpContext&, fs::InodeId, std::string_view, const fs::SetAttr&,
                   fs::InodeId*, std::optional<fs::Attr>*, fs::Wcc*) override {
    return kBusy;
  }
  fs::Status symlink(const fs::OpContext&, fs::InodeId, std::string_view, std::string_view,
                     const fs::SetAttr&, fs::InodeId*, std::optional<fs::Attr>*,
                     fs::Wcc*) override {
    return kBusy;
  }
  fs::Status mknod(const fs::OpContext&, fs::InodeId, std::string_view, fs::FileType,
                   const fs::SetAttr&, uint32_t, uint32_t, fs::InodeId*,
                   std::optional<fs::Attr>*, fs::Wcc*) override {
    return kBusy;
  }
  fs::Status remove(const fs::OpContext&, fs::InodeId, std::string_view, fs::Wcc*) override {
    return kBusy;
  }
  fs::Status rmdir(const fs::OpContext&, fs::InodeId, std::string_view, fs::Wcc*) override {
    return kBusy;
  }
  fs::Status rename(const fs::OpContext&, fs::InodeId, std::string_view, fs::InodeId,
                    std::string_view, fs::Wcc*, fs::Wcc*) override {
    return kBusy;
  }
  fs::Status link(const fs::OpContext&, fs::InodeId, fs::InodeId, std::string_view,
                  std::optional<fs::Attr>*, fs::Wcc*) override {
    return kBusy;
  }
  fs::Status readdir(const fs::OpContext&, fs::InodeId, uint64_t, uint64_t, uint32_t, bool,
                     fs::ReaddirResult*) override {
    return kBusy;
  }
  fs::Status fsstat(const fs::OpContext&, fs::InodeId, fs::FsStat*,
                    std::optional<fs::Attr>*) override {
    return kBusy;
  }
  fs::Status commit(const fs::OpContext&, fs::InodeId, uint64_t, uint32_t, fs::Wcc*) override {
    return kBusy;
  }

 private:
  static constexpr fs::Status kBusy = fs::Status::Jukebox;
  const uint32_t id_;
  const fs::InodeId root_;
};

}  // namespace nasd::interconnect
