#include "nvram/tcp_mirror.h"

#include <sys/socket.h>
#include <unistd.h>

#include <exception>
#include <optional>
#include <stdexcept>

#include "util/log.h"
#include "nvram/mirror_protocol.h"
#include "util/net.h"
#include "util/contained_thread.h"

namespace nasd::nvram {

TcpMirror::TcpMirror(const std::string& address, Options options)
    : address_(address), options_(std::move(options)) {
  if (!util::split_host_port(address, &host_, &port_))
    throw std::invalid_argument("mirror address must be host:port, not '" + address + "'");
  options_.credentials.check();
}

TcpMirror::~TcpMirror() { stop(); }

void TcpMirror::start(Listener* listener) {
  listener_ = listener;
  thread_ = util::contained_thread("nvram", "mirror link", [this] { run(); });
}

void TcpMirror::stop() {
  {
    std::lock_guard lk(stop_mu_);
    stop_ = true;
    stop_cv_.notify_all();
  }
  int fd = live_fd_.load();
  if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
  if (thread_.joinable()) thread_.join();
}

void TcpMirror::reset(const std::string& why) {
  int fd = live_fd_.load();
  if (fd >= 0) {
    util::log("nvram").warn("mirror " + address_ + ": dropping the connection (" + why + ")");
    ::shutdown(fd, SHUT_RDWR);
  }
}

void TcpMirror::sleep_backoff(std::chrono::milliseconds d) {
  std::unique_lock lk(stop_mu_);
  stop_cv_.wait_for(lk, d, [this] { return stop_.load(); });
}

bool TcpMirror::send(std::vector<uint8_t>& frame) {
  std::lock_guard lk(send_mu_);
  if (fd_ < 0) return false;
  wire::append_tag(&frame, 0, &sealer_);
  if (util::send_all(fd_, frame.data(), frame.size())) return true;
  ::shutdown(fd_, SHUT_RDWR);  // the reader notices and reports the loss
  fd_ = -1;
  return false;
}

bool TcpMirror::replicate(std::span<const RecordView> records) {
  if (records.empty()) return true;
  thread_local std::vector<uint8_t> frame;
  frame.clear();
  wire::append_records(&frame, records);
  return send(frame);
}

void TcpMirror::trim(uint64_t head) {
  std::vector<uint8_t> frame;
  wire::append_u64_frame(&frame, wire::FrameType::Trim, head);
  send(frame);
}

void TcpMirror::run() {
  auto backoff = options_.retry_min;
  bool reported_unreachable = false;
  while (!stop_) {
    std::string error;
    int fd = util::connect_tcp(host_, port_, options_.connect_timeout, &error, options_.source);
    if (fd < 0) {
      if (!reported_unreachable) {
        util::log("nvram").warn("mirror " + address_ + " unreachable (" + error + "), retrying");
        listener_->mirror_lost(error);
        reported_unreachable = true;
      }
      sleep_backoff(backoff);
      backoff = std::min(backoff * 2, options_.retry_max);
      continue;
    }
    live_fd_ = fd;
    const auto started = std::chrono::steady_clock::now();
    std::string why = serve_connection(fd);
    {
      std::lock_guard lk(send_mu_);
      fd_ = -1;
    }
    live_fd_ = -1;
    ::close(fd);
    if (stop_) break;
    listener_->mirror_lost(why);
    reported_unreachable = true;
    // A link that held for a while retries quickly; one that keeps failing backs off.
    if (std::chrono::steady_clock::now() - started > std::chrono::seconds(5))
      backoff = options_.retry_min;
    sleep_backoff(backoff);
    backoff = std::min(backoff * 2, options_.retry_max);
  }
}

std::string TcpMirror::serve_connection(int fd) {
  std::string error;
  std::optional<link::Session> session;
  try {
    session = link::authenticate_client(fd, link::LinkKind::Mirror, options_.credentials,
                                        options_.peer, options_.hello_timeout, &error);
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (!session) return error;
  std::vector<uint8_t> hello;
  wire::append_hello(&hello, listener_->mirror_hello());
  {
    std::lock_guard lk(send_mu_);
    sealer_ = session->send;
    wire::append_tag(&hello, 0, &sealer_);
  }
  if (!util::send_all(fd, hello.data(), hello.size())) return "sending hello failed";

  wire::FrameReader reader;
  reader.require_tags(session->receive);
  wire::Frame frame;
  bool greeted = false;
  const auto hello_deadline = std::chrono::steady_clock::now() + options_.hello_timeout;
  for (;;) {
    wire::FrameReader::Next n;
    while ((n = reader.next(&frame)) == wire::FrameReader::Next::Frame) {
      uint64_t value = 0;
      if (frame.type == wire::FrameType::HelloAck && !greeted && wire::parse_u64(frame, &value)) {
        greeted = true;
        // The journal fixes its resume point before the first record can go out.
        listener_->mirror_connected(value);
        {
          std::lock_guard lk(send_mu_);
          fd_ = fd;
        }
      } else if (frame.type == wire::FrameType::Ack && greeted && wire::parse_u64(frame, &value)) {
        listener_->mirror_acked(value);
      } else if (frame.type == wire::FrameType::Error) {
        return "partner error: " + std::string(frame.body.begin(), frame.body.end());
      } else {
        return "unexpected frame from partner";
      }
    }
    if (n == wire::FrameReader::Next::Bad) return reader.error();
    if (!greeted) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          hello_deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 || !util::wait_readable(fd, left)) return "no hello reply";
    }
    if (!reader.fill(fd)) return stop_ ? "stopped" : "connection closed";
  }
}

}  // namespace nasd::nvram
