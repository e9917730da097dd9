#include "nvram/mirror_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <exception>
#include <optional>
#include <stdexcept>

#include "util/log.h"
#include "nvram/log_layout.h"
#include "nvram/mirror_protocol.h"
#include "util/net.h"

#include <algorithm>

namespace nasd::nvram {

namespace {

// Log positions above this are refused: far from wrapping, and leaves room for every sum.
constexpr uint64_t kMaxLogPosition = uint64_t{1} << 62;

void store_u64(uint64_t& field, uint64_t value) {
  std::atomic_ref<uint64_t>(field).store(value, std::memory_order_release);
}

uint64_t load_u64(const uint64_t& field) {
  return std::atomic_ref<const uint64_t>(field).load(std::memory_order_acquire);
}

// A walk of store_bounds costs two stores per lap of the log it crosses. A position the primary
// names is bounded only by 2^62, so a far one (a primary that ran long without this mirror, or
// a key holder sending nonsense: the fuzzer found a trim that spun for 20 minutes) is not
// walked to: the caller starts the image afresh there instead (MirrorServer::set_bounds).
constexpr uint64_t kMaxWalkLaps = 64;

bool walk_is_short(const RegionHeader& h, uint64_t log_size, uint64_t head) {
  const uint64_t from = load_u64(h.tail);
  const uint64_t distance = head > from ? head - from : from - head;
  return distance / log_size <= kMaxWalkLaps;
}

// Moves the image's stored [head, tail) to [head, tail) (head <= tail, tail - head <= log_size)
// one 8-byte store at a time, so that every state in between is one Region::open accepts
// (head <= tail, tail - head <= log size): a kill -9 between two stores must never leave a
// mirror image that stops the node from starting again. The fault drill found that one: a trim
// past the stored tail stored head > tail. On the way the image may claim an empty or smaller
// range than it holds (the primary then resends more), never a larger one. Callers keep the
// walk short (walk_is_short).
void store_bounds(RegionHeader& h, uint64_t log_size, uint64_t head, uint64_t tail) {
  const uint64_t stored_head = load_u64(h.head), stored_tail = load_u64(h.tail);
  if (head >= stored_head && head <= stored_tail) {
    store_u64(h.head, head);  // within the stored range: still valid
    store_u64(h.tail, tail);
    return;
  }
  // Empty at the stored tail, walk the empty range to the new head at most a log at a time,
  // then grow it to the new tail.
  uint64_t at = stored_tail;
  store_u64(h.head, at);
  while (at < head) {
    const uint64_t next = std::min(head, at + log_size);
    store_u64(h.tail, next);
    store_u64(h.head, next);
    at = next;
  }
  while (at > head) {
    const uint64_t next = std::max(head, at > log_size ? at - log_size : 0);
    store_u64(h.head, next);
    store_u64(h.tail, next);
    at = next;
  }
  store_u64(h.tail, tail);
}

}  // namespace

MirrorServer::MirrorServer(std::string region_path, DurabilityMode mode,
                           MirrorServerOptions options)
    : path_(std::move(region_path)),
      mode_(mode),
      options_(std::move(options)),
      handshakes_(options_.max_handshakes_per_source, options_.max_handshakes) {
  options_.credentials.check();  // no unauthenticated mirror
  struct stat st{};
  if (stat(path_.c_str(), &st) != 0 || st.st_size == 0) return;
  region_ = Region::open(path_, 0, mode_);
  head_ = region_->header()->head;
  tail_ = persisted_ = scan_log(*region_, head_, head_ + region_->log_size()).end;
  util::log("nvram").info("mirror region " + path_ + " holds records " + std::to_string(head_) + ".." +
           std::to_string(tail_));
}

MirrorServer::~MirrorServer() {
  stop();
  std::list<std::unique_ptr<Connection>> conns;
  {
    std::lock_guard lk(conn_mu_);
    conns.swap(connections_);
  }
  for (auto& c : conns) {
    if (c->thread.joinable()) c->thread.join();
    ::close(c->fd);
  }
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

uint16_t MirrorServer::listen(const std::string& host, uint16_t port) {
  std::string error;
  uint16_t bound = 0;
  listen_fd_ = util::listen_tcp(host, port, &bound, &error);
  if (listen_fd_ < 0) throw std::runtime_error("nasd-mirror: " + error);
  return bound;
}

void MirrorServer::stop() {
  stop_ = true;
  std::lock_guard lk(conn_mu_);
  for (auto& c : connections_) ::shutdown(c->fd, SHUT_RDWR);
  if (listen_fd_ >= 0) ::shutdown(listen_fd_, SHUT_RDWR);
  active_cv_.notify_all();
}

uint64_t MirrorServer::tail() const {
  std::lock_guard lk(mu_);
  return tail_;
}

void MirrorServer::refuse(const std::string& why) {
  ++refused_;
  util::log("nvram").warn("mirror: refused " + why);
}

void MirrorServer::reap_finished() {
  std::list<std::unique_ptr<Connection>> done;
  {
    std::lock_guard lk(conn_mu_);
    for (auto it = connections_.begin(); it != connections_.end();) {
      auto next = std::next(it);
      if ((*it)->finished) done.splice(done.end(), connections_, it);
      it = next;
    }
  }
  // Closed only once its thread is gone, so a stop() never shuts down a reused descriptor.
  for (auto& c : done) {
    c->thread.join();
    ::close(c->fd);
  }
}

void MirrorServer::serve() {
  while (!stop_) {
    reap_finished();
    if (!util::wait_readable(listen_fd_, std::chrono::milliseconds(200))) continue;
    sockaddr_in from{};
    socklen_t from_len = sizeof from;
    int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&from), &from_len, SOCK_CLOEXEC);
    if (fd < 0) continue;
    char addr[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &from.sin_addr, addr, sizeof addr);
    if (options_.address_allowed && !options_.address_allowed(addr)) {
      ::close(fd);
      refuse(std::string("a connection from ") + addr + " (not in allowed_peers)");
      continue;
    }
    timeval tv{};
    tv.tv_sec = options_.send_timeout.count() / 1000;
    tv.tv_usec = (options_.send_timeout.count() % 1000) * 1000;
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    std::lock_guard lk(conn_mu_);
    if (stop_ || !handshakes_.try_take(addr)) {
      ::close(fd);
      if (!stop_) refuse(std::string("a connection from ") + addr + " (too many handshakes from it, or at once)");
      continue;
    }
    auto conn = std::make_unique<Connection>();
    conn->fd = fd;
    conn->source = addr;
    Connection* raw = conn.get();
    conn->thread = std::thread([this, raw] { connection_thread(raw); });
    connections_.push_back(std::move(conn));
  }
  // stop(): every connection was shut down; wait for their threads.
  std::list<std::unique_ptr<Connection>> conns;
  {
    std::lock_guard lk(conn_mu_);
    conns.swap(connections_);
  }
  for (auto& c : conns) {
    c->thread.join();
    ::close(c->fd);
  }
}

void MirrorServer::connection_thread(Connection* conn) {
  // No exception may end the process from here (a bad hello once did, through ftruncate).
  try {
    serve_authenticated(conn->fd, conn->source);
  } catch (const std::exception& e) {
    util::log("nvram").warn(std::string("mirror: dropping primary: ") + e.what());
  } catch (...) {
    util::log("nvram").warn("mirror: dropping primary: unknown exception");
  }
  ::shutdown(conn->fd, SHUT_RDWR);
  conn->finished = true;
}

void MirrorServer::serve_authenticated(int fd, const std::string& source) {
  std::string error;
  std::optional<link::Session> session;
  try {
    const std::string& primary = options_.primary;
    session = link::authenticate_server(
        fd, link::LinkKind::Mirror, options_.credentials,
        [&primary](const std::string& name) { return primary.empty() || name == primary; },
        options_.handshake_timeout, &error);
  } catch (...) {
    handshakes_.release(source);
    throw;
  }
  handshakes_.release(source);
  uint64_t ticket = 0;
  {
    std::unique_lock lk(conn_mu_);
    if (!session) {
      lk.unlock();
      if (!stop_) refuse("a connection: " + error);
      return;
    }
    // The newest authenticated primary wins: the one being served is dropped (it is the same
    // primary's older connection, whose loss it has noticed or will).
    ticket = ++active_ticket_;
    if (active_fd_ >= 0) ::shutdown(active_fd_, SHUT_RDWR);
    active_cv_.wait(lk, [&] { return active_fd_ < 0 || stop_ || active_ticket_ != ticket; });
    if (stop_ || active_ticket_ != ticket) return;
    active_fd_ = fd;
  }
  try {
    serve_connection(fd, *session);
  } catch (...) {
    std::lock_guard lk(conn_mu_);
    active_fd_ = -1;
    active_cv_.notify_all();
    throw;
  }
  std::lock_guard lk(conn_mu_);
  active_fd_ = -1;
  active_cv_.notify_all();
}

void MirrorServer::serve_connection(int fd, link::Session& session) {
  wire::FrameReader reader;
  reader.require_tags(session.receive);
  wire::Frame frame;
  bool greeted = false;
  auto send = [&](std::vector<uint8_t>& out) {
    wire::append_tag(&out, 0, &session.send);
    return util::send_all(fd, out.data(), out.size());
  };
  auto refuse = [&](const std::string& why) {
    // Only an authenticated primary gets this far, so it may hear why.
    util::log("nvram").warn("mirror: dropping primary " + session.peer + ": " + why);
    std::vector<uint8_t> out;
    wire::append_error(&out, why);
    send(out);
  };
  while (!stop_) {
    if (!reader.fill(fd)) return;
    bool got_records = false;
    wire::FrameReader::Next n;
    while ((n = reader.next(&frame)) == wire::FrameReader::Next::Frame) {
      std::vector<uint8_t> reply;
      std::string err = on_frame(frame, &greeted, &got_records, &reply);
      if (!err.empty()) return refuse(err);
      if (!reply.empty() && !send(reply)) return;
    }
    if (n == wire::FrameReader::Next::Bad) return refuse(reader.error());
    // One ack per batch of frames that arrived together: the partner's group commit.
    if (got_records && !persist_and_ack(fd, &session.send)) return;
  }
}

std::string MirrorServer::on_frame(const wire::Frame& frame, bool* greeted, bool* got_records,
                                   std::vector<uint8_t>* reply) {
  if (frame.type == wire::FrameType::Hello) {
    MirrorHello hello;
    uint64_t resume = 0;
    std::string err =
        wire::parse_hello(frame, &hello) ? handle_hello(hello, &resume) : "malformed hello";
    if (!err.empty()) return err;
    wire::append_u64_frame(reply, wire::FrameType::HelloAck, resume);
    *greeted = true;
    return "";
  }
  if (!*greeted) return "expected hello";
  if (frame.type == wire::FrameType::Records) {
    std::string err = handle_records(frame.body);
    if (err.empty()) *got_records = true;
    return err;
  }
  if (frame.type == wire::FrameType::Trim) {
    uint64_t head;
    if (!wire::parse_u64(frame, &head)) return "malformed trim";
    return handle_trim(head);
  }
  return "unexpected frame type " + std::to_string(static_cast<int>(frame.type));
}

std::string MirrorServer::handle_hello(const MirrorHello& hello, uint64_t* resume) {
  if (hello.log_size < kMinRegionSize - kRegionHeaderSize ||
      hello.log_size % kRegionHeaderSize != 0 || hello.head > hello.tail ||
      hello.tail - hello.head > hello.log_size || hello.tail > kMaxLogPosition)
    return "hello describes an impossible log";
  if (hello.log_size > options_.max_log_size)
    return "hello asks for a " + std::to_string(hello.log_size) + " byte log, more than this " +
           "mirror's limit of " + std::to_string(options_.max_log_size);
  std::lock_guard lk(mu_);
  const RegionHeader* h = region_ ? region_->header() : nullptr;
  if (h == nullptr || h->uuid != hello.uuid || h->log_size != hello.log_size) {
    // Only an authenticated primary gets here: a new identity means it made a new region, and
    // the records of its old one can never be asked for again.
    if (h != nullptr)
      util::log("nvram").warn("mirror: primary region changed (uuid " + std::to_string(h->uuid) + " -> " +
               std::to_string(hello.uuid) + "); the old copy held records " +
               std::to_string(head_) + ".." + std::to_string(tail_));
    region_.reset();
    region_ = Region::create(path_, hello.log_size + kRegionHeaderSize, mode_, hello.uuid,
                             hello.head);
    util::log("nvram").info("mirror: copying primary region " + std::to_string(hello.uuid) + " (" +
             std::to_string(hello.log_size) + " byte log) into " + path_);
    head_ = tail_ = persisted_ = hello.head;
  }
  // What we hold that the primary still has: [max(head), min(tail)).
  if (tail_ < hello.head || head_ > hello.tail) {
    head_ = tail_ = hello.head;  // nothing useful; start over at its head
  } else {
    head_ = std::max(head_, hello.head);
    tail_ = std::min(tail_, hello.tail);  // beyond its tail the primary will write anew
  }
  persisted_ = tail_;
  set_bounds(tail_);
  region_->persist_header();
  *resume = tail_;
  return "";
}

void MirrorServer::set_bounds(uint64_t tail) {
  RegionHeader& h = *region_->header();
  if (walk_is_short(h, region_->log_size(), head_)) {
    store_bounds(h, region_->log_size(), head_, tail);
    return;
  }
  // Only reached when nothing held is still wanted (head_ is laps beyond the stored tail, or
  // far behind it for a primary that started over): an empty image at head_ says just that.
  const uint64_t uuid = h.uuid, size = region_->log_size() + kRegionHeaderSize;
  util::log("nvram").info("mirror: starting the copy afresh at position " + std::to_string(head_));
  region_.reset();
  region_ = Region::create(path_, size, mode_, uuid, head_);
  tail_ = persisted_ = head_;
}

std::string MirrorServer::handle_records(const std::vector<uint8_t>& body) {
  std::lock_guard lk(mu_);
  const uint64_t log_size = region_->log_size();
  const uint64_t largest = max_payload(log_size);
  size_t at = 0;
  while (at < body.size()) {
    RecordHeader h;
    if (body.size() - at < sizeof h) return "truncated record header";
    std::memcpy(&h, body.data() + at, sizeof h);
    RecordView rec;
    if (decode_record(body.data() + at, body.size() - at, h.pos, &rec) != DecodeResult::Ok)
      return "record at position " + std::to_string(h.pos) + " fails validation";
    const size_t stored = rec.bytes.size();
    if (h.length > largest)
      return "record at position " + std::to_string(h.pos) + " is larger than this log allows";
    const uint64_t footprint = record_footprint(h.length);
    if (h.pos < tail_) {
      at += stored;  // a resend of something we hold
      continue;
    }
    // Where the journal itself would put it: at the tail when it fits in the rest of the lap,
    // else at the next lap's start. Any other position (also the tail, for a record that does
    // not fit there) would be copied past the end of the log area.
    if (place_record(tail_, footprint, log_size) != h.pos)
      return "gap: expected a record at " + std::to_string(tail_) + ", got " +
             std::to_string(h.pos);
    if (h.pos + footprint - head_ > log_size) {
      // The primary only reuses space it trimmed, so this is a trim we missed (sent while the
      // link was being re-established): drop the records the new one overwrites.
      const uint64_t need = h.pos + footprint - log_size;
      head_ = walk_headers(*region_, head_, tail_,
                           [need](const RecordHeader& r) { return r.pos < need; });
      store_bounds(*region_->header(), log_size, head_, std::max(head_, load_u64(region_->header()->tail)));
    }
    if (h.pos != tail_) write_skip(*region_, tail_, h.pos, h.epoch);
    uint8_t* dst = region_->at(h.pos);
    std::memcpy(dst + sizeof(RecordHeader), body.data() + at + sizeof(RecordHeader), h.length);
    std::memset(dst + stored, 0, footprint - stored);
    std::memcpy(dst, &h, sizeof h);  // header last, as the primary does
    tail_ = h.pos + footprint;
    at += stored;
  }
  return "";
}

std::string MirrorServer::handle_trim(uint64_t head) {
  std::lock_guard lk(mu_);
  if (head <= head_) return "";
  if (head > kMaxLogPosition) return "trim to " + std::to_string(head) + ", past any log position";
  if (head > tail_) tail_ = persisted_ = head;  // the primary moved past what we hold
  head_ = head;
  // The stored tail is the last acknowledged one and may lag tail_: never store a head past it.
  set_bounds(std::max(head_, load_u64(region_->header()->tail)));
  region_->persist_header();
  return "";
}

bool MirrorServer::persist_and_ack(int fd, link::FrameSealer* sealer) {
  uint64_t end;
  {
    std::lock_guard lk(mu_);
    if (!region_->persist_log(persisted_, tail_)) {
      util::log("nvram").error("mirror: msync of " + path_ + " failed; not acknowledging");
      return false;
    }
    store_bounds(*region_->header(), region_->log_size(), head_, tail_);
    region_->persist_header();
    persisted_ = end = tail_;
  }
  std::vector<uint8_t> out;
  wire::append_u64_frame(&out, wire::FrameType::Ack, end);
  wire::append_tag(&out, 0, sealer);
  return util::send_all(fd, out.data(), out.size());
}

}  // namespace nasd::nvram
