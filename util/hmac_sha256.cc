// The low-level SHA-256 interface is deprecated in OpenSSL 3.0 but present in every 3.x; the
// header says why it is used here (no allocation, a quarter of EVP_MAC's time).
#define OPENSSL_SUPPRESS_DEPRECATED
#include "util/hmac_sha256.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <cstring>
#include <stdexcept>

namespace nasd::util {

namespace {
constexpr size_t kBlockBytes = SHA256_CBLOCK;  // 64
static_assert(kBlockBytes == 64);

// Hashes one key-padded block (`key` xor `pad` over the block) into `state`.
void start(uint8_t* state, const std::array<uint8_t, kBlockBytes>& key, uint8_t pad) {
  std::array<uint8_t, kBlockBytes> block;
  for (size_t i = 0; i < kBlockBytes; ++i) block[i] = key[i] ^ pad;
  SHA256_CTX c;
  if (SHA256_Init(&c) != 1 || SHA256_Update(&c, block.data(), block.size()) != 1)
    throw std::runtime_error("OpenSSL SHA-256 is unavailable");
  std::memcpy(state, &c, sizeof c);
  OPENSSL_cleanse(&c, sizeof c);
  OPENSSL_cleanse(block.data(), block.size());
}
}  // namespace

HmacSha256::HmacSha256(std::span<const uint8_t> key) {
  static_assert(sizeof(State::bytes) >= sizeof(SHA256_CTX));
  // RFC 2104: a key longer than a block is replaced by its hash; a shorter one is zero-padded.
  std::array<uint8_t, kBlockBytes> padded{};
  if (key.size() > kBlockBytes)
    SHA256(key.data(), key.size(), padded.data());
  else if (!key.empty())
    std::memcpy(padded.data(), key.data(), key.size());
  start(inner_.bytes, padded, 0x36);
  start(outer_.bytes, padded, 0x5c);
  OPENSSL_cleanse(padded.data(), padded.size());
}

HmacSha256::~HmacSha256() {
  OPENSSL_cleanse(inner_.bytes, sizeof inner_.bytes);
  OPENSSL_cleanse(outer_.bytes, sizeof outer_.bytes);
}

HmacSha256::Digest HmacSha256::compute(
    std::span<const std::span<const uint8_t>> pieces) const {
  static_assert(kBytes == SHA256_DIGEST_LENGTH);
  Digest inner_digest, out;
  SHA256_CTX c;
  std::memcpy(&c, inner_.bytes, sizeof c);
  bool ok = true;
  for (const auto& p : pieces)
    if (!p.empty()) ok = ok && SHA256_Update(&c, p.data(), p.size()) == 1;
  ok = ok && SHA256_Final(inner_digest.data(), &c) == 1;
  std::memcpy(&c, outer_.bytes, sizeof c);
  ok = ok && SHA256_Update(&c, inner_digest.data(), inner_digest.size()) == 1 &&
       SHA256_Final(out.data(), &c) == 1;
  if (!ok) throw std::runtime_error("HMAC-SHA256 failed");
  return out;
}

}  // namespace nasd::util
