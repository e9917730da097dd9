#include "cluster/scaleout/unit_codec.h"

#include <cstring>

namespace nasd::scaleout {
namespace {

constexpr uint8_t kVersion = 1;

template <typename T>
void put(std::vector<uint8_t>* out, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) out->push_back(static_cast<uint8_t>(v >> (8 * i)));
}

template <typename T>
T get(const uint8_t* p) {
  T v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) v |= static_cast<T>(p[i]) << (8 * i);
  return v;
}

bool valid_op(uint8_t op) { return op >= 1 && op <= 6; }

}  // namespace

std::vector<uint8_t> encode_unit_request(const UnitRequest& r) {
  std::vector<uint8_t> out;
  out.reserve(kUnitRequestHeaderBytes + r.data.size());
  out.push_back(kVersion);
  out.push_back(static_cast<uint8_t>(r.op));
  put<uint16_t>(&out, r.drive);
  put<uint64_t>(&out, r.key.file);
  put<uint64_t>(&out, r.key.group);
  put<uint64_t>(&out, r.key.version);
  put<uint16_t>(&out, r.key.index);
  put<uint32_t>(&out, static_cast<uint32_t>(r.data.size()));
  out.insert(out.end(), r.data.begin(), r.data.end());
  return out;
}

bool decode_unit_request(std::span<const uint8_t> in, UnitRequest* out) {
  if (in.size() < kUnitRequestHeaderBytes || in[0] != kVersion || !valid_op(in[1])) return false;
  const uint8_t* p = in.data();
  UnitRequest r;
  r.op = static_cast<UnitOp>(p[1]);
  r.drive = get<uint16_t>(p + 2);
  r.key.file = get<uint64_t>(p + 4);
  r.key.group = get<uint64_t>(p + 12);
  r.key.version = get<uint64_t>(p + 20);
  r.key.index = get<uint16_t>(p + 28);
  const uint32_t len = get<uint32_t>(p + 30);
  if (r.drive >= kMaxDrivesPerNode || len > kMaxUnitBytes) return false;
  if (r.op == UnitOp::List ? len != 4 : (r.op != UnitOp::Put && len != 0)) return false;
  if (in.size() != kUnitRequestHeaderBytes + len) return false;
  r.data.assign(in.begin() + kUnitRequestHeaderBytes, in.end());
  *out = std::move(r);
  return true;
}

std::vector<uint8_t> encode_unit_reply(const UnitReply& r) {
  std::vector<uint8_t> out;
  out.reserve(kUnitReplyHeaderBytes + r.data.size());
  out.push_back(kVersion);
  out.push_back(static_cast<uint8_t>(r.op));
  out.push_back(static_cast<uint8_t>(r.status));
  put<uint32_t>(&out, static_cast<uint32_t>(r.data.size()));
  out.insert(out.end(), r.data.begin(), r.data.end());
  return out;
}

bool decode_unit_reply(std::span<const uint8_t> in, UnitOp expected, UnitReply* out) {
  if (in.size() < kUnitReplyHeaderBytes || in[0] != kVersion || in[1] != static_cast<uint8_t>(expected)) {
    return false;
  }
  const uint8_t status = in[2];
  if (status > static_cast<uint8_t>(UnitStatus::Unreachable)) return false;
  const uint32_t len = get<uint32_t>(in.data() + 3);
  const uint32_t limit = expected == UnitOp::Get      ? kMaxUnitBytes
                         : expected == UnitOp::Health ? kMaxDrivesPerNode
                         : expected == UnitOp::List   ? 1 + kMaxListKeys * kListedKeyBytes
                                                      : 0;
  if (len > limit || in.size() != kUnitReplyHeaderBytes + len) return false;
  UnitReply r;
  r.op = expected;
  r.status = static_cast<UnitStatus>(status);
  r.data.assign(in.begin() + kUnitReplyHeaderBytes, in.end());
  *out = std::move(r);
  return true;
}

std::vector<uint8_t> encode_key_list(const std::vector<UnitKey>& keys, bool more) {
  std::vector<uint8_t> out;
  out.reserve(1 + keys.size() * kListedKeyBytes);
  out.push_back(more ? 1 : 0);
  for (const UnitKey& k : keys) {
    put<uint64_t>(&out, k.file);
    put<uint64_t>(&out, k.group);
    put<uint64_t>(&out, k.version);
    put<uint16_t>(&out, k.index);
  }
  return out;
}

bool decode_key_list(const std::vector<uint8_t>& data, uint32_t max, std::vector<UnitKey>* keys,
                     bool* more) {
  keys->clear();
  if (data.empty() || data[0] > 1 || (data.size() - 1) % kListedKeyBytes != 0) return false;
  const size_t n = (data.size() - 1) / kListedKeyBytes;
  if (n > max || n > kMaxListKeys) return false;
  *more = data[0] == 1;
  for (size_t i = 0; i < n; i++) {
    const uint8_t* p = data.data() + 1 + i * kListedKeyBytes;
    UnitKey k{get<uint64_t>(p), get<uint64_t>(p + 8), get<uint64_t>(p + 16), get<uint16_t>(p + 24)};
    if (!keys->empty() && !(keys->back() < k)) return false;
    keys->push_back(k);
  }
  return true;
}

}  // namespace nasd::scaleout
