// The connecting side of an interconnect link: one TCP connection to one peer node, kept up by
// a background thread that connects, authenticates with the cluster key (the peer must prove
// it is `expected_peer`), says hello over the sealed link, reads replies and, when the connection breaks,
// fails everything in flight and reconnects with exponential backoff.
//
// Requests carry a fresh 64-bit id and are matched to their replies by it, however these are
// ordered: many are in flight on the one link at once (pipelining), and frames that queue up
// behind a send under way leave together in one write (Socket's batching). A caller either
// waits (call) or hands over a completion (call_async) that the link's reader thread runs with
// the reply, the link's failure or the deadline; that thread also times calls out (it wakes at
// least every kSweepInterval), so no thread has to wait for a forwarded call. A request is
// never retried here: the peer may have executed it, and only the NFS client (through its own
// retransmission) may repeat it.
//
// Giving up on a request is final (link_session.h): before a request that may change state (any
// but a heartbeat) is failed for its deadline, the connection that carried it is aborted (reset,
// its unsent bytes discarded), and every connection's hello names a session that grows with each
// connection, so the peer fences the older ones and lets none of their calls start, nor answers
// the new hello while one still runs. A caller told "timed out" or "disconnected" can therefore
// re-issue the request knowing that the first copy either ran before the re-issued one was
// sent, or never runs.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "cluster/interconnect/call_channel.h"
#include "cluster/interconnect/frame_stream.h"
#include "cluster/interconnect/socket.h"
#include "util/link_handshake.h"

namespace nasd::interconnect {

struct PeerClientOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  // This node's own address: the connection leaves from it (empty: the kernel's choice).
  std::string source_host = "";
  std::string cluster_name;
  std::string local_node;
  std::string expected_peer;  // the peer's node name; it must prove the key under this name
  // Which of this node's links to the peer this is: the peer fences older connections of the
  // same node and channel (link_session.h). One PeerClient per peer and channel.
  std::string channel = "main";
  link::Credentials credentials;  // the cluster key and this node's name; required
  std::chrono::milliseconds connect_timeout{1000};
  std::chrono::milliseconds hello_timeout{2000};
  std::chrono::milliseconds backoff_initial{50};
  std::chrono::milliseconds backoff_max{2000};
  std::chrono::milliseconds send_timeout{5000};
  FrameLimits limits;
};

class PeerClient : public CallChannel {
 public:
  explicit PeerClient(PeerClientOptions options);
  ~PeerClient() override;  // stop()
  PeerClient(const PeerClient&) = delete;
  PeerClient& operator=(const PeerClient&) = delete;

  void start();
  // Fails in-flight calls with Stopped and joins the background thread. Idempotent.
  void stop();

  // Fails fast with NotConnected while the link is down (the caller answers Jukebox and the NFS
  // client retries) rather than queueing behind a reconnect. A call that times out aborts the
  // connection first unless it is a heartbeat (see above); a heartbeat's timeout does too when
  // not a single frame arrived from the peer during its whole wait: the peer is hung or gone
  // without a FIN, and later calls should fail fast instead of each waiting.
  CallOutcome call(MessageType type, std::vector<uint8_t> payload,
                   std::chrono::milliseconds timeout) override;
  // As call(), without waiting: `done` runs on the reader thread (or here, when the call fails
  // before it is sent), exactly once. It must not block.
  void call_async(MessageType type, std::vector<uint8_t> payload,
                  std::chrono::milliseconds timeout, Completion done) override;

  // As call_async, never waiting: false (nothing sent, `done` dropped) while the link is down or
  // its socket has no room; see CallChannel::try_call_async.
  bool try_call_async(MessageType type, std::vector<uint8_t> payload,
                      std::chrono::milliseconds timeout, Completion done) override;

  static constexpr std::chrono::milliseconds kSweepInterval{50};
  // Calls sent and not yet answered, failed or timed out.
  size_t in_flight() const;
  // Frames this link sent and the writes that carried them (0 while not connected).
  uint64_t frames_sent() const;
  uint64_t writes() const;

  bool connected() const;
  bool wait_connected(std::chrono::milliseconds timeout) const;
  // Why the last connection attempt or connection failed (for logs and admin status).
  std::string last_error() const;
  // Incremented on every successful hello; tests and status use it to see reconnects.
  uint64_t connections_made() const;
  // Connections aborted because a request on them passed its deadline.
  uint64_t timeout_aborts() const;

 private:
  struct Pending {
    Completion done;
    int64_t sent_ns = 0;
    int64_t deadline_ns = 0;
    bool may_change_state = true;  // a late run could undo later calls: abort on timeout
  };

  void run();
  std::shared_ptr<Socket> connect_and_hello(std::string* error, link::FrameOpener* opener,
                                            std::unique_ptr<FrameReader>* reader);
  std::shared_ptr<Socket> hello(std::shared_ptr<Socket> socket, link::FrameOpener* opener,
                                FrameReader* reader, std::string* error);
  void read_replies(Socket& socket, link::FrameOpener* opener, FrameReader* reader);
  // Sends the request and registers `done`; 0 when it failed at once (done already ran).
  uint64_t start_call(MessageType type, std::vector<uint8_t> payload,
                      std::chrono::milliseconds timeout, Completion done);
  void complete(uint64_t id, CallOutcome outcome);
  void fail_all(CallError error);
  // Fails the calls whose deadline passed; first aborts the connection when one of them may
  // change state or when the peer sent nothing during its wait.
  void sweep_timeouts(Socket& socket);
  // Aborts the current connection (if any) before a request sent on it is failed.
  void abort_connection();
  void wait_backoff(std::chrono::milliseconds delay);

  const PeerClientOptions options_;
  mutable std::mutex mu_;
  mutable std::condition_variable state_cv_;
  std::shared_ptr<Socket> socket_;      // set while connected
  std::shared_ptr<Socket> connecting_;  // set during the hello exchange
  std::map<uint64_t, Pending> pending_;
  // The counters of the connection last dropped (the socket itself is released at once, so
  // that its close resets the connection).
  uint64_t dropped_frames_sent_ = 0;
  uint64_t dropped_writes_ = 0;
  std::string last_error_;
  uint64_t connections_made_ = 0;
  uint64_t timeout_aborts_ = 0;
  const uint64_t incarnation_;  // in every hello: this link object (never 0)
  uint64_t generation_ = 0;     // in every hello: grows with each connection attempt
  bool stopping_ = false;
  std::atomic<uint64_t> next_id_{1};
  std::atomic<int64_t> last_frame_ns_{0};  // steady clock, when the peer last sent anything
  std::thread thread_;
};

}  // namespace nasd::interconnect
