#include "cluster/cluster_options.h"

#include <gtest/gtest.h>

namespace nasd::cluster {
namespace {

const char* kPair = R"(
[cluster]
name = lab
interconnect = 127.0.0.1:7001
shared_dir = /srv/san
mirror_listen = 127.0.0.1:7101
lease_ms = 3000
[peer b]
interconnect = 127.0.0.1:7002
volumes = v1
mirror = 127.0.0.1:7102
listen = 127.0.0.2
nfs_port = 2149
mount_port = 20148
[volume v0]
id = 0
[volume v1]
id = 1
)";

std::optional<ClusterOptions> parse(const std::string& text) {
  return ClusterOptions::from_config(Config::parse(text, "/etc/nasd/a.conf"));
}

TEST(ClusterOptions, AnHaPairReadsItsSharedFolderMirrorAndThePartnersAddress) {
  auto o = parse(kPair);
  ASSERT_TRUE(o && o->failover);
  EXPECT_EQ(o->failover->shared_dir, "/srv/san");
  EXPECT_EQ(o->failover->mirror_host, "127.0.0.1");
  EXPECT_EQ(o->failover->mirror_port, 7101);
  EXPECT_EQ(o->failover->lease_ms, 3000);
  EXPECT_FALSE(o->failover->auto_failback);  // failback on command unless asked otherwise
  const PeerOptions& p = o->partner();
  EXPECT_EQ(p.mirror, "127.0.0.1:7102");
  EXPECT_EQ(p.vs_listen, "127.0.0.2");
  EXPECT_EQ(p.vs_nfs_port, 2149);
  EXPECT_EQ(p.vs_mount_port, 20148);
}

TEST(ClusterOptions, TheLeaseAuthorityIsTheFileOneUnlessEtcdIsNamed) {
  auto o = parse(kPair);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->authority.kind, membership::AuthorityOptions::Kind::File);
  EXPECT_EQ(o->authority.lease_dir, "/srv/san/leases");

  std::string text = kPair;
  text.replace(text.find("shared_dir"), 0,
               "authority = etcd\netcd_endpoints = http://10.0.0.1:2379, https://10.0.0.2:2379\n"
               "etcd_ca = tls/ca.pem\netcd_cert = tls/a.pem\netcd_key = tls/a.key\n"
               "etcd_timeout_ms = 900\n");
  o = parse(text);
  ASSERT_TRUE(o);
  const membership::AuthorityOptions& a = o->authority;
  EXPECT_EQ(a.kind, membership::AuthorityOptions::Kind::Etcd);
  EXPECT_EQ(a.etcd.endpoints,
            (std::vector<std::string>{"http://10.0.0.1:2379", "https://10.0.0.2:2379"}));
  EXPECT_EQ(a.etcd.prefix, "/nasd/lab/");  // the cluster's name keeps clusters apart
  EXPECT_EQ(a.etcd.ca_file, "/etc/nasd/tls/ca.pem");
  EXPECT_EQ(a.etcd.cert_file, "/etc/nasd/tls/a.pem");
  EXPECT_EQ(a.etcd.key_file, "/etc/nasd/tls/a.key");
  EXPECT_EQ(a.etcd.timeout.count(), 900);

  text = kPair;
  text.replace(text.find("shared_dir"), 0,
               "authority = etcd\netcd_endpoints = http://e:2379\netcd_prefix = /x/\n");
  o = parse(text);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->authority.etcd.prefix, "/x/");
}

TEST(ClusterOptions, BadAuthoritySettingsAreRefused) {
  for (const char* bad : {"authority = zookeeper\n", "authority = etcd\n",
                          "authority = etcd\netcd_endpoints = 10.0.0.1:2379\n",
                          "authority = etcd\netcd_endpoints = ftp://e:21\n",
                          "etcd_endpoints = http://e:2379\n",
                          "authority = etcd\netcd_endpoints = http://e:2379\netcd_cert = a.pem\n",
                          "authority = etcd\netcd_endpoints = http://e:2379\netcd_timeout_ms = 5\n",
                          "authority = etcd\netcd_endpoints = http://e:2379\netcd_password = x\n"}) {
    std::string text = kPair;
    text.replace(text.find("shared_dir"), 0, bad);
    EXPECT_THROW(parse(text), ConfigError) << bad;
  }
}

TEST(ClusterOptions, TheClusterKeyAndAllowedPeersAreRead) {
  std::string text = kPair;
  text.replace(text.find("shared_dir"), 0, "key = keys/cluster.key\nallowed_peers = 10.0.0.0/24, 192.168.1.7\n");
  auto o = parse(text);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->key_file, "/etc/nasd/keys/cluster.key");
  EXPECT_TRUE(o->allowed_peers.allows("10.0.0.200"));
  EXPECT_TRUE(o->allowed_peers.allows("192.168.1.7"));
  EXPECT_FALSE(o->allowed_peers.allows("10.0.1.1"));
  EXPECT_FALSE(o->allowed_peers.allows("192.168.1.8"));
  EXPECT_FALSE(o->allowed_peers.allows("not an address"));
  EXPECT_TRUE(parse(kPair)->allowed_peers.allows("203.0.113.9"));  // no list: any address
  EXPECT_TRUE(parse(kPair)->key_file.empty());                     // the data folder's
  for (const char* bad : {"10.0.0.0/33", "10.0.0", "10.0.0.0/", "host.example"}) {
    std::string t = kPair;
    t.replace(t.find("shared_dir"), 0, std::string("allowed_peers = ") + bad + "\n");
    EXPECT_THROW(parse(t), ConfigError) << bad;
  }
}

TEST(ClusterOptions, ARelativeSharedFolderIsTakenBesideTheConfig) {
  std::string text = kPair;
  text.replace(text.find("/srv/san"), 8, "../san");
  auto o = parse(text);
  ASSERT_TRUE(o && o->failover);
  EXPECT_EQ(o->failover->shared_dir, "/etc/san");
}

TEST(ClusterOptions, WithoutSharedFolderThereIsNoFailover) {
  auto o = parse("[cluster]\nname = lab\ninterconnect = 127.0.0.1:7001\n"
                 "[peer b]\ninterconnect = 127.0.0.1:7002\nvolumes = v1\n[volume v1]\nid = 1\n");
  ASSERT_TRUE(o);
  EXPECT_FALSE(o->failover);
}

TEST(ClusterOptions, AnIncompletePairIsRefusedWithTheKeyNamed) {
  auto error_of = [](std::string text) {
    try {
      parse(text);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  std::string no_vs = kPair;
  no_vs.erase(no_vs.find("nfs_port = 2149\n"), 16);
  EXPECT_NE(error_of(no_vs).find("virtual server"), std::string::npos) << error_of(no_vs);
  std::string bad_failback = kPair;
  bad_failback.insert(bad_failback.find("lease_ms"), "failback = sometimes\n");
  EXPECT_NE(error_of(bad_failback).find("failback"), std::string::npos);
  std::string two_peers = std::string(kPair) +
                          "[peer c]\ninterconnect = 127.0.0.1:7003\nvolumes = v2\n[volume v2]\nid = 2\n";
  EXPECT_NE(error_of(two_peers).find("exactly one"), std::string::npos);
  std::string no_mirror = kPair;
  no_mirror.erase(no_mirror.find("mirror_listen"), 31);
  EXPECT_NE(error_of(no_mirror).find("mirror_listen"), std::string::npos) << error_of(no_mirror);
  std::string short_lease = kPair;
  short_lease.replace(short_lease.find("3000"), 4, "200");
  EXPECT_NE(error_of(short_lease).find("lease_ms"), std::string::npos);
}

}  // namespace
}  // namespace nasd::cluster
