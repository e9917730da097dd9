#include "bench/agent_channel.h"

#include <unistd.h>

#include "bench/agent_protocol.h"
#include "util/secret_key.h"

namespace nasd::bench::agent {

namespace {

std::array<uint8_t, 4> length_bytes(uint32_t n) {
  return {static_cast<uint8_t>(n), static_cast<uint8_t>(n >> 8), static_cast<uint8_t>(n >> 16),
          static_cast<uint8_t>(n >> 24)};
}

}  // namespace

Channel::Channel(int fd, link::Session session) : fd_(fd), session_(std::move(session)) {}

Channel::~Channel() {
  if (fd_ >= 0) ::close(fd_);
}

bool Channel::send(std::span<const uint8_t> message, std::string* error) {
  if (message.empty() || message.size() > kMaxMessageBytes) {
    *error = "message of " + std::to_string(message.size()) + " bytes is out of bounds";
    return false;
  }
  const auto len = length_bytes(static_cast<uint32_t>(message.size()));
  const link::Tag tag = session_.send.seal({len, message});
  std::vector<uint8_t> frame;
  frame.reserve(len.size() + message.size() + tag.size());
  frame.insert(frame.end(), len.begin(), len.end());
  frame.insert(frame.end(), message.begin(), message.end());
  frame.insert(frame.end(), tag.begin(), tag.end());
  return util::send_all(fd_, frame.data(), frame.size(), error);
}

util::ReadStatus Channel::receive(std::vector<uint8_t>* message, std::chrono::milliseconds idle,
                                  std::string* error) {
  std::array<uint8_t, 4> len{};
  util::ReadStatus st = util::read_exact(fd_, len.data(), len.size(), idle, kStallTimeout, error);
  if (st != util::ReadStatus::Ok) return st;
  const uint32_t n = len[0] | (uint32_t{len[1]} << 8) | (uint32_t{len[2]} << 16) | (uint32_t{len[3]} << 24);
  if (n == 0 || n > kMaxMessageBytes) {
    *error = "frame length " + std::to_string(n) + " is out of bounds";
    return util::ReadStatus::Error;
  }
  std::vector<uint8_t> body(n + link::kTagBytes);
  st = util::read_exact(fd_, body.data(), body.size(), kStallTimeout, kStallTimeout, error);
  if (st != util::ReadStatus::Ok) {
    if (st != util::ReadStatus::Error) *error = "connection ended mid-frame: " + *error;
    return util::ReadStatus::Error;
  }
  std::span<const uint8_t> payload(body.data(), n), tag(body.data() + n, link::kTagBytes);
  if (!session_.receive.open({len, payload}, tag)) {
    *error = "frame tag does not verify (forged, replayed or from another connection)";
    return util::ReadStatus::Error;
  }
  body.resize(n);
  *message = std::move(body);
  return util::ReadStatus::Ok;
}

link::Credentials agent_credentials(const std::string& key_path, const std::string& self) {
  link::Credentials c{load_or_create_secret_key(key_path, "agent key"), self};
  c.check();
  return c;
}

std::unique_ptr<Channel> connect_agent(const std::string& host, uint16_t port, const std::string& agent_name,
                                     const link::Credentials& credentials, std::chrono::milliseconds timeout,
                                     std::string* error) {
  int fd = util::connect_tcp(host, port, timeout, error);
  if (fd < 0) return nullptr;
  std::optional<link::Session> session =
      link::authenticate_client(fd, link::LinkKind::LoadAgent, credentials, agent_name, kHandshakeTimeout, error);
  if (!session) {
    ::close(fd);
    *error = "agent '" + agent_name + "' at " + host + ":" + std::to_string(port) +
             " refused the handshake (wrong agent key, or not that agent's name): " + *error;
    return nullptr;
  }
  return std::make_unique<Channel>(fd, std::move(*session));
}

}  // namespace nasd::bench::agent
