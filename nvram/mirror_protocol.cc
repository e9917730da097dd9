#include "nvram/mirror_protocol.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace nasd::nvram::wire {

void append_frame(std::vector<uint8_t>* out, FrameType type, std::span<const uint8_t> body) {
  FrameHeader h{kFrameMagic, kVersion, static_cast<uint16_t>(type),
                static_cast<uint32_t>(body.size()), 0};
  const auto* hp = reinterpret_cast<const uint8_t*>(&h);
  out->insert(out->end(), hp, hp + sizeof h);
  out->insert(out->end(), body.begin(), body.end());
}

void append_u64_frame(std::vector<uint8_t>* out, FrameType type, uint64_t value) {
  append_frame(out, type, {reinterpret_cast<const uint8_t*>(&value), sizeof value});
}

void append_hello(std::vector<uint8_t>* out, const MirrorHello& hello) {
  const uint64_t fields[5] = {hello.uuid, hello.log_size, hello.head, hello.tail, hello.epoch};
  append_frame(out, FrameType::Hello, {reinterpret_cast<const uint8_t*>(fields), sizeof fields});
}

void append_records(std::vector<uint8_t>* out, std::span<const RecordView> records) {
  size_t body = 0;
  for (const auto& r : records) body += r.bytes.size();
  FrameHeader h{kFrameMagic, kVersion, static_cast<uint16_t>(FrameType::Records),
                static_cast<uint32_t>(body), 0};
  const auto* hp = reinterpret_cast<const uint8_t*>(&h);
  out->reserve(out->size() + sizeof h + body);
  out->insert(out->end(), hp, hp + sizeof h);
  for (const auto& r : records) out->insert(out->end(), r.bytes.begin(), r.bytes.end());
}

void append_error(std::vector<uint8_t>* out, const std::string& text) {
  append_frame(out, FrameType::Error, {reinterpret_cast<const uint8_t*>(text.data()), text.size()});
}

void append_tag(std::vector<uint8_t>* out, size_t frame_start, link::FrameSealer* sealer) {
  const link::Tag tag = sealer->seal({std::span<const uint8_t>(*out).subspan(frame_start)});
  out->insert(out->end(), tag.begin(), tag.end());
}

bool parse_u64(const Frame& f, uint64_t* value) {
  if (f.body.size() != sizeof *value) return false;
  std::memcpy(value, f.body.data(), sizeof *value);
  return true;
}

bool parse_hello(const Frame& f, MirrorHello* hello) {
  uint64_t fields[5];
  if (f.type != FrameType::Hello || f.body.size() != sizeof fields) return false;
  std::memcpy(fields, f.body.data(), sizeof fields);
  *hello = MirrorHello{fields[0], fields[1], fields[2], fields[3], fields[4]};
  return true;
}

bool FrameReader::fill(int fd) {
  if (start_ > 0 && start_ == buf_.size()) {
    buf_.clear();
    start_ = 0;
  } else if (start_ > (1u << 20)) {
    buf_.erase(buf_.begin(), buf_.begin() + static_cast<long>(start_));
    start_ = 0;
  }
  const size_t old = buf_.size();
  buf_.resize(old + (256u << 10));
  ssize_t n;
  do {
    n = ::recv(fd, buf_.data() + old, buf_.size() - old, 0);
  } while (n < 0 && errno == EINTR);
  buf_.resize(old + (n > 0 ? static_cast<size_t>(n) : 0));
  return n > 0;
}

FrameReader::Next FrameReader::next(Frame* out) {
  const size_t avail = buf_.size() - start_;
  if (avail < sizeof(FrameHeader)) return Next::NeedMore;
  FrameHeader h;
  std::memcpy(&h, buf_.data() + start_, sizeof h);
  if (h.magic != kFrameMagic) {
    error_ = "bad frame magic";
    return Next::Bad;
  }
  if (h.version != kVersion) {
    error_ = "peer speaks mirror protocol version " + std::to_string(h.version) + ", this is " +
             std::to_string(kVersion);
    return Next::Bad;
  }
  if (h.length > kMaxBody || h.type < 1 || h.type > 6) {
    error_ = "bad frame type or length";
    return Next::Bad;
  }
  const size_t frame_bytes = sizeof h + h.length;
  const size_t tag_bytes = sealed_ ? link::kTagBytes : 0;
  if (avail < frame_bytes + tag_bytes) return Next::NeedMore;
  const uint8_t* frame = buf_.data() + start_;
  if (sealed_ && !opener_.open({std::span<const uint8_t>(frame, frame_bytes)},
                               std::span<const uint8_t>(frame + frame_bytes, tag_bytes))) {
    error_ = "frame fails its tag (forged, replayed or reordered)";
    return Next::Bad;
  }
  out->type = static_cast<FrameType>(h.type);
  out->body.assign(frame + sizeof h, frame + frame_bytes);
  start_ += frame_bytes + tag_bytes;
  return Next::Frame;
}

}  // namespace nasd::nvram::wire
