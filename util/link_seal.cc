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

std::unique_ptr<EVP_MAC_CTX, MacDeleter> keyed_context(std::span<const uint8_t> key) {
  std::unique_ptr<EVP_MAC_CTX, MacDeleter> ctx(EVP_MAC_CTX_new(hmac_algorithm()));
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                         OSSL_PARAM_construct_end()};
  if (!ctx || EVP_MAC_init(ctx.get(), key.data(), key.size(), params) != 1)
    throw std::runtime_error("HMAC-SHA256 init failed");
  return ctx;
}

// Feeds `prefix` and `pieces` into a keyed `ctx` and returns the tag.
Tag finish(EVP_MAC_CTX* ctx, std::span<const uint8_t> prefix,
           std::initializer_list<std::span<const uint8_t>> pieces) {
  bool ok = prefix.empty() || EVP_MAC_update(ctx, prefix.data(), prefix.size()) == 1;
  for (const auto& p : pieces) {
    if (!p.empty()) ok = ok && EVP_MAC_update(ctx, p.data(), p.size()) == 1;
  }
  Tag tag;
  size_t len = 0;
  if (!ok || EVP_MAC_final(ctx, tag.data(), &len, tag.size()) != 1 || len != tag.size())
    throw std::runtime_error("HMAC-SHA256 failed");
  return tag;
}

}  // namespace

Tag hmac_sha256(std::span<const uint8_t> key,
                std::initializer_list<std::span<const uint8_t>> pieces) {
  return finish(keyed_context(key).get(), {}, pieces);
}

KeyedMac::KeyedMac(const DirectionKey& key)
    : keyed_(keyed_context(key).release(), [](EVP_MAC_CTX* c) { EVP_MAC_CTX_free(c); }) {}

Tag KeyedMac::tag(uint64_t sequence, std::initializer_list<std::span<const uint8_t>> pieces) const {
  if (!keyed_) throw std::logic_error("frame tag without a link key");
  std::unique_ptr<EVP_MAC_CTX, MacDeleter> ctx(EVP_MAC_CTX_dup(keyed_.get()));
  if (!ctx) throw std::runtime_error("HMAC-SHA256 copy failed");
  const auto seq = little_endian(sequence);
  return finish(ctx.get(), seq, pieces);
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
