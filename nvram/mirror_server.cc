#include "nvram/mirror_server.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <stdexcept>

#include "util/log.h"
#include "nvram/log_layout.h"
#include "nvram/mirror_protocol.h"
#include "util/net.h"

namespace nasd::nvram {

namespace {

void store_u64(uint64_t& field, uint64_t value) {
  std::atomic_ref<uint64_t>(field).store(value, std::memory_order_release);
}

}  // namespace

MirrorServer::MirrorServer(std::string region_path, DurabilityMode mode)
    : path_(std::move(region_path)), mode_(mode) {
  struct stat st{};
  if (stat(path_.c_str(), &st) != 0 || st.st_size == 0) return;
  region_ = Region::open(path_, 0, mode_);
  head_ = region_->header()->head;
  tail_ = persisted_ = scan_log(*region_, head_, head_ + region_->log_size()).end;
  util::log("nvram").info("mirror region " + path_ + " holds records " + std::to_string(head_) + ".." +
           std::to_string(tail_));
}

MirrorServer::~MirrorServer() {
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
  int c = conn_fd_.load();
  if (c >= 0) ::shutdown(c, SHUT_RDWR);
  if (listen_fd_ >= 0) ::shutdown(listen_fd_, SHUT_RDWR);
}

uint64_t MirrorServer::tail() const {
  std::lock_guard lk(mu_);
  return tail_;
}

void MirrorServer::serve() {
  while (!stop_) {
    if (!util::wait_readable(listen_fd_, std::chrono::milliseconds(200))) continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    conn_fd_ = fd;
    serve_connection(fd);
    conn_fd_ = -1;
    ::close(fd);
  }
}

void MirrorServer::serve_connection(int fd) {
  wire::FrameReader reader;
  wire::Frame frame;
  bool greeted = false;
  auto refuse = [&](const std::string& why) {
    util::log("nvram").warn("mirror: dropping primary: " + why);
    std::vector<uint8_t> out;
    wire::append_error(&out, why);
    util::send_all(fd, out.data(), out.size());
  };
  while (!stop_) {
    if (!reader.fill(fd)) return;
    bool got_records = false;
    wire::FrameReader::Next n;
    while ((n = reader.next(&frame)) == wire::FrameReader::Next::Frame) {
      if (frame.type == wire::FrameType::Hello) {
        MirrorHello hello;
        uint64_t resume = 0;
        std::string err = wire::parse_hello(frame, &hello) ? handle_hello(hello, &resume)
                                                           : "malformed hello";
        if (!err.empty()) return refuse(err);
        std::vector<uint8_t> out;
        wire::append_u64_frame(&out, wire::FrameType::HelloAck, resume);
        if (!util::send_all(fd, out.data(), out.size())) return;
        greeted = true;
      } else if (!greeted) {
        return refuse("expected hello");
      } else if (frame.type == wire::FrameType::Records) {
        std::string err = handle_records(frame.body);
        if (!err.empty()) return refuse(err);
        got_records = true;
      } else if (frame.type == wire::FrameType::Trim) {
        uint64_t head;
        if (!wire::parse_u64(frame, &head)) return refuse("malformed trim");
        handle_trim(head);
      } else {
        return refuse("unexpected frame type " + std::to_string(static_cast<int>(frame.type)));
      }
    }
    if (n == wire::FrameReader::Next::Bad) return refuse(reader.error());
    // One ack per batch of frames that arrived together: the partner's group commit.
    if (got_records && !persist_and_ack(fd)) return;
  }
}

std::string MirrorServer::handle_hello(const MirrorHello& hello, uint64_t* resume) {
  if (hello.log_size == 0 || hello.log_size % kRegionHeaderSize != 0 || hello.head > hello.tail ||
      hello.tail - hello.head > hello.log_size)
    return "hello describes an impossible log";
  std::lock_guard lk(mu_);
  const RegionHeader* h = region_ ? region_->header() : nullptr;
  if (h == nullptr || h->uuid != hello.uuid || h->log_size != hello.log_size) {
    region_.reset();
    region_ = Region::create(path_, hello.log_size + kRegionHeaderSize, mode_, hello.uuid);
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
  store_u64(region_->header()->head, head_);
  store_u64(region_->header()->tail, tail_);
  region_->persist_header();
  *resume = tail_;
  return "";
}

std::string MirrorServer::handle_records(const std::vector<uint8_t>& body) {
  std::lock_guard lk(mu_);
  const uint64_t log_size = region_->log_size();
  size_t at = 0;
  while (at < body.size()) {
    RecordHeader h;
    if (body.size() - at < sizeof h) return "truncated record header";
    std::memcpy(&h, body.data() + at, sizeof h);
    RecordView rec;
    if (decode_record(body.data() + at, body.size() - at, h.pos, &rec) != DecodeResult::Ok)
      return "record at position " + std::to_string(h.pos) + " fails validation";
    const size_t stored = rec.bytes.size();
    const uint64_t footprint = record_footprint(h.length);
    if (h.pos < tail_) {
      at += stored;  // a resend of something we hold
      continue;
    }
    if (h.pos != tail_ && place_record(tail_, footprint, log_size) != h.pos)
      return "gap: expected a record at " + std::to_string(tail_) + ", got " +
             std::to_string(h.pos);
    if (h.pos + footprint - head_ > log_size) {
      // The primary only reuses space it trimmed, so this is a trim we missed (sent while the
      // link was being re-established): drop the records the new one overwrites.
      const uint64_t need = h.pos + footprint - log_size;
      head_ = walk_headers(*region_, head_, tail_,
                           [need](const RecordHeader& r) { return r.pos < need; });
      store_u64(region_->header()->head, head_);
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

void MirrorServer::handle_trim(uint64_t head) {
  std::lock_guard lk(mu_);
  if (head <= head_) return;
  if (head > tail_) tail_ = persisted_ = head;  // the primary moved past what we hold
  head_ = head;
  store_u64(region_->header()->head, head_);
  region_->persist_header();
}

bool MirrorServer::persist_and_ack(int fd) {
  uint64_t end;
  {
    std::lock_guard lk(mu_);
    if (!region_->persist_log(persisted_, tail_)) {
      util::log("nvram").error("mirror: msync of " + path_ + " failed; not acknowledging");
      return false;
    }
    store_u64(region_->header()->tail, tail_);
    region_->persist_header();
    persisted_ = end = tail_;
  }
  std::vector<uint8_t> out;
  wire::append_u64_frame(&out, wire::FrameType::Ack, end);
  return util::send_all(fd, out.data(), out.size());
}

}  // namespace nasd::nvram
