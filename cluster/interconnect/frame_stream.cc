#include "cluster/interconnect/frame_stream.h"

#include <fcntl.h>
#include <sys/time.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

namespace nasd::interconnect {

ReadStatus read_frame(int fd, const FrameLimits& limits, Frame* out, std::string* error,
                      link::FrameOpener* opener) {
  std::array<uint8_t, kFrameHeaderBytes> head;
  ReadStatus st =
      read_exact(fd, head.data(), head.size(), limits.idle_timeout, limits.stall_timeout, error);
  if (st != ReadStatus::Ok) return st;
  if (!parse_frame_header(head, limits.max_payload, &out->header, error)) {
    return ReadStatus::Error;
  }
  out->payload.resize(out->header.length);
  if (out->header.length > 0) {
    st = read_exact(fd, out->payload.data(), out->payload.size(), limits.stall_timeout,
                    limits.stall_timeout, error);
    if (st == ReadStatus::Eof) {
      *error = "connection closed mid-frame (header without payload)";
      return ReadStatus::Error;
    }
    if (st != ReadStatus::Ok) return st == ReadStatus::Timeout ? ReadStatus::Error : st;
  }
  if (!frame_crc_ok(out->header, out->payload)) {
    *error = "frame CRC mismatch (torn or corrupted frame)";
    return ReadStatus::Error;
  }
  if (opener) {
    link::Tag tag;
    st = read_exact(fd, tag.data(), tag.size(), limits.stall_timeout, limits.stall_timeout, error);
    if (st != ReadStatus::Ok) {
      if (st != ReadStatus::Error) *error = "connection closed or stalled before a frame's tag";
      return ReadStatus::Error;
    }
    if (!opener->open({head, out->payload}, tag)) {
      *error = "frame fails its tag (forged, replayed or reordered)";
      return ReadStatus::Error;
    }
  }
  return ReadStatus::Ok;
}

void FrameReader::make_room(size_t n) {
  if (begin_ > 0) {
    std::copy(buffer_.begin() + begin_, buffer_.begin() + end_, buffer_.begin());
    end_ -= begin_;
    begin_ = 0;
  }
  if (buffer_.size() < std::max(n, kBufferBytes)) buffer_.resize(std::max(n, kBufferBytes));
}

bool FrameReader::wait_in_recv(std::chrono::milliseconds timeout, std::string* error) {
  if (timeout == recv_timeout_) return true;
  if (recv_timeout_ == kTimeoutUnset) {
    // recv() itself waits: the descriptor must block (a non-blocking one would answer EAGAIN
    // at once, read here as a timeout). Checked once per reader.
    const int flags = ::fcntl(fd_, F_GETFL);
    if (flags >= 0 && (flags & O_NONBLOCK) != 0) ::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK);
  }
  // Negative: wait forever, which SO_RCVTIMEO spells 0. Zero never gets here (MSG_DONTWAIT).
  timeval tv{};
  if (timeout.count() > 0) {
    tv.tv_sec = timeout.count() / 1000;
    tv.tv_usec = (timeout.count() % 1000) * 1000;
  }
  if (::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0) {
    *error = std::string("setsockopt(SO_RCVTIMEO): ") + std::strerror(errno);
    return false;
  }
  recv_timeout_ = timeout;
  return true;
}

ReadStatus FrameReader::fill(size_t n, std::chrono::milliseconds first_timeout,
                             std::chrono::milliseconds stall_timeout, std::string* error) {
  if (end_ - begin_ >= n) return ReadStatus::Ok;
  // Room for `n` bytes from begin_: move what is left to the front, grow only when one frame
  // needs more than the buffer (bounded by the caller's max_payload).
  make_room(n);
  const bool had_bytes = end_ > 0;
  while (end_ < n) {
    // The wait is recv's own (SO_RCVTIMEO), not a poll() before it: one system call per
    // wake-up instead of two, on the threads that read every forwarded call and its answer.
    // The timeout is set only when it changes (between frames and within one, it rarely does).
    const auto timeout = end_ == 0 && !had_bytes ? first_timeout : stall_timeout;
    int flags = 0;
    if (timeout.count() == 0) {
      flags = MSG_DONTWAIT;
    } else if (!wait_in_recv(timeout, error)) {
      return ReadStatus::Error;
    }
    ssize_t got = ::recv(fd_, buffer_.data() + end_, buffer_.size() - end_, flags);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (end_ == 0) {
        *error = "timed out waiting for data";
        return ReadStatus::Timeout;
      }
      *error = "peer stalled mid-frame";
      return ReadStatus::Error;
    }
    if (got < 0) {
      *error = std::string("recv: ") + std::strerror(errno);
      return ReadStatus::Error;
    }
    if (got == 0) {
      if (end_ == 0) {
        *error = "connection closed by peer";
        return ReadStatus::Eof;
      }
      *error = "connection closed mid-frame";
      return ReadStatus::Error;
    }
    end_ += static_cast<size_t>(got);
  }
  return ReadStatus::Ok;
}

std::span<const uint8_t> FrameReader::take(size_t n) {
  std::span<const uint8_t> out(buffer_.data() + begin_, n);
  begin_ += n;
  if (begin_ == end_) begin_ = end_ = 0;
  return out;
}

bool FrameReader::has_whole_frame(bool sealed) const {
  const size_t have = end_ - begin_;
  if (have < kFrameHeaderBytes) return false;
  // The length field: u32 little-endian at byte 16 of the header (frame.h).
  const uint8_t* h = buffer_.data() + begin_ + 16;
  const size_t length = uint32_t(h[0]) | uint32_t(h[1]) << 8 | uint32_t(h[2]) << 16 |
                        uint32_t(h[3]) << 24;
  return have >= kFrameHeaderBytes + length + (sealed ? link::kTagBytes : 0);
}

bool FrameReader::bytes_needed(const FrameLimits& limits, bool sealed, size_t* needed,
                               std::string* error) const {
  if (end_ - begin_ < kFrameHeaderBytes) {
    *needed = kFrameHeaderBytes;
    return true;
  }
  FrameHeader header;
  if (!parse_frame_header(std::span<const uint8_t, kFrameHeaderBytes>(buffer_.data() + begin_,
                                                                    kFrameHeaderBytes),
                          limits.max_payload, &header, error))
    return false;
  *needed = kFrameHeaderBytes + header.length + (sealed ? link::kTagBytes : 0);
  return true;
}

ReadStatus FrameReader::receive_available(const FrameLimits& limits, bool sealed,
                                          std::string* error) {
  size_t needed = 0;
  if (!bytes_needed(limits, sealed, &needed, error)) return ReadStatus::Error;
  // A whole frame is waiting: the caller takes it first (next_buffered). This also keeps the
  // buffer from growing for a caller that never takes frames, and the recv below from being
  // given no room (which it would answer like end of file).
  if (end_ - begin_ >= needed) return ReadStatus::Ok;
  make_room(needed);  // bounded: at most a header, max_payload and a tag
  for (;;) {
    const ssize_t got = ::recv(fd_, buffer_.data() + end_, buffer_.size() - end_, MSG_DONTWAIT);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return ReadStatus::Timeout;
    if (got < 0) {
      *error = std::string("recv: ") + std::strerror(errno);
      return ReadStatus::Error;
    }
    if (got == 0) {
      if (end_ == begin_) {
        *error = "connection closed by peer";
        return ReadStatus::Eof;
      }
      *error = "connection closed mid-frame";
      return ReadStatus::Error;
    }
    end_ += static_cast<size_t>(got);
    return ReadStatus::Ok;
  }
}

ReadStatus FrameReader::next_buffered(const FrameLimits& limits, Frame* out, std::string* error,
                                      link::FrameOpener* opener) {
  size_t needed = 0;
  if (!bytes_needed(limits, opener != nullptr, &needed, error)) return ReadStatus::Error;
  if (end_ - begin_ < needed) return ReadStatus::Timeout;
  // A whole frame is buffered: read() takes it without touching the socket (fill() returns at
  // once when the bytes are there).
  return read(limits, out, error, opener);
}

ReadStatus FrameReader::read(const FrameLimits& limits, Frame* out, std::string* error,
                             link::FrameOpener* opener) {
  ReadStatus st = fill(kFrameHeaderBytes, limits.idle_timeout, limits.stall_timeout, error);
  if (st != ReadStatus::Ok) return st;
  std::array<uint8_t, kFrameHeaderBytes> head;
  std::copy_n(buffer_.begin() + begin_, kFrameHeaderBytes, head.begin());
  if (!parse_frame_header(head, limits.max_payload, &out->header, error)) return ReadStatus::Error;
  // Header, payload and (on a sealed link) tag, all bounded by max_payload + constants.
  const size_t whole = kFrameHeaderBytes + out->header.length + (opener ? link::kTagBytes : 0);
  st = fill(whole, limits.stall_timeout, limits.stall_timeout, error);
  if (st != ReadStatus::Ok) {
    if (st != ReadStatus::Error) *error = "connection closed or stalled mid-frame";
    return ReadStatus::Error;
  }
  take(kFrameHeaderBytes);
  std::span<const uint8_t> payload = take(out->header.length);
  out->payload.assign(payload.begin(), payload.end());
  if (!frame_crc_ok(out->header, out->payload)) {
    *error = "frame CRC mismatch (torn or corrupted frame)";
    return ReadStatus::Error;
  }
  if (opener) {
    std::span<const uint8_t> tag = take(link::kTagBytes);
    if (!opener->open({head, out->payload}, tag)) {
      *error = "frame fails its tag (forged, replayed or reordered)";
      return ReadStatus::Error;
    }
  }
  return ReadStatus::Ok;
}

bool send_frame(Socket& socket, MessageType type, uint64_t request_id,
                std::span<const uint8_t> payload, std::string* error) {
  const auto head = encode_frame_header(type, request_id, payload);
  return socket.send_frame_pieces(head, payload, error);
}

Socket::TrySend try_send_frame(Socket& socket, MessageType type, uint64_t request_id,
                               std::span<const uint8_t> payload, std::string* error) {
  const auto head = encode_frame_header(type, request_id, payload);
  return socket.try_send_frame_pieces(head, payload, error);
}

}  // namespace nasd::interconnect
