#include <arpa/inet.h>
#include <netinet/in.h>

#include <gtest/gtest.h>

#include "server/nfs/exports/exports.h"
#include "tests/nfs/service_harness.h"

namespace nasd::nfs {
namespace {

using fixture::ipv4_peer;

sockaddr_storage ipv6_peer(const char* addr) {
  sockaddr_storage ss{};
  auto* sin6 = reinterpret_cast<sockaddr_in6*>(&ss);
  sin6->sin6_family = AF_INET6;
  inet_pton(AF_INET6, addr, &sin6->sin6_addr);
  return ss;
}

TEST(ClientSpec, MatchesAddressesAndPrefixes) {
  EXPECT_TRUE(ClientSpec::parse("*").matches(ipv4_peer("203.0.113.9")));
  EXPECT_TRUE(ClientSpec::parse("192.0.2.7").matches(ipv4_peer("192.0.2.7")));
  EXPECT_FALSE(ClientSpec::parse("192.0.2.7").matches(ipv4_peer("192.0.2.8")));
  ClientSpec net = ClientSpec::parse("10.20.0.0/14");
  EXPECT_TRUE(net.matches(ipv4_peer("10.23.255.1")));
  EXPECT_FALSE(net.matches(ipv4_peer("10.24.0.1")));
  EXPECT_TRUE(ClientSpec::parse("0.0.0.0/0").matches(ipv4_peer("8.8.8.8")));
}

TEST(ClientSpec, MatchesIpv6AndMappedIpv4) {
  ClientSpec v6 = ClientSpec::parse("fd00:1::/32");
  EXPECT_TRUE(v6.matches(ipv6_peer("fd00:1:ffff::5")));
  EXPECT_FALSE(v6.matches(ipv6_peer("fd00:2::5")));
  EXPECT_FALSE(v6.matches(ipv4_peer("10.0.0.1")));
  // A dual-stack listener reports IPv4 clients as ::ffff:a.b.c.d.
  EXPECT_TRUE(ClientSpec::parse("127.0.0.0/8").matches(ipv6_peer("::ffff:127.0.0.5")));
}

TEST(ClientSpec, ResolvesHostNames) {
  EXPECT_TRUE(ClientSpec::parse("localhost").matches(ipv4_peer("127.0.0.1")));
}

TEST(ClientSpec, RejectsMalformedEntries) {
  EXPECT_THROW(ClientSpec::parse("10.0.0.0/33"), ConfigError);
  EXPECT_THROW(ClientSpec::parse("10.0.0.0/abc"), ConfigError);
  EXPECT_THROW(ClientSpec::parse("fd00::/129"), ConfigError);
  EXPECT_THROW(ClientSpec::parse("no-such-host.invalid"), ConfigError);
  EXPECT_THROW(ClientSpec::parse("bad host/8"), ConfigError);
}

TEST(Exports, MapsVolumeNamesToIdsAndKeepsConfigOrder) {
  auto exports = Exports::from_config(Config::parse(fixture::kHarnessConfig));
  ASSERT_EQ(exports->all().size(), 3u);
  EXPECT_EQ(exports->all()[0].path, "/r/main");
  EXPECT_EQ(exports->all()[0].volume_id, 7u);
  EXPECT_FALSE(exports->all()[0].read_only);
  EXPECT_EQ(exports->all()[2].volume_id, 8u);
  EXPECT_TRUE(exports->all()[2].read_only);
  EXPECT_EQ(exports->all()[2].squash, Squash::All);
}

sockaddr_storage from_port(sockaddr_storage peer, uint16_t port) {
  reinterpret_cast<sockaddr_in*>(&peer)->sin_port = htons(port);
  return peer;
}

// The handle names its export: /r/main's handles get /r/main's rules, /r/main-ro's get
// /r/main-ro's, whichever other export of the volume lists the client.
TEST(Exports, HandlePolicyIsTheExportItWasIssuedUnder) {
  auto exports = Exports::from_config(Config::parse(fixture::kHarnessConfig));
  const uint32_t rw_id = export_id_for_path("/r/main"), ro_id = export_id_for_path("/r/main-ro");
  ASSERT_NE(rw_id, ro_id);
  auto rw = exports->for_handle(7, rw_id, ipv4_peer("127.0.0.1"));
  ASSERT_TRUE(rw);
  EXPECT_FALSE(rw->read_only);
  auto ro = exports->for_handle(7, ro_id, ipv4_peer("127.0.0.1"));
  ASSERT_TRUE(ro);
  EXPECT_TRUE(ro->read_only);
  EXPECT_FALSE(ro->allows(ipv4_peer("127.0.0.1")));  // the caller then answers ACCES
  // An export id of another volume, or of no export: stale.
  EXPECT_EQ(exports->for_handle(8, rw_id, ipv4_peer("127.0.0.1")), nullptr);
  EXPECT_EQ(exports->for_handle(7, 12345, ipv4_peer("127.0.0.1")), nullptr);
}

TEST(Exports, LegacyHandlesNeedExactlyOneListingExport) {
  auto exports = Exports::from_config(Config::parse(fixture::kHarnessConfig));
  auto local = exports->for_handle(7, 0, ipv4_peer("127.0.0.1"));
  ASSERT_TRUE(local);
  EXPECT_EQ(local->path, "/r/main");
  auto remote = exports->for_handle(7, 0, ipv4_peer("10.1.2.3"));
  ASSERT_TRUE(remote);
  EXPECT_EQ(remote->path, "/r/main-ro");
  auto nobody = exports->for_handle(7, 0, ipv4_peer("192.168.1.1"));
  ASSERT_TRUE(nobody);
  EXPECT_FALSE(nobody->allows(ipv4_peer("192.168.1.1")));
  EXPECT_EQ(exports->for_handle(9, 0, ipv4_peer("127.0.0.1")), nullptr);  // not exported

  auto both = Exports::from_config(Config::parse(R"(
[volume v]
id = 1
[export /pub]
volume = v
clients = *
[export /adm]
volume = v
clients = 127.0.0.1
access = rw
)"));
  EXPECT_EQ(both->for_handle(1, 0, ipv4_peer("127.0.0.1")), nullptr) << "ambiguous: stale";
  EXPECT_TRUE(both->for_handle(1, 0, ipv4_peer("127.0.0.2")));
}

TEST(Exports, CrossingPrefersTheCrossedPathThenTheStrictestExport) {
  auto exports = Exports::from_config(Config::parse(R"(
[volume v]
id = 1
[export /adm]
volume = v
clients = 127.0.0.1
options = rw, no_root_squash
[export /r/v]
volume = v
clients = 127.0.0.0/8
access = rw
[export /pub]
volume = v
clients = *
)"));
  auto at_path = exports->for_crossing(1, "/r/v", ipv4_peer("127.0.0.1"));
  ASSERT_TRUE(at_path);
  EXPECT_EQ(at_path->path, "/r/v");
  auto strictest = exports->for_crossing(1, "/elsewhere/v", ipv4_peer("127.0.0.1"));
  ASSERT_TRUE(strictest);
  EXPECT_EQ(strictest->path, "/pub");
  auto foreign = exports->for_crossing(1, "/r/v", ipv4_peer("10.0.0.1"));
  ASSERT_TRUE(foreign);
  EXPECT_EQ(foreign->path, "/pub") << "/r/v does not list 10.0.0.1";
  EXPECT_EQ(exports->for_crossing(2, "/r/v", ipv4_peer("127.0.0.1")), nullptr);
}

TEST(Exports, SecureRootSquashAndReadOnlyAreTheDefaults) {
  auto exports = Exports::from_config(Config::parse("[volume v]\nid = 1\n[export /x]\nvolume = v\nclients = *\n"));
  ExportPolicy e = exports->all().at(0);
  EXPECT_TRUE(e.secure);
  EXPECT_TRUE(e.read_only);
  EXPECT_EQ(e.squash, Squash::Root);
  EXPECT_TRUE(e.port_allowed(from_port(ipv4_peer("127.0.0.1"), 1023)));
  EXPECT_FALSE(e.port_allowed(from_port(ipv4_peer("127.0.0.1"), 1024)));
  EXPECT_FALSE(e.port_allowed(from_port(ipv4_peer("127.0.0.1"), 40000)));
}

TEST(Exports, KnfsdOptionsSetAccessSquashAndPortRule) {
  auto exports = Exports::from_config(Config::parse(R"(
[volume v]
id = 1
[export /a]
volume = v
clients = *
options = rw, insecure, no_root_squash
[export /b]
volume = v
clients = *
secure = no
options = all_squash, ro
[export /c]
volume = v
clients = *
access = rw
squash = none
options = rw, secure
)"));
  auto all = exports->all();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_FALSE(all[0].read_only);
  EXPECT_FALSE(all[0].secure);
  EXPECT_EQ(all[0].squash, Squash::None);
  EXPECT_TRUE(all[0].port_allowed(from_port(ipv4_peer("127.0.0.1"), 40000)));
  EXPECT_TRUE(all[1].read_only);
  EXPECT_FALSE(all[1].secure);
  EXPECT_EQ(all[1].squash, Squash::All);
  EXPECT_FALSE(all[2].read_only);
  EXPECT_TRUE(all[2].secure);
  EXPECT_EQ(all[2].squash, Squash::None);
  EXPECT_EQ(describe_export(all[0]), "/a volume=v clients=* rw,insecure,no_root_squash anonuid=65534 anongid=65534");
}

TEST(Exports, ReplaceSwapsTheWholeTableOrNothing) {
  auto exports = Exports::from_config(Config::parse(fixture::kHarnessConfig));
  auto held = exports->for_handle(7, export_id_for_path("/r/main"), ipv4_peer("127.0.0.1"));
  ASSERT_TRUE(held);
  auto next = Exports::parse(Config::parse(R"(
[volume main]
id = 7
[export /r/main]
volume = main
clients = 127.0.0.0/8
access = ro
)"));
  exports->replace(next);
  EXPECT_FALSE(held->read_only) << "a call keeps the policy it started with";
  auto now = exports->for_handle(7, export_id_for_path("/r/main"), ipv4_peer("127.0.0.1"));
  ASSERT_TRUE(now);
  EXPECT_TRUE(now->read_only) << "the same handle gets the new rules";
  EXPECT_EQ(exports->for_handle(7, export_id_for_path("/r/main-ro"), ipv4_peer("10.1.2.3")), nullptr)
      << "a removed export's handles are stale";

  auto twice = next;
  twice.push_back(next[0]);
  EXPECT_THROW(exports->replace(twice), ConfigError);
  EXPECT_EQ(exports->all().size(), 1u) << "a refused table leaves the old one in force";
}

TEST(Exports, ExportIdsAreStableAndNeverZero) {
  EXPECT_EQ(export_id_for_path("/r/v0"), export_id_for_path("/r/v0"));
  EXPECT_NE(export_id_for_path("/pub"), export_id_for_path("/adm"));
  EXPECT_NE(export_id_for_path("/pub"), 0u);
  EXPECT_LT(export_id_for_path("/some/long/path"), 1u << 24);
}

TEST(Exports, FindsLongestExportPrefixOfAPath) {
  auto exports = Exports::from_config(Config::parse(R"(
[volume a]
id = 1
[volume b]
id = 2
[export /data]
volume = a
clients = *
[export /data/deep]
volume = b
clients = *
)"));
  std::vector<std::string> parts;
  size_t matched = 0;
  ASSERT_TRUE(split_export_path("/data/deep/x/y", &parts));
  auto e = exports->for_path(parts, &matched);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->volume_id, 2u);
  EXPECT_EQ(matched, 2u);
  ASSERT_TRUE(split_export_path("/data/deeper", &parts));
  e = exports->for_path(parts, &matched);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->volume_id, 1u);  // component-wise, not string prefix
  ASSERT_TRUE(split_export_path("/other", &parts));
  EXPECT_EQ(exports->for_path(parts, &matched), nullptr);
}

TEST(Exports, SplitsPathsStrictly) {
  std::vector<std::string> parts;
  ASSERT_TRUE(split_export_path("//a/./b//", &parts));
  EXPECT_EQ(parts, (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(split_export_path("a/b", &parts));
  EXPECT_FALSE(split_export_path("/a/../b", &parts));
}

void expect_config_error(const std::string& text, const std::string& fragment) {
  try {
    Exports::from_config(Config::parse(text));
    ADD_FAILURE() << "accepted: " << text;
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(Exports, ReportsConfigurationErrorsClearly) {
  const std::string vol = "[volume v]\nid = 3\n";
  expect_config_error(vol + "[export /x]\nvolume = v\nclients = *\nacces = rw\n",
                      "unknown key 'acces'");
  expect_config_error(vol + "[export /x]\nclients = *\n", "missing volume");
  expect_config_error(vol + "[export /x]\nvolume = w\nclients = *\n", "no [volume w]");
  expect_config_error(vol + "[export /x]\nvolume = v\n", "missing clients");
  expect_config_error(vol + "[export /x]\nvolume = v\nclients = *\naccess = rwx\n", "access");
  expect_config_error(vol + "[export /x]\nvolume = v\nclients = *\nsquash = some\n", "squash");
  expect_config_error(vol + "[export /x]\nvolume = v\nclients = 1.2.3.4/40\n", "1.2.3.4/40");
  expect_config_error(vol + "[export /x]\nvolume = v\nclients = *\nanonuid = -1\n", "anonuid");
  expect_config_error(vol + "[export x]\nvolume = v\nclients = *\n", "absolute");
  expect_config_error(vol + "[export /x]\nvolume = v\nclients = *\n[export /x/]\nvolume = v\nclients = *\n",
                      "exported twice");
  expect_config_error("[volume v]\n[export /x]\nvolume = v\nclients = *\n", "missing id");
  expect_config_error(vol + "[export /x]\nvolume = v\nclients = *\noptions = rw, sync\n",
                      "unknown option 'sync'");
  expect_config_error(vol + "[export /x]\nvolume = v\nclients = *\naccess = ro\noptions = rw\n",
                      "contradict the access key");
  expect_config_error(vol + "[export /x]\nvolume = v\nclients = *\nsecure = maybe\n", "secure");
  expect_config_error(vol + "\n\n[export /x]\nvolume = v\nclients = *\naccess = rx\n", "line 5");
}

TEST(ExportPolicy, SquashesRootOnly) {
  ExportPolicy p;
  p.squash = Squash::Root;
  p.anon_uid = 99;
  p.anon_gid = 98;
  rpc::Credential root;
  root.flavor = rpc::kAuthSys;
  root.uid = 0;
  root.gid = 0;
  root.gids = {0, 5};
  fs::Cred c = p.credential_for(root);
  EXPECT_EQ(c.uid, 99u);
  EXPECT_EQ(c.gid, 98u);
  EXPECT_EQ(c.gids, (std::vector<uint32_t>{98, 5}));

  rpc::Credential user = root;
  user.uid = 1000;
  user.gid = 100;
  user.gids = {100, 200};
  c = p.credential_for(user);
  EXPECT_EQ(c.uid, 1000u);
  EXPECT_EQ(c.gid, 100u);
  EXPECT_EQ(c.gids, (std::vector<uint32_t>{100, 200}));
}

TEST(ExportPolicy, SquashAllAndNone) {
  rpc::Credential root;
  root.flavor = rpc::kAuthSys;
  root.uid = 0;
  root.gid = 0;
  ExportPolicy all;
  all.squash = Squash::All;
  all.anon_uid = 7;
  all.anon_gid = 8;
  root.uid = 1234;
  EXPECT_EQ(all.credential_for(root).uid, 7u);
  ExportPolicy none;
  none.squash = Squash::None;
  root.uid = 0;
  EXPECT_EQ(none.credential_for(root).uid, 0u);
}

TEST(ExportPolicy, AuthNoneIsAnonymous) {
  ExportPolicy none;
  none.squash = Squash::None;
  none.anon_uid = 65534;
  rpc::Credential anon;
  anon.flavor = rpc::kAuthNone;
  anon.uid = 0;  // whatever the field holds, AUTH_NONE carries no identity
  EXPECT_EQ(none.credential_for(anon).uid, 65534u);
}

}  // namespace
}  // namespace nasd::nfs
