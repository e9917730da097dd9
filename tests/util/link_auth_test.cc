// The cluster link handshake and frame tags (util/link_handshake.h, util/link_seal.h), and the
// secret key file they start from.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "util/link_handshake.h"
#include "util/secret_key.h"

namespace nasd::link {
namespace {

const std::vector<uint8_t> kKey(32, 0x5a);
const std::vector<uint8_t> kOtherKey(32, 0x33);

struct Pair {
  ClientHandshake client;
  ServerHandshake server;
  Pair(const std::vector<uint8_t>& client_key, const std::vector<uint8_t>& server_key,
       std::string dialled = "b", LinkKind server_kind = LinkKind::Interconnect,
       std::function<bool(const std::string&)> accept = nullptr)
      : client(LinkKind::Interconnect, {client_key, "a"}, std::move(dialled), fresh_nonce()),
        server(server_kind, {server_key, "b"}, std::move(accept), fresh_nonce()) {}
  // Runs the three messages; which sides succeeded.
  std::pair<bool, bool> run(Session* c, Session* s) {
    std::vector<uint8_t> proof, client_proof;
    const auto hello = client.hello();
    if (server.hello_rest(std::span(hello).first(kHelloPrefixBytes)) + kHelloPrefixBytes !=
            hello.size() ||
        !server.on_hello(hello, &proof))
      return {false, false};
    bool client_ok = client.on_server_proof(proof, &client_proof, c);
    if (!client_ok) return {false, false};
    return {true, server.on_client_proof(client_proof, s)};
  }
};

std::span<const uint8_t> bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

TEST(LinkHandshake, BothSidesProveTheKeyAndAgreeOnDirectionKeys) {
  Pair p(kKey, kKey);
  Session c, s;
  ASSERT_EQ(p.run(&c, &s), std::make_pair(true, true));
  EXPECT_EQ(c.peer, "b");
  EXPECT_EQ(s.peer, "a");
  for (int i = 0; i < 3; ++i) {
    const std::string frame = "frame " + std::to_string(i);
    EXPECT_TRUE(s.receive.open({bytes(frame)}, c.send.seal({bytes(frame)})));
    EXPECT_TRUE(c.receive.open({bytes(frame)}, s.send.seal({bytes(frame)})));
  }
}

TEST(LinkHandshake, AWrongKeyFailsOnEitherSide) {
  Session c, s;
  Pair server_wrong(kKey, kOtherKey);
  EXPECT_EQ(server_wrong.run(&c, &s).first, false);  // the client rejects the server's proof
  // A client without the key cannot make a proof; whatever it sends is refused.
  ServerHandshake server(LinkKind::Interconnect, {kKey, "b"}, nullptr, fresh_nonce());
  ClientHandshake client(LinkKind::Interconnect, {kOtherKey, "a"}, "b", fresh_nonce());
  std::vector<uint8_t> proof;
  ASSERT_TRUE(server.on_hello(client.hello(), &proof));
  // The server's proof reflected back as the client's is refused too.
  EXPECT_FALSE(server.on_client_proof(std::span(proof).subspan(kNonceBytes), &s));
  EXPECT_FALSE(server.on_client_proof(std::vector<uint8_t>(kClientProofBytes, 0), &s));
}

TEST(LinkHandshake, TheClientMustReachTheNodeItDialled) {
  Pair p(kKey, kKey, "c");
  Session c, s;
  EXPECT_FALSE(p.run(&c, &s).first);
}

TEST(LinkHandshake, ANameThatIsNotAPeerIsRefusedAfterItsProof) {
  Pair p(kKey, kKey, "b", LinkKind::Interconnect, [](const std::string& n) { return n == "x"; });
  Session c, s;
  EXPECT_EQ(p.run(&c, &s), std::make_pair(true, false));
}

TEST(LinkHandshake, AnotherLinkKindIsNotEvenGreeted) {
  Pair p(kKey, kKey, "b", LinkKind::Mirror);
  Session c, s;
  EXPECT_EQ(p.run(&c, &s), std::make_pair(false, false));
}

TEST(LinkSeal, ReplayedReorderedAlteredAndReflectedFramesFail) {
  Pair p(kKey, kKey);
  Session c, s;
  ASSERT_EQ(p.run(&c, &s), std::make_pair(true, true));
  const Tag first = c.send.seal({bytes("one")});
  const Tag second = c.send.seal({bytes("two")});
  EXPECT_FALSE(s.receive.open({bytes("two")}, second));  // out of order
  EXPECT_FALSE(s.receive.open({bytes("One")}, first));   // altered
  const Tag reflected = s.send.seal({bytes("one")});
  EXPECT_FALSE(s.receive.open({bytes("one")}, reflected));  // the other direction's key
  EXPECT_TRUE(s.receive.open({bytes("one")}, first));
  EXPECT_FALSE(s.receive.open({bytes("one")}, first));  // replayed
  EXPECT_TRUE(s.receive.open({bytes("t"), bytes("wo")}, second));  // pieces = their concatenation
}

TEST(LinkSeal, AnotherConnectionsTagsFail) {
  Pair p1(kKey, kKey), p2(kKey, kKey);
  Session c1, s1, c2, s2;
  ASSERT_EQ(p1.run(&c1, &s1), std::make_pair(true, true));
  ASSERT_EQ(p2.run(&c2, &s2), std::make_pair(true, true));
  EXPECT_FALSE(s2.receive.open({bytes("x")}, c1.send.seal({bytes("x")})));
}

TEST(SecretKey, MadeOnceWithModeSixHundredAndReadBack) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("nasd-secret-key-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "cluster.key").string();
  const auto key = load_or_create_secret_key(path, "cluster key");
  EXPECT_EQ(key.size(), kSecretKeyBytes);
  struct stat st{};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(load_or_create_secret_key(path, "cluster key"), key);
  std::ofstream(dir / "short.key") << "short";
  ::chmod((dir / "short.key").c_str(), 0600);  // refused for its length, not its mode
  EXPECT_THROW(load_or_create_secret_key((dir / "short.key").string(), "cluster key"),
               std::runtime_error);
  EXPECT_THROW(Credentials({std::vector<uint8_t>(8, 1), "a"}).check(), std::invalid_argument);
  std::filesystem::remove_all(dir);
}

// A key file others can read (a copy made with the default umask, a chmod gone wrong) is
// refused with the fix in the message, not used: the secret would already be out.
TEST(SecretKey, AKeyFileOthersCanReadIsRefused) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("nasd-open-key-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "cluster.key").string();
  const auto key = load_or_create_secret_key(path, "cluster key");
  for (mode_t mode : {0644, 0640, 0604, 0620}) {
    ASSERT_EQ(::chmod(path.c_str(), mode), 0);
    try {
      load_or_create_secret_key(path, "cluster key");
      ADD_FAILURE() << "mode " << std::oct << mode << " accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("is open to other users"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("chmod 600 " + path), std::string::npos) << e.what();
    }
  }
  ASSERT_EQ(::chmod(path.c_str(), 0400), 0);
  EXPECT_EQ(load_or_create_secret_key(path, "cluster key"), key);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace nasd::link
