#include "cluster/interconnect/interconnect_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <exception>
#include <stdexcept>

#include "cluster/interconnect/hello.h"
#include "util/contained_thread.h"

namespace nasd::interconnect {

void Responder::reply(std::span<const uint8_t> payload) const {
  std::string error;
  send_frame(*socket_, MessageType::Reply, request_id_, payload, &error);
}

void Responder::unsupported() const {
  std::string error;
  send_frame(*socket_, MessageType::Unsupported, request_id_, {}, &error);
}

InterconnectServer::InterconnectServer(InterconnectServerOptions options)
    : options_(std::move(options)),
      handshakes_(options_.max_handshakes_per_source, options_.max_handshakes) {}

InterconnectServer::~InterconnectServer() { stop(); }

void InterconnectServer::set_handler(MessageType type, RequestHandler handler) {
  handlers_[type] = std::move(handler);
}

void InterconnectServer::start() {
  options_.credentials.check();  // no unauthenticated interconnect
  std::string error;
  listen_fd_ = listen_tcp(options_.host, options_.port, &port_, &error);
  if (listen_fd_ < 0) throw std::runtime_error("interconnect: " + error);
  accept_thread_ = util::contained_thread("cluster", "interconnect accept", [this] { accept_loop(); });
}

void InterconnectServer::stop() {
  if (stopping_.exchange(true)) return;
  if (listen_fd_ >= 0) ::shutdown(listen_fd_, SHUT_RDWR);  // wakes accept()
  if (accept_thread_.joinable()) accept_thread_.join();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  std::list<std::unique_ptr<Connection>> conns;
  {
    std::lock_guard lock(mu_);
    conns.swap(connections_);
  }
  for (auto& c : conns) c->socket->shutdown();
  for (auto& c : conns) c->thread.join();
}

size_t InterconnectServer::connection_count() const {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const auto& c : connections_) n += c->finished ? 0 : 1;
  return n;
}

void InterconnectServer::accept_loop() {
  while (!stopping_) {
    sockaddr_in from{};
    socklen_t from_len = sizeof from;
    int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&from), &from_len, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (stopping_) return;
      // Out of descriptors or similar: back off instead of spinning.
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    reap_finished();
    char text[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &from.sin_addr, text, sizeof text);
    if (options_.address_allowed && !options_.address_allowed(text)) {
      ::close(fd);
      refuse(std::string("connection from ") + text + " (not in allowed_peers)");
      continue;
    }
    if (!handshakes_.try_take(text)) {
      ::close(fd);
      refuse(std::string("a connection from ") + text + " (too many handshakes from it, or at once)");
      continue;
    }
    auto conn = std::make_unique<Connection>();
    conn->source = text;
    conn->socket = std::make_shared<Socket>(fd, options_.send_timeout);
    Connection* raw = conn.get();
    std::lock_guard lock(mu_);
    if (stopping_) return;  // the new socket closes with `conn`
    conn->thread = util::contained_thread("cluster", "interconnect connection", [this, raw] { serve(raw); });
    connections_.push_back(std::move(conn));
  }
}

void InterconnectServer::reap_finished() {
  std::list<std::unique_ptr<Connection>> done;
  {
    std::lock_guard lock(mu_);
    for (auto it = connections_.begin(); it != connections_.end();) {
      auto next = std::next(it);
      if ((*it)->finished) done.splice(done.end(), connections_, it);
      it = next;
    }
  }
  for (auto& c : done) c->thread.join();
}

void InterconnectServer::refuse(const std::string& why) {
  ++refused_;
  if (options_.log) options_.log("interconnect: refused " + why);
}

std::shared_ptr<LinkSession> InterconnectServer::hello(const std::shared_ptr<Socket>& socket,
                                                       FrameReader& reader,
                                                       link::FrameOpener* opener,
                                                       const std::string& proven_peer) {
  FrameLimits limits = options_.limits;
  limits.idle_timeout = options_.hello_timeout;
  Frame frame;
  std::string error;
  if (reader.read(limits, &frame, &error, opener) != ReadStatus::Ok) return nullptr;
  Hello ours{kProtocolVersion, options_.cluster_name, options_.local_node};
  Hello theirs;
  std::string refusal;
  std::shared_ptr<LinkSession> session;
  if (frame.header.type != MessageType::Hello) {
    refusal = "first frame must be a hello";
  } else if (frame.header.version != kProtocolVersion) {
    refusal = "protocol version " + std::to_string(frame.header.version) +
              " not supported by node '" + options_.local_node + "' (speaks version " +
              std::to_string(kProtocolVersion) + ")";
  } else if (!decode_hello(frame.payload, &theirs, &error)) {
    refusal = error;
  } else {
    refusal = hello_mismatch(ours, theirs, proven_peer);
    if (refusal.empty() && theirs.incarnation == 0) refusal = "hello names no session";
  }
  if (refusal.empty()) {
    // Older connections of this peer are fenced, and their running calls have ended, before
    // this one is accepted: nothing sent on them can run after what is sent on this one.
    session = std::make_shared<LinkSession>(
        SessionId{proven_peer, theirs.channel, theirs.incarnation, theirs.generation}, socket);
    const uint64_t fenced_before = sessions_.fenced_count();
    refusal = sessions_.admit(session, options_.drain_timeout);
    const uint64_t fenced = sessions_.fenced_count() - fenced_before;
    if (fenced != 0 && options_.log)
      options_.log("interconnect: a new connection from " + proven_peer + " fenced " +
                   std::to_string(fenced) + " earlier one(s): their calls not yet started never run");
    if (!refusal.empty()) {
      if (options_.log) options_.log("interconnect: refused a connection from " + proven_peer + ": " + refusal);
      session.reset();
    }
  }
  if (!refusal.empty()) {
    // Only a holder of the cluster key gets this far, so it may learn why.
    std::vector<uint8_t> text(refusal.begin(), refusal.end());
    send_frame(*socket, MessageType::HelloRefused, frame.header.request_id, text, &error);
    return nullptr;
  }
  if (!send_frame(*socket, MessageType::HelloAccepted, frame.header.request_id,
                  encode_hello(ours), &error))
    return nullptr;
  return session;
}

void InterconnectServer::serve(Connection* conn) {
  // No exception may leave a connection thread: it would end the process.
  try {
    serve_authenticated(conn);
  } catch (const std::exception& e) {
    if (options_.log) options_.log(std::string("interconnect: connection dropped: ") + e.what());
  } catch (...) {
    if (options_.log) options_.log("interconnect: connection dropped: unknown exception");
  }
  conn->socket->shutdown();
  conn->finished = true;
}

void InterconnectServer::admit_peer(const std::string& name) {
  std::lock_guard lock(mu_);
  if (std::find(admitted_.begin(), admitted_.end(), name) == admitted_.end()) admitted_.push_back(name);
}

void InterconnectServer::serve_authenticated(Connection* conn) {
  Socket& socket = *conn->socket;
  std::string error;
  const auto& peers = options_.peers;
  auto accept_peer = [this, &peers](const std::string& name) {
    if (peers.empty() || std::find(peers.begin(), peers.end(), name) != peers.end()) return true;
    std::lock_guard lock(mu_);
    return std::find(admitted_.begin(), admitted_.end(), name) != admitted_.end();
  };
  std::optional<link::Session> session;
  try {
    session = link::authenticate_server(socket.fd(), link::LinkKind::Interconnect,
                                        options_.credentials, accept_peer, options_.hello_timeout,
                                        &error);
  } catch (...) {
    handshakes_.release(conn->source);
    throw;
  }
  handshakes_.release(conn->source);
  if (!session) {
    if (!stopping_) refuse("a connection: " + error);
    return;
  }
  socket.seal_with(session->send);
  link::FrameOpener opener = session->receive;
  const std::string peer = session->peer;
  FrameReader reader(socket.fd());
  std::shared_ptr<LinkSession> admitted = hello(conn->socket, reader, &opener, peer);
  if (!admitted) return;
  // While more requests are already buffered, the answers given meanwhile (on this thread, or
  // by the handlers' pools) are held and leave in one write once the burst is handled: never
  // past the point where this thread would wait for the socket.
  bool batching = false;
  for (;;) {
    Frame frame;
    if (reader.read(options_.limits, &frame, &error, &opener) != ReadStatus::Ok) break;
    // Fenced: a newer connection of this peer was admitted, and the peer has given up on
    // every call sent on this one, so none may start (link_session.h).
    LinkSession::Call running = admitted->begin();
    if (!running) break;
    const bool more = reader.has_whole_frame(/*sealed=*/true);
    if (more && !batching) socket.begin_batch();
    batching = batching || more;
    Responder responder(conn->socket, frame.header.request_id);
    auto it = handlers_.find(frame.header.type);
    if (it == handlers_.end()) {
      responder.unsupported();
    } else {
      it->second(IncomingRequest{peer, frame.header.type, std::move(frame.payload), responder, admitted});
    }
    if (batching && !more) {
      socket.end_batch();
      batching = false;
    }
  }
  if (batching) socket.end_batch();
}

}  // namespace nasd::interconnect
