// The config of addresses on interfaces: `address = a.b.c.d/len` + `interface` in an [evs],
// `interface` + `prefix` in a [pool], and the state file of addresses a node put on interfaces.
#include "cluster/address/interface_address.h"

#include <gtest/gtest.h>

#include "cluster/address/address_record.h"
#include "cluster/cluster_options.h"
#include "cluster/pool_options.h"

namespace nasd::cluster::address {
namespace {

TEST(InterfaceAddress, ParsesIpv4AndIpv6WithPrefix) {
  InterfaceAddress a;
  std::string error;
  ASSERT_TRUE(parse_interface_address("10.0.4.11/24", "eth1", &a, &error)) << error;
  EXPECT_EQ(a.address, "10.0.4.11");
  EXPECT_EQ(a.prefix, 24);
  EXPECT_EQ(a.family, AF_INET);
  EXPECT_EQ(a.describe(), "10.0.4.11/24 on eth1");
  ASSERT_TRUE(parse_interface_address("FD00:4::0011/64", "veth-x", &a, &error)) << error;
  EXPECT_EQ(a.address, "fd00:4::11");  // canonical, so that two spellings are one address
  EXPECT_EQ(a.family, AF_INET6);
}

TEST(InterfaceAddress, RefusesWhatCannotBeAdded) {
  InterfaceAddress a;
  std::string error;
  EXPECT_FALSE(parse_interface_address("10.0.4.11", "eth1", &a, &error));
  EXPECT_NE(error.find("prefix length"), std::string::npos) << error;
  EXPECT_FALSE(parse_interface_address("10.0.4.11/33", "eth1", &a, &error));
  EXPECT_FALSE(parse_interface_address("10.0.4.11/0", "eth1", &a, &error));
  EXPECT_FALSE(parse_interface_address("10.0.4.11/2x", "eth1", &a, &error));
  EXPECT_FALSE(parse_interface_address("fd00::1/129", "eth1", &a, &error));
  EXPECT_FALSE(parse_interface_address("host.example/24", "eth1", &a, &error));
  EXPECT_NE(error.find("not a numeric"), std::string::npos) << error;
  EXPECT_FALSE(parse_interface_address("10.0.4.11/24", "eth1:0", &a, &error));
  EXPECT_FALSE(parse_interface_address("10.0.4.11/24", "a-name-longer-than-15", &a, &error));
  EXPECT_FALSE(parse_interface_address("10.0.4.11/24", "", &a, &error));
  EXPECT_FALSE(parse_interface_address("10.0.4.11/24", "../x", &a, &error));
}

TEST(InterfaceAddress, SubnetMembership) {
  InterfaceAddress a, net;
  std::string error;
  ASSERT_TRUE(parse_interface_address("10.0.4.11/24", "eth1", &a, &error));
  ASSERT_TRUE(parse_interface_address("10.0.4.1/24", "eth1", &net, &error));
  EXPECT_TRUE(in_subnet(a, net.bytes, AF_INET, 24));
  EXPECT_TRUE(in_subnet(a, net.bytes, AF_INET, 28));
  EXPECT_FALSE(in_subnet(a, net.bytes, AF_INET, 29));  // .11 is not in .0/29
  EXPECT_FALSE(in_subnet(a, net.bytes, AF_INET6, 24));
}

const char* kCluster = R"(
[node]
name = n1
[cluster]
name = lab
shared_dir = /tmp/san
[member n1]
interconnect = 127.0.1.1:7001
mirror_listen = 127.0.1.1:7101
[member n2]
interconnect = 127.0.1.2:7001
mirror_listen = 127.0.1.2:7101
[volume v0]
id = 0
[volume v1]
id = 1
[evs e1]
node = n1
volumes = v0
)";

ClusterOptions cluster_with(const std::string& evs1, const std::string& more = "") {
  return *ClusterOptions::from_config(Config::parse(std::string(kCluster) + evs1 +
                                                    "\n[evs e2]\nnode = n2\nlisten = 127.0.2.2\nvolumes = v1\n" + more));
}

TEST(InterfaceAddressConfig, AnEvsAddressNamesItsInterfaceAndPrefix) {
  const ClusterOptions c = cluster_with("address = 10.0.4.11/24\ninterface = eth1\n");
  ASSERT_TRUE(c.evs[0].on_interface);
  EXPECT_EQ(c.evs[0].listen, "10.0.4.11");  // what the listeners bind
  EXPECT_EQ(c.evs[0].on_interface->describe(), "10.0.4.11/24 on eth1");
  EXPECT_FALSE(c.evs[1].on_interface);  // listen = ...: today's loopback form, unchanged
  EXPECT_EQ(c.evs[1].listen, "127.0.2.2");
}

TEST(InterfaceAddressConfig, BadEvsAddressesAreRefusedWithTheSection) {
  const auto refused = [](const std::string& evs1, const std::string& expect) {
    try {
      cluster_with(evs1);
      ADD_FAILURE() << "accepted: " << evs1;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(expect), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("[evs e1]"), std::string::npos) << e.what();
    }
  };
  refused("address = 10.0.4.11/24\n", "go together");
  refused("interface = eth1\nlisten = 10.0.4.11\n", "not both");
  refused("address = 10.0.4.11\ninterface = eth1\n", "prefix length");
  refused("address = 10.0.4.11/24\ninterface = eth1\nlisten = 10.0.4.11\n", "not both");
  refused("address = 10.0.4.11/24\ninterface = bad/name\n", "interface name");
}

TEST(InterfaceAddressConfig, PoolAddressesOnAnInterface) {
  const std::string text = std::string(kCluster) +
                           "listen = 127.0.2.1\n[evs e2]\nnode = n2\nlisten = 127.0.2.2\nvolumes = v1\n"
                           "[pool clients]\naddresses = 10.0.5.1-10.0.5.4\ninterface = eth1\nprefix = 24\n";
  const Config config = Config::parse(text);
  const auto pools = pools_from_config(config, *ClusterOptions::from_config(config));
  ASSERT_EQ(pools.size(), 1u);
  ASSERT_EQ(pools[0].on_interface.size(), 4u);
  EXPECT_EQ(pools[0].on_interface[3].describe(), "10.0.5.4/24 on eth1");

  for (const std::string& bad : {std::string("interface = eth1\n"), std::string("prefix = 24\n"),
                                 std::string("interface = eth1\nprefix = 40\n")}) {
    const Config c = Config::parse(std::string(kCluster) +
                                   "listen = 127.0.2.1\n[evs e2]\nnode = n2\nlisten = 127.0.2.2\nvolumes = v1\n"
                                   "[pool clients]\naddresses = 10.0.5.1\n" + bad);
    EXPECT_THROW(pools_from_config(c, *ClusterOptions::from_config(c)), ConfigError) << bad;
  }
}

TEST(AddressRecordText, RoundTripsAndSkipsWhatIsNotAnAddress) {
  InterfaceAddress a, b;
  std::string error;
  ASSERT_TRUE(parse_interface_address("10.0.4.11/24", "eth1", &a, &error));
  ASSERT_TRUE(parse_interface_address("fd00::11/64", "eth2", &b, &error));
  size_t bad = 0;
  EXPECT_EQ(parse_address_record(format_address_record({a, b}), &bad), (std::vector<InterfaceAddress>{a, b}));
  EXPECT_EQ(bad, 0u);
  const auto got = parse_address_record("eth1 10.0.4.11/24\ngarbage\neth1 10.0.4.11/24\neth1 1.2.3.4\n"
                                        "eth1 10.0.4.12/2" /* torn */ "\n" + std::string(500, 'x'),
                                        &bad);
  InterfaceAddress wide;
  ASSERT_TRUE(parse_interface_address("10.0.4.12/2", "eth1", &wide, &error));
  EXPECT_EQ(got, (std::vector<InterfaceAddress>{a, wide}));  // "/2" is a prefix: a torn line can parse
  EXPECT_EQ(bad, 3u);  // garbage, 1.2.3.4 without prefix, the long line
}

}  // namespace
}  // namespace nasd::cluster::address
