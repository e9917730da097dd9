// The frames that move an address: gratuitous ARP, the RFC 5227 probe and what conflicts with
// it, and the IPv6 unsolicited neighbour advertisement, checked byte for byte.
#include <gtest/gtest.h>

#include "cluster/address/arp_frame.h"
#include "cluster/address/neighbor_advert.h"

namespace nasd::cluster::address {
namespace {

const Mac kOurs = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
const Mac kTheirs = {0x02, 0x00, 0x00, 0x00, 0x00, 0x02};
const Ipv4 kIp = {10, 0, 4, 11};

TEST(ArpFrame, GratuitousArpIsABroadcastRequestForItsOwnAddress) {
  const auto f = gratuitous_arp(kOurs, kIp);
  ASSERT_EQ(f.size(), 60u);  // padded to Ethernet's minimum
  const std::vector<uint8_t> head = {
      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 1, 0x08, 0x06,  // Ethernet
      0, 1, 0x08, 0x00, 6, 4, 0, 1,                                         // Ethernet/IPv4, request
      0x02, 0, 0, 0, 0, 1, 10, 0, 4, 11,                                    // sender
      0, 0, 0, 0, 0, 0, 10, 0, 4, 11};                                      // target
  EXPECT_EQ(std::vector<uint8_t>(f.begin(), f.begin() + 42), head);
  const auto p = decode_arp(f.data(), f.size());
  ASSERT_TRUE(p);
  EXPECT_EQ(p->sender_ip, kIp);
  EXPECT_EQ(p->target_ip, kIp);
  EXPECT_EQ(p->sender_mac, kOurs);
}

TEST(ArpFrame, AProbeHasNoSenderAddress) {
  const auto f = arp_probe(kOurs, kIp);
  const auto p = decode_arp(f.data(), f.size());
  ASSERT_TRUE(p);
  EXPECT_EQ(p->op, kArpRequest);
  EXPECT_EQ(p->sender_ip, Ipv4{});
  EXPECT_EQ(p->target_ip, kIp);
}

TEST(ArpFrame, ConflictsFollowRfc5227) {
  const auto answer = *decode_arp(encode_arp(kArpReply, kOurs, kTheirs, kIp, kOurs, Ipv4{}).data(), 60);
  EXPECT_TRUE(conflicts_with_probe(answer, kIp, kOurs));  // someone holds it
  const auto their_probe = *decode_arp(arp_probe(kTheirs, kIp).data(), 60);
  EXPECT_TRUE(conflicts_with_probe(their_probe, kIp, kOurs));  // someone wants it now
  const auto our_probe = *decode_arp(arp_probe(kOurs, kIp).data(), 60);
  EXPECT_FALSE(conflicts_with_probe(our_probe, kIp, kOurs));  // our own, looped back
  const auto other = *decode_arp(gratuitous_arp(kTheirs, Ipv4{10, 0, 4, 12}).data(), 60);
  EXPECT_FALSE(conflicts_with_probe(other, kIp, kOurs));  // another address
  const auto asking = *decode_arp(encode_arp(kArpRequest, kOurs, kTheirs, Ipv4{10, 0, 4, 12}, Mac{}, kIp).data(), 60);
  EXPECT_FALSE(conflicts_with_probe(asking, kIp, kOurs));  // a host that merely asks for it
}

TEST(ArpFrame, DecoderRefusesShortAndForeignFrames) {
  auto f = gratuitous_arp(kOurs, kIp);
  EXPECT_FALSE(decode_arp(f.data(), 41));
  auto ip = f;
  ip[12] = 0x08;
  ip[13] = 0x00;  // IPv4, not ARP
  EXPECT_FALSE(decode_arp(ip.data(), ip.size()));
  auto token_ring = f;
  token_ring[15] = 6;
  EXPECT_FALSE(decode_arp(token_ring.data(), token_ring.size()));
  auto op = f;
  op[21] = 9;
  EXPECT_FALSE(decode_arp(op.data(), op.size()));
}

TEST(NeighborAdvert, UnsolicitedAdvertToAllNodesWithOverride) {
  const Ipv6 target = {0xfd, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x11};
  const auto f = unsolicited_neighbor_advert(kOurs, target);
  ASSERT_EQ(f.size(), 14u + 40 + 32);
  EXPECT_EQ(std::vector<uint8_t>(f.begin(), f.begin() + 14),
            (std::vector<uint8_t>{0x33, 0x33, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 1, 0x86, 0xdd}));
  EXPECT_EQ(f[14] >> 4, 6);
  EXPECT_EQ(f[18] << 8 | f[19], 32);  // payload length
  EXPECT_EQ(f[20], 58);               // ICMPv6
  EXPECT_EQ(f[21], 255);              // hop limit: neighbour discovery is never routed
  EXPECT_EQ(std::vector<uint8_t>(f.begin() + 22, f.begin() + 38), std::vector<uint8_t>(target.begin(), target.end()));
  const uint8_t* icmp = f.data() + 54;
  EXPECT_EQ(icmp[0], 136);
  EXPECT_EQ(icmp[4], 0x20);  // Override, not Solicited, not Router
  EXPECT_EQ(std::vector<uint8_t>(icmp + 8, icmp + 24), std::vector<uint8_t>(target.begin(), target.end()));
  EXPECT_EQ(icmp[24], 2);  // target link-layer address
  EXPECT_EQ(icmp[25], 1);
  EXPECT_EQ(std::vector<uint8_t>(icmp + 26, icmp + 32), std::vector<uint8_t>(kOurs.begin(), kOurs.end()));
  // A correct checksum sums (with the pseudo-header) to zero when checked over the message.
  Ipv6 all_nodes{};
  all_nodes[0] = 0xff;
  all_nodes[1] = 0x02;
  all_nodes[15] = 1;
  EXPECT_EQ(icmpv6_checksum(target, all_nodes, icmp, 32), 0);
}

TEST(NeighborAdvert, ADuplicateAddressProbeSolicitsFromNowhereToTheSolicitedNodeGroup) {
  const Ipv6 target = {0xfd, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xab, 0xcd, 0x11};
  const auto f = neighbor_solicitation_probe(kOurs, target);
  ASSERT_EQ(f.size(), 14u + 40 + 24);
  EXPECT_EQ(std::vector<uint8_t>(f.begin(), f.begin() + 6), (std::vector<uint8_t>{0x33, 0x33, 0xff, 0xab, 0xcd, 0x11}));
  EXPECT_EQ(std::vector<uint8_t>(f.begin() + 22, f.begin() + 38), std::vector<uint8_t>(16, 0));  // from ::
  const Ipv6 group = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xab, 0xcd, 0x11};
  EXPECT_EQ(std::vector<uint8_t>(f.begin() + 38, f.begin() + 54), std::vector<uint8_t>(group.begin(), group.end()));
  EXPECT_EQ(f[54], kNeighborSolicitation);
  EXPECT_EQ(icmpv6_checksum(Ipv6{}, group, f.data() + 54, 24), 0);
  const auto p = decode_neighbor_discovery(f.data(), f.size());
  ASSERT_TRUE(p);
  EXPECT_EQ(p->target, target);
  EXPECT_EQ(p->source, Ipv6{});
  EXPECT_FALSE(conflicts_with_nd_probe(*p, target, kOurs));  // our own
  EXPECT_TRUE(conflicts_with_nd_probe(*decode_neighbor_discovery(neighbor_solicitation_probe(kTheirs, target).data(), f.size()),
                                      target, kOurs));  // another host probing for it
  const auto holder = unsolicited_neighbor_advert(kTheirs, target);
  EXPECT_TRUE(conflicts_with_nd_probe(*decode_neighbor_discovery(holder.data(), holder.size()), target, kOurs));
  Ipv6 other = target;
  other[15] = 0x12;
  const auto elsewhere = unsolicited_neighbor_advert(kTheirs, other);
  EXPECT_FALSE(conflicts_with_nd_probe(*decode_neighbor_discovery(elsewhere.data(), elsewhere.size()), target, kOurs));
}

TEST(NeighborAdvert, DecoderRefusesShortRoutedAndForeignFrames) {
  const Ipv6 target = {0xfd, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x11};
  auto f = unsolicited_neighbor_advert(kOurs, target);
  EXPECT_TRUE(decode_neighbor_discovery(f.data(), f.size()));
  EXPECT_FALSE(decode_neighbor_discovery(f.data(), 14 + 40 + 23));
  auto routed = f;
  routed[21] = 64;  // hop limit: it crossed a router
  EXPECT_FALSE(decode_neighbor_discovery(routed.data(), routed.size()));
  auto long_payload = f;
  long_payload[19] = 200;  // claims more than the frame holds
  EXPECT_FALSE(decode_neighbor_discovery(long_payload.data(), long_payload.size()));
  auto echo = f;
  echo[54] = 128;
  EXPECT_FALSE(decode_neighbor_discovery(echo.data(), echo.size()));
  auto arp = gratuitous_arp(kOurs, kIp);
  EXPECT_FALSE(decode_neighbor_discovery(arp.data(), arp.size()));
}

TEST(NeighborAdvert, ChecksumOfAKnownMessage) {
  // RFC 1071's example words, as an ICMPv6 body with zero addresses: the sum is independent of
  // where the words sit, so the folded complement is fixed.
  const uint8_t body[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
  // 0x0001 + 0xf203 + 0xf4f5 + 0xf6f7 = 0x2ddf0 -> 0xddf2; + length 8 + next header 58 = 0xde34
  EXPECT_EQ(icmpv6_checksum(Ipv6{}, Ipv6{}, body, sizeof body), static_cast<uint16_t>(~0xde34));
}

}  // namespace
}  // namespace nasd::cluster::address
