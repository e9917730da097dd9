// The one vocabulary for a Volume call: one argument struct per Volume method (what the caller
// passes in) and one result struct per kind of reply (every out-parameter). Every place that has
// to carry a call as data uses these and nothing else:
//  * the interconnect: RemoteVolume builds a request from a method's arguments, VolumeServer
//    decodes it and runs it on the owning node's volume (one forwarded call = one Volume call);
//  * the NVRAM journal: a record's payload is the encoded request plus the reply the client was
//    given; replay decodes it and runs it through the same dispatch (fs/call/dispatch.h).
// One codec (fs/call/codec.h) and one dispatch (fs/call/dispatch.h) serve both, so a procedure
// cannot be journalled one way, forwarded another way and replayed a third way.
//
// A request carries the caller's credential and nothing else of the caller: a journal sequence
// or a forced inode cannot travel in a call (they enter the file system only through
// fs::JournalTarget::apply_journalled, which only the journal can call).
//
// Argument structs borrow their strings and data (string_view/span): a decoded request points
// into the message it was decoded from, which saves copying WRITE payloads twice. Result structs
// own their data because they are the out-parameters handed back to the caller.
//
// Op numbers are on the wire and in NVRAM: append new ops, never renumber.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <variant>
#include <vector>

#include "fs/call_identity.h"
#include "fs/volume.h"

namespace nasd::fs::call {

enum class VolumeOp : uint8_t {
  Getattr = 1,
  Setattr = 2,
  Lookup = 3,
  Access = 4,
  Readlink = 5,
  Read = 6,
  Write = 7,
  Create = 8,
  Mkdir = 9,
  Symlink = 10,
  Mknod = 11,
  Remove = 12,
  Rmdir = 13,
  Rename = 14,
  Link = 15,
  Readdir = 16,
  Fsstat = 17,
  Commit = 18,
  // Not an NFS procedure: the volume's constant facts (root, limits), fetched once by a proxy.
  Describe = 19,
};

const char* volume_op_name(VolumeOp op);
// True for the calls that change the volume (and so are journalled): WRITE, SETATTR, CREATE,
// MKDIR, SYMLINK, MKNOD, REMOVE, RMDIR, RENAME, LINK.
bool is_mutation(VolumeOp op);

// ---- results (shared by the ops whose out-parameters are the same) ----

struct AttrResult {
  fs::Attr attr;
  template <class S> static auto fields(S& s) { return std::tie(s.attr); }
};
struct WccResult {
  fs::Wcc wcc;
  template <class S> static auto fields(S& s) { return std::tie(s.wcc); }
};
struct LookupResult {
  fs::InodeId id;
  std::optional<fs::Attr> obj_attr, dir_attr;
  template <class S> static auto fields(S& s) { return std::tie(s.id, s.obj_attr, s.dir_attr); }
};
struct AccessResult {
  uint32_t granted = 0;
  std::optional<fs::Attr> attr;
  template <class S> static auto fields(S& s) { return std::tie(s.granted, s.attr); }
};
struct ReadlinkResult {
  std::string target;
  std::optional<fs::Attr> attr;
  template <class S> static auto fields(S& s) { return std::tie(s.target, s.attr); }
};
struct ReadResult {
  std::vector<uint8_t> data;
  bool eof = false;
  std::optional<fs::Attr> attr;
  template <class S> static auto fields(S& s) { return std::tie(s.data, s.eof, s.attr); }
};
struct WriteResult {
  fs::Stability committed = fs::Stability::Unstable;
  fs::Wcc wcc;
  template <class S> static auto fields(S& s) { return std::tie(s.committed, s.wcc); }
};
// CREATE, MKDIR, SYMLINK, MKNOD.
struct CreatedResult {
  fs::InodeId id;
  std::optional<fs::Attr> obj_attr;
  fs::Wcc dir_wcc;
  template <class S> static auto fields(S& s) { return std::tie(s.id, s.obj_attr, s.dir_wcc); }
};
struct RenameResult {
  fs::Wcc from_wcc, to_wcc;
  template <class S> static auto fields(S& s) { return std::tie(s.from_wcc, s.to_wcc); }
};
struct LinkResult {
  std::optional<fs::Attr> file_attr;
  fs::Wcc dir_wcc;
  template <class S> static auto fields(S& s) { return std::tie(s.file_attr, s.dir_wcc); }
};
struct ReaddirCallResult {
  fs::ReaddirResult listing;
  template <class S> static auto fields(S& s) { return std::tie(s.listing); }
};
struct FsstatResult {
  fs::FsStat stat;
  std::optional<fs::Attr> attr;
  template <class S> static auto fields(S& s) { return std::tie(s.stat, s.attr); }
};
struct DescribeResult {
  fs::InodeId root;
  fs::VolumeLimits limits;
  template <class S> static auto fields(S& s) { return std::tie(s.root, s.limits); }
};

// ---- arguments ----

struct GetattrArgs {
  static constexpr VolumeOp kOp = VolumeOp::Getattr;
  using Result = AttrResult;
  fs::InodeId id;
  template <class S> static auto fields(S& s) { return std::tie(s.id); }
};
struct SetattrArgs {
  static constexpr VolumeOp kOp = VolumeOp::Setattr;
  using Result = WccResult;
  fs::InodeId id;
  fs::SetAttr sa;
  std::optional<fs::Time> guard_ctime;
  template <class S> static auto fields(S& s) { return std::tie(s.id, s.sa, s.guard_ctime); }
};
struct LookupArgs {
  static constexpr VolumeOp kOp = VolumeOp::Lookup;
  using Result = LookupResult;
  fs::InodeId dir;
  std::string_view name;
  template <class S> static auto fields(S& s) { return std::tie(s.dir, s.name); }
};
struct AccessArgs {
  static constexpr VolumeOp kOp = VolumeOp::Access;
  using Result = AccessResult;
  fs::InodeId id;
  uint32_t requested = 0;
  template <class S> static auto fields(S& s) { return std::tie(s.id, s.requested); }
};
struct ReadlinkArgs {
  static constexpr VolumeOp kOp = VolumeOp::Readlink;
  using Result = ReadlinkResult;
  fs::InodeId id;
  template <class S> static auto fields(S& s) { return std::tie(s.id); }
};
struct ReadArgs {
  static constexpr VolumeOp kOp = VolumeOp::Read;
  using Result = ReadResult;
  fs::InodeId id;
  uint64_t offset = 0;
  uint32_t count = 0;
  template <class S> static auto fields(S& s) { return std::tie(s.id, s.offset, s.count); }
};
struct WriteArgs {
  static constexpr VolumeOp kOp = VolumeOp::Write;
  using Result = WriteResult;
  fs::InodeId id;
  uint64_t offset = 0;
  std::span<const uint8_t> data;
  fs::Stability stable = fs::Stability::Unstable;
  // `data` comes last, so the journal can store the encoded prefix and the caller's bytes as
  // two pieces (one copy into NVRAM) that still read back as one encoded request.
  template <class S> static auto fields(S& s) { return std::tie(s.id, s.offset, s.stable, s.data); }
};
struct CreateArgs {
  static constexpr VolumeOp kOp = VolumeOp::Create;
  using Result = CreatedResult;
  fs::InodeId dir;
  std::string_view name;
  fs::CreateMode mode = fs::CreateMode::Unchecked;
  fs::SetAttr sa;
  uint64_t verifier = 0;
  template <class S> static auto fields(S& s) {
    return std::tie(s.dir, s.name, s.mode, s.sa, s.verifier);
  }
};
struct MkdirArgs {
  static constexpr VolumeOp kOp = VolumeOp::Mkdir;
  using Result = CreatedResult;
  fs::InodeId dir;
  std::string_view name;
  fs::SetAttr sa;
  template <class S> static auto fields(S& s) { return std::tie(s.dir, s.name, s.sa); }
};
struct SymlinkArgs {
  static constexpr VolumeOp kOp = VolumeOp::Symlink;
  using Result = CreatedResult;
  fs::InodeId dir;
  std::string_view name;
  std::string_view target;
  fs::SetAttr sa;
  template <class S> static auto fields(S& s) { return std::tie(s.dir, s.name, s.target, s.sa); }
};
struct MknodArgs {
  static constexpr VolumeOp kOp = VolumeOp::Mknod;
  using Result = CreatedResult;
  fs::InodeId dir;
  std::string_view name;
  fs::FileType type = fs::FileType::Fifo;
  fs::SetAttr sa;
  uint32_t rdev_major = 0, rdev_minor = 0;
  template <class S> static auto fields(S& s) {
    return std::tie(s.dir, s.name, s.type, s.sa, s.rdev_major, s.rdev_minor);
  }
};
struct RemoveArgs {
  static constexpr VolumeOp kOp = VolumeOp::Remove;
  using Result = WccResult;
  fs::InodeId dir;
  std::string_view name;
  template <class S> static auto fields(S& s) { return std::tie(s.dir, s.name); }
};
struct RmdirArgs {
  static constexpr VolumeOp kOp = VolumeOp::Rmdir;
  using Result = WccResult;
  fs::InodeId dir;
  std::string_view name;
  template <class S> static auto fields(S& s) { return std::tie(s.dir, s.name); }
};
struct RenameArgs {
  static constexpr VolumeOp kOp = VolumeOp::Rename;
  using Result = RenameResult;
  fs::InodeId from_dir;
  std::string_view from_name;
  fs::InodeId to_dir;
  std::string_view to_name;
  template <class S> static auto fields(S& s) {
    return std::tie(s.from_dir, s.from_name, s.to_dir, s.to_name);
  }
};
struct LinkArgs {
  static constexpr VolumeOp kOp = VolumeOp::Link;
  using Result = LinkResult;
  fs::InodeId file, dir;
  std::string_view name;
  template <class S> static auto fields(S& s) { return std::tie(s.file, s.dir, s.name); }
};
struct ReaddirArgs {
  static constexpr VolumeOp kOp = VolumeOp::Readdir;
  using Result = ReaddirCallResult;
  fs::InodeId dir;
  uint64_t cookie = 0, cookieverf = 0;
  uint32_t max_entries = 0;
  bool with_attrs = false;
  template <class S> static auto fields(S& s) {
    return std::tie(s.dir, s.cookie, s.cookieverf, s.max_entries, s.with_attrs);
  }
};
struct FsstatArgs {
  static constexpr VolumeOp kOp = VolumeOp::Fsstat;
  using Result = FsstatResult;
  fs::InodeId id;
  template <class S> static auto fields(S& s) { return std::tie(s.id); }
};
struct CommitArgs {
  static constexpr VolumeOp kOp = VolumeOp::Commit;
  using Result = WccResult;
  fs::InodeId id;
  uint64_t offset = 0;
  uint32_t count = 0;
  template <class S> static auto fields(S& s) { return std::tie(s.id, s.offset, s.count); }
};
struct DescribeArgs {
  static constexpr VolumeOp kOp = VolumeOp::Describe;
  using Result = DescribeResult;
  template <class S> static auto fields(S&) { return std::tie(); }
};

using CallArgs =
    std::variant<GetattrArgs, SetattrArgs, LookupArgs, AccessArgs, ReadlinkArgs, ReadArgs,
                 WriteArgs, CreateArgs, MkdirArgs, SymlinkArgs, MknodArgs, RemoveArgs, RmdirArgs,
                 RenameArgs, LinkArgs, ReaddirArgs, FsstatArgs, CommitArgs, DescribeArgs>;

using CallResult =
    std::variant<std::monostate, AttrResult, WccResult, LookupResult, AccessResult,
                 ReadlinkResult, ReadResult, WriteResult, CreatedResult, RenameResult,
                 LinkResult, ReaddirCallResult, FsstatResult, DescribeResult>;

// One call: which volume, as whom (the credential only), and what; the argument of
// fs::Volume::call.
struct VolumeRequest {
  uint32_t volume_id = 0;
  fs::OpContext ctx;
  CallArgs args;
  // The client call this one executes for (fs/call_identity.h), when it is a non-idempotent
  // NFS procedure: the journal records it so the reply cache can be rebuilt, and runs each
  // identified call once (nvram/answered_calls.h). Travels with a forwarded call.
  std::optional<fs::CallIdentity> identity;
  // The time by which the caller must have its answer (fs/call_deadline.h explains who sets
  // one and why); a volume that can bound a wait refuses the call JUKEBOX unrun instead of
  // waiting past it. Not encoded: it is the serving node's own clock, and the owner of a
  // forwarded call sets its own.
  std::optional<std::chrono::steady_clock::time_point> deadline;

  VolumeOp op() const {
    return std::visit([](const auto& a) { return a.kOp; }, args);
  }
};

// Its answer. `result` is empty (monostate) when the call never reached a volume (unknown
// volume, overloaded server, malformed request); otherwise it carries every out-parameter, even
// on error, because NFS error replies carry attributes and WCC data too. `write_verifier` is the
// serving volume's current one, so a proxy notices at once that the owner restarted.
struct VolumeReply {
  VolumeOp op = VolumeOp::Getattr;
  fs::Status status = fs::Status::ServerFault;
  uint64_t write_verifier = 0;
  CallResult result;
};

}  // namespace nasd::fs::call
