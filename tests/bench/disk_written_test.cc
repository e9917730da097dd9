#include "bench/disk_written.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace nasd::bench {
namespace {

TEST(DiskWrittenTest, SectorsWrittenOfTheNamedDeviceInBytes) {
  // Field 10 is sectors written, in 512-byte units whatever the device's sector size.
  const std::string stats =
      " 253       0 vda 5 0 100 4 7 0 2000 9 0 11 13 0 0 0 0\n"
      " 253       1 vda1 5 0 100 4 7 0 1500 9 0 11 13 0 0 0 0\n"
      "   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0\n";
  EXPECT_EQ(parse_diskstats_bytes_written(stats, "vda"), std::optional<uint64_t>(2000u * 512));
  EXPECT_EQ(parse_diskstats_bytes_written(stats, "vda1"), std::optional<uint64_t>(1500u * 512));
  EXPECT_EQ(parse_diskstats_bytes_written(stats, "loop0"), std::optional<uint64_t>(0));
  EXPECT_FALSE(parse_diskstats_bytes_written(stats, "vd").has_value());
  EXPECT_FALSE(parse_diskstats_bytes_written(" 8 0 sda 1 2 3\n", "sda").has_value());
  EXPECT_FALSE(parse_diskstats_bytes_written(" 8 0 sda 1 2 3 4 5 6 x\n", "sda").has_value());
}

TEST(DiskWrittenTest, ReadsThisMachinesFirstDevice) {
  std::ifstream f("/proc/diskstats");
  std::string major, minor, name;
  if (!(f >> major >> minor >> name)) GTEST_SKIP() << "no /proc/diskstats here";
  EXPECT_TRUE(disk_bytes_written(name).has_value());
  EXPECT_FALSE(disk_bytes_written("no-such-device").has_value());
}

}  // namespace
}  // namespace nasd::bench
