#include "cluster/interconnect/peer_client.h"

#include <exception>
#include <optional>
#include <random>

#include "cluster/interconnect/hello.h"
#include "util/contained_thread.h"

namespace nasd::interconnect {
namespace {

int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

const char* call_error_name(CallError e) {
  switch (e) {
    case CallError::None: return "ok";
    case CallError::NotConnected: return "not connected";
    case CallError::Timeout: return "timed out";
    case CallError::Disconnected: return "disconnected";
    case CallError::Unsupported: return "unsupported by peer";
    case CallError::TooLarge: return "request too large";
    case CallError::Stopped: return "stopped";
  }
  return "unknown";
}

PeerClient::PeerClient(PeerClientOptions options) : options_(std::move(options)) {}

PeerClient::~PeerClient() { stop(); }

void PeerClient::start() {
  options_.credentials.check();  // no unauthenticated interconnect
  std::lock_guard lock(mu_);
  if (thread_.joinable() || stopping_) return;
  thread_ = util::contained_thread("cluster", "peer link", [this] { run(); });
}

void PeerClient::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    if (socket_) socket_->shutdown();
    if (connecting_) connecting_->shutdown();
  }
  state_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  fail_all(CallError::Stopped);
}

bool PeerClient::connected() const {
  std::lock_guard lock(mu_);
  return socket_ != nullptr;
}

bool PeerClient::wait_connected(std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  return state_cv_.wait_for(lock, timeout, [&] { return socket_ != nullptr || stopping_; }) &&
         socket_ != nullptr;
}

std::string PeerClient::last_error() const {
  std::lock_guard lock(mu_);
  return last_error_;
}

uint64_t PeerClient::connections_made() const {
  std::lock_guard lock(mu_);
  return connections_made_;
}

CallOutcome PeerClient::call(MessageType type, std::vector<uint8_t> payload,
                             std::chrono::milliseconds timeout) {
  if (payload.size() > options_.limits.max_payload) return {CallError::TooLarge, {}};
  uint64_t id = next_id_.fetch_add(1);
  auto slot = std::make_shared<Pending>();
  std::shared_ptr<Socket> socket;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return {CallError::Stopped, {}};
    if (!socket_) return {CallError::NotConnected, {}};
    socket = socket_;
    // Registered before sending so a fast reply always finds its slot.
    pending_[id] = slot;
  }
  std::string error;
  if (!send_frame(*socket, type, id, payload, &error)) {
    // send_all shut the socket down; the reader fails the other calls and reconnects.
    complete(id, {CallError::Disconnected, {}});
  }
  const int64_t sent_ns = steady_ns();
  std::unique_lock lock(mu_);
  if (!slot->cv.wait_for(lock, timeout, [&] { return slot->done; })) {
    pending_.erase(id);  // a late reply is dropped: nobody waits for it any more
    if (last_frame_ns_.load() < sent_ns) socket->shutdown();  // silent peer: reconnect
    return {CallError::Timeout, {}};
  }
  return std::move(slot->outcome);
}

void PeerClient::complete(uint64_t id, CallOutcome outcome) {
  std::lock_guard lock(mu_);
  auto it = pending_.find(id);
  if (it == pending_.end()) return;
  it->second->outcome = std::move(outcome);
  it->second->done = true;
  it->second->cv.notify_one();
  pending_.erase(it);
}

void PeerClient::fail_all(CallError error) {
  std::lock_guard lock(mu_);
  for (auto& [id, slot] : pending_) {
    slot->outcome = {error, {}};
    slot->done = true;
    slot->cv.notify_one();
  }
  pending_.clear();
}

void PeerClient::run() {
  std::chrono::milliseconds backoff = options_.backoff_initial;
  std::mt19937 jitter(std::random_device{}());
  for (;;) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
    }
    std::string error;
    link::FrameOpener opener;
    std::shared_ptr<Socket> socket;
    try {
      socket = connect_and_hello(&error, &opener);
    } catch (const std::exception& e) {  // never out of this thread
      error = e.what();
    }
    if (!socket) {
      {
        std::lock_guard lock(mu_);
        last_error_ = error;
      }
      // Jitter keeps two nodes that lost each other at once from retrying in lockstep.
      auto delay = backoff + std::chrono::milliseconds(jitter() % (backoff.count() / 2 + 1));
      wait_backoff(delay);
      backoff = std::min(backoff * 2, options_.backoff_max);
      continue;
    }
    backoff = options_.backoff_initial;
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      socket_ = socket;
      ++connections_made_;
      last_frame_ns_ = steady_ns();  // the hello answer
    }
    state_cv_.notify_all();
    read_replies(*socket, &opener);
    {
      std::lock_guard lock(mu_);
      socket_.reset();
    }
    fail_all(CallError::Disconnected);
  }
}

std::shared_ptr<Socket> PeerClient::connect_and_hello(std::string* error,
                                                      link::FrameOpener* opener) {
  int fd = connect_tcp(options_.host, options_.port, options_.connect_timeout, error,
                       options_.source_host);
  if (fd < 0) return nullptr;
  auto socket = std::make_shared<Socket>(fd, options_.send_timeout);
  {
    // Published so stop() can interrupt a hello the peer never answers.
    std::lock_guard lock(mu_);
    if (stopping_) return nullptr;
    connecting_ = socket;
  }
  std::shared_ptr<Socket> result;
  std::optional<link::Session> session =
      link::authenticate_client(socket->fd(), link::LinkKind::Interconnect, options_.credentials,
                                options_.expected_peer, options_.hello_timeout, error);
  if (session) {
    socket->seal_with(session->send);
    *opener = session->receive;
    result = hello(socket, opener, error);
  } else {
    *error = options_.host + ":" + std::to_string(options_.port) + ": " + *error;
  }
  std::lock_guard lock(mu_);
  connecting_.reset();
  return stopping_ ? nullptr : result;
}

std::shared_ptr<Socket> PeerClient::hello(std::shared_ptr<Socket> socket, link::FrameOpener* opener,
                                          std::string* error) {
  Hello ours{kProtocolVersion, options_.cluster_name, options_.local_node};
  if (!send_frame(*socket, MessageType::Hello, 0, encode_hello(ours), error)) return nullptr;
  FrameLimits hello_limits = options_.limits;
  hello_limits.idle_timeout = options_.hello_timeout;
  Frame frame;
  if (read_frame(socket->fd(), hello_limits, &frame, error, opener) != ReadStatus::Ok) {
    *error = "hello with " + options_.host + ":" + std::to_string(options_.port) + ": " + *error;
    return nullptr;
  }
  if (frame.header.type == MessageType::HelloRefused) {
    *error = "peer refused connection: " +
             std::string(frame.payload.begin(), frame.payload.end());
    return nullptr;
  }
  Hello theirs;
  if (frame.header.type != MessageType::HelloAccepted ||
      !decode_hello(frame.payload, &theirs, error)) {
    if (error->empty()) *error = "peer did not answer the hello";
    return nullptr;
  }
  *error = hello_mismatch(ours, theirs, options_.expected_peer);
  if (!error->empty()) return nullptr;
  return socket;
}

void PeerClient::read_replies(Socket& socket, link::FrameOpener* opener) {
  for (;;) {
    Frame frame;
    std::string error;
    if (read_frame(socket.fd(), options_.limits, &frame, &error, opener) != ReadStatus::Ok) {
      std::lock_guard lock(mu_);
      last_error_ = stopping_ ? "stopped" : error;
      return;
    }
    last_frame_ns_ = steady_ns();
    switch (frame.header.type) {
      case MessageType::Reply:
        complete(frame.header.request_id, {CallError::None, std::move(frame.payload)});
        break;
      case MessageType::Unsupported:
        complete(frame.header.request_id, {CallError::Unsupported, {}});
        break;
      default: {
        // The server side never starts requests on this connection: the stream is confused.
        std::lock_guard lock(mu_);
        last_error_ = "unexpected message type " +
                      std::to_string(static_cast<int>(frame.header.type)) + " from peer";
        socket.shutdown();
        return;
      }
    }
  }
}

void PeerClient::wait_backoff(std::chrono::milliseconds delay) {
  std::unique_lock lock(mu_);
  state_cv_.wait_for(lock, delay, [&] { return stopping_; });
}

}  // namespace nasd::interconnect
