// What a node tells its partner every heartbeat interval (and answers to the partner's
// heartbeat), so each side learns the other is alive and what it is doing.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace nasd::membership {

struct Heartbeat {
  std::string node;
  uint64_t incarnation = 0;  // changes at every start: the partner restarted if it changed
  uint64_t view = 0;         // bumped whenever the sender's pair state or served set changes
  std::vector<uint32_t> holding;  // volumes whose lease the sender holds (serving or opening)
  bool wants_failback = false;    // the sender wants its home volumes back
};

std::vector<uint8_t> encode_heartbeat(const Heartbeat& hb);
bool decode_heartbeat(std::span<const uint8_t> in, Heartbeat* out, std::string* error);

}  // namespace nasd::membership
