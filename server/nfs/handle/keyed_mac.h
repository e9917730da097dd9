// HMAC-SHA256 under one fixed key, callable from many threads at once. Every NFS call checks a
// handle tag, so keying a fresh MAC per call (several microseconds) is avoided: keyed OpenSSL
// contexts are kept in a pool and only re-initialized, which reuses their key.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <span>
#include <vector>

typedef struct evp_mac_st EVP_MAC;
typedef struct evp_mac_ctx_st EVP_MAC_CTX;

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
  EVP_MAC_CTX* acquire() const;
  void release(EVP_MAC_CTX* ctx) const;

  EVP_MAC* mac_ = nullptr;
  EVP_MAC_CTX* keyed_ = nullptr;  // the template every pooled context is copied from
  mutable std::mutex mu_;
  mutable std::vector<EVP_MAC_CTX*> idle_;
};

}  // namespace nasd::nfs
