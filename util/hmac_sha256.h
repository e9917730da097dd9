// HMAC-SHA256 (RFC 2104) under one fixed key, callable from many threads at once. Every NFS call
// checks a file-handle tag and every cluster link frame is sealed and opened, so a MAC must cost
// little and allocate nothing:
//   - The key's inner and outer padded blocks are hashed once, at construction. Each MAC starts
//     from copies of those two SHA-256 states (plain structs, copied on the stack), so it hashes
//     only the data and one digest: no per-call keying, no lock, no heap.
//   - OpenSSL 3's EVP_MAC re-initialisation or duplication copies its digest contexts through
//     the heap (two allocations per MAC, and about 4x the time: bench/README, "Heap allocations
//     per call"). The low-level SHA256_CTX has no such cost; it is deprecated in 3.0 but present
//     in every 3.x, and only hmac_sha256.cc uses it. The construction is checked against
//     OpenSSL's own HMAC for every key length class and against RFC 4231's vectors
//     (tests/util/hmac_sha256_test.cc).
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>

namespace nasd::util {

class HmacSha256 {
 public:
  static constexpr size_t kBytes = 32;
  using Digest = std::array<uint8_t, kBytes>;

  explicit HmacSha256(std::span<const uint8_t> key);  // throws std::runtime_error
  ~HmacSha256();
  HmacSha256(const HmacSha256&) = default;  // read-only after construction: copies are cheap
  HmacSha256& operator=(const HmacSha256&) = default;

  // The MAC of the concatenation of `pieces`.
  Digest compute(std::span<const std::span<const uint8_t>> pieces) const;
  Digest compute(std::initializer_list<std::span<const uint8_t>> pieces) const {
    return compute(std::span<const std::span<const uint8_t>>(pieces.begin(), pieces.size()));
  }
  Digest compute(std::span<const uint8_t> data) const { return compute({data}); }

 private:
  // SHA256_CTX, kept opaque here so that only hmac_sha256.cc sees OpenSSL's deprecated
  // interface. Its size is checked there.
  struct State {
    alignas(8) uint8_t bytes[112];
  };
  State inner_{};  // SHA-256 after (key ^ ipad): every MAC's first hash continues from here
  State outer_{};  // SHA-256 after (key ^ opad): every MAC's second hash continues from here
};

}  // namespace nasd::util
