// What a writer of etcd without the cluster key, and a client without etcd's password, can do
// to the etcd authority, against a real etcd started by the test: values put with etcdctl that
// do not carry the cluster key's tag are refused (a lease holder, the placement), and with
// etcd's authentication on, the authority logs in with its user and password (and nothing
// works without them).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "cluster/membership/etcd_lease_authority.h"
#include "cluster/membership/etcd_placement_store.h"
#include "tests/cluster/etcd_process.h"
#include "tests/cluster/scratch_dir.h"
#include "util/log.h"

namespace nasd::membership {
namespace {

using cluster::testing::EtcdProcess;
using cluster::testing::ScratchDir;

constexpr int kBasePort = 2379;  // private: the test runs in its own network namespace

EtcdOptions options_for(std::vector<std::string> endpoints) {
  EtcdOptions o;
  o.endpoints = std::move(endpoints);
  o.prefix = "/nasd/test/";
  o.timeout = std::chrono::milliseconds(1500);
  o.value_key = std::vector<uint8_t>(32, 0x6b);
  return o;
}

// Anyone who can write to etcd names a holder: before, the bare node name was believed, and a
// forged "b" made node a give its volume up (and b take it).
TEST(EtcdSecurity, AForgedLeaseHolderIsRefused) {
  EtcdProcess etcd(1, kBasePort);
  ASSERT_TRUE(etcd.start());
  EtcdLeaseAuthority a(options_for(etcd.endpoints()));
  ASSERT_TRUE(etcd.etcdctl("put /nasd/test/volume-7 node-b"));
  LeaseAnswer got = a.acquire(7, "node-a", 3000);
  EXPECT_EQ(got.verdict, LeaseVerdict::Unreachable) << "a forged holder was believed";
  EXPECT_NE(got.error.find("etcd key /nasd/test/volume-7 carries no cluster-key tag"), std::string::npos)
      << got.error;
  Lease seen;
  std::string error;
  EXPECT_FALSE(a.inspect(7, &seen, &error));
  EXPECT_NE(error.find("refused"), std::string::npos) << error;
  // A tag made with another key (another cluster's, or a guess) is no better.
  EtcdOptions other = options_for(etcd.endpoints());
  other.value_key = std::vector<uint8_t>(32, 0x01);
  EtcdLeaseAuthority stranger(other);
  ASSERT_TRUE(etcd.etcdctl("del /nasd/test/volume-8"));
  ASSERT_EQ(stranger.acquire(8, "node-b", 3000).verdict, LeaseVerdict::Granted);
  got = a.acquire(8, "node-a", 3000);
  EXPECT_EQ(got.verdict, LeaseVerdict::Unreachable);
  EXPECT_NE(got.error.find("does not verify with the cluster key"), std::string::npos) << got.error;
  // The cluster's own values work as before.
  ASSERT_TRUE(etcd.etcdctl("del /nasd/test/volume-7"));
  EXPECT_EQ(a.acquire(7, "node-a", 3000).verdict, LeaseVerdict::Granted);
  EtcdLeaseAuthority b(options_for(etcd.endpoints()));
  LeaseAnswer other_node = b.acquire(7, "node-b", 3000);
  EXPECT_EQ(other_node.verdict, LeaseVerdict::HeldByOther);
  EXPECT_EQ(other_node.lease.holder, "node-a");
}

TEST(EtcdSecurity, AForgedPlacementIsRefused) {
  EtcdProcess etcd(1, kBasePort);
  ASSERT_TRUE(etcd.start());
  EtcdPlacementStore store(options_for(etcd.endpoints()));
  ASSERT_TRUE(etcd.etcdctl("put /nasd/test/placement 'evs evs1 mallory -'"));
  Placement p;
  bool found = false;
  std::string error;
  EXPECT_FALSE(store.read(&p, &found, &error));
  EXPECT_NE(error.find("etcd key /nasd/test/placement carries no cluster-key tag"), std::string::npos) << error;
}

// etcd with `auth enable`: the authority authenticates as its user; without the password, or
// with a wrong one, it gets nothing (and says why); a password file others can read is refused.
TEST(EtcdSecurity, TheAuthorityLogsInWhenEtcdAuthIsOn) {
  EtcdProcess etcd(1, kBasePort);
  ASSERT_TRUE(etcd.start());
  const std::string root = "--user root:root-pw ";
  ASSERT_TRUE(etcd.etcdctl("user add root:root-pw"));
  ASSERT_TRUE(etcd.etcdctl("user add nasd:nasd-pw"));
  ASSERT_TRUE(etcd.etcdctl("role add nasd"));
  ASSERT_TRUE(etcd.etcdctl("role grant-permission nasd --prefix=true readwrite /nasd/test/"));
  ASSERT_TRUE(etcd.etcdctl("user grant-role nasd nasd"));
  ASSERT_TRUE(etcd.etcdctl("auth enable"));

  ScratchDir dir("nasd-etcd-auth");
  const std::string pass = dir.path + "/etcd.pass", wrong = dir.path + "/wrong.pass";
  std::ofstream(pass) << "nasd-pw\n";
  std::ofstream(wrong) << "guess\n";
  ::chmod(pass.c_str(), 0600);
  ::chmod(wrong.c_str(), 0600);

  EtcdLeaseAuthority anonymous(options_for(etcd.endpoints()));
  LeaseAnswer refused = anonymous.acquire(3, "node-a", 3000);
  EXPECT_NE(refused.verdict, LeaseVerdict::Granted) << "etcd served a client without a login";

  EtcdOptions bad = options_for(etcd.endpoints());
  bad.user = "nasd";
  bad.password_file = wrong;
  EtcdLeaseAuthority guesser(bad);
  refused = guesser.acquire(3, "node-a", 3000);
  EXPECT_EQ(refused.verdict, LeaseVerdict::Unreachable);
  EXPECT_NE(refused.error.find("authenticating as nasd"), std::string::npos) << refused.error;

  EtcdOptions good = options_for(etcd.endpoints());
  good.user = "nasd";
  good.password_file = pass;
  EtcdLeaseAuthority a(good), b(good);
  LeaseAnswer got = a.acquire(3, "node-a", 3000);
  ASSERT_EQ(got.verdict, LeaseVerdict::Granted) << got.error;
  EXPECT_EQ(a.acquire(3, "node-a", 3000).verdict, LeaseVerdict::Granted) << "renewal with the token";
  LeaseAnswer held = b.acquire(3, "node-b", 3000);
  EXPECT_EQ(held.verdict, LeaseVerdict::HeldByOther);
  EXPECT_EQ(held.lease.holder, "node-a");
  EXPECT_TRUE(a.release(3, "node-a"));
  EtcdPlacementStore store(good);
  Placement p;
  bool found = true;
  std::string error;
  EXPECT_TRUE(store.read(&p, &found, &error)) << error;
  EXPECT_FALSE(found);

  ::chmod(pass.c_str(), 0644);
  try {
    EtcdLeaseAuthority open_file(good);
    ADD_FAILURE() << "a password file others can read was used";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("is open to other users"), std::string::npos) << e.what();
  }
  etcd.etcdctl(root + "auth disable");
}

}  // namespace
}  // namespace nasd::membership
