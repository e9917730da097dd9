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

TEST(Exports, PolicyForVolumeDependsOnThePeer) {
  auto exports = Exports::from_config(Config::parse(fixture::kHarnessConfig));
  const ExportPolicy* local = exports->for_volume(7, ipv4_peer("127.0.0.1"));
  ASSERT_NE(local, nullptr);
  EXPECT_FALSE(local->read_only);
  const ExportPolicy* remote = exports->for_volume(7, ipv4_peer("10.1.2.3"));
  ASSERT_NE(remote, nullptr);
  EXPECT_TRUE(remote->read_only);
  EXPECT_EQ(exports->for_volume(7, ipv4_peer("192.168.1.1")), nullptr);
  EXPECT_EQ(exports->for_volume(9, ipv4_peer("127.0.0.1")), nullptr);  // not exported
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
  const ExportPolicy* e = exports->for_path(parts, &matched);
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
