// Every NFSv3 procedure (RFC 1813), issued explicitly over an RpcChannel with caller-chosen
// arguments. Replies whose libnfs structs hold no pointers are returned as those structs
// (GETATTR3res, WRITE3res, ...); replies that carry handles, names or data are copied into
// the small owning types below, because libnfs frees its decoded reply after the callback.
#pragma once

#include <nfsc/libnfs.h>  // defines EXTERN, which the raw headers need
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-nfs.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tests/e2e/rpc_channel.h"

namespace nasd::e2e {

// An NFSv3 file handle as opaque bytes (so a test can flip one).
struct Fh {
  std::string bytes;
  static Fh from(const nfs_fh3& fh) { return Fh{std::string(fh.data.data_val, fh.data.data_len)}; }
  // A view for libnfs argument structs; valid while this Fh lives.
  nfs_fh3 wire() const;
  bool operator==(const Fh&) const = default;
};

// sattr3 that changes nothing; the helpers set one field each.
sattr3 sattr_none();
sattr3 sattr_mode(uint32_t mode);
sattr3 sattr_size(uint64_t size);
sattr3 sattr_owner(std::optional<uint32_t> uid, std::optional<uint32_t> gid);

uint64_t verifier_of(const char (&verf)[8]);
const char* nfsstat_name(nfsstat3 s);

struct LookupReply {
  nfsstat3 status = NFS3ERR_SERVERFAULT;
  Fh fh;
  post_op_attr obj_attributes{};
  post_op_attr dir_attributes{};
};

struct ReadlinkReply {
  nfsstat3 status = NFS3ERR_SERVERFAULT;
  std::string target;
  post_op_attr attributes{};
};

struct ReadReply {
  nfsstat3 status = NFS3ERR_SERVERFAULT;
  std::string data;
  uint32_t count = 0;
  bool eof = false;
  post_op_attr attributes{};
};

// CREATE, MKDIR, SYMLINK and MKNOD all answer with an optional new handle plus WCC data.
struct NewObjectReply {
  nfsstat3 status = NFS3ERR_SERVERFAULT;
  std::optional<Fh> fh;
  post_op_attr attributes{};
  wcc_data dir_wcc{};
};

struct DirEntry {
  std::string name;
  uint64_t fileid = 0;
  uint64_t cookie = 0;
  std::optional<Fh> fh;         // READDIRPLUS only
  post_op_attr attributes{};    // READDIRPLUS only
};

struct ReaddirReply {
  nfsstat3 status = NFS3ERR_SERVERFAULT;
  std::vector<DirEntry> entries;
  uint64_t cookieverf = 0;
  bool eof = false;
  post_op_attr dir_attributes{};
};

class Nfs3Client {
 public:
  explicit Nfs3Client(RpcChannel& channel) : ch_(channel) {}

  void null();
  GETATTR3res getattr(const Fh& fh);
  SETATTR3res setattr(const Fh& fh, const sattr3& attrs,
                      std::optional<nfstime3> guard_ctime = std::nullopt);
  LookupReply lookup(const Fh& dir, const std::string& name);
  ACCESS3res access(const Fh& fh, uint32_t bits);
  ReadlinkReply readlink(const Fh& fh);
  ReadReply read(const Fh& fh, uint64_t offset, uint32_t count);
  WRITE3res write(const Fh& fh, uint64_t offset, const std::string& data, stable_how stable);
  NewObjectReply create(const Fh& dir, const std::string& name, createmode3 mode,
                        const sattr3& attrs = sattr_none(), uint64_t verifier = 0);
  NewObjectReply mkdir(const Fh& dir, const std::string& name, const sattr3& attrs = sattr_none());
  NewObjectReply symlink(const Fh& dir, const std::string& name, const std::string& target);
  // `rdev` is used for CHR and BLK; `type` is sent as given (REG is how to provoke BADTYPE).
  NewObjectReply mknod(const Fh& dir, const std::string& name, ftype3 type,
                       specdata3 rdev = {0, 0}, const sattr3& attrs = sattr_none());
  REMOVE3res remove(const Fh& dir, const std::string& name);
  RMDIR3res rmdir(const Fh& dir, const std::string& name);
  RENAME3res rename(const Fh& from_dir, const std::string& from_name, const Fh& to_dir,
                    const std::string& to_name);
  LINK3res link(const Fh& file, const Fh& dir, const std::string& name);
  ReaddirReply readdir(const Fh& dir, uint64_t cookie, uint64_t cookieverf, uint32_t count);
  ReaddirReply readdirplus(const Fh& dir, uint64_t cookie, uint64_t cookieverf,
                           uint32_t dircount, uint32_t maxcount);
  FSSTAT3res fsstat(const Fh& fh);
  FSINFO3res fsinfo(const Fh& fh);
  PATHCONF3res pathconf(const Fh& fh);
  COMMIT3res commit(const Fh& fh, uint64_t offset, uint32_t count);

  // Convenience for tests: lookup that must succeed (throws otherwise).
  Fh resolve(const Fh& root, const std::string& slash_separated_path);

 private:
  RpcChannel& ch_;
};

}  // namespace nasd::e2e
