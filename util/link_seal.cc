#include "util/link_seal.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <memory>
#include <stdexcept>

namespace nasd::link {
namespace {

struct MacDeleter {
  void operator()(EVP_MAC* m) const { EVP_MAC_free(m); }
  void operator()(EVP_MAC_CTX* c) const { EVP_MAC_CTX_free(c); }
};

// The HMAC algorithm is fetched once; a context per call keeps the functions thread-safe.
EVP_MAC* hmac_algorithm() {
  static std::unique_ptr<EVP_MAC, MacDeleter> mac(EVP_MAC_fetch(nullptr, "HMAC", nullptr));
  if (!mac) throw std::runtime_error("OpenSSL has no HMAC");
  return mac.get();
}

std::array<uint8_t, 8> little_endian(uint64_t v) {
  std::array<uint8_t, 8> out;
  for (auto& b : out) {
    b = static_cast<uint8_t>(v);
    v >>= 8;
  }
  return out;
}

// HMAC-SHA256 of `prefix` followed by `pieces`, in one OpenSSL context.
Tag mac(std::span<const uint8_t> key, std::span<const uint8_t> prefix,
        std::initializer_list<std::span<const uint8_t>> pieces) {
  std::unique_ptr<EVP_MAC_CTX, MacDeleter> ctx(EVP_MAC_CTX_new(hmac_algorithm()));
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                         OSSL_PARAM_construct_end()};
  if (!ctx || EVP_MAC_init(ctx.get(), key.data(), key.size(), params) != 1)
    throw std::runtime_error("HMAC-SHA256 init failed");
  bool ok = prefix.empty() || EVP_MAC_update(ctx.get(), prefix.data(), prefix.size()) == 1;
  for (const auto& p : pieces) {
    if (!p.empty()) ok = ok && EVP_MAC_update(ctx.get(), p.data(), p.size()) == 1;
  }
  Tag tag;
  size_t len = 0;
  if (!ok || EVP_MAC_final(ctx.get(), tag.data(), &len, tag.size()) != 1 || len != tag.size())
    throw std::runtime_error("HMAC-SHA256 failed");
  return tag;
}

}  // namespace

Tag hmac_sha256(std::span<const uint8_t> key,
                std::initializer_list<std::span<const uint8_t>> pieces) {
  return mac(key, {}, pieces);
}

Tag FrameSealer::seal(std::initializer_list<std::span<const uint8_t>> pieces) {
  auto seq = little_endian(sequence_++);
  return mac(key_, seq, pieces);
}

bool FrameOpener::open(std::initializer_list<std::span<const uint8_t>> pieces,
                       std::span<const uint8_t> tag) {
  if (tag.size() != kTagBytes) return false;
  auto seq = little_endian(sequence_);
  Tag expected = mac(key_, seq, pieces);
  if (CRYPTO_memcmp(expected.data(), tag.data(), kTagBytes) != 0) return false;
  ++sequence_;
  return true;
}

}  // namespace nasd::link
