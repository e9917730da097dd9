// Mutual authentication of a cluster link (interconnect, NVRAM mirror) with the cluster key.
// Before any protocol byte, the connecting side (client) and the accepting side (server) run:
//
//   client -> server   Hello  "NSLK" | u8 version | u8 link kind | u8 name length | u8 0 |
//                             client name | client nonce (32)
//   server -> client   Proof  server nonce (32) | HMAC(K, "server proof" | T)
//   client -> server   Proof  HMAC(K, "client proof" | T)
//
//   T = "nasd-link-1" | link kind | client name | server name | client nonce | server nonce
//   (names length-prefixed). K is the cluster key; nonces are fresh random bytes (OpenSSL).
//
// Each side proves the key over a transcript holding the other side's fresh nonce, so a
// recorded exchange cannot be replayed; the labels and the direction-specific names keep a
// proof from being reflected back or relayed to another node or link kind. The server's name
// is never sent: the client knows whom it dials, and a wrong key or a wrong node both fail the
// proof. Anything wrong (magic, version, kind, unknown name, proof) is refused by closing the
// connection without a word, so a prober learns nothing, not even the cluster's name.
//
// Then each direction gets its own key, HMAC(K, "client to server" | T) and
// HMAC(K, "server to client" | T), for the frame tags of link_seal.h.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "util/link_seal.h"

namespace nasd::link {

inline constexpr size_t kNonceBytes = 32;
inline constexpr size_t kMaxNodeName = 64;
inline constexpr size_t kHelloPrefixBytes = 8;
inline constexpr size_t kServerProofBytes = kNonceBytes + kTagBytes;
inline constexpr size_t kClientProofBytes = kTagBytes;

// LoadAgent: nasd-loadgen's coordinator and its agents (bench/agent_channel.h), a tool
// outside the cluster that borrows the same handshake with its own key.
enum class LinkKind : uint8_t { Interconnect = 1, Mirror = 2, LoadAgent = 3 };

// What one node knows: the cluster key and its own name.
struct Credentials {
  std::vector<uint8_t> key;
  std::string self;
  // Throws std::invalid_argument when the key is too short or the name empty or too long.
  void check() const;
};

// The two keys of an authenticated connection.
struct Session {
  std::string peer;   // the other side's name, as proven
  FrameSealer send;
  FrameOpener receive;
};

using Nonce = std::array<uint8_t, kNonceBytes>;
Nonce fresh_nonce();

// The connecting side, as a state machine without I/O (the fuzzers and tests drive it).
class ClientHandshake {
 public:
  ClientHandshake(LinkKind kind, Credentials credentials, std::string server, Nonce nonce);
  std::vector<uint8_t> hello() const;
  // Checks the server's proof (kServerProofBytes); on success fills `*reply` (the client's
  // proof, to send) and `*session`. False: wrong key, wrong node, or garbage.
  bool on_server_proof(std::span<const uint8_t> message, std::vector<uint8_t>* reply,
                       Session* session) const;

 private:
  LinkKind kind_;
  Credentials credentials_;
  std::string server_;
  Nonce nonce_;
};

// The accepting side. `accept_peer` says which client names may connect at all.
class ServerHandshake {
 public:
  ServerHandshake(LinkKind kind, Credentials credentials,
                  std::function<bool(const std::string&)> accept_peer, Nonce nonce);
  // The first kHelloPrefixBytes of the hello: how many more bytes it has, 0 to refuse.
  size_t hello_rest(std::span<const uint8_t> prefix) const;
  // The whole hello (prefix and rest); on success `*reply` is the server's proof.
  bool on_hello(std::span<const uint8_t> hello, std::vector<uint8_t>* reply);
  // The client's proof; on success `*session` is ready.
  // A client whose name `accept_peer` refuses fails here, after its key is proven.
  bool on_client_proof(std::span<const uint8_t> message, Session* session) const;
  const std::string& client() const { return client_; }

 private:
  LinkKind kind_;
  Credentials credentials_;
  std::function<bool(const std::string&)> accept_peer_;
  Nonce nonce_;
  std::string client_;
  Nonce client_nonce_{};
  bool greeted_ = false;
};

// Runs the client side on a connected blocking socket within `timeout`. nullopt (and *error)
// on any failure; the caller closes the socket.
std::optional<Session> authenticate_client(int fd, LinkKind kind, const Credentials& credentials,
                                           const std::string& server,
                                           std::chrono::milliseconds timeout, std::string* error);
// Runs the server side within `timeout`. nullopt on any failure (*error says why, for the
// server's own log only: nothing is sent to the client); the caller closes the socket.
std::optional<Session> authenticate_server(int fd, LinkKind kind, const Credentials& credentials,
                                           const std::function<bool(const std::string&)>& accept_peer,
                                           std::chrono::milliseconds timeout, std::string* error);

}  // namespace nasd::link
