#include "cluster/interconnect/hello.h"

#include "cluster/interconnect/wire_buffer.h"

namespace nasd::interconnect {

namespace {
constexpr size_t kMaxNameBytes = 255;
}

std::vector<uint8_t> encode_hello(const Hello& hello) {
  WireWriter w;
  w.u16(hello.protocol_version);
  w.string(hello.cluster_name);
  w.string(hello.node_name);
  w.string(hello.channel);
  w.u64(hello.incarnation);
  w.u64(hello.generation);
  return w.take();
}

bool decode_hello(std::span<const uint8_t> in, Hello* out, std::string* error) {
  WireReader r(in);
  std::string_view cluster, node, channel;
  r.u16(&out->protocol_version);
  r.string(&cluster, kMaxNameBytes);
  r.string(&node, kMaxNameBytes);
  r.string(&channel, kMaxNameBytes);
  r.u64(&out->incarnation);
  r.u64(&out->generation);
  if (!r.expect_end()) {
    *error = "malformed hello: " + r.error();
    return false;
  }
  out->cluster_name = cluster;
  out->node_name = node;
  out->channel = channel;
  return true;
}

std::string hello_mismatch(const Hello& ours, const Hello& theirs,
                           const std::string& expected_node) {
  if (theirs.protocol_version != ours.protocol_version) {
    return "protocol version mismatch: peer '" + theirs.node_name + "' speaks version " +
           std::to_string(theirs.protocol_version) + ", node '" + ours.node_name +
           "' speaks version " + std::to_string(ours.protocol_version);
  }
  if (theirs.cluster_name != ours.cluster_name) {
    return "cluster name mismatch: peer '" + theirs.node_name + "' is in cluster '" +
           theirs.cluster_name + "', node '" + ours.node_name + "' is in cluster '" +
           ours.cluster_name + "'";
  }
  if (theirs.node_name.empty()) return "peer sent an empty node name";
  if (theirs.node_name == ours.node_name) {
    return "peer claims this node's own name '" + ours.node_name + "'";
  }
  if (!expected_node.empty() && theirs.node_name != expected_node) {
    return "expected to reach node '" + expected_node + "' but reached '" + theirs.node_name +
           "'";
  }
  return "";
}

}  // namespace nasd::interconnect
