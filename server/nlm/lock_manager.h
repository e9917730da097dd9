// The lock manager: every byte-range lock, blocked lock request and share reservation this node
// grants, for the NLM v4 service. A pure data structure: no threads, no clocks (the caller passes
// the time for grace periods) and no I/O, so every rule below is unit-tested directly.
//
// Rules (XNFS chapter 10 with POSIX fcntl semantics, which NLM clients map their locks onto):
// - A lock is owned by (caller_name, svid, oh) *at the address the client calls from* (as Linux
//   lockd keys its hosts): the wire values are the client's to choose, the address is not, so a
//   client can neither unlock, cancel nor unshare another client's entries, nor free them with
//   FREE_ALL or SM_NOTIFY. One owner's locks never conflict with each other:
//   a new lock over an owner's own range replaces that part (upgrade or downgrade), and an
//   owner's adjacent or overlapping locks of the same mode are merged. Unlocking a middle part
//   splits a lock in two.
// - Two locks of different owners conflict when their ranges overlap and either is exclusive.
// - Ranges are [offset, offset + len) with 64-bit offsets; len 0 means "to the end of the file",
//   as does a range whose end would overflow.
// - A blocked request waits in arrival order; when a conflict goes away (unlock, cancel, a
//   client's reboot) every waiter that no longer conflicts is granted and returned, so that the
//   caller can send its GRANTED callback. A waiter never blocks a later request (POSIX).
// - Share reservations: a new share conflicts with another owner's when its access meets the
//   other's deny mode or its deny mode meets the other's access. A second SHARE by one owner on
//   one file replaces the first.
// - Grace: after a restart (all volumes) or a failover (one volume), until the grace period ends
//   only reclaims are granted; other LOCK, TEST and SHARE requests get DeniedGrace. A reclaim
//   after the grace period gets DeniedGrace as well (as Linux's lockd answers): the lock may
//   have gone to another client meanwhile. Unlock, cancel and unshare are always allowed.
// - Hand-over (a planned move of a volume to another node): take_volume() removes a volume's
//   locks, waiters and shares with its grace period, and from then on answers DeniedGrace for
//   that volume (a request that raced the move is retried by its client, by then at the new
//   owner); adopt_volume() at the new owner puts them back as they were. A volume that arrives
//   without its table (a takeover) gets begin_volume_grace() instead, and its clients reclaim.
// - Cost: a file's locks are indexed by range (range_table.h); every table is bounded per file
//   and per client address (LockLimits).
// Invariant: no two granted locks of different owners conflict; no two shares conflict.
#pragma once

#include <compare>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "server/nlm/callback_call.h"
#include "server/nlm/lock_types.h"
#include "server/nlm/range_table.h"

namespace nasd::nlm {

// A blocked request. `fh`, `cookie` and `callback` are the caller's, carried to the GRANTED
// callback unchanged.
struct Waiter {
  Lock lock;
  std::string fh;
  std::string cookie;
  CallbackRoute callback;
};

enum class ShareAccess : uint32_t { None = 0, Read = 1, Write = 2, ReadWrite = 3 };
enum class ShareDeny : uint32_t { None = 0, Read = 1, Write = 2, ReadWrite = 3 };

struct Share {
  FileId file;
  std::string host;  // caller_name
  std::string oh;
  ShareAccess access = ShareAccess::None;
  ShareDeny deny = ShareDeny::None;
  std::string address;  // as LockOwner::address: part of the owner
};

// What one client (by address) and one file may hold: locks + waiters + shares, and the bytes
// they take (their strings: owner and file handles, cookies, names). A request beyond any bound
// gets NoLocks, so that no client can exhaust the server's memory nor make one file's table so
// long that every call on it is slow for everyone else.
struct LockLimits {
  size_t max_entries = size_t{1} << 20;          // over all clients
  size_t max_entries_per_address = size_t{1} << 16;
  size_t max_bytes_per_address = size_t{64} << 20;
  size_t max_entries_per_file = size_t{1} << 12;
  size_t max_bytes_per_file = size_t{16} << 20;
};

enum class LockStatus { Granted, Denied, Blocked, DeniedGrace, NoLocks };

// Everything of one volume, as it leaves a node with the volume and arrives at the next one.
// `grace_left_ms`: what remains of the volume's grace period (a duration: the two nodes' clocks
// need not agree).
struct VolumeLocks {
  std::vector<Lock> locks;
  std::vector<Waiter> waiters;
  std::vector<Share> shares;
  uint64_t grace_left_ms = 0;
  size_t entries() const { return locks.size() + waiters.size() + shares.size(); }
};

struct LockRequest {
  Lock lock;
  bool block = false;    // wait instead of Denied
  bool reclaim = false;  // a lock held before the server restarted or the volume failed over
  std::string fh;        // for a Waiter
  std::string cookie;
  CallbackRoute callback;
};

class LockManager {
 public:
  explicit LockManager(LockLimits limits = {}) : limits_(limits) {}
  // Only the total bounded (the per-client and per-file bounds are that total).
  explicit LockManager(size_t max_entries)
      : limits_{max_entries, max_entries, SIZE_MAX, max_entries, SIZE_MAX} {}

  // TEST: the first lock of another owner that would stand in the way, if any.
  // DeniedGrace (and nullopt) during a grace period.
  LockStatus test(const Lock& probe, uint64_t now_ms, std::optional<Lock>* conflicting) const;
  // LOCK: Granted, Denied (conflict, no block), Blocked (queued as a Waiter), DeniedGrace,
  // NoLocks. A repeated blocked request keeps its one place in the queue.
  LockStatus lock(const LockRequest& request, uint64_t now_ms);
  // UNLOCK: drops the owner's locks inside `range` (splitting where needed). Returns the
  // waiters this granted (only waiters that meet a freed range are looked at, and none when
  // nothing was freed). Unlocking what is not held is not an error.
  std::vector<Waiter> unlock(const FileId& file, const LockOwner& owner, const ByteRange& range);
  // CANCEL: removes the owner's waiting request for exactly this range and mode. False when
  // there was none (it may have been granted meanwhile).
  bool cancel(const Lock& waiting);
  // SHARE / UNSHARE.
  LockStatus share(const Share& share, bool reclaim, uint64_t now_ms);
  void unshare(const FileId& file, const std::string& host, const std::string& oh,
               const std::string& address);
  // FREE_ALL and SM_NOTIFY: everything `client` held or waited for is gone (only the files it
  // has entries in are visited). Returns the waiters of other clients this granted.
  std::vector<Waiter> free_all(const ClientKey& client);
  // Whether `client` holds or waits for anything (its status monitor entry must then stay).
  bool holds(const ClientKey& client) const { return client_files_.count(client) != 0; }
  // Whether `client` holds or waits for anything on `volume`.
  bool holds(const ClientKey& client, uint32_t volume) const;

  // The volume is no longer served here and its table does not go with it (its lease ran out):
  // its locks, waiters and shares are forgotten (the clients reclaim them at the new owner),
  // and requests for it are answered DeniedGrace until it comes back.
  void drop_volume(uint32_t volume);
  // A planned move: the volume's table leaves with it (and requests for it are answered
  // DeniedGrace until it comes back).
  VolumeLocks take_volume(uint32_t volume, uint64_t now_ms);
  // The table of a volume that arrives by a planned move. Every entry must name `volume`, have
  // a non-empty range, and agree with the others (no conflicting locks or shares, no duplicate
  // waiters); the whole table must fit the bound. False (and nothing changed) otherwise: the
  // caller falls back to a grace period and reclaims.
  bool adopt_volume(uint32_t volume, const VolumeLocks& table, uint64_t now_ms);

  // Grace periods end at `until_ms` (the caller's clock); a later call extends, never shortens.
  void begin_grace(uint64_t until_ms);                      // every volume (a restart)
  void begin_volume_grace(uint32_t volume, uint64_t until_ms);  // one volume (a takeover)
  bool in_grace(uint32_t volume, uint64_t now_ms) const;
  // Locks and coverage segments the range index has looked at (for tests of a call's cost).
  uint64_t work() const;

  // For the admin view: when the all-volume grace ends (0 when over), and each volume's.
  uint64_t grace_until(uint64_t now_ms) const { return now_ms < grace_until_ ? grace_until_ : 0; }
  std::map<uint32_t, uint64_t> volume_graces(uint64_t now_ms) const;

  // Everything held and waiting, for `nasd-admin locks`.
  std::vector<Lock> locks() const;
  std::vector<Waiter> waiters() const;
  std::vector<Share> shares() const;
  size_t entries() const { return entries_; }

 private:
  struct Usage {
    size_t entries = 0;
    size_t bytes = 0;
  };
  struct FileState {
    RangeTable locks;
    std::deque<Waiter> waiters;
    std::vector<Share> shares;
    Usage total;                           // locks + waiters + shares, and their bytes
    std::map<ClientKey, Usage> by_client;  // likewise, per client
    bool empty() const { return locks.empty() && waiters.empty() && shares.empty(); }
  };
  // Sets the owner's mode on `lock.range`, replacing what it held there, then merges.
  void apply(const FileId& file, FileState& state, const Lock& lock);
  // Grants the waiters that meet a range in `freed` and no longer conflict, in arrival order.
  std::vector<Waiter> wake(const FileId& file, FileState& state, const std::vector<ByteRange>& freed);
  // Whether `more` new entries of `bytes` bytes for `address` on `state` stay within the limits.
  bool fits(const FileState& state, const std::string& address, size_t more, size_t bytes) const;
  // The counts (the file's, its client's and address's, entries_) for one entry added (+1) or
  // removed (-1); a RangeTable's changes; a whole file's entries (adopted or dropped).
  void count(const FileId& file, FileState& state, const ClientKey& client, size_t bytes, int sign);
  void count(const FileId& file, FileState& state, const RangeTable::Changes& changes);
  void count_file(const FileId& file, const FileState& state, int sign);
  void forget_if_empty(std::map<FileId, FileState>::iterator it);

  const LockLimits limits_;
  size_t entries_ = 0;
  std::map<FileId, FileState> files_;
  std::map<std::string, Usage> by_address_;
  std::map<ClientKey, std::map<FileId, size_t>> client_files_;  // entries per file
  uint64_t grace_until_ = 0;
  std::map<uint32_t, uint64_t> volume_grace_until_;
  std::set<uint32_t> away_;  // taken or dropped, not back yet: DeniedGrace
};

}  // namespace nasd::nlm
