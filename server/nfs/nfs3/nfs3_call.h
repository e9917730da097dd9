// One NFSv3 call being served, and the steps every procedure shares: decode the arguments,
// turn a file handle into a volume + inode under the caller's export policy, encode the reply.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "fs/call_identity.h"
#include "fs/volume.h"
#include "server/nfs/exports/exports.h"
#include "server/nfs/handle/handle_codec.h"
#include "server/nfs/nfs3/convert.h"
#include "server/nfs/xdr/nfs3_prot.h"
#include "server/nfs/xdr/xdr_codec.h"
#include "server/rpc/service.h"

namespace nasd::nfs::nfs3 {

// What the NFS program needs from the rest of the server.
struct Nfs3Deps {
  std::shared_ptr<fs::VolumeResolver> volumes;
  std::shared_ptr<Exports> exports;
  std::shared_ptr<HandleCodec> handles;
};

// Largest READ/WRITE payload: the full 1 MiB over TCP; over UDP what fits a datagram with room
// for the RPC and NFS headers.
inline constexpr uint32_t kMaxTransferTcp = NFS3_MAXDATA;
inline constexpr uint32_t kMaxTransferUdp = 32 * 1024;

// An object a file handle named, opened for one call.
struct Target {
  fs::Volume* volume = nullptr;
  uint32_t volume_id = 0;
  fs::InodeId inode;
  Exports::Policy policy;  // the export the handle was issued under, kept for the whole call
  fs::OpContext ctx;  // the caller's credential after the export's squashing
};

// The file handles of each argument type: Nfs3Call::decode() has XDR write them into the
// decoded value's own storage (xdr::Decoded::decode_inline), so a call whose arguments are a
// handle and numbers decodes without an allocation. Types not listed have none decoded so.
template <typename T>
std::array<nfs_fh3*, 0> handles_of(T&) { return {}; }
inline std::array<nfs_fh3*, 1> handles_of(GETATTR3args& a) { return {&a.object}; }
inline std::array<nfs_fh3*, 1> handles_of(SETATTR3args& a) { return {&a.object}; }
inline std::array<nfs_fh3*, 1> handles_of(ACCESS3args& a) { return {&a.object}; }
inline std::array<nfs_fh3*, 1> handles_of(LOOKUP3args& a) { return {&a.what.dir}; }
inline std::array<nfs_fh3*, 1> handles_of(READLINK3args& a) { return {&a.symlink}; }
inline std::array<nfs_fh3*, 1> handles_of(READ3args& a) { return {&a.file}; }
inline std::array<nfs_fh3*, 1> handles_of(COMMIT3args& a) { return {&a.file}; }
inline std::array<nfs_fh3*, 1> handles_of(CREATE3args& a) { return {&a.where.dir}; }
inline std::array<nfs_fh3*, 1> handles_of(MKDIR3args& a) { return {&a.where.dir}; }
inline std::array<nfs_fh3*, 1> handles_of(SYMLINK3args& a) { return {&a.where.dir}; }
inline std::array<nfs_fh3*, 1> handles_of(MKNOD3args& a) { return {&a.where.dir}; }
inline std::array<nfs_fh3*, 1> handles_of(REMOVE3args& a) { return {&a.object.dir}; }
inline std::array<nfs_fh3*, 1> handles_of(RMDIR3args& a) { return {&a.object.dir}; }
inline std::array<nfs_fh3*, 2> handles_of(RENAME3args& a) { return {&a.from.dir, &a.to.dir}; }
inline std::array<nfs_fh3*, 2> handles_of(LINK3args& a) { return {&a.file, &a.link.dir}; }
inline std::array<nfs_fh3*, 1> handles_of(READDIR3args& a) { return {&a.dir}; }
inline std::array<nfs_fh3*, 1> handles_of(READDIRPLUS3args& a) { return {&a.dir}; }
inline std::array<nfs_fh3*, 1> handles_of(FSSTAT3args& a) { return {&a.fsroot}; }
inline std::array<nfs_fh3*, 1> handles_of(FSINFO3args& a) { return {&a.fsroot}; }
inline std::array<nfs_fh3*, 1> handles_of(PATHCONF3args& a) { return {&a.object}; }

// The name that follows the first handle in each argument type that starts with a directory
// and a name (diropargs3): Nfs3Call::decode() has XDR write it into the decoded value's own
// storage when it is short enough (xdr::Decoded::decode_inline_string), so a LOOKUP decodes
// without an allocation. Other types decode their strings as XDR does.
template <typename T>
char** leading_name_of(T&) { return nullptr; }
inline char** leading_name_of(LOOKUP3args& a) { return &a.what.name; }
inline char** leading_name_of(CREATE3args& a) { return &a.where.name; }
inline char** leading_name_of(MKDIR3args& a) { return &a.where.name; }
inline char** leading_name_of(SYMLINK3args& a) { return &a.where.name; }
inline char** leading_name_of(MKNOD3args& a) { return &a.where.name; }
inline char** leading_name_of(REMOVE3args& a) { return &a.object.name; }
inline char** leading_name_of(RMDIR3args& a) { return &a.object.name; }
inline char** leading_name_of(RENAME3args& a) { return &a.from.name; }

// The length word of the string after the handle that starts `args` (XDR: the handle's
// length, its bytes padded to 4, then the string's length), read as XDR's decoding will read
// it; nullopt when the bytes end first or the handle is longer than any (decoding fails then).
std::optional<uint32_t> name_length_after_handle(std::span<const uint8_t> args);

class Nfs3Call {
 public:
  // `identity` (optional) names this call for the journal (fs/call_identity.h); open() fills
  // in its export id, which the reply's new handles carry, before any volume call is made.
  // `on_event_loop`: the call runs on the transport's event-loop thread (run-to-completion,
  // Nfs3Service::dispatch_inline) and must not wait; see the volume calls below.
  Nfs3Call(const Nfs3Deps& deps, const rpc::CallContext& call, std::span<const uint8_t> args,
           std::vector<uint8_t>* results, fs::CallIdentity* identity = nullptr,
           bool on_event_loop = false)
      : deps_(deps), call_(call), args_(args), results_(results), identity_(identity),
        on_event_loop_(on_event_loop) {}

  // decode() keeps a pointer to this call: it lives on its procedure's stack, never copied.
  Nfs3Call(const Nfs3Call&) = delete;
  Nfs3Call& operator=(const Nfs3Call&) = delete;

  template <typename T>
  bool decode(xdr::Decoded<T>& args) {
    // xdr_nfs_fh3 bounds a handle by NFS3_FHSIZE before writing it.
    static_assert(NFS3_FHSIZE <= xdr::Decoded<T>::kInlineBytes);
    for (nfs_fh3* fh : handles_of(*args)) args.decode_inline(&fh->data.data_val, NFS3_FHSIZE);
    if (char** name = leading_name_of(*args))
      if (std::optional<uint32_t> length = name_length_after_handle(args_))
        args.decode_inline_string(name, *length);
    if (!args.decode(args_)) return false;
    // Two pointers: std::function keeps them in place, without an allocation per call.
    decoded_intact_ = [&args, this] { return args.encodes_back_to(args_); };
    return true;
  }
  std::span<const uint8_t> raw_args() const { return args_; }

  // BADHANDLE for a malformed or forged handle, STALE when no volume has its id or the export
  // it was issued under no longer exports that volume, ACCES when that export does not list
  // the caller, PERM (as knfsd) when the export is `secure` and the call came from an
  // unreserved port. NFS3_OK fills `out`.
  nfsstat3 open(const nfs_fh3& fh, Target* out) const;
  // As open(), and ROFS when the export is read-only: for procedures that change the volume.
  nfsstat3 open_for_change(const nfs_fh3& fh, Target* out) const;

  // The handle of `inode` (entry `name` of a directory) in t's volume, issued under t's
  // export. A junction becomes the root of the volume it names, issued under the export of
  // that volume that lets this client in (Exports::for_crossing): ACCES when none does.
  nfsstat3 handle_for(const Target& t, fs::InodeId inode, FileHandle* out,
                      std::string_view name = {}) const;

  // A name a client sent for a directory entry: INVAL for one containing '/', which no
  // directory entry can hold, and for arguments whose strings held a NUL byte (the decoded
  // name would be cut short and name another entry); NFS3_OK otherwise (empty names are the
  // volume's to reject).
  nfsstat3 check_name(const char* name) const;

  // The volume calls of the procedures that may run on the event loop. On an executor thread
  // each is the Volume's call; on the event loop it is the Volume's non-blocking attempt, and an
  // attempt that would block answers NFS3ERR_JUKEBOX and marks the call would_block(): the
  // service then throws the reply away and runs the procedure again, from the start, on an
  // executor thread. So a procedure makes its volume call before it changes anything.
  fs::Status getattr(const Target& t, fs::Attr* out);
  fs::Status lookup(const Target& dir, std::string_view name, fs::InodeId* out,
                    std::optional<fs::Attr>* obj_attr, std::optional<fs::Attr>* dir_attr);
  fs::Status access(const Target& t, uint32_t requested, uint32_t* granted,
                    std::optional<fs::Attr>* attr);
  // READ's data as the volume hands it out: on the loop, references to its cache blocks
  // (Volume::try_read_shared, sent without a copy); on the executor, a buffer of its own. At
  // most `count` bytes either way.
  fs::Status read(const Target& t, uint64_t offset, uint32_t count, util::ByteSlices* data,
                  bool* eof, std::optional<fs::Attr>* attr);
  // WRITE: on the event loop only data the volume takes from memory (its attempt):
  // UNSTABLE, and a stable WRITE whose commit the volume answers without a wait or by
  // parking the call until the commit is in (a journal's group commit).
  fs::Status write(const Target& t, uint64_t offset, std::span<const uint8_t> data,
                   fs::Stability stable, fs::Stability* committed, fs::Wcc* wcc);
  // COMMIT: on the event loop when the volume answers it from memory or parks it likewise.
  fs::Status commit(const Target& t, uint64_t offset, uint32_t count, fs::Wcc* wcc);
  // READLINK, READDIR / READDIRPLUS (the caller's entry bound passes through unchanged) and
  // FSSTAT: on the event loop when the volume answers from memory or parks the call on a
  // forwarded round trip (RemoteVolume); a name-space root never does, so its junctions (whose
  // handles may ask another node for its root) stay on the executor.
  fs::Status readlink(const Target& t, std::string* target, std::optional<fs::Attr>* attr);
  fs::Status readdir(const Target& dir, uint64_t cookie, uint64_t cookieverf,
                     uint32_t max_entries, bool with_attrs, fs::ReaddirResult* out);
  fs::Status fsstat(const Target& t, fs::FsStat* out, std::optional<fs::Attr>* attr);
  // The name-space mutations: on the event loop only when the volume takes the whole call
  // without a wait or hands it, whole, to a node that runs it (RemoteVolume: sent from the
  // loop, parked); a local volume answers none of them there, so they reach its executor as
  // before. Nothing is changed here before the volume call (see above).
  fs::Status setattr(const Target& t, const fs::SetAttr& sa, std::optional<fs::Time> guard,
                     fs::Wcc* wcc);
  fs::Status create(const Target& dir, std::string_view name, fs::CreateMode mode,
                    const fs::SetAttr& sa, uint64_t verifier, fs::InodeId* out,
                    std::optional<fs::Attr>* obj_attr, fs::Wcc* dir_wcc);
  fs::Status mkdir(const Target& dir, std::string_view name, const fs::SetAttr& sa,
                   fs::InodeId* out, std::optional<fs::Attr>* obj_attr, fs::Wcc* dir_wcc);
  fs::Status symlink(const Target& dir, std::string_view name, std::string_view target,
                     const fs::SetAttr& sa, fs::InodeId* out, std::optional<fs::Attr>* obj_attr,
                     fs::Wcc* dir_wcc);
  fs::Status mknod(const Target& dir, std::string_view name, fs::FileType type,
                   const fs::SetAttr& sa, uint32_t rdev_major, uint32_t rdev_minor,
                   fs::InodeId* out, std::optional<fs::Attr>* obj_attr, fs::Wcc* dir_wcc);
  fs::Status remove(const Target& dir, std::string_view name, fs::Wcc* dir_wcc);
  fs::Status rmdir(const Target& dir, std::string_view name, fs::Wcc* dir_wcc);
  // `from` and `to` are on one volume (the caller checked); the call goes to from's.
  fs::Status rename(const Target& from, std::string_view from_name, const Target& to,
                    std::string_view to_name, fs::Wcc* from_wcc, fs::Wcc* to_wcc);
  fs::Status link(const Target& file, const Target& dir, std::string_view name,
                  std::optional<fs::Attr>* file_attr, fs::Wcc* dir_wcc);
  bool would_block() const { return would_block_; }
  uint32_t max_transfer() const { return call_.tcp ? kMaxTransferTcp : kMaxTransferUdp; }

  template <typename T>
  rpc::DispatchResult reply(xdr::Routine<T> routine, const T& res) {
    return reply_with(xdr::as_proc(routine), &res);
  }
  rpc::DispatchResult reply_with(xdrproc_t routine, const void* res);
  // Overwrites the last four bytes of the encoded results with `value` (big-endian): the length
  // word of a trailing opaque whose bytes travel as DispatchResult::tail. Precondition: a
  // successful reply() whose encoding ends with that (empty) opaque's length word.
  void patch_last_word(uint32_t value);
  static rpc::DispatchResult garbage_args();

 private:
  const Nfs3Deps& deps_;
  const rpc::CallContext& call_;
  std::span<const uint8_t> args_;
  std::vector<uint8_t>* results_;
  // The volume call `args` as `ctx` on `volume`, its results moved to the caller by `take`
  // (fs/call/out_params.h); see the volume calls above.
  template <class Args, class Take>
  fs::Status volume_call(fs::Volume* volume, const fs::OpContext& ctx, Args args, Take&& take);

  fs::CallIdentity* identity_;  // null for procedures whose reply is not rebuilt
  const bool on_event_loop_;
  mutable bool would_block_ = false;  // set by const helpers too (handle_for)
  std::function<bool()> decoded_intact_;  // whether the decoded arguments lost no byte
};

}  // namespace nasd::nfs::nfs3
