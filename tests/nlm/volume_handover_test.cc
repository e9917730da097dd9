// A volume's lock table leaving one node and arriving at the next (a planned move): what one
// lock manager takes out, encoded and decoded, is what the other holds afterwards; nothing is
// granted for the volume between the two; a table that is malformed or disagrees with itself is
// refused whole (the new owner then begins a grace period instead).
#include "server/nlm/volume_handover.h"

#include "util/byte_io.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

namespace nasd::nlm {
namespace {

constexpr uint32_t kVolume = 7;
constexpr FileId kFile{kVolume, 42, 1};
constexpr FileId kOtherVolumeFile{8, 42, 1};
constexpr uint64_t kNow = 1000;

// Every client at an address of its own (owners are keyed by it).
LockOwner owner(const std::string& host, int32_t svid = 1) {
  return LockOwner{host, svid, "oh-" + host, "10.0.0." + std::to_string(host[0] - 'a' + 1)};
}
Share share_of(const std::string& host, const std::string& oh, ShareAccess a, ShareDeny d) {
  return Share{kFile, host, oh, a, d, owner(host).address};
}

LockRequest request(const LockOwner& o, bool exclusive, uint64_t offset, uint64_t len,
                    bool block = false, const FileId& f = kFile) {
  LockRequest r;
  r.lock = Lock{f, o, exclusive, ByteRange::from_nlm(offset, len)};
  r.block = block;
  r.fh = "fh-bytes";
  r.cookie = "cookie-" + o.host;
  r.callback = {"10.0.0.9", "10.0.0.1", "n3"};
  return r;
}

VolumeHandover round_trip(const VolumeHandover& h) {
  std::vector<uint8_t> bytes = encode_handover(h);
  VolumeHandover out;
  std::string error;
  EXPECT_TRUE(decode_handover(bytes, &out, &error)) << error;
  return out;
}

TEST(VolumeHandover, TheNextOwnerHoldsExactlyWhatTheLastOneHeld) {
  LockManager from, to;
  ASSERT_EQ(from.lock(request(owner("x"), true, 0, 100), kNow), LockStatus::Granted);
  ASSERT_EQ(from.lock(request(owner("y"), false, 200, 0), kNow), LockStatus::Granted);
  ASSERT_EQ(from.lock(request(owner("z"), true, 50, 10, /*block=*/true), kNow), LockStatus::Blocked);
  ASSERT_EQ(from.share(share_of("y", "share-oh", ShareAccess::Read, ShareDeny::Write), false, kNow),
            LockStatus::Granted);
  ASSERT_EQ(from.lock(request(owner("x"), true, 0, 10, false, kOtherVolumeFile), kNow), LockStatus::Granted);
  from.begin_volume_grace(kVolume, kNow + 5000);

  VolumeHandover h{kVolume, from.take_volume(kVolume, kNow + 1000), {{"x", "10.0.0.1", "10.0.2.1"}}};
  EXPECT_EQ(h.table.locks.size(), 2u);
  EXPECT_EQ(h.table.waiters.size(), 1u);
  EXPECT_EQ(h.table.shares.size(), 1u);
  EXPECT_EQ(h.table.grace_left_ms, 4000u);
  // Gone from the old owner, which refuses the volume from now on, even a reclaim; the other
  // volume is untouched.
  EXPECT_EQ(from.locks().size(), 1u);
  EXPECT_EQ(from.lock(request(owner("w"), true, 500, 1), kNow + 9000), LockStatus::DeniedGrace);
  LockRequest reclaim = request(owner("x"), true, 0, 100);
  reclaim.reclaim = true;
  EXPECT_EQ(from.lock(reclaim, kNow + 1000), LockStatus::DeniedGrace);
  std::optional<Lock> conflict;
  EXPECT_EQ(from.test(Lock{kFile, owner("w"), true, ByteRange::from_nlm(0, 1)}, kNow + 9000, &conflict),
            LockStatus::DeniedGrace);

  VolumeHandover arrived = round_trip(h);
  ASSERT_EQ(arrived.clients.size(), 1u);
  EXPECT_EQ(arrived.clients[0].address, "10.0.0.1");
  EXPECT_EQ(arrived.clients[0].called, "10.0.2.1");
  // Another clock at the new owner: the grace left is a duration.
  const uint64_t there = 50;
  ASSERT_TRUE(to.adopt_volume(kVolume, arrived.table, there));
  EXPECT_TRUE(to.in_grace(kVolume, there + 3999));
  EXPECT_FALSE(to.in_grace(kVolume, there + 4000));
  // x's lock holds against y after the move; the waiter is granted when x unlocks.
  EXPECT_EQ(to.lock(request(owner("y"), true, 10, 1), there + 4000), LockStatus::Denied);
  std::vector<Waiter> granted = to.unlock(kFile, owner("x"), ByteRange::from_nlm(0, 0));
  ASSERT_EQ(granted.size(), 1u);
  EXPECT_EQ(granted[0].lock.owner.host, "z");
  EXPECT_EQ(granted[0].cookie, "cookie-z");
  EXPECT_EQ(granted[0].fh, "fh-bytes");
  // The GRANTED still goes out through the node the client called, from the address it called.
  EXPECT_EQ(granted[0].callback.host, "10.0.0.9");
  EXPECT_EQ(granted[0].callback.from, "10.0.0.1");
  EXPECT_EQ(granted[0].callback.relay, "n3");
  ASSERT_EQ(to.shares().size(), 1u);
  EXPECT_EQ(to.share(share_of("w", "o", ShareAccess::Write, ShareDeny::None), false, there + 4000),
            LockStatus::Denied);
  EXPECT_EQ(to.entries(), 3u);  // y's lock, z's lock, y's share
}

// Tables written by earlier versions, byte by byte: "NASDNLM1" (a waiter's address only, a
// client without the address it called) and "NASDNLM2" (owners without their address): the
// owners are put at the address the client list gives their name.
std::vector<uint8_t> old_table(char version) {
  util::ByteWriter w;
  w.u64(0x004d4c4e4453414eull | (uint64_t{static_cast<uint8_t>(version)} << 56));
  w.u32(kVolume);
  w.u64(0);  // grace left
  auto lock = [&](const char* host) {
    w.u32(kFile.volume);
    w.u64(kFile.inode);
    w.u32(kFile.gen);
    w.string(host);
    w.u32(1);
    w.string(std::string("oh-") + host);
    w.boolean(true);
    w.u64(0);
    w.u64(10);
  };
  w.u32(1);
  lock("x");
  w.u32(1);  // a waiter
  lock("z");
  w.string("fh");
  w.string("cookie");
  w.string("10.0.0.9");
  if (version == '2') {
    w.string("10.0.0.1");
    w.string("n3");
  }
  w.u32(0);  // shares
  w.u32(2);  // clients
  for (const char* c : {"x", "z"}) {
    w.string(c);
    w.string(std::string("10.0.0.") + (c[0] == 'x' ? "24" : "26"));
    if (version == '2') w.string("");
  }
  return w.take();
}

TEST(VolumeHandover, TablesWrittenByEarlierVersionsAreStillRead) {
  for (char version : {'1', '2'}) {
    VolumeHandover out;
    std::string error;
    ASSERT_TRUE(decode_handover(old_table(version), &out, &error)) << version << ": " << error;
    ASSERT_EQ(out.table.waiters.size(), 1u);
    EXPECT_EQ(out.table.waiters[0].callback.host, "10.0.0.9");
    EXPECT_EQ(out.table.waiters[0].callback.from, version == '2' ? "10.0.0.1" : "");
    EXPECT_EQ(out.table.waiters[0].callback.relay, version == '2' ? "n3" : "");
    EXPECT_EQ(out.table.waiters[0].lock.owner.address, "10.0.0.26");
    ASSERT_EQ(out.table.locks.size(), 1u);
    EXPECT_EQ(out.table.locks[0].owner.address, "10.0.0.24");
    ASSERT_EQ(out.clients.size(), 2u);
    EXPECT_EQ(out.clients[0].address, "10.0.0.24");
    EXPECT_EQ(out.clients[0].called, "");
  }
}

TEST(VolumeHandover, ABackAndForthMoveKeepsTheTable) {
  LockManager a, b;
  ASSERT_EQ(a.lock(request(owner("x"), true, 0, 1), kNow), LockStatus::Granted);
  ASSERT_TRUE(b.adopt_volume(kVolume, round_trip({kVolume, a.take_volume(kVolume, kNow), {}}).table, kNow));
  ASSERT_TRUE(a.adopt_volume(kVolume, round_trip({kVolume, b.take_volume(kVolume, kNow), {}}).table, kNow));
  EXPECT_EQ(a.lock(request(owner("y"), true, 0, 1), kNow), LockStatus::Denied);
  EXPECT_EQ(a.lock(request(owner("y"), true, 1, 1), kNow), LockStatus::Granted);
}

TEST(VolumeHandover, ATableThatDisagreesWithItselfIsRefusedWhole) {
  LockManager m;
  VolumeLocks t;
  t.locks.push_back(Lock{kFile, owner("x"), true, ByteRange::from_nlm(0, 10)});
  t.locks.push_back(Lock{kFile, owner("y"), false, ByteRange::from_nlm(5, 10)});  // conflicts
  EXPECT_FALSE(m.adopt_volume(kVolume, t, kNow));
  EXPECT_EQ(m.entries(), 0u);
  t.locks.pop_back();
  t.locks.push_back(Lock{kOtherVolumeFile, owner("y"), false, ByteRange::from_nlm(5, 10)});
  EXPECT_FALSE(m.adopt_volume(kVolume, t, kNow)) << "an entry of another volume";
  t.locks.pop_back();
  t.shares.push_back(share_of("a", "1", ShareAccess::Read, ShareDeny::Write));
  t.shares.push_back(share_of("b", "1", ShareAccess::Write, ShareDeny::None));
  EXPECT_FALSE(m.adopt_volume(kVolume, t, kNow)) << "conflicting shares";
  t.shares.pop_back();
  LockManager small(1);
  EXPECT_FALSE(small.adopt_volume(kVolume, t, kNow)) << "beyond the bound";
  EXPECT_TRUE(m.adopt_volume(kVolume, t, kNow));
  EXPECT_EQ(m.entries(), 2u);
}

TEST(VolumeHandover, MalformedBytesAreRefused) {
  VolumeHandover h;
  h.volume = kVolume;
  h.table.locks.push_back(Lock{kFile, owner("x"), true, ByteRange::from_nlm(0, 10)});
  h.table.shares.push_back(share_of("a", "1", ShareAccess::Read, ShareDeny::Write));
  h.clients.push_back({"x", "10.0.0.1"});
  const std::vector<uint8_t> good = encode_handover(h);
  VolumeHandover out;
  std::string error;
  // Every truncation, and trailing bytes.
  for (size_t n = 0; n < good.size(); ++n)
    EXPECT_FALSE(decode_handover(std::span(good.data(), n), &out, &error)) << n;
  std::vector<uint8_t> longer = good;
  longer.push_back(0);
  EXPECT_FALSE(decode_handover(longer, &out, &error));
  // Random corruption never crashes, and a count larger than the input is refused before
  // anything is sized from it.
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    std::vector<uint8_t> bad = good;
    bad[rng() % bad.size()] ^= static_cast<uint8_t>(1 + rng() % 255);
    (void)decode_handover(bad, &out, &error);
  }
  std::vector<uint8_t> huge = good;
  huge[20] = huge[21] = huge[22] = huge[23] = 0xff;  // the lock count
  EXPECT_FALSE(decode_handover(huge, &out, &error));
  EXPECT_TRUE(decode_handover(good, &out, &error)) << error;
}

}  // namespace
}  // namespace nasd::nlm
