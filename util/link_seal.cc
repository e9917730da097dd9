#include "util/link_seal.h"

#include <openssl/crypto.h>

#include <stdexcept>

namespace nasd::link {
namespace {

std::array<uint8_t, 8> little_endian(uint64_t v) {
  std::array<uint8_t, 8> out;
  for (auto& b : out) {
    b = static_cast<uint8_t>(v);
    v >>= 8;
  }
  return out;
}

}  // namespace

Tag hmac_sha256(std::span<const uint8_t> key,
                std::initializer_list<std::span<const uint8_t>> pieces) {
  return util::HmacSha256(key).compute(pieces);
}

KeyedMac::KeyedMac(const DirectionKey& key) : keyed_(std::in_place, key) {}

Tag KeyedMac::tag(uint64_t sequence, std::initializer_list<std::span<const uint8_t>> pieces) const {
  if (!keyed_) throw std::logic_error("frame tag without a link key");
  const auto seq = little_endian(sequence);
  // The sequence number first, then the frame's pieces (at most a few: header, body, payload).
  constexpr size_t kMaxPieces = 7;
  if (pieces.size() > kMaxPieces) throw std::logic_error("a frame tag over too many pieces");
  std::array<std::span<const uint8_t>, kMaxPieces + 1> all{};
  all[0] = seq;
  size_t n = 1;
  for (const auto& p : pieces) all[n++] = p;
  return keyed_->compute(std::span<const std::span<const uint8_t>>(all.data(), n));
}

Tag FrameSealer::seal(std::initializer_list<std::span<const uint8_t>> pieces) {
  return mac_.tag(sequence_++, pieces);
}

bool FrameOpener::open(std::initializer_list<std::span<const uint8_t>> pieces,
                       std::span<const uint8_t> tag) {
  if (tag.size() != kTagBytes) return false;
  const Tag expected = mac_.tag(sequence_, pieces);
  if (CRYPTO_memcmp(expected.data(), tag.data(), kTagBytes) != 0) return false;
  ++sequence_;
  return true;
}

}  // namespace nasd::link
