// The accepting side of the interconnect: listens for peer nodes, authenticates each one with
// the cluster key (util/link_handshake.h; a connection that fails is closed without a word),
// seals every frame after that (util/link_seal.h), checks the peer's hello (cluster name,
// protocol version, the name it proved) and hands every request frame to the handler registered for
// its message type. One reader thread per connection keeps the code blocking and simple; a
// handler may answer later from another thread (through its Responder), which is what lets
// replies go back out of order while slow calls run.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "cluster/interconnect/frame_stream.h"
#include "cluster/interconnect/link_session.h"
#include "cluster/interconnect/socket.h"
#include "util/handshake_slots.h"
#include "util/link_handshake.h"

namespace nasd::interconnect {

// Answers one request. Copyable and usable from any thread; the connection stays open as long
// as a Responder refers to it. If the connection dropped meanwhile, the answer is discarded
// (the caller already failed the request).
class Responder {
 public:
  Responder(std::shared_ptr<Socket> socket, uint64_t request_id)
      : socket_(std::move(socket)), request_id_(request_id) {}
  void reply(std::span<const uint8_t> payload) const;
  void unsupported() const;
  uint64_t request_id() const { return request_id_; }

 private:
  std::shared_ptr<Socket> socket_;
  uint64_t request_id_;
};

struct IncomingRequest {
  std::string peer_node;  // proven by the link handshake (and repeated by its hello)
  MessageType type;
  std::vector<uint8_t> payload;
  Responder responder;
  // The connection's session; null only for requests made up by tests.
  std::shared_ptr<LinkSession> session = nullptr;

  // A handler that runs the request later (on a worker) calls this right before it does and
  // drops the request unanswered when the result is false: a newer connection from the same
  // node was admitted meanwhile, and the sender has given up on this one (link_session.h).
  LinkSession::Call begin() const {
    return session ? session->begin() : LinkSession::Call::without_session();
  }
};

// Runs on the connection's reader thread: must not block for long (hand slow work to a pool,
// as VolumeServer does), or that peer's later requests wait behind it. The reader holds the
// request's session call (IncomingRequest::begin) while the handler runs; work handed to a pool
// must begin its own call when it starts.
using RequestHandler = std::function<void(IncomingRequest)>;

struct InterconnectServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;  // 0: any free port (see port())
  std::string cluster_name;
  std::string local_node;
  // The cluster key and this node's name (= local_node); required.
  link::Credentials credentials;
  // Node names that may connect (the configured peers); empty: any holder of the key.
  std::vector<std::string> peers;
  // Called with the source address (IPv4 text) of every new connection; false closes it at
  // once (`[cluster] allowed_peers`, by default the addresses of the cluster config's nodes).
  // Unset: every address may try the handshake.
  std::function<bool(const std::string&)> address_allowed;
  // Why connections were refused, for the node's log (optional).
  std::function<void(const std::string&)> log;
  // Covers the link handshake and the hello: a connection that says nothing is closed.
  std::chrono::milliseconds hello_timeout{2000};
  // How long a new connection's hello waits for the calls still running from an earlier
  // connection of the same peer (link_session.h) before it is refused. Below the connecting
  // side's hello timeout (PeerClientOptions, 2 s), so that it hears the refusal.
  std::chrono::milliseconds drain_timeout{1000};
  // Connections still in their link handshake at once, from one source address and in all;
  // more are closed on arrival, so a flood of unauthenticated connections costs at most
  // max_handshakes threads for hello_timeout each, and one host's flood fills only its own
  // slots (util/handshake_slots.h): a real peer reconnecting from its address still gets in.
  size_t max_handshakes_per_source = 4;
  size_t max_handshakes = 64;
  std::chrono::milliseconds send_timeout{5000};
  FrameLimits limits;
};

class InterconnectServer {
 public:
  explicit InterconnectServer(InterconnectServerOptions options);
  ~InterconnectServer();  // stop()
  InterconnectServer(const InterconnectServer&) = delete;
  InterconnectServer& operator=(const InterconnectServer&) = delete;

  // Register before start(). Requests of a type with no handler get an Unsupported answer.
  void set_handler(MessageType type, RequestHandler handler);
  // Binds and starts accepting. Throws std::runtime_error naming the address on failure.
  void start();
  // Closes the listener and every connection and joins their threads. Idempotent.
  void stop();

  uint16_t port() const { return port_; }
  // A node that joined the running cluster (a [member] added to the config, `nasd-admin
  // join`) may connect from now on, as the configured peers may. Thread-safe.
  void admit_peer(const std::string& name);
  size_t connection_count() const;
  // Connections closed because they did not authenticate (or came from a refused address).
  uint64_t refused_count() const { return refused_.load(); }
  // Connections fenced because a newer one from the same peer and channel was admitted.
  uint64_t fenced_count() const { return sessions_.fenced_count(); }

 private:
  struct Connection {
    std::shared_ptr<Socket> socket;
    std::thread thread;
    std::string source;  // the remote address, holding a handshake slot until authenticated
    std::atomic<bool> finished{false};
  };

  void accept_loop();
  void serve(Connection* conn);
  void serve_authenticated(Connection* conn);
  // The admitted session, or null (refused: the reason was sent).
  std::shared_ptr<LinkSession> hello(const std::shared_ptr<Socket>& socket, FrameReader& reader,
                                     link::FrameOpener* opener, const std::string& proven_peer);
  void refuse(const std::string& why);
  void reap_finished();

  const InterconnectServerOptions options_;
  std::map<MessageType, RequestHandler> handlers_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> refused_{0};
  util::HandshakeSlots handshakes_;
  std::thread accept_thread_;
  mutable std::mutex mu_;
  std::list<std::unique_ptr<Connection>> connections_;
  LinkSessions sessions_;
  std::vector<std::string> admitted_;  // guarded by mu_: peers that joined after the start
};

}  // namespace nasd::interconnect
