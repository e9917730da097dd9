// One authenticated connection between nasd-loadgen's coordinator and an agent. Before any
// message both sides run util's link handshake (link_handshake.h, kind LoadAgent) with the agent
// key: each proves the key over fresh nonces, so a prober without the key gets the connection
// closed and nothing else. Every message after it is one frame:
//
//   u32 length (1 .. agent::kMaxMessageBytes) | message | tag (32 bytes)
//   tag = HMAC-SHA256(direction key, u64 sequence | length | message)   (link_seal.h)
//
// A length out of bounds, a bad tag (forged, replayed, reordered, from another connection), a
// peer that stalls mid-frame: the receive fails and the caller drops the connection.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "util/link_handshake.h"
#include "util/net.h"

namespace nasd::bench::agent {

inline constexpr std::chrono::milliseconds kHandshakeTimeout{5000};
inline constexpr std::chrono::milliseconds kStallTimeout{10000};  // within one frame

class Channel {
 public:
  // Takes ownership of the connected socket `fd` (closed by the destructor).
  Channel(int fd, link::Session session);
  ~Channel();
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  bool send(std::span<const uint8_t> message, std::string* error);
  // Waits up to `idle` for the next frame (negative: forever). Ok with *message filled; Eof when
  // the peer closed between frames; Timeout when nothing came; Error for anything malformed.
  util::ReadStatus receive(std::vector<uint8_t>* message, std::chrono::milliseconds idle, std::string* error);
  int fd() const { return fd_; }
  const std::string& peer() const { return session_.peer; }

 private:
  int fd_;
  link::Session session_;
};

// The agent key, as util's link handshake takes it: `self` is this side's name.
link::Credentials agent_credentials(const std::string& key_path, const std::string& self);

// Coordinator side: connects to `host:port`, expects the agent to be `agent_name` and to prove
// the key. nullptr and *error on failure (a wrong key reads "closed the handshake").
std::unique_ptr<Channel> connect_agent(const std::string& host, uint16_t port, const std::string& agent_name,
                                     const link::Credentials& credentials, std::chrono::milliseconds timeout,
                                     std::string* error);

}  // namespace nasd::bench::agent
