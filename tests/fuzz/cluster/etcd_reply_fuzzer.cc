// libFuzzer target: what an etcd member (or whoever answers on its address) can send back to
// the etcd lease authority. The first byte picks the decoder (range, txn, lease grant,
// keepalive, timetolive, error, base64, authenticate, a value's cluster-key tag); the rest is the reply body. Decoders must never
// throw or crash, and what they accept must be within the bounds etcd_codec.h states.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/membership/etcd_codec.h"
#include "cluster/membership/etcd_value_seal.h"

namespace {

using namespace nasd::membership::etcd;
using nasd::membership::EtcdValueSeal;

void check_kv(const KeyValue& kv) {
  if (kv.key.size() > kMaxKeyBytes || kv.value.size() > kMaxValueBytes) __builtin_trap();
  if (kv.create_revision <= 0 || kv.mod_revision < kv.create_revision) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string error;
  switch (data[0] % 9) {
    case 0: {
      RangeReply r;
      if (decode_range(body, &r, &error) && r.kv) check_kv(*r.kv);
      break;
    }
    case 1: {
      TxnReply r;
      if (decode_txn(body, &r, &error) && r.kv) check_kv(*r.kv);
      break;
    }
    case 2: {
      LeaseReply r;
      if (decode_lease_grant(body, &r, &error) && (r.id == 0 || r.ttl <= 0)) __builtin_trap();
      break;
    }
    case 3: {
      LeaseReply r;
      decode_keepalive(body, &r, &error);
      break;
    }
    case 4: {
      LeaseReply r;
      decode_time_to_live(body, &r, &error);
      break;
    }
    case 5: {
      ErrorReply r;
      if (decode_error(body, &r) && (r.code <= 0 || r.code > 16 || r.message.size() > kMaxMessageBytes))
        __builtin_trap();
      break;
    }
    case 6: {
      std::string out;
      if (base64_decode(body, 64, &out)) {
        if (out.size() > 64 || base64_encode(out) != body) __builtin_trap();
      }
      break;
    }
    case 8: {
      // A value read from etcd: only what the key's tag vouches for comes out, and it seals
      // back to the very bytes read.
      static const std::vector<uint8_t> key(32, 0x6b);
      static const EtcdValueSeal seal(key);
      std::string value;
      if (seal.open("/nasd/fuzz/volume-1", body, &value, &error) &&
          seal.seal("/nasd/fuzz/volume-1", value) != body)
        __builtin_trap();
      break;
    }
    case 7: {
      std::string token;
      if (decode_authenticate(body, &token, &error)) {
        if (token.empty() || token.size() > kMaxTokenBytes) __builtin_trap();
        for (unsigned char c : token)
          if (c <= ' ' || c >= 0x7f) __builtin_trap();  // it becomes a header value
      }
      break;
    }
  }
  return 0;
}
