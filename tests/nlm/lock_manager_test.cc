// The lock manager's rules, one by one: ranges, splitting and merging, upgrade and downgrade,
// conflicts between owners, blocked requests granted in order, cancel, shares, grace, FREE_ALL.
#include "server/nlm/lock_manager.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace nasd::nlm {
namespace {

constexpr FileId kFile{1, 42, 1};
constexpr FileId kOther{1, 43, 1};
constexpr uint64_t kNow = 1000;

constexpr const char* kAddress = "10.0.0.1";  // every client here calls from one address

LockOwner owner(const std::string& host, int32_t svid = 1) {
  return LockOwner{host, svid, "oh-" + host, kAddress};
}

Lock make(const LockOwner& o, bool exclusive, uint64_t offset, uint64_t len,
          const FileId& f = kFile) {
  return Lock{f, o, exclusive, ByteRange::from_nlm(offset, len)};
}

LockRequest request(const Lock& l, bool block = false, bool reclaim = false) {
  LockRequest r;
  r.lock = l;
  r.block = block;
  r.reclaim = reclaim;
  r.cookie = "c";
  r.callback.host = "127.0.0.1";
  return r;
}

std::vector<std::pair<uint64_t, uint64_t>> ranges_of(const LockManager& m, const LockOwner& o) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (const Lock& l : m.locks())
    if (l.owner == o) out.push_back({l.range.start, l.range.end});
  std::sort(out.begin(), out.end());
  return out;
}

TEST(ByteRange, LenZeroAndOverflowReachEndOfFile) {
  EXPECT_EQ(ByteRange::from_nlm(10, 0).end, ByteRange::kToEof);
  EXPECT_EQ(ByteRange::from_nlm(UINT64_MAX - 5, 100).end, ByteRange::kToEof);
  EXPECT_EQ(ByteRange::from_nlm(10, 5).end, 15u);
  EXPECT_EQ(ByteRange::from_nlm(10, 0).nlm_len(), 0u);
  EXPECT_EQ(ByteRange::from_nlm(10, 5).nlm_len(), 5u);
  EXPECT_TRUE(ByteRange::from_nlm(0, 10).overlaps(ByteRange::from_nlm(9, 1)));
  EXPECT_FALSE(ByteRange::from_nlm(0, 10).overlaps(ByteRange::from_nlm(10, 1)));
}

TEST(LockManager, ExclusiveConflictsWithOtherOwnersOnly) {
  LockManager m;
  auto a = owner("a"), b = owner("b");
  EXPECT_EQ(m.lock(request(make(a, true, 0, 100)), kNow), LockStatus::Granted);
  EXPECT_EQ(m.lock(request(make(b, true, 50, 10)), kNow), LockStatus::Denied);
  EXPECT_EQ(m.lock(request(make(b, false, 99, 1)), kNow), LockStatus::Denied);
  EXPECT_EQ(m.lock(request(make(b, true, 100, 10)), kNow), LockStatus::Granted);  // adjacent
  EXPECT_EQ(m.lock(request(make(b, true, 0, 1, kOther)), kNow), LockStatus::Granted);  // other file
  // The same host with another svid is another owner.
  EXPECT_EQ(m.lock(request(make(owner("a", 2), true, 0, 1)), kNow), LockStatus::Denied);
  std::optional<Lock> c;
  EXPECT_EQ(m.test(make(b, false, 10, 1), kNow, &c), LockStatus::Denied);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->owner, a);
  EXPECT_EQ(c->range.start, 0u);
  EXPECT_EQ(c->range.end, 100u);
  EXPECT_EQ(m.test(make(a, true, 10, 1), kNow, &c), LockStatus::Granted);  // own lock
}

TEST(LockManager, SharedLocksCoexist) {
  LockManager m;
  EXPECT_EQ(m.lock(request(make(owner("a"), false, 0, 0)), kNow), LockStatus::Granted);
  EXPECT_EQ(m.lock(request(make(owner("b"), false, 5, 5)), kNow), LockStatus::Granted);
  EXPECT_EQ(m.lock(request(make(owner("c"), true, 1000000, 1)), kNow), LockStatus::Denied);
}

TEST(LockManager, UnlockSplitsAndMergesAdjacent) {
  LockManager m;
  auto a = owner("a");
  ASSERT_EQ(m.lock(request(make(a, true, 0, 100)), kNow), LockStatus::Granted);
  m.unlock(kFile, a, ByteRange::from_nlm(40, 20));
  EXPECT_EQ(ranges_of(m, a), (std::vector<std::pair<uint64_t, uint64_t>>{{0, 40}, {60, 100}}));
  EXPECT_EQ(m.entries(), 2u);
  // Filling the hole merges the three into one.
  ASSERT_EQ(m.lock(request(make(a, true, 40, 20)), kNow), LockStatus::Granted);
  EXPECT_EQ(ranges_of(m, a), (std::vector<std::pair<uint64_t, uint64_t>>{{0, 100}}));
  EXPECT_EQ(m.entries(), 1u);
  // Unlock to EOF from the middle.
  m.unlock(kFile, a, ByteRange::from_nlm(50, 0));
  EXPECT_EQ(ranges_of(m, a), (std::vector<std::pair<uint64_t, uint64_t>>{{0, 50}}));
  // Unlocking what is not held changes nothing.
  m.unlock(kFile, a, ByteRange::from_nlm(500, 10));
  m.unlock(kFile, owner("b"), ByteRange::from_nlm(0, 0));
  EXPECT_EQ(ranges_of(m, a), (std::vector<std::pair<uint64_t, uint64_t>>{{0, 50}}));
  m.unlock(kFile, a, ByteRange::from_nlm(0, 0));
  EXPECT_EQ(m.entries(), 0u);
  EXPECT_TRUE(m.locks().empty());
}

TEST(LockManager, UpgradeAndDowngradeReplaceTheOwnersMode) {
  LockManager m;
  auto a = owner("a"), b = owner("b");
  ASSERT_EQ(m.lock(request(make(a, false, 0, 100)), kNow), LockStatus::Granted);
  // Upgrade the middle: shared 0-20, exclusive 20-30, shared 30-100.
  ASSERT_EQ(m.lock(request(make(a, true, 20, 10)), kNow), LockStatus::Granted);
  EXPECT_EQ(m.locks().size(), 3u);
  EXPECT_EQ(m.lock(request(make(b, false, 0, 20)), kNow), LockStatus::Granted);
  EXPECT_EQ(m.lock(request(make(b, false, 25, 1)), kNow), LockStatus::Denied);
  // Downgrade back: merges into one shared lock again.
  ASSERT_EQ(m.lock(request(make(a, false, 20, 10)), kNow), LockStatus::Granted);
  EXPECT_EQ(ranges_of(m, a), (std::vector<std::pair<uint64_t, uint64_t>>{{0, 100}}));
  EXPECT_EQ(m.lock(request(make(b, false, 25, 1)), kNow), LockStatus::Granted);
  // An upgrade another owner's shared lock stands in the way of is refused, and changes nothing.
  EXPECT_EQ(m.lock(request(make(a, true, 0, 100)), kNow), LockStatus::Denied);
  EXPECT_EQ(ranges_of(m, a), (std::vector<std::pair<uint64_t, uint64_t>>{{0, 100}}));
}

TEST(LockManager, BlockedRequestsAreGrantedInOrderWhenFree) {
  LockManager m;
  auto a = owner("a"), b = owner("b"), c = owner("c");
  ASSERT_EQ(m.lock(request(make(a, true, 0, 0)), kNow), LockStatus::Granted);
  EXPECT_EQ(m.lock(request(make(b, true, 0, 10), true), kNow), LockStatus::Blocked);
  EXPECT_EQ(m.lock(request(make(c, true, 5, 10), true), kNow), LockStatus::Blocked);
  // A retransmission keeps its one place.
  EXPECT_EQ(m.lock(request(make(b, true, 0, 10), true), kNow), LockStatus::Blocked);
  EXPECT_EQ(m.waiters().size(), 2u);
  // Freeing 20.. grants nothing: both waiters still meet a's lock.
  EXPECT_TRUE(m.unlock(kFile, a, ByteRange::from_nlm(20, 0)).empty());
  auto granted = m.unlock(kFile, a, ByteRange::from_nlm(0, 0));
  ASSERT_EQ(granted.size(), 1u);  // b first; c now conflicts with b
  EXPECT_EQ(granted[0].lock.owner, b);
  EXPECT_EQ(granted[0].cookie, "c");
  EXPECT_EQ(m.waiters().size(), 1u);
  granted = m.unlock(kFile, b, ByteRange::from_nlm(0, 0));
  ASSERT_EQ(granted.size(), 1u);
  EXPECT_EQ(granted[0].lock.owner, c);
  EXPECT_EQ(ranges_of(m, c), (std::vector<std::pair<uint64_t, uint64_t>>{{5, 15}}));
}

TEST(LockManager, CancelRemovesOnlyTheMatchingWaiter) {
  LockManager m;
  auto a = owner("a"), b = owner("b");
  ASSERT_EQ(m.lock(request(make(a, true, 0, 10)), kNow), LockStatus::Granted);
  ASSERT_EQ(m.lock(request(make(b, true, 0, 10), true), kNow), LockStatus::Blocked);
  EXPECT_FALSE(m.cancel(make(b, false, 0, 10)));  // another mode
  EXPECT_FALSE(m.cancel(make(b, true, 0, 11)));   // another range
  EXPECT_TRUE(m.cancel(make(b, true, 0, 10)));
  EXPECT_FALSE(m.cancel(make(b, true, 0, 10)));
  EXPECT_TRUE(m.unlock(kFile, a, ByteRange::from_nlm(0, 0)).empty());
  EXPECT_EQ(m.entries(), 0u);
}

TEST(LockManager, SharesConflictByAccessAndDeny) {
  LockManager m;
  auto share = [](const std::string& host, ShareAccess acc, ShareDeny deny) {
    return Share{kFile, host, "oh", acc, deny, kAddress};
  };
  EXPECT_EQ(m.share(share("a", ShareAccess::Read, ShareDeny::Write), false, kNow), LockStatus::Granted);
  EXPECT_EQ(m.share(share("b", ShareAccess::Read, ShareDeny::None), false, kNow), LockStatus::Granted);
  EXPECT_EQ(m.share(share("c", ShareAccess::Write, ShareDeny::None), false, kNow), LockStatus::Denied);
  EXPECT_EQ(m.share(share("c", ShareAccess::Read, ShareDeny::Read), false, kNow), LockStatus::Denied);
  // a replaces its own share: now it denies nothing, so c may write.
  EXPECT_EQ(m.share(share("a", ShareAccess::Read, ShareDeny::None), false, kNow), LockStatus::Granted);
  EXPECT_EQ(m.shares().size(), 2u);
  EXPECT_EQ(m.share(share("c", ShareAccess::Write, ShareDeny::None), false, kNow), LockStatus::Granted);
  m.unshare(kFile, "c", "oh", kAddress);
  m.unshare(kFile, "b", "oh", kAddress);
  EXPECT_EQ(m.share(share("d", ShareAccess::ReadWrite, ShareDeny::Write), false, kNow), LockStatus::Granted);
  EXPECT_EQ(m.shares().size(), 2u);
}

TEST(LockManager, GraceAcceptsOnlyReclaims) {
  LockManager m;
  auto a = owner("a"), b = owner("b");
  m.begin_grace(kNow + 100);
  std::optional<Lock> c;
  EXPECT_EQ(m.lock(request(make(a, true, 0, 10)), kNow), LockStatus::DeniedGrace);
  EXPECT_EQ(m.test(make(a, true, 0, 10), kNow, &c), LockStatus::DeniedGrace);
  EXPECT_EQ(m.lock(request(make(a, true, 0, 10), false, true), kNow), LockStatus::Granted);
  // Reclaims still conflict with each other.
  EXPECT_EQ(m.lock(request(make(b, true, 5, 10), false, true), kNow), LockStatus::Denied);
  EXPECT_EQ(m.share(Share{kFile, "b", "oh", ShareAccess::Read, ShareDeny::None, kAddress}, false, kNow),
            LockStatus::DeniedGrace);
  EXPECT_EQ(m.lock(request(make(b, true, 20, 10)), kNow + 100), LockStatus::Granted);  // over
  // A reclaim after the grace period is too late.
  EXPECT_EQ(m.lock(request(make(b, true, 40, 10), false, true), kNow + 100), LockStatus::DeniedGrace);
  EXPECT_EQ(m.share(Share{kFile, "b", "oh", ShareAccess::Read, ShareDeny::None, kAddress}, true, kNow + 100),
            LockStatus::DeniedGrace);
}

TEST(LockManager, VolumeGraceCoversOnlyThatVolume) {
  LockManager m;
  m.begin_volume_grace(2, kNow + 100);
  EXPECT_TRUE(m.in_grace(2, kNow));
  EXPECT_FALSE(m.in_grace(1, kNow));
  EXPECT_EQ(m.lock(request(make(owner("a"), true, 0, 1, FileId{2, 1, 1})), kNow), LockStatus::DeniedGrace);
  EXPECT_EQ(m.lock(request(make(owner("a"), true, 0, 1, FileId{1, 1, 1})), kNow), LockStatus::Granted);
  EXPECT_EQ(m.volume_graces(kNow).at(2), kNow + 100);
  EXPECT_EQ(m.grace_until(kNow), 0u);
  m.begin_volume_grace(2, kNow + 50);  // never shortens
  EXPECT_TRUE(m.in_grace(2, kNow + 99));
  EXPECT_FALSE(m.in_grace(2, kNow + 100));
}

TEST(LockManager, FreeAllDropsOneHostAndWakesOthers) {
  LockManager m;
  auto a1 = owner("a", 1), a2 = owner("a", 2), b = owner("b");
  ASSERT_EQ(m.lock(request(make(a1, true, 0, 10)), kNow), LockStatus::Granted);
  ASSERT_EQ(m.lock(request(make(a2, true, 0, 10, kOther)), kNow), LockStatus::Granted);
  ASSERT_EQ(m.share(Share{kFile, "a", "oh", ShareAccess::Read, ShareDeny::ReadWrite, kAddress}, false, kNow),
            LockStatus::Granted);
  ASSERT_EQ(m.lock(request(make(b, true, 0, 10), true), kNow), LockStatus::Blocked);
  ASSERT_EQ(m.lock(request(make(a2, true, 100, 1), true), kNow), LockStatus::Granted);
  auto granted = m.free_all(ClientKey{kAddress, "a"});
  ASSERT_EQ(granted.size(), 1u);
  EXPECT_EQ(granted[0].lock.owner, b);
  EXPECT_EQ(m.locks().size(), 1u);
  EXPECT_TRUE(m.shares().empty());
  EXPECT_EQ(m.entries(), 1u);
}

TEST(LockManager, DropVolumeForgetsOnlyThatVolume) {
  LockManager m;
  ASSERT_EQ(m.lock(request(make(owner("a"), true, 0, 1, FileId{2, 1, 1})), kNow), LockStatus::Granted);
  ASSERT_EQ(m.lock(request(make(owner("a"), true, 0, 1, FileId{1, 1, 1})), kNow), LockStatus::Granted);
  m.drop_volume(2);
  ASSERT_EQ(m.locks().size(), 1u);
  EXPECT_EQ(m.locks()[0].file.volume, 1u);
  EXPECT_EQ(m.entries(), 1u);
}

TEST(LockManager, BoundedEntriesAnswerNoLocks) {
  LockManager m(4);
  auto a = owner("a");
  for (uint64_t i = 0; i < 3; i++)  // a lock may split: room for two more is needed
    EXPECT_EQ(m.lock(request(make(a, true, i * 10, 1)), kNow), LockStatus::Granted);
  EXPECT_EQ(m.lock(request(make(a, true, 100, 1)), kNow), LockStatus::NoLocks);
  EXPECT_LE(m.entries(), 4u);
}

// The owner includes the address the client calls from: the same caller_name, svid and oh
// from another address is another owner, which can neither unlock, cancel nor unshare the
// first one's entries nor free them.
TEST(LockManager, AnOwnerIsKeyedByItsAddress) {
  LockManager m;
  LockOwner victim{"a", 1, "oh-a", "10.0.0.1"};
  LockOwner forger = victim;
  forger.address = "10.0.0.66";
  ASSERT_EQ(m.lock(request(make(victim, true, 0, 10)), kNow), LockStatus::Granted);
  ASSERT_EQ(m.lock(request(make(victim, true, 100, 10, kOther)), kNow), LockStatus::Granted);
  ASSERT_EQ(m.share(Share{kFile, "a", "oh", ShareAccess::Read, ShareDeny::Write, "10.0.0.1"}, false, kNow),
            LockStatus::Granted);
  EXPECT_EQ(m.lock(request(make(forger, true, 5, 1)), kNow), LockStatus::Denied);
  EXPECT_EQ(m.lock(request(make(forger, true, 5, 1), true), kNow), LockStatus::Blocked);
  m.unlock(kFile, forger, ByteRange::from_nlm(0, 0));
  m.unshare(kFile, "a", "oh", "10.0.0.66");
  EXPECT_TRUE(m.free_all(ClientKey{"10.0.0.66", "a"}).empty());  // only the forger's waiter went
  EXPECT_EQ(m.locks().size(), 2u);
  EXPECT_EQ(m.shares().size(), 1u);
  EXPECT_TRUE(m.waiters().empty());
  EXPECT_TRUE(m.holds(ClientKey{"10.0.0.1", "a"}));
  EXPECT_FALSE(m.holds(ClientKey{"10.0.0.66", "a"}));
  EXPECT_TRUE(m.holds(ClientKey{"10.0.0.1", "a"}, kFile.volume));
  EXPECT_FALSE(m.holds(ClientKey{"10.0.0.1", "a"}, 9));
  // The victim itself still can.
  EXPECT_EQ(m.free_all(ClientKey{"10.0.0.1", "a"}).size(), 0u);
  EXPECT_EQ(m.entries(), 0u);
  EXPECT_FALSE(m.holds(ClientKey{"10.0.0.1", "a"}));
}

// One address and one file get bounded room (entries and bytes): beyond it NoLocks, while other
// addresses and files are served as before.
TEST(LockManager, QuotasPerAddressAndPerFile) {
  LockLimits limits;
  limits.max_entries_per_address = 6;
  limits.max_entries_per_file = 9;
  LockManager m(limits);
  LockOwner a{"a", 1, "oh", "10.0.0.1"}, b{"b", 1, "oh", "10.0.0.2"}, c{"c", 1, "oh", "10.0.0.3"};
  int granted = 0;
  for (uint64_t i = 0; i < 10; i++)
    if (m.lock(request(make(a, true, i * 10, 1)), kNow) == LockStatus::Granted) granted++;
  EXPECT_EQ(granted, 5);  // room for a split is kept
  EXPECT_EQ(m.lock(request(make(a, true, 500, 1)), kNow), LockStatus::NoLocks);
  for (uint64_t i = 0; i < 3; i++)
    EXPECT_EQ(m.lock(request(make(b, true, 1000 + i * 10, 1)), kNow), LockStatus::Granted);
  // The file holds 8 now: two more (a split's room) do not fit the 9 for c on this file...
  EXPECT_EQ(m.lock(request(make(c, true, 2000, 1)), kNow), LockStatus::NoLocks);
  // ...but do on another.
  EXPECT_EQ(m.lock(request(make(c, true, 0, 1, kOther)), kNow), LockStatus::Granted);
  // Unlocking gives the room back.
  m.unlock(kFile, a, ByteRange::from_nlm(0, 0));
  EXPECT_EQ(m.lock(request(make(c, true, 2000, 1)), kNow), LockStatus::Granted);

  LockLimits bytes;
  bytes.max_bytes_per_address = 2 * sizeof(Lock) + 100;
  LockManager small(bytes);
  LockOwner big{"a", 1, std::string(100, 'o'), "10.0.0.1"};
  EXPECT_EQ(small.lock(request(make(big, true, 0, 1)), kNow), LockStatus::NoLocks)
      << "a lock's room for a split is two entries' bytes";
  LockOwner little{"a", 1, "o", "10.0.0.1"};
  EXPECT_EQ(small.lock(request(make(little, true, 0, 1)), kNow), LockStatus::Granted);
}

// An unlock that frees nothing grants nothing and looks at no waiter; one that frees a range
// grants only waiters that meet it, in order.
TEST(LockManager, UnlockWakesOnlyWaitersThatMeetTheFreedRange) {
  LockManager m;
  auto a = owner("a"), b = owner("b"), c = owner("c");
  ASSERT_EQ(m.lock(request(make(a, true, 0, 10)), kNow), LockStatus::Granted);
  ASSERT_EQ(m.lock(request(make(a, true, 100, 10)), kNow), LockStatus::Granted);
  ASSERT_EQ(m.lock(request(make(b, true, 0, 10), true), kNow), LockStatus::Blocked);
  ASSERT_EQ(m.lock(request(make(c, true, 100, 10), true), kNow), LockStatus::Blocked);
  EXPECT_TRUE(m.unlock(kFile, b, ByteRange::from_nlm(0, 0)).empty());  // b holds nothing
  EXPECT_TRUE(m.unlock(kFile, a, ByteRange::from_nlm(50, 10)).empty());  // a holds nothing there
  auto granted = m.unlock(kFile, a, ByteRange::from_nlm(100, 10));
  ASSERT_EQ(granted.size(), 1u);
  EXPECT_EQ(granted[0].lock.owner, c);
  EXPECT_EQ(m.waiters().size(), 1u);
}

// The table is indexed by range: on a file with 40,000 locks and 5,000 waiters, a LOCK, a
// TEST, a no-op UNLOCK and an UNLOCK that grants a waiter look at a handful of locks and
// coverage segments each (RangeTable::work), where a scan looked at every lock -- for every
// waiter.
TEST(LockManager, ACallCostsItsNeighbourhoodNotTheFile) {
  LockLimits big;
  big.max_entries = big.max_entries_per_address = big.max_entries_per_file = size_t{1} << 20;
  big.max_bytes_per_address = big.max_bytes_per_file = SIZE_MAX;
  LockManager m(big);
  constexpr uint64_t kN = 20000;
  for (uint64_t i = 0; i < kN; i++) {
    ASSERT_EQ(m.lock(request(make(owner("x" + std::to_string(i)), true, i * 10, 5)), kNow), LockStatus::Granted);
    ASSERT_EQ(m.lock(request(make(owner("s" + std::to_string(i)), false, i * 10 + 5, 3)), kNow), LockStatus::Granted);
  }
  for (uint64_t i = 0; i < kN / 4; i++)
    ASSERT_EQ(m.lock(request(make(owner("w" + std::to_string(i)), true, i * 10, 1), true), kNow),
              LockStatus::Blocked);
  std::optional<Lock> c;
  // TEST's answer names the holder; a shared one is looked for among the file's owners.
  EXPECT_EQ(m.test(make(owner("probe"), true, 50006, 1), kNow, &c), LockStatus::Denied);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->owner, owner("s5000"));
  const uint64_t before = m.work();
  EXPECT_EQ(m.lock(request(make(owner("probe"), true, 50006, 1)), kNow), LockStatus::Denied);
  EXPECT_EQ(m.test(make(owner("probe"), false, 50002, 1), kNow, &c), LockStatus::Denied);
  EXPECT_EQ(c->owner, owner("x5000"));
  EXPECT_EQ(m.test(make(owner("probe"), false, 50008, 2), kNow, &c), LockStatus::Granted);
  EXPECT_TRUE(m.unlock(kFile, owner("probe"), ByteRange::from_nlm(0, 0)).empty());  // holds nothing
  auto granted = m.unlock(kFile, owner("x100"), ByteRange::from_nlm(0, 0));
  ASSERT_EQ(granted.size(), 1u);
  EXPECT_EQ(granted[0].lock.owner, owner("w100"));
  EXPECT_LT(m.work() - before, 100u) << "a call looked at more than its neighbourhood";
}

// Random operations against a byte map: the invariant that no two owners' conflicting locks
// overlap, and that each owner's locks are exactly what it was granted minus what it unlocked.
TEST(LockManager, RandomOperationsMatchAByteModel) {
  constexpr int kBytes = 64;
  std::mt19937 rng(7);
  LockManager m;
  std::vector<LockOwner> owners = {owner("a"), owner("b"), owner("c")};
  // model[o][byte]: 0 none, 1 shared, 2 exclusive
  std::vector<std::vector<int>> model(owners.size(), std::vector<int>(kBytes, 0));
  for (int step = 0; step < 5000; step++) {
    size_t o = rng() % owners.size();
    uint64_t off = rng() % kBytes, len = 1 + rng() % 16;
    if (off + len > kBytes) len = kBytes - off;
    bool excl = rng() % 2;
    if (rng() % 3 == 0) {
      m.unlock(kFile, owners[o], ByteRange::from_nlm(off, len));
      for (uint64_t i = off; i < off + len; i++) model[o][i] = 0;
      continue;
    }
    bool conflict = false;
    for (size_t p = 0; p < owners.size(); p++)
      for (uint64_t i = off; i < off + len && p != o; i++)
        if (model[p][i] && (excl || model[p][i] == 2)) conflict = true;
    LockStatus st = m.lock(request(make(owners[o], excl, off, len)), kNow);
    ASSERT_EQ(st, conflict ? LockStatus::Denied : LockStatus::Granted) << "step " << step;
    if (!conflict)
      for (uint64_t i = off; i < off + len; i++) model[o][i] = excl ? 2 : 1;
    // Compare the manager's locks with the model, byte by byte.
    std::vector<std::vector<int>> seen(owners.size(), std::vector<int>(kBytes, 0));
    for (const Lock& l : m.locks()) {
      size_t who = std::find(owners.begin(), owners.end(), l.owner) - owners.begin();
      for (uint64_t i = l.range.start; i < l.range.end && i < kBytes; i++) {
        ASSERT_EQ(seen[who][i], 0) << "an owner's locks overlap at byte " << i;
        seen[who][i] = l.exclusive ? 2 : 1;
      }
    }
    ASSERT_EQ(seen, model) << "step " << step;
  }
}

}  // namespace
}  // namespace nasd::nlm
