#include "cluster/membership/heartbeat.h"

#include "cluster/interconnect/wire_buffer.h"

namespace nasd::membership {
namespace {
constexpr uint8_t kHeartbeatVersion = 1;
constexpr size_t kMaxNodeName = 255;
constexpr uint32_t kMaxVolumes = 4096;
}  // namespace

std::vector<uint8_t> encode_heartbeat(const Heartbeat& hb) {
  interconnect::WireWriter w;
  w.u8(kHeartbeatVersion);
  w.string(hb.node);
  w.u64(hb.incarnation);
  w.u64(hb.view);
  w.u32(static_cast<uint32_t>(hb.holding.size()));
  for (uint32_t v : hb.holding) w.u32(v);
  w.boolean(hb.wants_failback);
  return w.take();
}

bool decode_heartbeat(std::span<const uint8_t> in, Heartbeat* out, std::string* error) {
  interconnect::WireReader r(in);
  uint8_t version = 0;
  std::string_view node;
  uint32_t n = 0;
  if (r.u8(&version) && version != kHeartbeatVersion) r.fail("unknown heartbeat version");
  if (r.string(&node, kMaxNodeName) && r.u64(&out->incarnation) && r.u64(&out->view) &&
      r.u32(&n)) {
    if (n > kMaxVolumes || n > r.remaining() / 4) {
      r.fail("heartbeat volume count too large");
    } else {
      out->holding.resize(n);
      for (auto& v : out->holding) r.u32(&v);
    }
  }
  r.boolean(&out->wants_failback);
  if (!r.expect_end()) {
    *error = "malformed heartbeat: " + r.error();
    return false;
  }
  out->node = node;
  return true;
}

}  // namespace nasd::membership
