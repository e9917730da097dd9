#include "server/nfs/nfs3/nfs3_service.h"

#include <exception>

#include "fs/call_identity.h"
#include "server/nfs/nfs3/nfs3_call.h"
#include "server/nfs/nfs3/procedures.h"
#include "server/nfs/nfs3/recovered_replies.h"
#include "server/nfs/xdr/wire_peek.h"
#include "server/rpc/duplicate_request_cache.h"

namespace nasd::nfs {
namespace {

using nfs3::Nfs3Call;

rpc::DispatchResult proc_null(Nfs3Call&) { return {}; }

struct ProcEntry {
  const char* name;
  nfs3::Procedure run;
  bool cacheable;  // non-idempotent: the duplicate request cache keeps the reply
  // Tried on the event loop first (dispatch_inline): the procedure's volume call goes through
  // Nfs3Call's non-blocking attempt, or it needs no volume call at all.
  bool on_loop;
};

// Indexed by procedure number (RFC 1813 section 3.3).
constexpr ProcEntry kProcs[] = {
    {"NULL", proc_null, false, true},
    {"GETATTR", nfs3::proc_getattr, false, true},
    {"SETATTR", nfs3::proc_setattr, true, true},
    {"LOOKUP", nfs3::proc_lookup, false, true},
    {"ACCESS", nfs3::proc_access, false, true},
    {"READLINK", nfs3::proc_readlink, false, true},
    {"READ", nfs3::proc_read, false, true},
    {"WRITE", nfs3::proc_write, true, true},
    {"CREATE", nfs3::proc_create, true, true},
    {"MKDIR", nfs3::proc_mkdir, true, true},
    {"SYMLINK", nfs3::proc_symlink, true, true},
    {"MKNOD", nfs3::proc_mknod, true, true},
    {"REMOVE", nfs3::proc_remove, true, true},
    {"RMDIR", nfs3::proc_rmdir, true, true},
    {"RENAME", nfs3::proc_rename, true, true},
    {"LINK", nfs3::proc_link, true, true},
    {"READDIR", nfs3::proc_readdir, false, true},
    {"READDIRPLUS", nfs3::proc_readdirplus, false, true},
    {"FSSTAT", nfs3::proc_fsstat, false, true},
    {"FSINFO", nfs3::proc_fsinfo, false, false},
    {"PATHCONF", nfs3::proc_pathconf, false, false},
    {"COMMIT", nfs3::proc_commit, true, true},
};
constexpr uint32_t kNumProcs = sizeof(kProcs) / sizeof(kProcs[0]);
static_assert(kNumProcs == 22);

}  // namespace

Nfs3Service::Nfs3Service(std::shared_ptr<fs::VolumeResolver> volumes,
                         std::shared_ptr<Exports> exports, std::shared_ptr<HandleCodec> handles)
    : deps_(std::make_unique<nfs3::Nfs3Deps>(
          nfs3::Nfs3Deps{std::move(volumes), std::move(exports), std::move(handles)})) {}

Nfs3Service::~Nfs3Service() = default;

uint32_t Nfs3Service::num_procs() const { return kNumProcs; }

std::string_view Nfs3Service::proc_name(uint32_t proc) const {
  return proc < kNumProcs ? kProcs[proc].name : "UNKNOWN";
}

bool Nfs3Service::cacheable(uint32_t proc) const {
  return proc < kNumProcs && kProcs[proc].cacheable;
}

bool Nfs3Service::may_cache(const rpc::CallContext& call, std::span<const uint8_t> args) const {
  const std::optional<xdr::LeadingHandle> fh = xdr::peek_leading_handle(args);
  if (!fh) return false;
  HandleTarget named;
  if (deps_->handles->decode(fh->handle, &named) != fs::Status::Ok) return false;
  Exports::Policy policy = deps_->exports->for_handle(named.volume_id, named.export_id, call.peer);
  return policy && policy->allows(call.peer) && policy->port_allowed(call.peer);
}

std::optional<size_t> Nfs3Service::bulk_payload_offset(const rpc::CallContext& call,
                                                       std::span<const uint8_t> args) const {
  if (call.vers != 3 || call.proc != NFSPROC3_WRITE) return std::nullopt;
  // WRITE3args: nfs_fh3 (length, bytes padded to 4), offset (8), count (4), stable (4), then
  // the data's length (4) and the data. Only read here, never trusted: the call is decoded and
  // checked as usual once it is complete.
  const std::optional<xdr::LeadingHandle> fh = xdr::peek_leading_handle(args);
  if (!fh) return std::nullopt;
  const size_t at_offset = fh->end;
  const size_t at_data = at_offset + 8 + 4 + 4 + 4;
  const std::optional<uint32_t> high = xdr::peek_word(args, at_offset),
                                low = xdr::peek_word(args, at_offset + 4),
                                data_length = xdr::peek_word(args, at_data - 4);
  if (!high || !low || !data_length) return std::nullopt;
  // Pages of the payload become file blocks only where the file offset is block aligned too.
  constexpr uint64_t kBlock = 4096;
  if (((uint64_t{*high} << 32) | *low) % kBlock != 0 || *data_length < kBlock) return std::nullopt;
  return at_data;
}

rpc::DispatchResult Nfs3Service::dispatch(const rpc::CallContext& call,
                                          std::span<const uint8_t> args,
                                          std::vector<uint8_t>* results) {
  bool would_block = false;
  return run(call, args, results, /*on_event_loop=*/false, &would_block);
}

std::optional<rpc::DispatchResult> Nfs3Service::dispatch_inline(const rpc::CallContext& call,
                                                                std::span<const uint8_t> args,
                                                                std::vector<uint8_t>* results) {
  if (call.vers != 3 || call.proc >= kNumProcs || !kProcs[call.proc].on_loop) return std::nullopt;
  bool would_block = false;
  rpc::DispatchResult r = run(call, args, results, /*on_event_loop=*/true, &would_block);
  if (would_block) return std::nullopt;
  return r;
}

rpc::DispatchResult Nfs3Service::run(const rpc::CallContext& call, std::span<const uint8_t> args,
                                     std::vector<uint8_t>* results, bool on_event_loop,
                                     bool* would_block) {
  rpc::DispatchResult r;
  if (call.vers != 3) {
    r.accept = rpc::AcceptStat::ProgMismatch;
    r.low_version = r.high_version = 3;
    return r;
  }
  if (call.proc >= kNumProcs) {
    r.accept = rpc::AcceptStat::ProcUnavail;
    return r;
  }
  // Names this call for the journal, which records it with the volume's reply so the reply
  // cache can be rebuilt after a restart or failover (recovered_replies.h). The key is the
  // duplicate request cache's own, so a rebuilt entry matches the retransmission; Nfs3Call
  // adds the export its handles are issued under and puts it in each volume call's request.
  std::optional<fs::CallIdentity> identity;
  if (reply_rebuilt_from_journal(call.proc))
    identity = call_identity_of(rpc::DrcKey::make(call, args));
  Nfs3Call nfs_call(*deps_, call, args, results, identity ? &*identity : nullptr, on_event_loop);
  try {
    rpc::DispatchResult done = kProcs[call.proc].run(nfs_call);
    *would_block = nfs_call.would_block();
    return done;
  } catch (const std::exception&) {
    // A volume that throws (e.g. out of memory) fails this call, never the server.
    r.accept = rpc::AcceptStat::SystemErr;
    return r;
  }
}

}  // namespace nasd::nfs
