// HMAC-SHA256 (RFC 2104) under one fixed key, callable from many threads at once. Every NFS call
// checks a handle tag, and every link record is sealed, so a MAC must cost little and allocate
// nothing:
//   - The key's inner and outer padded blocks are hashed once, at construction. Each MAC starts
//     from copies of those two SHA-256 states (plain structs, copied on the stack), so it hashes
//     only the data and one digest: no per-call keying, no lock, no heap.
//   - OpenSSL 3's EVP_MAC re-initialisation copies its digest contexts through the heap (two
//     allocations per MAC, and about 4x the time: bench/README, "Heap allocations per call").
//     Its low-level SHA256_CTX has no such cost; it is deprecated in 3.0 but present in every 3.x,
//     and only this file uses it. The construction is checked against OpenSSL's own HMAC for
//     every key length class and against RFC 4231's vectors (tests/nfs/keyed_mac_test.cc).
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace nasd::nfs {

class KeyedMac {
 public:
  static constexpr size_t kMacBytes = 32;

  explicit KeyedMac(std::span<const uint8_t> key);  // throws std::runtime_error
  ~KeyedMac();
  KeyedMac(const KeyedMac&) = delete;
  KeyedMac& operator=(const KeyedMac&) = delete;

  std::array<uint8_t, kMacBytes> compute(std::span<const uint8_t> data) const;

 private:
  // SHA256_CTX, kept opaque here so that only keyed_mac.cc sees OpenSSL's deprecated header.
  // Its size is checked there.
  struct State {
    alignas(8) uint8_t bytes[112];
  };
  State inner_{};  // SHA-256 after (key ^ ipad): every MAC's first hash continues from here
  State outer_{};  // SHA-256 after (key ^ opad): every MAC's second hash continues from here
};

}  // namespace nasd::nfs
