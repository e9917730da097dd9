// Integrity of every frame on an authenticated cluster link (interconnect, NVRAM mirror).
// After the handshake (link_handshake.h) each direction has its own 32-byte key, derived from
// the cluster key and both sides' fresh nonces. Every frame is followed by a 32-byte tag:
//
//   tag = HMAC-SHA256(direction key, u64 sequence number (little-endian) | frame bytes)
//
// The sequence number is not sent: each side counts the frames of its direction from 0, so a
// replayed, reordered, dropped or reflected frame (the other direction has another key), or one
// from another connection (other nonces, other key), fails its tag and the connection is
// dropped. The link stays readable on the wire (no encryption); see cluster/README.md.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>

#include "util/hmac_sha256.h"

namespace nasd::link {

inline constexpr size_t kTagBytes = 32;
using Tag = std::array<uint8_t, kTagBytes>;
using DirectionKey = std::array<uint8_t, 32>;

// HMAC-SHA256 over the concatenation of `pieces`.
Tag hmac_sha256(std::span<const uint8_t> key, std::initializer_list<std::span<const uint8_t>> pieces);

// HMAC-SHA256 already keyed with a direction key (util/hmac_sha256.h): the key schedule is paid
// once per connection, and a frame's tag allocates nothing.
class KeyedMac {
 public:
  KeyedMac() = default;
  explicit KeyedMac(const DirectionKey& key);
  // HMAC(key, u64 sequence | pieces).
  Tag tag(uint64_t sequence, std::initializer_list<std::span<const uint8_t>> pieces) const;

 private:
  std::optional<util::HmacSha256> keyed_;
};

// The sending side of one direction. Not thread-safe: the caller serializes sends (and must
// write the frames in the order they were sealed).
class FrameSealer {
 public:
  FrameSealer() = default;
  explicit FrameSealer(const DirectionKey& key) : mac_(key) {}
  // The tag of the next frame, whose bytes are the concatenation of `pieces`.
  Tag seal(std::initializer_list<std::span<const uint8_t>> pieces);

 private:
  KeyedMac mac_;
  uint64_t sequence_ = 0;
};

// The receiving side of one direction. Not thread-safe: one reader per connection.
class FrameOpener {
 public:
  FrameOpener() = default;
  explicit FrameOpener(const DirectionKey& key) : mac_(key) {}
  // True when `tag` is the tag of the next expected frame (compared in constant time). A false
  // answer leaves the stream unusable: the caller drops the connection.
  bool open(std::initializer_list<std::span<const uint8_t>> pieces, std::span<const uint8_t> tag);

 private:
  KeyedMac mac_;
  uint64_t sequence_ = 0;
};

}  // namespace nasd::link
