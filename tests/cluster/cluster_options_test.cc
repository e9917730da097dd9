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

TEST(ClusterOptions, AnHaPairIsReadAsARingOfTwoWithItsAddressesAsEvses) {
  auto o = parse(std::string("[node]\nname = a\nlisten = 127.0.0.1\nnfs_port = 2049\n"
                             "mount_port = 20048\n") + kPair);
  ASSERT_TRUE(o && o->failover);
  EXPECT_EQ(o->failover->shared_dir, "/srv/san");
  EXPECT_EQ(o->failover->mirror_host, "127.0.0.1");
  EXPECT_EQ(o->failover->mirror_port, 7101);
  EXPECT_EQ(o->failover->lease_ms, 3000);
  EXPECT_FALSE(o->failover->auto_failback);  // failback on command unless asked otherwise
  // Two members that hold each other's mirror.
  ASSERT_EQ(o->members.size(), 2u);
  const MemberOptions* a = o->member("a");
  const MemberOptions* b = o->member("b");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->port, 7001);
  EXPECT_EQ(a->mirror_to, "b");
  EXPECT_EQ(a->mirror_target, "127.0.0.1:7102");
  EXPECT_EQ(a->covers, std::vector<std::string>{"b"});
  EXPECT_EQ(b->port, 7002);
  EXPECT_EQ(b->mirror_to, "a");
  EXPECT_EQ(b->mirror_target, "127.0.0.1:7101");
  EXPECT_EQ(b->mirror_port, 7102);
  // Each node's own address is its EVS, with its home volumes.
  const EvsOptions* b_evs = o->evs_of_volume("v1");
  ASSERT_TRUE(b_evs);
  EXPECT_EQ(b_evs->name, "b");
  EXPECT_EQ(b_evs->node, "b");
  EXPECT_EQ(b_evs->listen, "127.0.0.2");
  EXPECT_EQ(b_evs->nfs_port, 2149);
  EXPECT_EQ(b_evs->mount_port, 20148);
  EXPECT_TRUE(b_evs->is_node_address);
  const EvsOptions* a_evs = o->evs_of_volume("v0");
  ASSERT_TRUE(a_evs);
  EXPECT_EQ(a_evs->node, "a");
  EXPECT_EQ(a_evs->listen, "127.0.0.1");
  EXPECT_EQ(a_evs->nfs_port, 2049);
  EXPECT_EQ(a_evs->mount_port, 20048);
  EXPECT_TRUE(a_evs->is_node_address);
  EXPECT_EQ(o->peers.front().mirror, "127.0.0.1:7102");
}

TEST(ClusterOptions, TheLeaseAuthorityIsTheFileOneUnlessEtcdIsNamed) {
  auto o = parse(kPair);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->authority.kind, membership::AuthorityOptions::Kind::File);
  EXPECT_EQ(o->authority.lease_dir, "/srv/san/leases");

  std::string text = kPair;
  text.replace(text.find("shared_dir"), 0,
               "authority = etcd\netcd_endpoints = http://127.0.0.1:2379, https://10.0.0.2:2379\n"
               "etcd_ca = tls/ca.pem\netcd_cert = tls/a.pem\netcd_key = tls/a.key\n"
               "etcd_timeout_ms = 900\n");
  o = parse(text);
  ASSERT_TRUE(o);
  const membership::AuthorityOptions& a = o->authority;
  EXPECT_EQ(a.kind, membership::AuthorityOptions::Kind::Etcd);
  EXPECT_EQ(a.etcd.endpoints,
            (std::vector<std::string>{"http://127.0.0.1:2379", "https://10.0.0.2:2379"}));
  EXPECT_EQ(a.etcd.prefix, "/nasd/lab/");  // the cluster's name keeps clusters apart
  EXPECT_EQ(a.etcd.ca_file, "/etc/nasd/tls/ca.pem");
  EXPECT_EQ(a.etcd.cert_file, "/etc/nasd/tls/a.pem");
  EXPECT_EQ(a.etcd.key_file, "/etc/nasd/tls/a.key");
  EXPECT_EQ(a.etcd.timeout.count(), 900);
  EXPECT_EQ(a.etcd.source_address, "127.0.0.1");  // etcd calls leave from the node's own address

  text = kPair;
  text.replace(text.find("shared_dir"), 0,
               "authority = etcd\netcd_endpoints = http://e:2379\netcd_prefix = /x/\n"
               "etcd_allow_insecure = true\n");
  o = parse(text);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->authority.etcd.prefix, "/x/");
}

// Plain HTTP to another host carries the leases and the placement past anyone on the path:
// refused unless the operator says the network is the nodes' and etcd's only.
TEST(ClusterOptions, PlainHttpToAnotherEtcdHostIsRefusedUnlessAllowed) {
  auto with = [](const std::string& lines) {
    std::string text = kPair;
    text.replace(text.find("shared_dir"), 0, "authority = etcd\n" + lines);
    return text;
  };
  for (const char* url : {"http://10.0.0.1:2379", "http://etcd.example:2379", "http://[2001:db8::1]:2379"}) {
    try {
      parse(with(std::string("etcd_endpoints = https://10.0.0.2:2379, ") + url + "\n"));
      ADD_FAILURE() << url << " accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("plain HTTP to another host"), std::string::npos) << e.what();
    }
    EXPECT_NO_THROW(parse(with(std::string("etcd_endpoints = ") + url + "\netcd_allow_insecure = true\n")));
  }
  for (const char* url : {"http://127.0.0.1:2379", "http://127.0.1.5:2379/", "http://localhost:2379",
                          "http://[::1]:2379", "https://10.0.0.1:2379"})
    EXPECT_NO_THROW(parse(with(std::string("etcd_endpoints = ") + url + "\n"))) << url;
}

TEST(ClusterOptions, BadAuthoritySettingsAreRefused) {
  for (const char* bad : {"authority = zookeeper\n", "authority = etcd\n",
                          "authority = etcd\netcd_endpoints = 10.0.0.1:2379\n",
                          "authority = etcd\netcd_endpoints = ftp://e:21\n",
                          "etcd_endpoints = http://e:2379\n",
                          "authority = etcd\netcd_endpoints = http://127.0.0.1:2379\netcd_cert = a.pem\n",
                          "authority = etcd\netcd_endpoints = http://127.0.0.1:2379\netcd_timeout_ms = 5\n",
                          "etcd_allow_insecure = true\n",
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
  // No list: the cluster's own nodes only (their links leave from their interconnect address).
  auto pair = parse(kPair);
  EXPECT_TRUE(pair->allowed_peers_default);
  EXPECT_TRUE(pair->allowed_peers.allows("127.0.0.1"));
  EXPECT_FALSE(pair->allowed_peers.allows("127.0.0.2")) << "an NFS client's address is no peer";
  EXPECT_FALSE(pair->allowed_peers.allows("203.0.113.9"));
  std::string any = kPair;
  any.replace(any.find("shared_dir"), 0, "allowed_peers = 0.0.0.0/0\n");
  EXPECT_TRUE(parse(any)->allowed_peers.allows("203.0.113.9"));
  EXPECT_FALSE(parse(any)->allowed_peers_default);
  // A node named by a host name, or listening everywhere: no default can be made; said why.
  std::string named = kPair;
  named.replace(named.find("interconnect = 127.0.0.1:7002"), 29, "interconnect = nas-b:7002");
  auto open = parse(named);
  EXPECT_FALSE(open->allowed_peers_default);
  EXPECT_TRUE(open->allowed_peers.allows("203.0.113.9"));
  EXPECT_NE(open->allowed_peers_open.find("nas-b"), std::string::npos) << open->allowed_peers_open;
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

namespace nasd::cluster {
namespace {

// One cluster file, seen from the node named in [node].
std::string n_node(const std::string& self, bool standby) {
  std::string text = "[node]\nname = " + self + "\n[cluster]\nname = lab\nshared_dir = /srv/san\n";
  for (int i = 1; i <= 3; ++i)
    text += "[member n" + std::to_string(i) + "]\ninterconnect = 127.0.1." + std::to_string(i) +
            ":7001\nmirror_listen = 127.0.1." + std::to_string(i) + ":7101\n";
  if (standby) text += "[member sb]\ninterconnect = 127.0.1.9:7001\nmirror_listen = 127.0.1.9:7101\nrole = standby\n";
  for (int i = 1; i <= 3; ++i)
    text += "[evs evs" + std::to_string(i) + "]\nnode = n" + std::to_string(i) + "\nlisten = 127.0.2." +
            std::to_string(i) + "\nvolumes = v" + std::to_string(i) + "\n[volume v" +
            std::to_string(i) + "]\nid = " + std::to_string(i) + "\n";
  return text;
}

TEST(ClusterOptions, AllowedPeersDefaultToEveryMembersAddress) {
  auto o = ClusterOptions::from_config(Config::parse(n_node("n2", true), "/etc/nasd/c.conf"));
  for (const char* member : {"127.0.1.1", "127.0.1.2", "127.0.1.3", "127.0.1.9"})
    EXPECT_TRUE(o->allowed_peers.allows(member)) << member;
  EXPECT_FALSE(o->allowed_peers.allows("127.0.2.1")) << "an EVS address is where clients come";
  EXPECT_FALSE(o->allowed_peers.allows("127.0.1.4"));
}

TEST(ClusterOptions, MembersFormARingOfMirrorsByDefault) {
  auto o = ClusterOptions::from_config(Config::parse(n_node("n2", false), "/etc/nasd/c.conf"));
  ASSERT_TRUE(o && o->n_node() && o->failover);
  EXPECT_EQ(o->host, "127.0.1.2");
  EXPECT_EQ(o->port, 7001);
  EXPECT_EQ(o->failover->mirror_host, "127.0.1.2");
  EXPECT_EQ(o->member("n1")->mirror_to, "n2");
  EXPECT_EQ(o->member("n3")->mirror_to, "n1");
  EXPECT_EQ(o->member("n2")->mirror_target, "127.0.1.3:7101");
  EXPECT_EQ(o->member("n2")->covers, std::vector<std::string>{"n1"});
  ASSERT_EQ(o->peers.size(), 2u);  // every other member, with the volumes of its EVSes
  EXPECT_EQ(o->owner_of("v3")->name, "n3");
  EXPECT_EQ(o->owner_of("v2"), nullptr);
  EXPECT_EQ(o->evs_of_volume("v1")->listen, "127.0.2.1");
}

TEST(ClusterOptions, AStandbyCoversEveryPrimaryEachOnItsOwnMirrorPort) {
  auto o = ClusterOptions::from_config(Config::parse(n_node("sb", true), "/etc/nasd/c.conf"));
  ASSERT_TRUE(o);
  const MemberOptions* sb = o->member("sb");
  EXPECT_TRUE(sb->standby);
  EXPECT_TRUE(sb->mirror_to.empty());
  EXPECT_EQ(sb->covers, (std::vector<std::string>{"n1", "n2", "n3"}));
  EXPECT_EQ(o->member("n1")->mirror_target, "127.0.1.9:7101");
  EXPECT_EQ(o->member("n3")->mirror_target, "127.0.1.9:7103");
}

TEST(ClusterOptions, BadMemberConfigsAreRefused) {
  auto bad = [](std::string text) {
    EXPECT_THROW(ClusterOptions::from_config(Config::parse(text, "/etc/nasd/c.conf")), ConfigError)
        << text;
  };
  std::string t = n_node("n1", false);
  bad(n_node("n7", false));                                                    // not a member
  bad(std::string(t).replace(t.find("volumes = v2"), 12, "volumes = v1"));     // claimed twice
  bad(std::string(t).replace(t.find("volumes = v2"), 12, "volumes = v9"));     // no such volume
  bad(t + "[member n1]\ninterconnect = 127.0.1.1:7001\n");                     // twice
  bad(t + "[peer x]\ninterconnect = 127.0.0.1:7009\nvolumes = v1\n");          // mixed forms
  bad(std::string(t).replace(t.find("[member n1]"), 11, "[member n1]\nrole = boss"));
  bad(t + "[volume v9]\nid = 9\n");                                            // served by no EVS
  bad(std::string(t).replace(t.find("name = lab"), 10, "name = lab\nauthority = etcd"));
}

}  // namespace
}  // namespace nasd::cluster
