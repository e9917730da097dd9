#include "util/link_handshake.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "util/secret_key.h"

namespace nasd::link {
namespace {

constexpr uint8_t kMagic[4] = {'N', 'S', 'L', 'K'};
constexpr uint8_t kVersion = 1;

std::span<const uint8_t> bytes_of(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// T: every field that both sides must agree on, names length-prefixed so no two different
// (client, server) pairs give the same bytes.
std::vector<uint8_t> transcript(LinkKind kind, const std::string& client, const std::string& server,
                                const Nonce& client_nonce, const Nonce& server_nonce) {
  std::vector<uint8_t> t;
  auto add = [&](std::span<const uint8_t> b) { t.insert(t.end(), b.begin(), b.end()); };
  add(bytes_of("nasd-link-1"));
  t.push_back(static_cast<uint8_t>(kind));
  t.push_back(static_cast<uint8_t>(client.size()));
  add(bytes_of(client));
  t.push_back(static_cast<uint8_t>(server.size()));
  add(bytes_of(server));
  add(client_nonce);
  add(server_nonce);
  return t;
}

Tag labelled(const std::vector<uint8_t>& key, std::string_view label,
             const std::vector<uint8_t>& t) {
  return hmac_sha256(key, {bytes_of(label), t});
}

DirectionKey direction_key(const std::vector<uint8_t>& key, std::string_view label,
                           const std::vector<uint8_t>& t) {
  return labelled(key, label, t);
}

bool valid_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxNodeName) return false;
  for (char c : name) {
    if (static_cast<unsigned char>(c) < 0x21 || static_cast<unsigned char>(c) > 0x7e) return false;
  }
  return true;
}

}  // namespace

void Credentials::check() const {
  if (key.size() < kMinSecretKeyBytes)
    throw std::invalid_argument("cluster key missing or shorter than " +
                                std::to_string(kMinSecretKeyBytes) + " bytes");
  if (!valid_name(self))
    throw std::invalid_argument("node name '" + self + "' is empty, too long or not printable");
}

Nonce fresh_nonce() {
  Nonce n;
  if (RAND_bytes(n.data(), static_cast<int>(n.size())) != 1)
    throw std::runtime_error("no random bytes for a link nonce");
  return n;
}

ClientHandshake::ClientHandshake(LinkKind kind, Credentials credentials, std::string server,
                                 Nonce nonce)
    : kind_(kind), credentials_(std::move(credentials)), server_(std::move(server)), nonce_(nonce) {
  credentials_.check();
  if (!valid_name(server_)) throw std::invalid_argument("peer name '" + server_ + "' is invalid");
}

std::vector<uint8_t> ClientHandshake::hello() const {
  std::vector<uint8_t> out(kMagic, kMagic + 4);
  out.push_back(kVersion);
  out.push_back(static_cast<uint8_t>(kind_));
  out.push_back(static_cast<uint8_t>(credentials_.self.size()));
  out.push_back(0);
  out.insert(out.end(), credentials_.self.begin(), credentials_.self.end());
  out.insert(out.end(), nonce_.begin(), nonce_.end());
  return out;
}

bool ClientHandshake::on_server_proof(std::span<const uint8_t> message, std::vector<uint8_t>* reply,
                                      Session* session) const {
  if (message.size() != kServerProofBytes) return false;
  Nonce server_nonce;
  std::memcpy(server_nonce.data(), message.data(), kNonceBytes);
  const auto t = transcript(kind_, credentials_.self, server_, nonce_, server_nonce);
  const Tag expected = labelled(credentials_.key, "server proof", t);
  if (CRYPTO_memcmp(expected.data(), message.data() + kNonceBytes, kTagBytes) != 0) return false;
  const Tag proof = labelled(credentials_.key, "client proof", t);
  reply->assign(proof.begin(), proof.end());
  session->peer = server_;
  session->send = FrameSealer(direction_key(credentials_.key, "client to server", t));
  session->receive = FrameOpener(direction_key(credentials_.key, "server to client", t));
  return true;
}

ServerHandshake::ServerHandshake(LinkKind kind, Credentials credentials,
                                 std::function<bool(const std::string&)> accept_peer, Nonce nonce)
    : kind_(kind),
      credentials_(std::move(credentials)),
      accept_peer_(std::move(accept_peer)),
      nonce_(nonce) {
  credentials_.check();
}

size_t ServerHandshake::hello_rest(std::span<const uint8_t> prefix) const {
  if (prefix.size() != kHelloPrefixBytes || std::memcmp(prefix.data(), kMagic, 4) != 0 ||
      prefix[4] != kVersion || prefix[5] != static_cast<uint8_t>(kind_) || prefix[6] == 0 ||
      prefix[6] > kMaxNodeName || prefix[7] != 0)
    return 0;
  return prefix[6] + kNonceBytes;
}

bool ServerHandshake::on_hello(std::span<const uint8_t> hello, std::vector<uint8_t>* reply) {
  if (greeted_ || hello.size() < kHelloPrefixBytes) return false;
  const size_t rest = hello_rest(hello.first(kHelloPrefixBytes));
  if (rest == 0 || hello.size() != kHelloPrefixBytes + rest) return false;
  const size_t name_len = hello[6];
  std::string client(reinterpret_cast<const char*>(hello.data() + kHelloPrefixBytes), name_len);
  // Which names may connect is judged only after the key is proven (on_client_proof), so a
  // prober without the key cannot even learn which node names exist.
  if (!valid_name(client)) return false;
  client_ = std::move(client);
  std::memcpy(client_nonce_.data(), hello.data() + kHelloPrefixBytes + name_len, kNonceBytes);
  greeted_ = true;
  const auto t = transcript(kind_, client_, credentials_.self, client_nonce_, nonce_);
  const Tag proof = labelled(credentials_.key, "server proof", t);
  reply->assign(nonce_.begin(), nonce_.end());
  reply->insert(reply->end(), proof.begin(), proof.end());
  return true;
}

bool ServerHandshake::on_client_proof(std::span<const uint8_t> message, Session* session) const {
  if (!greeted_ || message.size() != kClientProofBytes) return false;
  const auto t = transcript(kind_, client_, credentials_.self, client_nonce_, nonce_);
  const Tag expected = labelled(credentials_.key, "client proof", t);
  if (CRYPTO_memcmp(expected.data(), message.data(), kTagBytes) != 0) return false;
  if (client_ == credentials_.self || (accept_peer_ && !accept_peer_(client_))) return false;
  session->peer = client_;
  session->send = FrameSealer(direction_key(credentials_.key, "server to client", t));
  session->receive = FrameOpener(direction_key(credentials_.key, "client to server", t));
  return true;
}

namespace {

using Clock = std::chrono::steady_clock;

int ms_left(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() <= 0 ? 0 : static_cast<int>(left.count());
}

bool read_all(int fd, uint8_t* buf, size_t n, Clock::time_point deadline, std::string* error) {
  size_t got = 0;
  while (got < n) {
    pollfd p{fd, POLLIN, 0};
    int rc = ::poll(&p, 1, ms_left(deadline));
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) {
      *error = rc == 0 ? "handshake timed out" : std::string("poll: ") + std::strerror(errno);
      return false;
    }
    ssize_t r = ::recv(fd, buf + got, n - got, 0);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (r <= 0) {
      *error = r == 0 ? "connection closed during the handshake"
                      : std::string("recv: ") + std::strerror(errno);
      return false;
    }
    got += static_cast<size_t>(r);
  }
  return true;
}

bool write_all(int fd, std::span<const uint8_t> bytes, Clock::time_point deadline,
               std::string* error) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    pollfd p{fd, POLLOUT, 0};
    int rc = ::poll(&p, 1, ms_left(deadline));
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) {
      *error = rc == 0 ? "handshake timed out" : std::string("poll: ") + std::strerror(errno);
      return false;
    }
    ssize_t w = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (w < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (w <= 0) {
      *error = std::string("send: ") + std::strerror(errno);
      return false;
    }
    sent += static_cast<size_t>(w);
  }
  return true;
}

}  // namespace

std::optional<Session> authenticate_client(int fd, LinkKind kind, const Credentials& credentials,
                                           const std::string& server,
                                           std::chrono::milliseconds timeout, std::string* error) {
  const auto deadline = Clock::now() + timeout;
  ClientHandshake hs(kind, credentials, server, fresh_nonce());
  if (!write_all(fd, hs.hello(), deadline, error)) return std::nullopt;
  std::vector<uint8_t> proof(kServerProofBytes), reply;
  if (!read_all(fd, proof.data(), proof.size(), deadline, error)) {
    if (*error == "connection closed during the handshake")
      *error = "peer closed the link handshake (wrong cluster key, or not node '" + server + "')";
    return std::nullopt;
  }
  Session session;
  if (!hs.on_server_proof(proof, &reply, &session)) {
    *error = "peer failed to prove the cluster key (wrong key, or not node '" + server + "')";
    return std::nullopt;
  }
  if (!write_all(fd, reply, deadline, error)) return std::nullopt;
  return session;
}

std::optional<Session> authenticate_server(int fd, LinkKind kind, const Credentials& credentials,
                                           const std::function<bool(const std::string&)>& accept_peer,
                                           std::chrono::milliseconds timeout, std::string* error) {
  const auto deadline = Clock::now() + timeout;
  ServerHandshake hs(kind, credentials, accept_peer, fresh_nonce());
  std::vector<uint8_t> hello(kHelloPrefixBytes), reply;
  if (!read_all(fd, hello.data(), hello.size(), deadline, error)) return std::nullopt;
  const size_t rest = hs.hello_rest(hello);
  if (rest == 0) {
    *error = "not a nasd link hello (or another version or link kind)";
    return std::nullopt;
  }
  hello.resize(kHelloPrefixBytes + rest);
  if (!read_all(fd, hello.data() + kHelloPrefixBytes, rest, deadline, error)) return std::nullopt;
  if (!hs.on_hello(hello, &reply)) {
    *error = "malformed link hello";
    return std::nullopt;
  }
  if (!write_all(fd, reply, deadline, error)) return std::nullopt;
  std::vector<uint8_t> proof(kClientProofBytes);
  if (!read_all(fd, proof.data(), proof.size(), deadline, error)) return std::nullopt;
  Session session;
  if (!hs.on_client_proof(proof, &session)) {
    *error = "client '" + hs.client() + "' failed to prove the cluster key or is not a peer";
    return std::nullopt;
  }
  return session;
}

}  // namespace nasd::link
