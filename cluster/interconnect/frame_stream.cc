#include "cluster/interconnect/frame_stream.h"

#include <array>

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

bool send_frame(Socket& socket, MessageType type, uint64_t request_id,
                std::span<const uint8_t> payload, std::string* error) {
  std::vector<uint8_t> bytes = encode_frame(type, request_id, payload);
  return socket.send_all(bytes, error);
}

}  // namespace nasd::interconnect
