#include "cluster/membership/etcd_value_seal.h"

#include <openssl/crypto.h>

#include <stdexcept>

namespace nasd::membership {
namespace {

constexpr std::string_view kDomain{"nasd etcd value v1", 19};  // with its NUL: a separator
constexpr std::string_view kMarker = "\n#nasd-hmac-sha256 ";
constexpr size_t kTagHex = 2 * util::HmacSha256::kBytes;

std::span<const uint8_t> bytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

std::span<const uint8_t> checked_key(std::span<const uint8_t> key) {
  if (key.size() < 16) throw std::invalid_argument("etcd values need the cluster key (16 bytes or more)");
  return key;
}

}  // namespace

EtcdValueSeal::EtcdValueSeal(std::span<const uint8_t> key) : mac_(checked_key(key)) {}

std::string EtcdValueSeal::tag(std::string_view etcd_key, std::string_view value) const {
  const uint64_t key_len = etcd_key.size();
  uint8_t len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<uint8_t>(key_len >> (8 * i));
  const util::HmacSha256::Digest d = mac_.compute({bytes(kDomain), std::span<const uint8_t>(len, 8),
                                                   bytes(etcd_key), bytes(value)});
  static const char digits[] = "0123456789abcdef";
  std::string hex;
  for (uint8_t b : d) hex += digits[b >> 4], hex += digits[b & 15];
  return hex;
}

std::string EtcdValueSeal::seal(std::string_view etcd_key, std::string_view value) const {
  return std::string(value) + std::string(kMarker) + tag(etcd_key, value);
}

bool EtcdValueSeal::open(std::string_view etcd_key, std::string_view sealed, std::string* value,
                         std::string* error) const {
  const size_t at = sealed.rfind(kMarker);
  if (at == std::string_view::npos || sealed.size() - at - kMarker.size() != kTagHex) {
    *error = "carries no cluster-key tag (written by something other than a nasd node of this cluster)";
    return false;
  }
  const std::string_view inner = sealed.substr(0, at);
  const std::string want = tag(etcd_key, inner);
  const std::string_view got = sealed.substr(at + kMarker.size());
  if (CRYPTO_memcmp(want.data(), got.data(), kTagHex) != 0) {
    *error = "has a tag that does not verify with the cluster key (forged, or another cluster's)";
    return false;
  }
  *value = std::string(inner);
  return true;
}

}  // namespace nasd::membership
