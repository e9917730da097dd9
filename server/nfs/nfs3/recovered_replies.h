// Rebuilding the duplicate request cache from the journal (issue 10: the reply cache moves
// with the data). The NVRAM journal records, with each non-idempotent call, the client call's
// identity (fs/call_identity.h) and the volume's reply; at start, takeover and after a clean
// hand-over, recovery hands them here (fs::RecoveredCallSink). This turns each back into the
// exact NFS reply the client was sent -- the same XDR structures filled by the same conversions
// as the live procedure (create_procs.cc, unlink_procs.cc, attr_procs.cc): the handle from the
// recorded volume and inode, the recorded attributes and WCC data -- and stores it as a
// completed entry, so a retransmission gets the original reply and runs nothing.
//
// Journalled calls are the successful ones, so every rebuilt reply is NFS3_OK. The identity is
// set (nfs3_service.cc) only for the procedures rebuilt here; WRITE and COMMIT are idempotent
// and run again.
#pragma once

#include <atomic>
#include <memory>
#include <optional>

#include "fs/call/recovered_call_sink.h"
#include "server/nfs/handle/handle_codec.h"
#include "server/rpc/duplicate_request_cache.h"

namespace nasd::nfs {

// The identity the journal records for a call the cache keys as `key`, and back.
fs::CallIdentity call_identity_of(const rpc::DrcKey& key);
rpc::DrcKey drc_key_of(const fs::CallIdentity& identity);

// True for the NFSv3 procedures whose reply is rebuilt from a journal record.
bool reply_rebuilt_from_journal(uint32_t proc);

// The NFS results (after the RPC header) of the call `request` that produced `reply`, as the
// live procedure `proc` encoded them under export `export_id` (CallIdentity::export_id: a new
// object's handle names it); nullopt when `proc` does not match the recorded call.
std::optional<std::vector<uint8_t>> rebuild_nfs3_results(const HandleCodec& handles,
                                                         uint32_t proc, uint32_t export_id,
                                                         const fs::call::VolumeRequest& request,
                                                         const fs::call::VolumeReply& reply);

class RecoveredReplies : public fs::RecoveredCallSink {
 public:
  RecoveredReplies(std::shared_ptr<HandleCodec> handles,
                   std::shared_ptr<rpc::DuplicateRequestCache> cache);
  void recovered(const fs::CallIdentity& identity, const fs::call::VolumeRequest& request,
                 const fs::call::VolumeReply& reply) override;
  uint64_t rebuilt() const { return rebuilt_.load(); }

 private:
  const std::shared_ptr<HandleCodec> handles_;
  const std::shared_ptr<rpc::DuplicateRequestCache> cache_;
  std::atomic<uint64_t> rebuilt_{0};  // volumes may recover on several threads at once
};

}  // namespace nasd::nfs
