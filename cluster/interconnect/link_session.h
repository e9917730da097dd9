// Fencing of stale interconnect connections on the owner's side.
//
// Why: a forwarding node answers NFS3ERR_JUKEBOX for a call it sent but gave up on (deadline
// passed, link broke), and the NFS client then issues the call again with a NEW xid, so no reply
// cache can tie the two. The first copy may still reach the owner afterwards: TCP retransmits it
// once a partition heals, it waited in the owner's socket buffer while the owner was stopped, or
// in the owner's worker queue. Run then, after the re-issued CREATE and the REMOVE that followed
// it, it brings the removed file back.
//
// The rule that prevents it: every connection a forwarder opens is a session named in its hello
// (the node proven by the link handshake, a channel name, the forwarder's incarnation and a
// generation that grows with each connection it opens). When a newer session of the same node and
// channel is admitted, every older one is fenced: no call of it starts from then on (frames not
// yet read are never dispatched, requests queued for a worker are dropped unanswered), and the
// new session's hello is answered only once none of the older sessions' calls is still running
// (bounded; past the bound the hello is refused and the forwarder tries again). The forwarder
// (PeerClient) answers JUKEBOX for a call it sent only after the connection that carried it is
// aborted, and re-issued calls can only go out on a connection whose hello was answered. So a
// call the client was told to retry either ran before the retry was sent, or never runs.
//
// A session holding no calls and no connection simply expires (weak references only).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "cluster/interconnect/socket.h"

namespace nasd::interconnect {

// Who opened a connection, and how new it is among that forwarder's connections.
struct SessionId {
  std::string peer;         // proven by the link handshake
  std::string channel;      // one forwarder may keep independent links (a name per link)
  uint64_t incarnation = 0;  // the forwarder's link object (random, new after a restart)
  uint64_t generation = 0;   // grows with each connection that link object opens
};

class LinkSession {
 public:
  // A call of this session that has started: while any exists, a newer session's hello waits.
  class Call {
   public:
    Call() = default;
    Call(Call&& o) noexcept
        : session_(std::exchange(o.session_, nullptr)), may_run_(std::exchange(o.may_run_, false)) {}
    Call& operator=(Call&& o) noexcept;
    Call(const Call&) = delete;
    Call& operator=(const Call&) = delete;
    ~Call();
    // True when the call may run; false: its session was fenced, drop the request unanswered.
    explicit operator bool() const { return may_run_; }
    // For a request that came with no session (a handler called directly, as tests do).
    static Call without_session() { return Call(nullptr, true); }

   private:
    friend class LinkSession;
    Call(LinkSession* session, bool may_run) : session_(session), may_run_(may_run) {}
    LinkSession* session_ = nullptr;  // counted in its running calls until this ends
    bool may_run_ = false;
  };

  // `socket` is shut down when the session is fenced (its reader stops, late replies vanish).
  LinkSession(SessionId id, std::shared_ptr<Socket> socket)
      : id_(std::move(id)), socket_(std::move(socket)) {}

  const SessionId& id() const { return id_; }
  // Starts a call; an empty Call (false) once the session is fenced: drop the request.
  Call begin();
  bool fenced() const;
  size_t running() const;

 private:
  friend class LinkSessions;
  void end();
  // No call begins from now on, and the connection is shut down.
  void fence();
  // Waits until no call of this session runs; false if `deadline` came first.
  bool wait_idle(std::chrono::steady_clock::time_point deadline);

  const SessionId id_;
  const std::shared_ptr<Socket> socket_;
  mutable std::mutex mu_;
  std::condition_variable idle_cv_;
  bool fenced_ = false;
  size_t running_ = 0;
};

// The sessions of one InterconnectServer, by peer and channel.
class LinkSessions {
 public:
  // Admits `session` as the newest of its peer and channel, or says why not: a session older
  // than one already admitted from the same incarnation is refused (a hello that arrived late);
  // every other session of that peer and channel is fenced, and admission waits up to `drain`
  // for their running calls to end (refused if they do not: the forwarder tries again).
  std::string admit(const std::shared_ptr<LinkSession>& session, std::chrono::milliseconds drain);
  // Sessions fenced so far (for tests and status).
  uint64_t fenced_count() const;

 private:
  struct Link {
    uint64_t incarnation = 0;
    uint64_t generation = 0;
    std::vector<std::weak_ptr<LinkSession>> sessions;  // admitted, maybe fenced, not yet gone
  };

  mutable std::mutex mu_;
  std::map<std::pair<std::string, std::string>, Link> links_;
  uint64_t fenced_ = 0;
};

}  // namespace nasd::interconnect
