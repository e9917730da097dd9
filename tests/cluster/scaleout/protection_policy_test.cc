#include "cluster/scaleout/protection_policy.h"

#include <gtest/gtest.h>

namespace nasd::scaleout {
namespace {

ProtectionPolicy parse(const std::string& s) {
  ProtectionPolicy p;
  std::string err;
  EXPECT_TRUE(parse_protection_policy(s, &p, &err)) << s << ": " << err;
  return p;
}

bool rejects(const std::string& s) {
  ProtectionPolicy p;
  std::string err;
  bool ok = parse_protection_policy(s, &p, &err);
  if (!ok) {
    EXPECT_NE(err, "");
  }
  return !ok;
}

TEST(ProtectionPolicy, OneFsForms) {
  ProtectionPolicy d = parse("+2d:1n");
  EXPECT_EQ(d.parity, 2);
  EXPECT_EQ(d.per_node, 2);
  EXPECT_EQ(d.data_width, 0);
  EXPECT_EQ(d.node_tolerance(), 1);
  EXPECT_EQ(d.drive_tolerance(), 2);
  EXPECT_EQ(d, ProtectionPolicy{});  // the default is +2d:1n
  ProtectionPolicy n = parse("+2n");
  EXPECT_EQ(n.per_node, 1);
  EXPECT_EQ(n.node_tolerance(), 2);
  ProtectionPolicy f = parse("+4d:2n");
  EXPECT_EQ(f.per_node, 2);
  EXPECT_EQ(f.node_tolerance(), 2);
  EXPECT_EQ(parse("+3d:1n").per_node, 3);
  EXPECT_EQ(parse("+1n").parity, 1);
}

TEST(ProtectionPolicy, FixedWidthForms) {
  ProtectionPolicy p = parse("6+2/2");
  EXPECT_EQ(p.data_width, 6);
  EXPECT_EQ(p.parity, 2);
  EXPECT_EQ(p.per_node, 2);
  ProtectionPolicy q = parse("16+2/2");
  EXPECT_EQ(q.data_width, 16);
  ProtectionPolicy r = parse("4+2");
  EXPECT_EQ(r.per_node, 1);
}

TEST(ProtectionPolicy, RoundTrips) {
  for (const char* s : {"+2d:1n", "+2n", "+4d:2n", "+3d:1n", "+1n", "6+2/2", "16+4/2", "4+2/1"}) {
    EXPECT_EQ(parse(s).to_string(), s);
  }
}

TEST(ProtectionPolicy, RejectsUnsafeOrMalformed) {
  EXPECT_TRUE(rejects(""));
  EXPECT_TRUE(rejects("+"));
  EXPECT_TRUE(rejects("+0n"));        // no parity
  EXPECT_TRUE(rejects("+5n"));        // beyond kMaxParity
  EXPECT_TRUE(rejects("+2d:3n"));     // K > M
  EXPECT_TRUE(rejects("+3d:2n"));     // K does not divide M
  EXPECT_TRUE(rejects("6+2/3"));      // b > M: a node loss would lose 3 units
  EXPECT_TRUE(rejects("17+2/2"));     // wider than 16
  EXPECT_TRUE(rejects("0+2/2"));
  EXPECT_TRUE(rejects("6+2/2x"));
  EXPECT_TRUE(rejects("+2d:1nn"));
  EXPECT_TRUE(rejects("+0002n"));     // absurdly long fields are refused, not overflowed
  EXPECT_TRUE(rejects("99999999999+2"));
}

}  // namespace
}  // namespace nasd::scaleout
