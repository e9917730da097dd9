// Wire format between a journal (TcpMirror) and its partner (nasd-mirror / MirrorServer).
// Every message is a frame: a 16-byte header {magic "NVMF", version, type, body length,
// reserved} followed by the body; integers little-endian.
//
//   primary -> partner   Hello    {uuid, log_size, head, tail, epoch}      at every connect
//   partner -> primary   HelloAck {resume}    "I hold every record before resume"
//   primary -> partner   Records  {record, record, ...}  complete records, in log order
//   primary -> partner   Trim     {head}      records before head are no longer needed
//   partner -> primary   Ack      {end}       every record before end is held durably
//   either              Error    {text}      then the sender closes the connection
// A version mismatch is answered with Error and a close, so a mixed-version pair fails loudly.
//
// Before the first frame both sides run the link handshake (util/link_handshake.h, kind
// Mirror) with the cluster key; a connection that fails it is closed without a word. After it
// every frame is followed by its 32-byte tag (util/link_seal.h), so only the authenticated
// primary's frames, in its order, are ever taken.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "nvram/mirror.h"
#include "util/link_seal.h"

namespace nasd::nvram::wire {

constexpr uint32_t kFrameMagic = 0x464d564e;  // "NVMF"
constexpr uint16_t kVersion = 1;
constexpr uint32_t kMaxBody = 64u << 20;

enum class FrameType : uint16_t { Hello = 1, HelloAck = 2, Records = 3, Trim = 4, Ack = 5, Error = 6 };

struct FrameHeader {
  uint32_t magic;
  uint16_t version;
  uint16_t type;
  uint32_t length;
  uint32_t reserved;
};
static_assert(sizeof(FrameHeader) == 16);

struct Frame {
  FrameType type;
  std::vector<uint8_t> body;
};

void append_frame(std::vector<uint8_t>* out, FrameType type, std::span<const uint8_t> body);
void append_u64_frame(std::vector<uint8_t>* out, FrameType type, uint64_t value);
void append_hello(std::vector<uint8_t>* out, const MirrorHello& hello);
void append_records(std::vector<uint8_t>* out, std::span<const RecordView> records);
void append_error(std::vector<uint8_t>* out, const std::string& text);
// Appends the tag of the frame that starts at `frame_start` in `*out` (the last frame added).
void append_tag(std::vector<uint8_t>* out, size_t frame_start, link::FrameSealer* sealer);

bool parse_u64(const Frame& f, uint64_t* value);
bool parse_hello(const Frame& f, MirrorHello* hello);

// Splits a byte stream into frames.
class FrameReader {
 public:
  // From now on every frame must carry the next tag of `opener`'s direction.
  void require_tags(link::FrameOpener opener) { opener_ = opener; sealed_ = true; }
  // Reads once from `fd` (blocking). False on EOF or a read error.
  bool fill(int fd);
  enum class Next { Frame, NeedMore, Bad };
  // Extracts the next complete frame; Bad (with error()) on a malformed stream.
  Next next(Frame* out);
  const std::string& error() const { return error_; }

 private:
  std::vector<uint8_t> buf_;
  size_t start_ = 0;
  bool sealed_ = false;
  link::FrameOpener opener_;
  std::string error_;
};

}  // namespace nasd::nvram::wire
