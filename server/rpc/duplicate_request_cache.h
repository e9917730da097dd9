// The duplicate request cache (DRC). NFS clients retransmit a call when a reply is late; for a
// non-idempotent procedure (REMOVE, RENAME, CREATE, ...) running it twice turns a success into
// an error. The cache remembers replies of procedures the service marks cacheable(), so that a
// retransmission gets the original reply bytes, and it remembers calls still executing so that
// a retransmission of those is dropped (the client will retransmit again later).
//
// Keyed by the client's address (not its port), the xid, program, version, procedure and a hash
// of the argument bytes (guards against xid reuse after a client restart). Not the port: a
// client whose connection broke retransmits with the same xid on a new connection, and only
// some clients manage to reuse their old source port; a copy of the call that reached the server
// on the old connection (read late, after a pause or a backlog) and the retransmission on the
// new one must be one call, or the late copy runs the call again after the client has moved on
// (a CREATE undoing an acknowledged REMOVE). Two processes of one host are told apart by their
// xids and arguments: a hit needs the same xid, procedure and argument bytes. Bounded with LRU eviction; completed entries expire
// after a time to live. Sharded mutexes keep executor threads from serialising on one lock.
//
// Only completed entries are ever evicted: an entry whose call is still running is what stops
// a retransmission from running the call a second time, so it stays until complete() or
// abandon(). When a shard is full of running calls, begin() answers Full and the call is
// dropped (the client retransmits).
//
// Allocation-free in the steady state: entries are reused, and the reply of an entry dropped
// by a call goes back to that thread's spare replies (reply_pool.h) for its next call. Who may take an entry at all is the transport's decision
// (rpc::Service::may_cache): only callers that passed the credential and export checks.
#pragma once

#include <sys/socket.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "server/rpc/call_header.h"
#include "server/rpc/service.h"

namespace nasd::rpc {

struct DrcKey {
  std::array<uint8_t, 16> address{};  // IPv4 uses the first 4 bytes
  uint16_t family = 0;
  uint32_t xid = 0, prog = 0, vers = 0, proc = 0;
  uint64_t args_hash = 0;

  bool operator==(const DrcKey&) const = default;
  static DrcKey make(const CallContext& call, std::span<const uint8_t> args);
};

class DuplicateRequestCache {
 public:
  using Clock = std::chrono::steady_clock;
  using Reply = std::shared_ptr<const EncodedReply>;

  struct Options {
    size_t capacity = 8192;                        // entries, over all shards
    std::chrono::milliseconds ttl{std::chrono::minutes(2)};  // for completed entries
  };

  enum class State { New, InProgress, Done, Full };
  struct Lookup {
    State state = State::New;
    Reply reply;  // set for Done
  };

  explicit DuplicateRequestCache(Options options);
  DuplicateRequestCache() : DuplicateRequestCache(Options{}) {}
  ~DuplicateRequestCache();
  DuplicateRequestCache(const DuplicateRequestCache&) = delete;
  DuplicateRequestCache& operator=(const DuplicateRequestCache&) = delete;

  // New: the caller owns the call now and must complete() or abandon() it.
  // InProgress: the original is still executing; drop this copy.
  // Done: send `reply` instead of executing.
  // Full: every entry of this key's shard belongs to a running call; drop this call.
  Lookup begin(const DrcKey& key, Clock::time_point now = Clock::now());
  // Records the reply of a call begun with New.
  void complete(const DrcKey& key, Reply reply, Clock::time_point now = Clock::now());
  // Forgets a call begun with New that produced no reply.
  void abandon(const DrcKey& key);
  // Records the reply of a call that completed before this cache existed -- rebuilt from the
  // journal after a restart, takeover or hand-over (server/nfs/nfs3/recovered_replies.h) -- as
  // a Done entry whose time to live starts `now`. The recorded reply is what happened, so it
  // replaces whatever the entry held (e.g. a JUKEBOX answered to a retransmission that arrived
  // while the volume was still being recovered), and a copy of the call still running keeps
  // it: that copy's complete() does not overwrite it.
  void insert_completed(const DrcKey& key, Reply reply, Clock::time_point now = Clock::now());

  size_t size() const;
  size_t capacity() const { return options_.capacity; }
  // Entries ever made: they are reused, so this stops growing once the cache is full.
  size_t entries_made() const;

 private:
  struct Shard;
  Shard& shard_for(const DrcKey& key);

  Options options_;
  size_t per_shard_capacity_;
  std::vector<std::unique_ptr<Shard>> shards_;
};

}  // namespace nasd::rpc
