// HostedAddress against a real kernel: each test moves its process into a network namespace of
// its own (unshare(CLONE_NEWNET); gtest_discover_tests runs every test in its own process, so
// the namespace dies with it, whatever happens) and builds a veth pair there, a0 for this node
// and a1 for "another host on the segment". Needs root (CAP_SYS_ADMIN for the namespace);
// skipped otherwise.
#include <arpa/inet.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "cluster/address/capabilities.h"
#include "cluster/address/hosted_address.h"
#include "cluster/address/netlink_addresses.h"
#include "cluster/address/packet_socket.h"
#include "tests/cluster/scratch_dir.h"
#include "util/net.h"

namespace nasd::cluster::address {
namespace {

void sh(const std::string& command) { ASSERT_EQ(std::system(command.c_str()), 0) << command; }

// What VirtualServer does right after acquire(): a listener on the address. "" or why not.
std::string bind_error(const std::string& address) {
  std::string error;
  uint16_t port = 0;
  const int fd = util::listen_tcp(address, 0, &port, &error);
  if (fd >= 0) close(fd);
  return error;
}

class HostedAddressNetns : public ::testing::Test {
 protected:
  void SetUp() override {
    if (unshare(CLONE_NEWNET) != 0) GTEST_SKIP() << "no network namespace (needs root): " << std::strerror(errno);
    sh("ip link set lo up && ip link add a0 type veth peer name a1 && ip link set a0 up && ip link set a1 up");
    sh("ip addr add 10.9.0.2/24 dev a1");  // the other host
    record_ = std::make_shared<AddressRecord>(dir_.path + "/interface-addresses");
    ASSERT_TRUE(link_info("a0", &ours_, &error_)) << error_;
    ASSERT_TRUE(link_info("a1", &theirs_, &error_)) << error_;
  }
  InterfaceAddress on(const std::string& cidr, const std::string& interface = "a0") {
    InterfaceAddress a;
    EXPECT_TRUE(parse_interface_address(cidr, interface, &a, &error_)) << error_;
    return a;
  }
  std::vector<std::string> addresses_on(const std::string& interface) {
    std::vector<AddressOnLink> list;
    std::vector<std::string> out;
    EXPECT_TRUE(list_addresses(interface_index(interface, &error_), &list, &error_)) << error_;
    for (const auto& a : list) out.push_back(a.text);
    return out;
  }
  bool has(const std::string& interface, const std::string& cidr) {
    for (const auto& a : addresses_on(interface))
      if (a == cidr) return true;
    return false;
  }
  std::string record_text() {
    std::ifstream in(dir_.path + "/interface-addresses");
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }

  testing::ScratchDir dir_{"hosted-address"};
  std::shared_ptr<AddressRecord> record_;
  LinkInfo ours_, theirs_;
  std::string error_;
};

TEST_F(HostedAddressNetns, ProbedAddedAnnouncedBoundAndRemoved) {
  PacketSocket watch;  // what "the other host" sees on the segment
  ASSERT_TRUE(watch.open(interface_index("a1", &error_), 0x0806, &error_)) << error_;
  HostedAddress a(on("10.9.0.3/24"), record_);
  ASSERT_TRUE(a.acquire(&error_)) << error_;
  EXPECT_TRUE(error_.empty()) << error_;
  EXPECT_TRUE(has("a0", "10.9.0.3/24"));
  EXPECT_NE(record_text().find("a0 10.9.0.3/24"), std::string::npos) << record_text();

  int probes = 0, announcements = 0;
  uint8_t frame[1600];
  for (ssize_t n; (n = watch.receive(frame, sizeof frame, std::chrono::milliseconds(300))) > 0;) {
    const auto p = decode_arp(frame, static_cast<size_t>(n));
    if (!p || p->sender_mac != ours_.mac || p->target_ip != Ipv4{10, 9, 0, 3}) continue;
    if (p->sender_ip == Ipv4{}) {
      EXPECT_EQ(announcements, 0) << "a probe after an announcement";
      ++probes;
    } else if (p->sender_ip == Ipv4{10, 9, 0, 3}) {
      ++announcements;
    }
  }
  EXPECT_EQ(probes, 3);
  EXPECT_EQ(announcements, 3);

  EXPECT_EQ(bind_error("10.9.0.3"), "");  // now VirtualServer can bind it

  ASSERT_TRUE(a.release(&error_)) << error_;
  EXPECT_FALSE(has("a0", "10.9.0.3/24"));
  EXPECT_EQ(record_text().find("10.9.0.3"), std::string::npos) << record_text();
}

TEST_F(HostedAddressNetns, AnAddressAnotherHostHoldsIsRefused) {
  HostedAddress a(on("10.9.0.2/24"), record_);
  EXPECT_FALSE(a.acquire(&error_));
  EXPECT_NE(error_.find("10.9.0.2 is already in use on a0"), std::string::npos) << error_;
  char theirs[18];
  std::snprintf(theirs, sizeof theirs, "%02x:%02x:%02x:%02x:%02x:%02x", theirs_.mac[0], theirs_.mac[1],
                theirs_.mac[2], theirs_.mac[3], theirs_.mac[4], theirs_.mac[5]);
  EXPECT_NE(error_.find(theirs), std::string::npos) << error_;
  EXPECT_FALSE(has("a0", "10.9.0.2/24"));
  EXPECT_EQ(record_->addresses().size(), 0u);
  // Once the other host lets go, the same object takes it (VirtualServer::claim retries).
  sh("ip addr del 10.9.0.2/24 dev a1");
  EXPECT_TRUE(a.acquire(&error_)) << error_;
  EXPECT_TRUE(has("a0", "10.9.0.2/24"));
}

TEST_F(HostedAddressNetns, ClearErrorsForAMissingInterfaceAndAForeignSubnet) {
  HostedAddress missing(on("10.9.0.3/24", "nope0"), record_);
  EXPECT_FALSE(missing.acquire(&error_));
  EXPECT_NE(error_.find("interface nope0 does not exist"), std::string::npos) << error_;
  EXPECT_THROW(check_interface_addresses({on("10.9.0.3/24", "nope0")}), std::runtime_error);

  sh("ip addr add 10.9.0.5/24 dev a0");
  HostedAddress foreign(on("10.8.0.5/24"), record_);
  EXPECT_FALSE(foreign.acquire(&error_));
  EXPECT_NE(error_.find("10.8.0.5 is in no subnet of a0 (10.9.0.5/24)"), std::string::npos) << error_;
  EXPECT_FALSE(has("a0", "10.8.0.5/24"));
  try {
    check_interface_addresses({on("10.9.0.6/24"), on("10.8.0.5/24")});
    ADD_FAILURE() << "a foreign subnet passed the start-up check";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("in no subnet of a0"), std::string::npos) << e.what();
  }
}

TEST_F(HostedAddressNetns, RemovingTheSubnetsFirstAddressKeepsTheOthers) {
  // a0 has no address of its own: the first one added is the subnet's primary, and without
  // promote_secondaries the kernel would remove the second with it.
  HostedAddress evs(on("10.9.0.3/24"), record_);
  HostedAddress pool(on("10.9.0.4/24"), record_);
  ASSERT_TRUE(evs.acquire(&error_)) << error_;
  ASSERT_TRUE(pool.acquire(&error_)) << error_;
  ASSERT_TRUE(evs.release(&error_)) << error_;
  EXPECT_FALSE(has("a0", "10.9.0.3/24"));
  EXPECT_TRUE(has("a0", "10.9.0.4/24"));
}

TEST_F(HostedAddressNetns, ACrashedRunsAddressesAreRemovedAtTheNextStartAndNoOthers) {
  sh("ip addr add 10.9.0.5/24 dev a0");  // the administrator's, not recorded
  {
    HostedAddress a(on("10.9.0.7/24"), record_);
    HostedAddress b(on("10.9.0.8/24"), record_);
    ASSERT_TRUE(a.acquire(&error_)) << error_;
    ASSERT_TRUE(b.acquire(&error_)) << error_;
  }  // kill -9: nothing released (HostedAddress has no destructor that would)
  EXPECT_TRUE(has("a0", "10.9.0.7/24"));
  AddressRecord next_run(dir_.path + "/interface-addresses");
  const auto lines = remove_leftover_addresses(next_run);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "left by an earlier run, removed: 10.9.0.7/24 on a0");
  EXPECT_FALSE(has("a0", "10.9.0.7/24"));
  EXPECT_FALSE(has("a0", "10.9.0.8/24"));
  EXPECT_TRUE(has("a0", "10.9.0.5/24"));
  EXPECT_TRUE(next_run.addresses().empty());
  EXPECT_TRUE(remove_leftover_addresses(next_run).empty());
}

TEST_F(HostedAddressNetns, Ipv6IsAddedWithoutWaitingAndAnnounced) {
  PacketSocket watch;
  ASSERT_TRUE(watch.open(interface_index("a1", &error_), 0x86dd, &error_)) << error_;
  HostedAddress a(on("fd00:9::3/64"), record_);
  ASSERT_TRUE(a.acquire(&error_)) << error_;
  EXPECT_TRUE(has("a0", "fd00:9::3/64"));
  // Bindable at once: no duplicate address detection holds it "tentative".
  EXPECT_EQ(bind_error("fd00:9::3"), "");
  int adverts = 0;
  uint8_t frame[1600];
  for (ssize_t n; (n = watch.receive(frame, sizeof frame, std::chrono::milliseconds(300))) > 0;) {
    if (n >= 86 && frame[20] == 58 && frame[54] == 136 && frame[22] == 0xfd && frame[37] == 3 &&
        std::equal(ours_.mac.begin(), ours_.mac.end(), frame + 80))
      ++adverts;
  }
  EXPECT_EQ(adverts, 3);
  ASSERT_TRUE(a.release(&error_)) << error_;
  EXPECT_FALSE(has("a0", "fd00:9::3/64"));
}

TEST_F(HostedAddressNetns, AnIpv6AddressAnotherHostHoldsIsRefused) {
  sh("ip addr add fd00:9::2/64 dev a1 nodad");  // the other host's, usable at once
  HostedAddress a(on("fd00:9::2/64"), record_);
  EXPECT_FALSE(a.acquire(&error_));
  EXPECT_NE(error_.find("fd00:9::2 is already in use on a0"), std::string::npos) << error_;
  EXPECT_NE(error_.find("duplicate address probe"), std::string::npos) << error_;
  EXPECT_FALSE(has("a0", "fd00:9::2/64"));
  sh("ip addr del fd00:9::2/64 dev a1");
  EXPECT_TRUE(a.acquire(&error_)) << error_;
  EXPECT_TRUE(has("a0", "fd00:9::2/64"));
}

TEST_F(HostedAddressNetns, LoopbackNeedsNoArp) {
  HostedAddress a(on("127.0.9.1/8", "lo"), record_);
  ASSERT_TRUE(a.acquire(&error_)) << error_;
  EXPECT_TRUE(has("lo", "127.0.9.1/8"));
  ASSERT_TRUE(a.release(&error_)) << error_;
  EXPECT_FALSE(has("lo", "127.0.9.1/8"));
}

TEST_F(HostedAddressNetns, TheMissingCapabilityIsNamed) {
  EXPECT_EQ(missing_address_capabilities(), "");
  const pid_t child = fork();
  if (child == 0) {  // drop CAP_NET_RAW from the effective set, then ask
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
    syscall(SYS_capget, &header, data);
    data[CAP_NET_RAW / 32].effective &= ~(1u << (CAP_NET_RAW % 32));
    if (syscall(SYS_capset, &header, data) != 0) _exit(2);
    std::string error;
    InterfaceAddress a;
    parse_interface_address("10.9.0.3/24", "a0", &a, &error);
    try {
      check_interface_addresses({a});
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      _exit(what.find("need CAP_NET_RAW:") != std::string::npos ? 0 : 3);
    }
    _exit(4);
  }
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

}  // namespace
}  // namespace nasd::cluster::address
