#include "cluster/interconnect/peer_client.h"

#include <exception>
#include <optional>
#include <random>

#include "cluster/interconnect/hello.h"
#include "util/contained_thread.h"

namespace nasd::interconnect {
namespace {

uint64_t random_incarnation() {
  std::random_device rd;
  uint64_t v = 0;
  while (v == 0) v = (uint64_t(rd()) << 32) | rd();
  return v;
}

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

PeerClient::PeerClient(PeerClientOptions options)
    : options_(std::move(options)), incarnation_(random_incarnation()) {}

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
    if (socket_) socket_->abort();
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

uint64_t PeerClient::timeout_aborts() const {
  std::lock_guard lock(mu_);
  return timeout_aborts_;
}

CallOutcome PeerClient::call(MessageType type, std::vector<uint8_t> payload,
                             std::chrono::milliseconds timeout) {
  struct Waiter {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    CallOutcome outcome;
  };
  auto w = std::make_shared<Waiter>();
  uint64_t id = start_call(type, std::move(payload), timeout, [w](CallOutcome outcome) {
    std::lock_guard lock(w->mu);
    w->outcome = std::move(outcome);
    w->done = true;
    w->cv.notify_one();
  });
  std::unique_lock lock(w->mu);
  // The reader times the call out; the margin only guards against a reader that never runs.
  if (!w->cv.wait_for(lock, timeout + 4 * kSweepInterval, [&] { return w->done; })) {
    lock.unlock();
    // Given up on: the connection that carried it goes first, as in sweep_timeouts.
    if (type != MessageType::Heartbeat) abort_connection();
    complete(id, {CallError::Timeout, {}});
    lock.lock();
    w->cv.wait(lock, [&] { return w->done; });  // complete() or the reader has answered it
  }
  return std::move(w->outcome);
}

void PeerClient::call_async(MessageType type, std::vector<uint8_t> payload,
                            std::chrono::milliseconds timeout, Completion done) {
  start_call(type, std::move(payload), timeout, std::move(done));
}

bool PeerClient::try_call_async(MessageType type, std::vector<uint8_t> payload,
                                std::chrono::milliseconds timeout, Completion done) {
  if (payload.size() > options_.limits.max_payload) return false;
  const uint64_t id = next_id_.fetch_add(1);
  std::shared_ptr<Socket> socket;
  {
    std::lock_guard lock(mu_);
    if (stopping_ || !socket_) return false;
    socket = socket_;
    const int64_t now = steady_ns();
    pending_[id] = Pending{std::move(done), now,
                           now + std::chrono::duration_cast<std::chrono::nanoseconds>(timeout).count()};
  }
  std::string error;
  switch (try_send_frame(*socket, type, id, payload, &error)) {
    case Socket::TrySend::Sent:
      return true;
    case Socket::TrySend::Failed:
      complete(id, {CallError::Disconnected, {}});
      return true;
    case Socket::TrySend::NotNow:
      break;
  }
  std::lock_guard lock(mu_);
  // Gone already: the link failed (fail_all) or the sweep ran meanwhile, and `done` ran.
  return pending_.erase(id) == 0;
}

uint64_t PeerClient::start_call(MessageType type, std::vector<uint8_t> payload,
                                std::chrono::milliseconds timeout, Completion done) {
  if (payload.size() > options_.limits.max_payload) {
    done({CallError::TooLarge, {}});
    return 0;
  }
  uint64_t id = next_id_.fetch_add(1);
  std::shared_ptr<Socket> socket;
  CallError refused = CallError::None;
  {
    std::lock_guard lock(mu_);
    refused = stopping_ ? CallError::Stopped : !socket_ ? CallError::NotConnected : CallError::None;
    if (refused == CallError::None) {
      socket = socket_;
      const int64_t now = steady_ns();
      // Registered before sending so a fast reply always finds its slot.
      pending_[id] = Pending{std::move(done), now,
                             now + std::chrono::duration_cast<std::chrono::nanoseconds>(timeout).count(),
                             type != MessageType::Heartbeat};
    }
  }
  if (refused != CallError::None) {
    done({refused, {}});
    return 0;
  }
  std::string error;
  if (!send_frame(*socket, type, id, payload, &error)) {
    // The socket is shut down; the reader fails the other calls and reconnects.
    complete(id, {CallError::Disconnected, {}});
  }
  return id;
}

void PeerClient::complete(uint64_t id, CallOutcome outcome) {
  Completion done;
  {
    std::lock_guard lock(mu_);
    auto it = pending_.find(id);
    if (it == pending_.end()) return;  // answered, failed or timed out already
    done = std::move(it->second.done);
    pending_.erase(it);
  }
  done(std::move(outcome));
}

void PeerClient::fail_all(CallError error) {
  std::map<uint64_t, Pending> failed;
  {
    std::lock_guard lock(mu_);
    failed.swap(pending_);
  }
  for (auto& [id, p] : failed) p.done({error, {}});
}

void PeerClient::sweep_timeouts(Socket& socket) {
  const int64_t now = steady_ns();
  std::vector<Completion> expired;
  bool abort = false;
  {
    std::lock_guard lock(mu_);
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (it->second.deadline_ns > now) {
        ++it;
        continue;
      }
      // The caller is about to be told to try again, so the request must never run after what
      // it sends next: the connection that carried it is aborted first, and the peer admits the
      // next connection only after fencing this one (link_session.h). A heartbeat may run late
      // harmlessly; but not a single frame from the peer during the call's whole wait means it
      // is hung or gone without a FIN, and later calls should fail fast instead of each waiting.
      if (it->second.may_change_state || last_frame_ns_.load() < it->second.sent_ns) abort = true;
      expired.push_back(std::move(it->second.done));
      it = pending_.erase(it);
    }
    if (abort) {
      ++timeout_aborts_;
      socket_.reset();  // new calls fail fast (NotConnected) until the next hello
    }
  }
  if (abort) socket.abort();
  for (auto& done : expired) done({CallError::Timeout, {}});
}

void PeerClient::abort_connection() {
  std::shared_ptr<Socket> socket;
  {
    std::lock_guard lock(mu_);
    socket.swap(socket_);
    if (socket) ++timeout_aborts_;
  }
  if (socket) socket->abort();
}

size_t PeerClient::in_flight() const {
  std::lock_guard lock(mu_);
  return pending_.size();
}

uint64_t PeerClient::frames_sent() const {
  std::lock_guard lock(mu_);
  return socket_ ? socket_->frames_sent() : dropped_frames_sent_;
}

uint64_t PeerClient::writes() const {
  std::lock_guard lock(mu_);
  return socket_ ? socket_->writes() : dropped_writes_;
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
    std::unique_ptr<FrameReader> reader;
    try {
      socket = connect_and_hello(&error, &opener, &reader);
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
    read_replies(*socket, &opener, reader.get());
    {
      std::lock_guard lock(mu_);
      socket_.reset();
      dropped_frames_sent_ = socket->frames_sent();
      dropped_writes_ = socket->writes();
    }
    // Reset, not closed gracefully: the kernel must not go on retransmitting requests the
    // peer never got (after a partition heals they would arrive after the callers, told
    // "disconnected", re-issued them). Released here, so the close follows at once.
    socket->abort();
    socket.reset();
    reader.reset();
    fail_all(CallError::Disconnected);
  }
}

std::shared_ptr<Socket> PeerClient::connect_and_hello(std::string* error,
                                                      link::FrameOpener* opener,
                                                      std::unique_ptr<FrameReader>* reader) {
  int fd = connect_tcp(options_.host, options_.port, options_.connect_timeout, error,
                       options_.source_host);
  if (fd < 0) return nullptr;
  auto socket = std::make_shared<Socket>(fd, options_.send_timeout);
  // Never a graceful close, not even the kernel's when this process is killed (socket.h).
  socket->reset_when_closed();
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
    *reader = std::make_unique<FrameReader>(socket->fd());
    result = hello(socket, opener, reader->get(), error);
  } else {
    *error = options_.host + ":" + std::to_string(options_.port) + ": " + *error;
  }
  std::lock_guard lock(mu_);
  connecting_.reset();
  return stopping_ ? nullptr : result;
}

std::shared_ptr<Socket> PeerClient::hello(std::shared_ptr<Socket> socket, link::FrameOpener* opener,
                                          FrameReader* reader, std::string* error) {
  Hello ours{kProtocolVersion, options_.cluster_name, options_.local_node,
             options_.channel, incarnation_, ++generation_};
  if (!send_frame(*socket, MessageType::Hello, 0, encode_hello(ours), error)) return nullptr;
  FrameLimits hello_limits = options_.limits;
  hello_limits.idle_timeout = options_.hello_timeout;
  Frame frame;
  if (reader->read(hello_limits, &frame, error, opener) != ReadStatus::Ok) {
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

void PeerClient::read_replies(Socket& socket, link::FrameOpener* opener, FrameReader* reader) {
  // Wakes at least every kSweepInterval to time calls out, even while the peer says nothing.
  FrameLimits limits = options_.limits;
  limits.idle_timeout = kSweepInterval;
  int64_t last_sweep = steady_ns();
  for (;;) {
    Frame frame;
    std::string error;
    const ReadStatus st = reader->read(limits, &frame, &error, opener);
    const int64_t now = steady_ns();
    if (now - last_sweep >= std::chrono::nanoseconds(kSweepInterval).count()) {
      sweep_timeouts(socket);
      last_sweep = now;
    }
    if (st == ReadStatus::Timeout) continue;
    if (st != ReadStatus::Ok) {
      std::lock_guard lock(mu_);
      last_error_ = stopping_ ? "stopped" : error;
      return;
    }
    last_frame_ns_ = now;
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
