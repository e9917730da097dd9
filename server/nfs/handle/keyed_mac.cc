#include "server/nfs/handle/keyed_mac.h"

#include <openssl/core_names.h>
#include <openssl/evp.h>

#include <stdexcept>

namespace nasd::nfs {

namespace {
// Contexts kept for reuse beyond this are freed: enough for every executor thread at once.
constexpr size_t kMaxIdle = 64;
}  // namespace

KeyedMac::KeyedMac(std::span<const uint8_t> key) {
  mac_ = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  keyed_ = mac_ ? EVP_MAC_CTX_new(mac_) : nullptr;
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                         OSSL_PARAM_construct_end()};
  if (!keyed_ || EVP_MAC_init(keyed_, key.data(), key.size(), params) != 1) {
    EVP_MAC_CTX_free(keyed_);
    EVP_MAC_free(mac_);
    throw std::runtime_error("OpenSSL HMAC-SHA256 is unavailable");
  }
}

KeyedMac::~KeyedMac() {
  for (EVP_MAC_CTX* ctx : idle_) EVP_MAC_CTX_free(ctx);
  EVP_MAC_CTX_free(keyed_);
  EVP_MAC_free(mac_);
}

EVP_MAC_CTX* KeyedMac::acquire() const {
  {
    std::lock_guard lock(mu_);
    if (!idle_.empty()) {
      EVP_MAC_CTX* ctx = idle_.back();
      idle_.pop_back();
      return ctx;
    }
  }
  EVP_MAC_CTX* ctx = EVP_MAC_CTX_dup(keyed_);
  if (!ctx) throw std::bad_alloc();
  return ctx;
}

void KeyedMac::release(EVP_MAC_CTX* ctx) const {
  {
    std::lock_guard lock(mu_);
    if (idle_.size() < kMaxIdle) {
      idle_.push_back(ctx);
      return;
    }
  }
  EVP_MAC_CTX_free(ctx);
}

std::array<uint8_t, KeyedMac::kMacBytes> KeyedMac::compute(std::span<const uint8_t> data) const {
  std::array<uint8_t, kMacBytes> out{};
  EVP_MAC_CTX* ctx = acquire();
  size_t len = 0;
  // A null key re-initializes the context with the key it already holds.
  bool ok = EVP_MAC_init(ctx, nullptr, 0, nullptr) == 1 &&
            EVP_MAC_update(ctx, data.data(), data.size()) == 1 &&
            EVP_MAC_final(ctx, out.data(), &len, out.size()) == 1 && len == kMacBytes;
  release(ctx);
  if (!ok) throw std::runtime_error("HMAC-SHA256 failed");
  return out;
}

}  // namespace nasd::nfs
