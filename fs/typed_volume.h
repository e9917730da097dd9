// fs::TypedVolume: the base of a file system that implements the NFS procedures as typed
// methods (the LFS, the scale-out IfsVolume, the name-space root, the test file systems). Its
// call() and try_call() are the one dispatch from a request onto these methods
// (fs/call/dispatch.h), so a layer above sees only the request, while the file system keeps
// argument lists its code can read. Everything else about the calls -- the contract, blocking,
// threads, errors -- is fs::Volume's (fs/volume.h); the methods here keep it as their twins
// there do.
//
// A caller holding a TypedVolume (a test, a tool, the journal's own target) may call these
// methods directly: they hide fs::Volume's request-building ones of the same name and do the
// same thing without the request.
#pragma once

#include <optional>

#include "fs/volume.h"

namespace nasd::fs {

class TypedVolume : public Volume {
 public:
  // Dispatch the request onto the methods below (fs/call/dispatch.h); final, so that a file
  // system cannot answer one shape of a call differently from the other.
  call::VolumeReply call(const call::VolumeRequest& req) final;
  std::optional<call::VolumeReply> try_call(const call::VolumeRequest& req) final;

  virtual Status getattr(const OpContext& ctx, InodeId id, Attr* out) = 0;
  // `guard_ctime`: SETATTR's guard; NotSync when the object's ctime differs.
  virtual Status setattr(const OpContext& ctx, InodeId id, const SetAttr& sa,
                         std::optional<Time> guard_ctime, Wcc* wcc) = 0;
  virtual Status lookup(const OpContext& ctx, InodeId dir, std::string_view name, InodeId* out,
                        std::optional<Attr>* obj_attr, std::optional<Attr>* dir_attr) = 0;
  virtual Status access(const OpContext& ctx, InodeId id, uint32_t requested, uint32_t* granted,
                        std::optional<Attr>* attr) = 0;
  virtual Status readlink(const OpContext& ctx, InodeId id, std::string* target,
                          std::optional<Attr>* attr) = 0;
  // Reads up to `count` bytes at `offset` into `data` (resized to what was read).
  virtual Status read(const OpContext& ctx, InodeId id, uint64_t offset, uint32_t count,
                      std::vector<uint8_t>* data, bool* eof, std::optional<Attr>* attr) = 0;
  // `committed` is the stability actually achieved (at least `stable`).
  virtual Status write(const OpContext& ctx, InodeId id, uint64_t offset,
                       std::span<const uint8_t> data, Stability stable, Stability* committed,
                       Wcc* wcc) = 0;
  // Exclusive mode uses `verifier`: a retried exclusive CREATE with the same verifier succeeds
  // and returns the same object; after it, the client sets the real attributes with SETATTR.
  virtual Status create(const OpContext& ctx, InodeId dir, std::string_view name, CreateMode mode,
                        const SetAttr& sa, uint64_t verifier, InodeId* out,
                        std::optional<Attr>* obj_attr, Wcc* dir_wcc) = 0;
  virtual Status mkdir(const OpContext& ctx, InodeId dir, std::string_view name,
                       const SetAttr& sa, InodeId* out, std::optional<Attr>* obj_attr,
                       Wcc* dir_wcc) = 0;
  virtual Status symlink(const OpContext& ctx, InodeId dir, std::string_view name,
                         std::string_view target, const SetAttr& sa, InodeId* out,
                         std::optional<Attr>* obj_attr, Wcc* dir_wcc) = 0;
  // type is Chr, Blk, Sock or Fifo; anything else is BadType.
  virtual Status mknod(const OpContext& ctx, InodeId dir, std::string_view name, FileType type,
                       const SetAttr& sa, uint32_t rdev_major, uint32_t rdev_minor, InodeId* out,
                       std::optional<Attr>* obj_attr, Wcc* dir_wcc) = 0;
  virtual Status remove(const OpContext& ctx, InodeId dir, std::string_view name,
                        Wcc* dir_wcc) = 0;
  virtual Status rmdir(const OpContext& ctx, InodeId dir, std::string_view name,
                       Wcc* dir_wcc) = 0;
  virtual Status rename(const OpContext& ctx, InodeId from_dir, std::string_view from_name,
                        InodeId to_dir, std::string_view to_name, Wcc* from_wcc,
                        Wcc* to_wcc) = 0;
  virtual Status link(const OpContext& ctx, InodeId file, InodeId dir, std::string_view name,
                      std::optional<Attr>* file_attr, Wcc* dir_wcc) = 0;
  // Returns at most `max_entries` entries after `cookie` (0 = from the start), in a stable
  // order; `eof` when none follow. The caller may drop entries from the tail to fit its reply
  // (each entry carries its own resume cookie). A cookie the directory cannot resume from is
  // BadCookie; a non-zero `cookieverf` that no longer matches the directory is BadCookie too.
  virtual Status readdir(const OpContext& ctx, InodeId dir, uint64_t cookie, uint64_t cookieverf,
                         uint32_t max_entries, bool with_attrs, ReaddirResult* out) = 0;
  virtual Status fsstat(const OpContext& ctx, InodeId id, FsStat* out,
                        std::optional<Attr>* attr) = 0;
  // Makes everything written to the file so far stable (count 0 = to the end).
  virtual Status commit(const OpContext& ctx, InodeId id, uint64_t offset, uint32_t count,
                        Wcc* wcc) = 0;

  // --- The attempts: try_call() of each procedure (fs/volume.h has the rules) ----------------
  // The default is "would block", so a file system that cannot answer without waiting (test
  // volumes) simply keeps every call on the executor.
  virtual std::optional<Status> try_getattr(const OpContext& ctx, InodeId id, Attr* out) {
    return std::nullopt;
  }
  virtual std::optional<Status> try_lookup(const OpContext& ctx, InodeId dir,
                                           std::string_view name, InodeId* out,
                                           std::optional<Attr>* obj_attr,
                                           std::optional<Attr>* dir_attr) {
    return std::nullopt;
  }
  virtual std::optional<Status> try_access(const OpContext& ctx, InodeId id, uint32_t requested,
                                           uint32_t* granted, std::optional<Attr>* attr) {
    return std::nullopt;
  }
  virtual std::optional<Status> try_read(const OpContext& ctx, InodeId id, uint64_t offset,
                                         uint32_t count, std::vector<uint8_t>* data, bool* eof,
                                         std::optional<Attr>* attr) {
    return std::nullopt;
  }
  // A WRITE that is acknowledged from memory: in practice UNSTABLE data (a stable WRITE must
  // wait for stable storage, so implementations answer it only when that needs no wait either,
  // or park it until it is stable, see above). "Would block" must leave the file exactly as
  // it was: the pool then runs write().
  virtual std::optional<Status> try_write(const OpContext& ctx, InodeId id, uint64_t offset,
                                          std::span<const uint8_t> data, Stability stable,
                                          Stability* committed, Wcc* wcc) {
    return std::nullopt;
  }

  // COMMIT from memory: answered when everything written to the file is already stable, or
  // becomes so without a wait (a journal whose last record is committed); may park (above).
  virtual std::optional<Status> try_commit(const OpContext& ctx, InodeId id, uint64_t offset,
                                           uint32_t count, Wcc* wcc) {
    return std::nullopt;
  }

  // READLINK, READDIR(PLUS) and FSSTAT likewise: change nothing, so a forwarded one may park on
  // its round trip (RemoteVolume) like a GETATTR. Same bounds as the blocking twins (readdir:
  // at most `max_entries`).
  virtual std::optional<Status> try_readlink(const OpContext& ctx, InodeId id,
                                             std::string* target, std::optional<Attr>* attr) {
    return std::nullopt;
  }
  virtual std::optional<Status> try_readdir(const OpContext& ctx, InodeId dir, uint64_t cookie,
                                            uint64_t cookieverf, uint32_t max_entries,
                                            bool with_attrs, ReaddirResult* out) {
    return std::nullopt;
  }
  virtual std::optional<Status> try_fsstat(const OpContext& ctx, InodeId id, FsStat* out,
                                           std::optional<Attr>* attr) {
    return std::nullopt;
  }

  // The name-space mutations. An attempt either changes nothing and would block, or answers as
  // its twin, or (inside a resumable call) has sent the whole call to somewhere that runs it
  // once and parks: in practice only RemoteVolume answers them, whose owner runs the call. A
  // local volume answers them only if it can do the whole mutation, journal and commit
  // included, without a wait; none does today.
  virtual std::optional<Status> try_setattr(const OpContext& ctx, InodeId id, const SetAttr& sa,
                                            std::optional<Time> guard_ctime, Wcc* wcc) {
    return std::nullopt;
  }
  virtual std::optional<Status> try_create(const OpContext& ctx, InodeId dir,
                                           std::string_view name, CreateMode mode,
                                           const SetAttr& sa, uint64_t verifier, InodeId* out,
                                           std::optional<Attr>* obj_attr, Wcc* dir_wcc) {
    return std::nullopt;
  }
  virtual std::optional<Status> try_mkdir(const OpContext& ctx, InodeId dir,
                                          std::string_view name, const SetAttr& sa, InodeId* out,
                                          std::optional<Attr>* obj_attr, Wcc* dir_wcc) {
    return std::nullopt;
  }
  virtual std::optional<Status> try_symlink(const OpContext& ctx, InodeId dir,
                                            std::string_view name, std::string_view target,
                                            const SetAttr& sa, InodeId* out,
                                            std::optional<Attr>* obj_attr, Wcc* dir_wcc) {
    return std::nullopt;
  }
  virtual std::optional<Status> try_mknod(const OpContext& ctx, InodeId dir,
                                          std::string_view name, FileType type,
                                          const SetAttr& sa, uint32_t rdev_major,
                                          uint32_t rdev_minor, InodeId* out,
                                          std::optional<Attr>* obj_attr, Wcc* dir_wcc) {
    return std::nullopt;
  }
  virtual std::optional<Status> try_remove(const OpContext& ctx, InodeId dir,
                                           std::string_view name, Wcc* dir_wcc) {
    return std::nullopt;
  }
  virtual std::optional<Status> try_rmdir(const OpContext& ctx, InodeId dir,
                                          std::string_view name, Wcc* dir_wcc) {
    return std::nullopt;
  }
  virtual std::optional<Status> try_rename(const OpContext& ctx, InodeId from_dir,
                                           std::string_view from_name, InodeId to_dir,
                                           std::string_view to_name, Wcc* from_wcc,
                                           Wcc* to_wcc) {
    return std::nullopt;
  }
  virtual std::optional<Status> try_link(const OpContext& ctx, InodeId file, InodeId dir,
                                         std::string_view name, std::optional<Attr>* file_attr,
                                         Wcc* dir_wcc) {
    return std::nullopt;
  }
};

}  // namespace nasd::fs
