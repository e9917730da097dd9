// The hello exchange that opens every interconnect connection, right after the link handshake
// (util/link_handshake.h) proved the cluster key. Both sides say which cluster they belong to,
// their node name (which must be the name the handshake proved) and protocol version; a
// connection between different clusters or protocol versions is refused with a reason both
// sides can log, because a misconfigured peer silently forwarding requests would be far worse
// than a loud refusal. Only key holders ever see such a reason. Since protocol version 2 the
// hello names the connection's session (link_session.h).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace nasd::interconnect {

struct Hello {
  uint16_t protocol_version = 0;
  std::string cluster_name;
  std::string node_name;
  // The connecting side's session (link_session.h): which of its links this connection is
  // (channel), which link object opened it (incarnation, random and never 0) and how many
  // connections that object opened before (generation). The owner fences older sessions of the
  // same node and channel with them. The accepting side sends zeros and an empty channel.
  std::string channel{};
  uint64_t incarnation = 0;
  uint64_t generation = 0;
};

std::vector<uint8_t> encode_hello(const Hello& hello);
bool decode_hello(std::span<const uint8_t> in, Hello* out, std::string* error);

// Empty when `theirs` may talk to `ours`; otherwise why not. `expected_node` (if not empty) is
// the node name the connecting side expects to reach.
std::string hello_mismatch(const Hello& ours, const Hello& theirs,
                           const std::string& expected_node = "");

}  // namespace nasd::interconnect
