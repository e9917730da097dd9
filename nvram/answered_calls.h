// nvram::AnsweredCalls: the identified client calls (fs/call_identity.h) a volume has answered,
// so that any copy of one gets the first reply instead of running again.
//
// Why here and not only in the RPC layer's duplicate request cache: a call forwarded over the
// interconnect reaches the owner's volume without passing the owner's cache, and copies of one
// client call can reach the owner along different paths -- the client retransmits the same xid
// to the node that took over its address after the forwarding node died (or restarted), which
// forwards it again; and the dead forwarder's copy may still arrive late, from its kernel's
// buffer or the owner's own queue, on a connection no newer session fenced. Running such a copy
// again answers the client wrongly (a REMOVE that worked answers NOENT) or, if it arrives after
// the client's next calls, undoes them (a CREATE arriving after the REMOVE that followed it
// brings the file back). The volume is where every copy meets, whatever node sent it, and the
// journal already holds each identified call with its reply, so the answers survive a restart
// or a takeover (JournalVolume::recover() hands the recorded ones to remember()).
//
// The rule: a call runs only under a Claim, and there is at most one Claim per key at a time. A
// copy that arrives while the call runs waits for it (bounded) and takes its reply; a copy that
// arrives later takes the reply remembered here. Replies with status Jukebox are never
// remembered: they ask the client to try again, and the call did not happen.
//
// The key is the call's identity without the export (which is what the reply said, not which
// call it was) plus the volume op, so a copy is never answered with another op's reply. The most
// recent `capacity` answers are kept (a copy older than that runs again, as one past the
// duplicate request cache's reach does); failures are kept too, in memory only: a failed call
// changed nothing, and its copies can only come from the connections of this owner process.
#pragma once

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <utility>

#include <boost/pool/pool_alloc.hpp>

#include "fs/call/calls.h"
#include "fs/call_identity.h"
#include "util/reusing_fifo.h"

namespace nasd::nvram {

class AnsweredCalls {
 public:
  struct Key {
    std::array<uint8_t, 16> address{};
    uint16_t family = 0, port = 0;
    uint32_t xid = 0, prog = 0, vers = 0, proc = 0;
    uint64_t args_hash = 0;
    fs::call::VolumeOp op = fs::call::VolumeOp::Getattr;
    auto operator<=>(const Key&) const = default;
  };
  static Key key_of(const fs::CallIdentity& identity, fs::call::VolumeOp op);

  // The right to run one call: until it is destroyed, copies of the call wait. Give it the
  // call's reply (answered()) before it ends; the reply is then what every later copy gets.
  class Claim {
   public:
    Claim() = default;
    Claim(Claim&& o) noexcept
        : calls_(std::exchange(o.calls_, nullptr)), key_(o.key_), reply_(std::move(o.reply_)) {}
    Claim& operator=(Claim&& o) noexcept;
    Claim(const Claim&) = delete;
    Claim& operator=(const Claim&) = delete;
    ~Claim() { end(); }
    explicit operator bool() const { return calls_ != nullptr; }
    void answered(const fs::call::VolumeReply& reply) { reply_ = reply; }

   private:
    friend class AnsweredCalls;
    Claim(AnsweredCalls* calls, const Key& key) : calls_(calls), key_(key) {}
    void end();
    AnsweredCalls* calls_ = nullptr;
    Key key_;
    std::optional<fs::call::VolumeReply> reply_;
  };

  // What a call may do: take `answer` (a copy of it was answered), or run holding `claim`; with
  // neither, another copy was still running after `wait` (answer Jukebox: the client retries).
  struct Turn {
    std::optional<fs::call::VolumeReply> answer;
    Claim claim;
  };

  explicit AnsweredCalls(size_t capacity) : capacity_(capacity) {}

  Turn claim(const Key& key, std::chrono::milliseconds wait);
  // Records `reply` as the answer to `key` (recovery: a journalled call with its reply).
  void remember(const Key& key, const fs::call::VolumeReply& reply);
  size_t size() const;

 private:
  void remember_locked(const Key& key, const fs::call::VolumeReply& reply);

  const size_t capacity_;
  mutable std::mutex mu_;
  std::condition_variable ended_;
  // Node-pooled (Boost.Pool) and a FIFO that keeps its storage: a journalled call allocates
  // no tree node and no queue block here.
  std::set<Key, std::less<Key>, boost::fast_pool_allocator<Key>> running_;  // guarded by mu_
  std::map<Key, std::pair<uint64_t, fs::call::VolumeReply>, std::less<Key>,
           boost::fast_pool_allocator<
               std::pair<const Key, std::pair<uint64_t, fs::call::VolumeReply>>>>
      answers_;  // guarded by mu_: serial
  util::ReusingFifo<std::pair<Key, uint64_t>> order_;  // guarded by mu_: oldest first
  uint64_t serial_ = 0;                                               // guarded by mu_
};

}  // namespace nasd::nvram
