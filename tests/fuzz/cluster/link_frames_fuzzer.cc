// libFuzzer target: what a peer (or an attacker) can put on an interconnect connection.
// The first byte picks the path:
//   0: the accepting side of the link handshake (the input is the client's hello and proof);
//   1: the connecting side (the input is the server's proof);
//   2: frames after an authenticated handshake: the input is cut into frames (u16 length,
//      bytes) that the fuzzer seals with the session's key, so the frame header, CRC, hello
//      and heartbeat decoders behind the tag check see arbitrary content;
//   3: the same stream with whatever tags the input carries (all must be refused).
// The stream is read three times from a socket: with FrameReader, the buffered reader both ends
// of a live link use (it cuts many frames out of one recv), with read_frame(), the one-frame
// reader, and with FrameReader's non-blocking half (receive_available + next_buffered) fed in
// chunks of pseudo-random sizes through a socket whose writer stays open (a call that waited
// would hang the fuzzer); all must accept exactly the same frames with the same contents.
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cluster/interconnect/frame_stream.h"
#include "cluster/interconnect/hello.h"
#include "cluster/membership/heartbeat.h"
#include "util/link_handshake.h"
#include "tests/fuzz/socket_feed.h"

namespace {

using namespace nasd;

const std::vector<uint8_t> kKey(32, 0x5a);
const link::Nonce kClientNonce{1, 2, 3};
const link::Nonce kServerNonce{4, 5, 6};

void server_handshake(std::span<const uint8_t> in) {
  link::ServerHandshake hs(link::LinkKind::Interconnect, {kKey, "node-b"},
                           [](const std::string& n) { return n == "node-a"; }, kServerNonce);
  if (in.size() < link::kHelloPrefixBytes) return;
  const size_t rest = hs.hello_rest(in.first(link::kHelloPrefixBytes));
  if (rest == 0 || in.size() < link::kHelloPrefixBytes + rest) return;
  std::vector<uint8_t> reply;
  if (!hs.on_hello(in.first(link::kHelloPrefixBytes + rest), &reply)) return;
  if (reply.size() != link::kServerProofBytes) __builtin_trap();
  link::Session session;
  // Without the key no input may pass the proof.
  if (hs.on_client_proof(in.subspan(link::kHelloPrefixBytes + rest), &session)) __builtin_trap();
}

void client_handshake(std::span<const uint8_t> in) {
  link::ClientHandshake hs(link::LinkKind::Interconnect, {kKey, "node-a"}, "node-b", kClientNonce);
  std::vector<uint8_t> reply;
  link::Session session;
  if (hs.on_server_proof(in, &reply, &session)) __builtin_trap();
}

// A session both ends agree on, made with fixed nonces.
bool make_sessions(link::Session* client, link::Session* server) {
  link::ClientHandshake c(link::LinkKind::Interconnect, {kKey, "node-a"}, "node-b", kClientNonce);
  link::ServerHandshake s(link::LinkKind::Interconnect, {kKey, "node-b"}, nullptr, kServerNonce);
  std::vector<uint8_t> proof, client_proof;
  return s.on_hello(c.hello(), &proof) && c.on_server_proof(proof, &client_proof, client) &&
         s.on_client_proof(client_proof, server);
}

// Reads `stream` from a socket as a peer's frames, with the buffered reader or read_frame().
std::vector<interconnect::Frame> read_stream(const std::vector<uint8_t>& stream, bool buffered,
                                             bool seal) {
  std::vector<interconnect::Frame> out;
  link::Session client, server;
  if (!make_sessions(&client, &server)) __builtin_trap();
  const int fd = fuzz::socket_holding(stream);
  if (fd < 0) return out;
  interconnect::FrameLimits limits;
  limits.max_payload = 64 * 1024;
  limits.idle_timeout = std::chrono::milliseconds(0);
  limits.stall_timeout = std::chrono::milliseconds(0);
  interconnect::FrameReader reader(fd);
  for (int i = 0; i < 1000; ++i) {
    interconnect::Frame frame;
    std::string error;
    const interconnect::ReadStatus st =
        buffered ? reader.read(limits, &frame, &error, &server.receive)
                 : interconnect::read_frame(fd, limits, &frame, &error, &server.receive);
    if (st != interconnect::ReadStatus::Ok) break;
    if (!seal) __builtin_trap();  // a tag the input made up was accepted
    if (frame.payload.size() > limits.max_payload) __builtin_trap();
    out.push_back(std::move(frame));
  }
  ::close(fd);
  return out;
}

// The non-blocking reader, fed `stream` in chunks of 1 to 4096 bytes chosen by a generator
// seeded with the stream's length.
std::vector<interconnect::Frame> read_stream_in_chunks(const std::vector<uint8_t>& stream,
                                                       bool seal) {
  std::vector<interconnect::Frame> out;
  link::Session client, server;
  if (!make_sessions(&client, &server)) __builtin_trap();
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) return out;
  interconnect::FrameLimits limits;
  limits.max_payload = 64 * 1024;
  interconnect::FrameReader reader(fds[1]);
  uint64_t x = stream.size() * 0x9e3779b97f4a7c15ull + 1;
  size_t off = 0;
  bool open = true;
  for (int step = 0; step < 100000; ++step) {
    if (off < stream.size()) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      const size_t n = std::min<size_t>(1 + x % 4096, stream.size() - off);
      const ssize_t w = ::send(fds[0], stream.data() + off, n, MSG_DONTWAIT);
      if (w > 0) off += static_cast<size_t>(w);
    }
    if (open && off == stream.size()) {
      ::close(fds[0]);
      open = false;
    }
    std::string error;
    const interconnect::ReadStatus st = reader.receive_available(limits, true, &error);
    bool failed = st == interconnect::ReadStatus::Error;
    while (!failed) {
      interconnect::Frame frame;
      const interconnect::ReadStatus fs = reader.next_buffered(limits, &frame, &error, &server.receive);
      if (fs == interconnect::ReadStatus::Error) failed = true;
      if (fs != interconnect::ReadStatus::Ok) break;
      if (!seal) __builtin_trap();  // a tag the input made up was accepted
      if (frame.payload.size() > limits.max_payload) __builtin_trap();
      out.push_back(std::move(frame));
    }
    if (failed || st == interconnect::ReadStatus::Eof) break;
  }
  if (open) ::close(fds[0]);
  ::close(fds[1]);
  return out;
}

void frames(std::span<const uint8_t> in, bool seal) {
  link::Session client, server;
  if (!make_sessions(&client, &server)) __builtin_trap();
  std::vector<uint8_t> stream;
  if (seal) {
    while (in.size() >= 2) {
      size_t len = std::min<size_t>(in[0] | (in[1] << 8), in.size() - 2);
      auto frame = in.subspan(2, len);
      stream.insert(stream.end(), frame.begin(), frame.end());
      const link::Tag tag = client.send.seal({frame});
      stream.insert(stream.end(), tag.begin(), tag.end());
      in = in.subspan(2 + len);
    }
  } else {
    stream.assign(in.begin(), in.end());
  }
  const std::vector<interconnect::Frame> got = read_stream(stream, true, seal);
  const std::vector<interconnect::Frame> one_by_one = read_stream(stream, false, seal);
  const std::vector<interconnect::Frame> chunked = read_stream_in_chunks(stream, seal);
  if (got.size() != one_by_one.size() || chunked.size() != one_by_one.size()) __builtin_trap();
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i].payload != one_by_one[i].payload ||
        got[i].header.request_id != one_by_one[i].header.request_id ||
        got[i].header.type != one_by_one[i].header.type)
      __builtin_trap();
    if (chunked[i].payload != one_by_one[i].payload ||
        chunked[i].header.request_id != one_by_one[i].header.request_id ||
        chunked[i].header.type != one_by_one[i].header.type)
      __builtin_trap();
  }
  for (const interconnect::Frame& frame : got) {
    std::string error;
    if (frame.header.type == interconnect::MessageType::Hello) {
      interconnect::Hello theirs;
      if (interconnect::decode_hello(frame.payload, &theirs, &error)) {
        interconnect::Hello ours{interconnect::kProtocolVersion, "lab", "node-b"};
        (void)interconnect::hello_mismatch(ours, theirs, "node-a");
      }
    } else if (frame.header.type == interconnect::MessageType::Heartbeat) {
      membership::Heartbeat hb;
      (void)membership::decode_heartbeat(frame.payload, &hb, &error);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::span<const uint8_t> in(data + 1, size - 1);
  switch (data[0] % 4) {
    case 0: server_handshake(in); break;
    case 1: client_handshake(in); break;
    case 2: frames(in, true); break;
    case 3: frames(in, false); break;
  }
  return 0;
}
