// The one narrow interface between the protocol side (server/) and whatever stores files:
// the cluster router, the NVRAM journal and the log-structured file system all implement
// `Volume`, and each wraps the one below it (router -> journal -> fs).
//
// Design rules every implementation keeps (the detailed contract is above class Volume):
//  * One NFS procedure is one Volume call, and a call has one shape: a request struct
//    (fs/call/calls.h) handed to Volume::call. That keeps a forwarded request one interconnect
//    message and a journalled mutation one NVRAM record, each the same struct encoded.
//  * Every call is synchronous and thread-safe; callers run on executor threads, never on the
//    network event loop -- except the attempts (try_call), which never wait and exist to be called
//    there (run-to-completion: a GETATTR answered from memory needs no thread hand-off).
//  * Permission checks happen here, inside the volume, for the credential passed in (`OpContext`),
//    so that a request forwarded to another node is checked where the inode lives. Export policy
//    (read-only exports, root squash) is the server's job and is applied before the call.
//  * Status values are the NFSv3 nfsstat3 numbers, so the server maps nothing.
//  * Every reply that RFC 1813 gives weak cache consistency data carries it (`Wcc`).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "util/byte_slices.h"

namespace nasd::fs {

enum class Status : uint32_t {
  Ok = 0,
  Perm = 1,
  NoEnt = 2,
  Io = 5,
  NxIo = 6,
  Access = 13,
  Exist = 17,
  XDev = 18,
  NoDev = 19,
  NotDir = 20,
  IsDir = 21,
  Inval = 22,
  FBig = 27,
  NoSpc = 28,
  RoFs = 30,
  MLink = 31,
  NameTooLong = 63,
  NotEmpty = 66,
  DQuot = 69,
  Stale = 70,
  Remote = 71,
  BadHandle = 10001,
  NotSync = 10002,
  BadCookie = 10003,
  NotSupp = 10004,
  TooSmall = 10005,
  ServerFault = 10006,
  BadType = 10007,
  Jukebox = 10008,
};

const char* status_name(Status s);

// ftype3 numbering.
enum class FileType : uint32_t { Reg = 1, Dir = 2, Blk = 3, Chr = 4, Lnk = 5, Sock = 6, Fifo = 7 };

struct Time {
  int64_t sec = 0;
  uint32_t nsec = 0;
  bool operator==(const Time&) const = default;
};

// What a file handle names inside one volume. `gen` makes a reused inode number stale.
struct InodeId {
  uint64_t ino = 0;
  uint32_t gen = 0;
  bool operator==(const InodeId&) const = default;
};

// fattr3.
struct Attr {
  FileType type = FileType::Reg;
  uint32_t mode = 0;  // permission bits and setuid/setgid/sticky only (no S_IFMT)
  uint32_t nlink = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint64_t size = 0;
  uint64_t used = 0;  // bytes of storage actually allocated (sparse files use less)
  uint32_t rdev_major = 0;
  uint32_t rdev_minor = 0;
  uint64_t fsid = 0;
  uint64_t fileid = 0;
  Time atime, mtime, ctime;
};

// wcc_attr: the subset of attributes sampled before an operation.
struct PreAttr {
  uint64_t size = 0;
  Time mtime, ctime;
};

struct Wcc {
  std::optional<PreAttr> before;
  std::optional<Attr> after;
};

// sattr3.
enum class TimeHow : uint32_t { DontChange = 0, ServerTime = 1, ClientTime = 2 };
struct SetAttr {
  std::optional<uint32_t> mode;
  std::optional<uint32_t> uid;
  std::optional<uint32_t> gid;
  std::optional<uint64_t> size;
  TimeHow atime_how = TimeHow::DontChange;
  Time atime;
  TimeHow mtime_how = TimeHow::DontChange;
  Time mtime;
};

// An AUTH_SYS identity after the export's squashing rules were applied.
struct Cred {
  uint32_t uid = 65534;
  uint32_t gid = 65534;
  std::vector<uint32_t> gids;  // supplementary groups, at most 16 on the wire
};

// Passed to every call: the caller's credential, and nothing else. It travels with a forwarded
// call (fs/call/codec.h), so whatever it held could be set by whoever can reach the
// interconnect; what only the NVRAM journal may decide (the journal sequence of a mutation, the
// inode a replayed create must allocate) enters through fs::JournalTarget::apply_journalled
// (fs/journal_target.h) instead.
struct OpContext {
  Cred cred;
};

// ACCESS3 bits.
enum AccessBits : uint32_t {
  kAccessRead = 0x01,
  kAccessLookup = 0x02,
  kAccessModify = 0x04,
  kAccessExtend = 0x08,
  kAccessDelete = 0x10,
  kAccessExecute = 0x20,
};

enum class Stability : uint32_t { Unstable = 0, DataSync = 1, FileSync = 2 };
enum class CreateMode : uint32_t { Unchecked = 0, Guarded = 1, Exclusive = 2 };

struct DirEntry {
  std::string name;
  uint64_t fileid = 0;
  uint64_t cookie = 0;  // resume position after this entry; stable while the entry exists
  InodeId id;
  std::optional<Attr> attr;  // filled when the caller asked for attributes (READDIRPLUS)
};

struct ReaddirResult {
  std::vector<DirEntry> entries;
  uint64_t cookieverf = 0;
  bool eof = false;
  std::optional<Attr> dir_attr;
};

struct FsStat {
  uint64_t total_bytes = 0, free_bytes = 0, avail_bytes = 0;
  uint64_t total_files = 0, free_files = 0, avail_files = 0;
  uint32_t invarsec = 0;
};

// Limits the volume itself imposes; the server combines them with transport limits for FSINFO
// and PATHCONF.
struct VolumeLimits {
  uint64_t max_file_size = 0;
  uint32_t block_size = 4096;
  uint32_t link_max = 65000;
  uint32_t name_max = 255;
  Time time_delta{0, 1};
};

// The request and its reply (fs/call/calls.h): the one shape of a Volume call.
namespace call {
struct VolumeRequest;
struct VolumeReply;
}  // namespace call

// The contract every implementation keeps (checked for all of them by one typed suite,
// tests/contract/volume_contract_test.cc: LfsVolume, the MemoryFs test fs, JournalVolume over
// the LFS, RemoteVolume over a loopback interconnect, WrappedVolume). It is stated for the
// calls as methods; call() and try_call() keep it for the same call as a request, with the
// reply's result struct standing for the out-parameters:
//
//  Out-parameters. Every pointer argument is required: callers pass storage for each, never
//  nullptr, and an implementation may write any of them before it knows the answer. What a
//  caller may rely on:
//   * On Ok: every plain out-parameter (InodeId*, Attr*, std::string*, std::vector*, bool*,
//     uint32_t*, Stability*, FsStat*, ReaddirResult*) is filled. An std::optional<Attr>* is
//     filled whenever the object exists (post-op attributes are best effort in NFSv3, but every
//     implementation here answers them on Ok). A Wcc*'s `after` is filled on Ok; `before` when
//     the implementation sampled it (the LFS does; a forwarded call carries what the owner said).
//   * On an error: plain out-parameters are unspecified (the caller must not read them);
//     std::optional<Attr>* and Wcc* may carry the object's attributes (NFSv3 returns them with
//     errors too) or stay empty.
//
//  Blocking. Every call is synchronous and may block: on the volume's lock and disk I/O (LFS),
//  on the NVRAM group commit and the mirror's acknowledgement (JournalVolume mutations; reads
//  pass straight through), or on the network (RemoteVolume: every call, bounded by its call
//  timeout, answered Jukebox when the owner cannot be reached). id(), root(), limits() and
//  write_verifier() never touch the disk; on a RemoteVolume root() and limits() may ask the
//  owner once (bounded by its describe timeout) and are cached. Never call a volume from a
//  network event-loop thread, except through the attempts (try_call, try_*), which never wait.
//
//  Threads. Every call is thread-safe and may run concurrently with any other on the same
//  volume; each call is atomic with respect to the others (a READDIR sees a directory before
//  or after a concurrent CREATE, never half of it). An implementation never calls back into
//  its caller.
//
//  Errors. A failure is a Status, never an exception (util/README.md, the error rule); a
//  volume that has failed (disk error, lease lost, sealed for a hand-over) answers Io or Jukebox
//  to every further call instead of throwing.
class Volume {
 public:
  virtual ~Volume() = default;

  virtual uint32_t id() const = 0;
  virtual InodeId root() const = 0;
  virtual VolumeLimits limits() const = 0;
  // Changes whenever data that was written UNSTABLE may have been lost (at each start).
  virtual uint64_t write_verifier() const = 0;

  // --- The one entry ---------------------------------------------------------------------------
  // Runs the call `req` describes (fs/call/calls.h: the procedure and its arguments, the
  // caller's credential, the client call it serves and the time by which it must be answered)
  // and returns its status with every out-parameter. `result` holds the op's result struct
  // whenever the call reached a file system (NFS error replies carry attributes too), and is
  // empty when a layer refused it before that (a fence, an unreachable owner). This is what a
  // layer implements: a wrapper states what it changes about a call in one place, and a call
  // crosses the interconnect and enters the journal as this same struct.
  // fs::TypedVolume (fs/typed_volume.h) is the base for a file system that implements the
  // procedures as typed methods; the dispatch from a request onto them is fs/call/dispatch.h.
  virtual call::VolumeReply call(const call::VolumeRequest& req) = 0;

  // The non-blocking attempt of the same call (run-to-completion on the network event loop):
  // either answers exactly as call() would, or, when answering would need a disk read, a lock
  // someone else holds, the network or any other wait, returns std::nullopt having changed
  // nothing the caller can see; the caller then makes call() on an executor thread. A volume
  // that cannot answer without waiting (the name-space root, test volumes) answers nullopt to
  // every attempt.
  // Parking: inside a resumable call (util/resumable_call.h) an attempt whose answer comes
  // later (a forwarded call, a stable WRITE or COMMIT waiting for the NVRAM group commit) may
  // instead park the call and return a placeholder the caller discards; the call is run again
  // when the answer is in, and that run's attempt returns the stored answer without doing the
  // work again. Such an attempt may have changed the volume before it parked (a stable WRITE
  // is applied and journalled, then waits for its commit), which is why it may only park
  // where the dispatcher guarantees the re-run.
  // Which ops a layer attempts: the reads (GETATTR, LOOKUP, ACCESS, READ, READLINK, READDIR,
  // FSSTAT) when answerable from memory; a WRITE acknowledged from memory (in practice UNSTABLE
  // data, or a stable one that may park or commits without a wait; "would block" must leave the
  // file exactly as it was); a COMMIT when everything written is already stable or becomes so
  // without a wait. The name-space mutations only where the whole mutation, journal and commit
  // included, needs no wait, or (inside a resumable call) where the whole call is sent to
  // somewhere that runs it once: in practice only RemoteVolume answers them.
  virtual std::optional<call::VolumeReply> try_call(const call::VolumeRequest& req) = 0;

  // A READ attempt without the copy: on Ok, `data` (cleared first) holds the bytes read as
  // references into the volume's own memory -- cache blocks, pinned so that they stay valid and
  // unchanged until the last copy of data->owner is gone, on whichever thread that happens --
  // for a transport that sends them as an iovec. Not a call of its own: the same READ as
  // try_call's, for a caller that can send borrowed bytes. The default makes the READ attempt
  // through try_call() into a buffer of its own.
  virtual std::optional<Status> try_read_shared(const OpContext& ctx, InodeId id,
                                                uint64_t offset, uint32_t count,
                                                util::ByteSlices* data, bool* eof,
                                                std::optional<Attr>* attr);

  // --- The calls as methods ----------------------------------------------------------------------
  // For a caller holding typed arguments (the NFS procedures, tools, tests): each builds the
  // request, makes it through call() (the try_ ones through try_call()) and copies its results
  // to the out-parameters, which stay as the caller initialised them when the call was refused
  // before it reached a file system. Not virtual: a layer implements call()/try_call() only.
  // The request takes the client call identity and the deadline of the thread's scopes
  // (fs/call_identity.h, fs/call_deadline.h), where the NFS program and the interconnect's
  // server put them for the calls they make on a client's behalf.
  Status getattr(const OpContext& ctx, InodeId id, Attr* out);
  // `guard_ctime`: SETATTR's guard; NotSync when the object's ctime differs.
  Status setattr(const OpContext& ctx, InodeId id, const SetAttr& sa,
                 std::optional<Time> guard_ctime, Wcc* wcc);
  Status lookup(const OpContext& ctx, InodeId dir, std::string_view name, InodeId* out,
                std::optional<Attr>* obj_attr, std::optional<Attr>* dir_attr);
  Status access(const OpContext& ctx, InodeId id, uint32_t requested, uint32_t* granted,
                std::optional<Attr>* attr);
  Status readlink(const OpContext& ctx, InodeId id, std::string* target,
                  std::optional<Attr>* attr);
  // Reads up to `count` bytes at `offset` into `data` (resized to what was read).
  Status read(const OpContext& ctx, InodeId id, uint64_t offset, uint32_t count,
              std::vector<uint8_t>* data, bool* eof, std::optional<Attr>* attr);
  // `committed` is the stability actually achieved (at least `stable`).
  Status write(const OpContext& ctx, InodeId id, uint64_t offset, std::span<const uint8_t> data,
               Stability stable, Stability* committed, Wcc* wcc);
  // Exclusive mode uses `verifier`: a retried exclusive CREATE with the same verifier succeeds
  // and returns the same object; after it, the client sets the real attributes with SETATTR.
  Status create(const OpContext& ctx, InodeId dir, std::string_view name, CreateMode mode,
                const SetAttr& sa, uint64_t verifier, InodeId* out,
                std::optional<Attr>* obj_attr, Wcc* dir_wcc);
  Status mkdir(const OpContext& ctx, InodeId dir, std::string_view name, const SetAttr& sa,
               InodeId* out, std::optional<Attr>* obj_attr, Wcc* dir_wcc);
  Status symlink(const OpContext& ctx, InodeId dir, std::string_view name,
                 std::string_view target, const SetAttr& sa, InodeId* out,
                 std::optional<Attr>* obj_attr, Wcc* dir_wcc);
  // type is Chr, Blk, Sock or Fifo; anything else is BadType.
  Status mknod(const OpContext& ctx, InodeId dir, std::string_view name, FileType type,
               const SetAttr& sa, uint32_t rdev_major, uint32_t rdev_minor, InodeId* out,
               std::optional<Attr>* obj_attr, Wcc* dir_wcc);
  Status remove(const OpContext& ctx, InodeId dir, std::string_view name, Wcc* dir_wcc);
  Status rmdir(const OpContext& ctx, InodeId dir, std::string_view name, Wcc* dir_wcc);
  Status rename(const OpContext& ctx, InodeId from_dir, std::string_view from_name,
                InodeId to_dir, std::string_view to_name, Wcc* from_wcc, Wcc* to_wcc);
  Status link(const OpContext& ctx, InodeId file, InodeId dir, std::string_view name,
              std::optional<Attr>* file_attr, Wcc* dir_wcc);
  // Returns at most `max_entries` entries after `cookie` (0 = from the start), in a stable
  // order; `eof` when none follow. The caller may drop entries from the tail to fit its reply
  // (each entry carries its own resume cookie). A cookie the directory cannot resume from is
  // BadCookie; a non-zero `cookieverf` that no longer matches the directory is BadCookie too.
  Status readdir(const OpContext& ctx, InodeId dir, uint64_t cookie, uint64_t cookieverf,
                 uint32_t max_entries, bool with_attrs, ReaddirResult* out);
  Status fsstat(const OpContext& ctx, InodeId id, FsStat* out, std::optional<Attr>* attr);
  // Makes everything written to the file so far stable (count 0 = to the end).
  Status commit(const OpContext& ctx, InodeId id, uint64_t offset, uint32_t count, Wcc* wcc);

  // The attempts (try_call) of the same calls.
  std::optional<Status> try_getattr(const OpContext& ctx, InodeId id, Attr* out);
  std::optional<Status> try_setattr(const OpContext& ctx, InodeId id, const SetAttr& sa,
                                    std::optional<Time> guard_ctime, Wcc* wcc);
  std::optional<Status> try_lookup(const OpContext& ctx, InodeId dir, std::string_view name,
                                   InodeId* out, std::optional<Attr>* obj_attr,
                                   std::optional<Attr>* dir_attr);
  std::optional<Status> try_access(const OpContext& ctx, InodeId id, uint32_t requested,
                                   uint32_t* granted, std::optional<Attr>* attr);
  std::optional<Status> try_readlink(const OpContext& ctx, InodeId id, std::string* target,
                                     std::optional<Attr>* attr);
  std::optional<Status> try_read(const OpContext& ctx, InodeId id, uint64_t offset,
                                 uint32_t count, std::vector<uint8_t>* data, bool* eof,
                                 std::optional<Attr>* attr);
  std::optional<Status> try_write(const OpContext& ctx, InodeId id, uint64_t offset,
                                  std::span<const uint8_t> data, Stability stable,
                                  Stability* committed, Wcc* wcc);
  std::optional<Status> try_create(const OpContext& ctx, InodeId dir, std::string_view name,
                                   CreateMode mode, const SetAttr& sa, uint64_t verifier,
                                   InodeId* out, std::optional<Attr>* obj_attr, Wcc* dir_wcc);
  std::optional<Status> try_mkdir(const OpContext& ctx, InodeId dir, std::string_view name,
                                  const SetAttr& sa, InodeId* out,
                                  std::optional<Attr>* obj_attr, Wcc* dir_wcc);
  std::optional<Status> try_symlink(const OpContext& ctx, InodeId dir, std::string_view name,
                                    std::string_view target, const SetAttr& sa, InodeId* out,
                                    std::optional<Attr>* obj_attr, Wcc* dir_wcc);
  std::optional<Status> try_mknod(const OpContext& ctx, InodeId dir, std::string_view name,
                                  FileType type, const SetAttr& sa, uint32_t rdev_major,
                                  uint32_t rdev_minor, InodeId* out,
                                  std::optional<Attr>* obj_attr, Wcc* dir_wcc);
  std::optional<Status> try_remove(const OpContext& ctx, InodeId dir, std::string_view name,
                                   Wcc* dir_wcc);
  std::optional<Status> try_rmdir(const OpContext& ctx, InodeId dir, std::string_view name,
                                  Wcc* dir_wcc);
  std::optional<Status> try_rename(const OpContext& ctx, InodeId from_dir,
                                   std::string_view from_name, InodeId to_dir,
                                   std::string_view to_name, Wcc* from_wcc, Wcc* to_wcc);
  std::optional<Status> try_link(const OpContext& ctx, InodeId file, InodeId dir,
                                 std::string_view name, std::optional<Attr>* file_attr,
                                 Wcc* dir_wcc);
  std::optional<Status> try_readdir(const OpContext& ctx, InodeId dir, uint64_t cookie,
                                    uint64_t cookieverf, uint32_t max_entries, bool with_attrs,
                                    ReaddirResult* out);
  std::optional<Status> try_fsstat(const OpContext& ctx, InodeId id, FsStat* out,
                                   std::optional<Attr>* attr);
  std::optional<Status> try_commit(const OpContext& ctx, InodeId id, uint64_t offset,
                                   uint32_t count, Wcc* wcc);
};

// A name in one volume that leads to the root of another: what the cluster name space root
// (/r) answers for its entries /r/vN. The protocol side never puts a junction in a file handle;
// it hands out the target volume's root handle instead, so a client that crosses /r sees each
// volume exactly as a client that mounted it directly.
inline constexpr uint64_t kJunctionIno = UINT64_MAX;
inline InodeId junction_to(uint32_t volume_id) { return InodeId{kJunctionIno, volume_id}; }
inline std::optional<uint32_t> junction_target(const InodeId& id) {
  if (id.ino != kJunctionIno) return std::nullopt;
  return id.gen;
}

// How the protocol side finds the volume a file handle names. The cluster router implements it
// (local volume or a proxy that forwards to the owning node).
class VolumeResolver {
 public:
  virtual ~VolumeResolver() = default;
  // nullptr when no volume with that id exists anywhere (the handle is stale).
  virtual Volume* find(uint32_t volume_id) = 0;
};

}  // namespace nasd::fs
