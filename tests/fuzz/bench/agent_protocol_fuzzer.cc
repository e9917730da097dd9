// libFuzzer target: what reaches a nasd-loadgen agent (or its coordinator) after the handshake.
// The first byte picks the path:
//   0: one message straight into every decoder; one that decodes must re-encode to the same
//      bytes (nothing is lost or invented on the way);
//   1: frames sealed with the session's key (the input cut into u16-length pieces), read with
//      Channel::receive from a socket as the agent reads them, each then decoded by its type;
//   2: the same stream with whatever lengths and tags the input carries: no frame may pass.
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "bench/agent_channel.h"
#include "bench/agent_protocol.h"
#include "tests/fuzz/socket_feed.h"

namespace {

using namespace nasd;
using namespace nasd::bench::agent;

const std::vector<uint8_t> kKey(32, 0x5a);

template <typename M>
void round_trip(std::span<const uint8_t> in) {
  M m;
  std::string error;
  if (!decode(in, &m, &error)) return;
  const std::vector<uint8_t> again = encode(m);
  M m2;
  if (!decode(again, &m2, &error)) __builtin_trap();
  if (encode(m2) != again) __builtin_trap();
}

void decode_any(std::span<const uint8_t> in) {
  std::string error;
  MessageType type;
  if (!peek_type(in, &type)) return;
  switch (type) {
    case MessageType::kPrepare: round_trip<Prepare>(in); break;
    case MessageType::kPrepared: round_trip<Prepared>(in); break;
    case MessageType::kBuild: (void)decode_build(in, &error); break;
    case MessageType::kBuilt: round_trip<Built>(in); break;
    case MessageType::kClockProbe: round_trip<ClockProbe>(in); break;
    case MessageType::kClockReply: round_trip<ClockReply>(in); break;
    case MessageType::kStep: round_trip<Step>(in); break;
    case MessageType::kStepDone: round_trip<StepDone>(in); break;
    case MessageType::kFinish: round_trip<Finish>(in); break;
    case MessageType::kFinished: round_trip<Finished>(in); break;
    case MessageType::kError: round_trip<Error>(in); break;
  }
}

// A session both ends agree on, made with fixed nonces.
bool make_sessions(link::Session* client, link::Session* server) {
  const link::Nonce cn{1, 2, 3}, sn{4, 5, 6};
  link::ClientHandshake c(link::LinkKind::LoadAgent, {kKey, "coordinator"}, "lg1", cn);
  link::ServerHandshake s(link::LinkKind::LoadAgent, {kKey, "lg1"}, nullptr, sn);
  std::vector<uint8_t> proof, client_proof;
  return s.on_hello(c.hello(), &proof) && c.on_server_proof(proof, &client_proof, client) &&
         s.on_client_proof(client_proof, server);
}

void frames(std::span<const uint8_t> in, bool seal) {
  link::Session client, server;
  if (!make_sessions(&client, &server)) __builtin_trap();
  std::vector<uint8_t> stream;
  if (seal) {
    while (in.size() >= 2) {
      size_t len = std::min<size_t>(in[0] | (in[1] << 8), in.size() - 2);
      auto message = in.subspan(2, len);
      if (message.empty()) {
        in = in.subspan(2);
        continue;
      }
      const uint32_t n = static_cast<uint32_t>(message.size());
      const std::array<uint8_t, 4> header{static_cast<uint8_t>(n), static_cast<uint8_t>(n >> 8), 0, 0};
      stream.insert(stream.end(), header.begin(), header.end());
      stream.insert(stream.end(), message.begin(), message.end());
      const link::Tag tag = client.send.seal({header, message});
      stream.insert(stream.end(), tag.begin(), tag.end());
      in = in.subspan(2 + len);
    }
  } else {
    stream.assign(in.begin(), in.end());
  }
  const int fd = fuzz::socket_holding(stream);
  if (fd < 0) return;
  Channel channel(fd, std::move(server));  // closes fd
  for (int i = 0; i < 1000; ++i) {
    std::vector<uint8_t> message;
    std::string error;
    if (channel.receive(&message, std::chrono::milliseconds(0), &error) != util::ReadStatus::Ok) break;
    if (!seal) __builtin_trap();  // a tag the input made up was accepted
    if (message.empty() || message.size() > kMaxMessageBytes) __builtin_trap();
    decode_any(message);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::span<const uint8_t> in(data + 1, size - 1);
  switch (data[0] % 3) {
    case 0: decode_any(in); break;
    case 1: frames(in, true); break;
    case 2: frames(in, false); break;
  }
  return 0;
}
