// The per-volume NLM files in the shared folder: a volume's client list grows (durably) with
// each new client and is read fresh by the node that takes the volume over; a handed-over lock
// table is adopted once -- taken, it is gone -- so a later open without a hand-over finds none.
#include "cluster/volume_lock_files.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/cluster/scratch_dir.h"

namespace nasd::cluster {
namespace {

std::string name_of(uint32_t id) { return "v" + std::to_string(id); }

TEST(VolumeLockFiles, ClientListsArePerVolumeAndSeenByTheNextOwner) {
  testing::ScratchDir dir("nasd-lockfiles");
  VolumeLockFiles a(dir.path + "/nsm", name_of, 3), b(dir.path + "/nsm", name_of, 3);
  EXPECT_TRUE(a.record(0, {"client-x", "10.0.0.1"}));
  EXPECT_TRUE(a.record(0, {"client-x", "10.0.0.1"}));
  EXPECT_TRUE(a.record(1, {"client-y", "10.0.0.2"}));
  // The name at another address is another client: the first entry is never rebound (else a
  // host claiming the name would be told of the takeover instead of the client).
  EXPECT_TRUE(a.record(0, {"client-x", "10.0.0.3"}));
  EXPECT_TRUE(a.record(0, {"client-z", "10.0.0.4"}));
  EXPECT_FALSE(a.record(0, {"client-w", "10.0.0.5"}));  // full
  auto v0 = b.clients(0);
  ASSERT_EQ(v0.size(), 3u);
  EXPECT_EQ(v0[0].name, "client-x");
  EXPECT_EQ(v0[0].address, "10.0.0.1");
  EXPECT_EQ(v0[1].name, "client-x");
  EXPECT_EQ(v0[1].address, "10.0.0.3");
  ASSERT_EQ(b.clients(1).size(), 1u);
  EXPECT_TRUE(b.clients(2).empty());
  // b serves v1 now and records a client; a, taking it back, sees it.
  EXPECT_TRUE(b.record(1, {"client-q", "10.0.0.6"}));
  EXPECT_EQ(a.clients(1).size(), 2u);
  EXPECT_TRUE(std::filesystem::exists(dir.path + "/nsm/v0.clients"));
  // Clients that hold nothing any more are forgotten to make room.
  a.forget(0, {{"client-x", "10.0.0.3"}, {"client-z", "10.0.0.4"}});
  EXPECT_TRUE(a.record(0, {"client-w", "10.0.0.5"}));
  v0 = b.clients(0);
  ASSERT_EQ(v0.size(), 2u);
  EXPECT_EQ(v0[0].address, "10.0.0.1");
  EXPECT_EQ(v0[1].name, "client-w");
}

TEST(VolumeLockFiles, AClientIsListedOncePerServerAddressItLockedAt) {
  testing::ScratchDir dir("nasd-lockfiles");
  VolumeLockFiles a(dir.path + "/nsm", name_of, 8), b(dir.path + "/nsm", name_of, 8);
  EXPECT_TRUE(a.record(0, {"client-x", "10.0.0.1", "10.0.2.1"}));   // through the EVS address
  EXPECT_TRUE(a.record(0, {"client-x", "10.0.0.1", "10.0.1.3"}));   // through another node
  EXPECT_TRUE(a.record(0, {"client-x", "10.0.0.1", "10.0.1.3"}));
  EXPECT_TRUE(a.record(0, {"client-y", "10.0.0.2", ""}));           // not known
  auto v0 = b.clients(0);
  ASSERT_EQ(v0.size(), 3u);
  EXPECT_EQ(v0[0].called, "10.0.2.1");
  EXPECT_EQ(v0[1].called, "10.0.1.3");
  EXPECT_EQ(v0[2].name, "client-y");
  EXPECT_EQ(v0[2].called, "");
}

TEST(VolumeLockFiles, ATableIsAdoptedOnce) {
  testing::ScratchDir dir("nasd-lockfiles");
  VolumeLockFiles a(dir.path + "/nsm", name_of, 16), b(dir.path + "/nsm", name_of, 16);
  std::string error;
  EXPECT_FALSE(b.take_table(3, &error));
  EXPECT_EQ(error, "");  // none is not an error
  ASSERT_TRUE(a.save_table(3, {1, 2, 3, 4}, &error)) << error;
  auto table = b.take_table(3, &error);
  ASSERT_TRUE(table) << error;
  EXPECT_EQ(*table, (std::vector<uint8_t>{1, 2, 3, 4}));
  EXPECT_FALSE(a.take_table(3, &error)) << "taken twice";
  EXPECT_FALSE(std::filesystem::exists(dir.path + "/nsm/v3.locks"));
  // Nothing left behind by the writes.
  for (const auto& e : std::filesystem::directory_iterator(dir.path + "/nsm"))
    EXPECT_EQ(e.path().string().find(".tmp"), std::string::npos) << e.path();
}

}  // namespace
}  // namespace nasd::cluster
