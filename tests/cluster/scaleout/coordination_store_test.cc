// The storage rules of the coordination protocol, directed: the epoch fence of a node's stores
// and the journal close at a mirror (cluster/scaleout/coordination/fenced_store.h), and the
// rendezvous designation of slots (coord_types.h).
#include <gtest/gtest.h>

#include <map>

#include "cluster/scaleout/coordination/fenced_store.h"

namespace nasd::scaleout::coord {
namespace {

Rec record(uint64_t ino, uint64_t epoch, uint64_t seq, uint32_t nlink) {
  Rec r;
  r.key = Key{KeyKind::Inode, ino};
  r.stamp = Stamp{epoch, 0};
  r.seq = seq;
  r.value.live = true;
  r.value.nlink = nlink;
  return r;
}

TEST(FencedStore, RefusesAPutOfAnOlderEpochOnceANewerOpenedTheSlot) {
  FencedStore store;
  ASSERT_TRUE(store.put_records(3, 1, {record(7, 1, 10, 1)}));
  std::vector<Rec> seen;
  ASSERT_TRUE(store.open(3, 2, &seen));  // a successor raises the fence and reads
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_FALSE(store.put_records(3, 1, {record(7, 1, 11, 5)}));  // the old holder, awake
  EXPECT_FALSE(store.put_unit(3, 1, UnitId{7, 0, Version{Stamp{1, 1}, 1, 9}, 0}));
  EXPECT_EQ(store.records(3).at(Key{KeyKind::Inode, 7}).value.nlink, 1u);
  EXPECT_FALSE(store.open(3, 1, &seen));
  // Other slots keep their own fences.
  EXPECT_TRUE(store.put_records(4, 1, {record(8, 1, 12, 1)}));
  EXPECT_TRUE(store.put_records(3, 2, {record(7, 2, 1, 2)}));
  EXPECT_EQ(store.fence(3), 2u);
}

TEST(FencedStore, KeepsTheNewestRecordOfAKeyWhateverTheOrderOfPuts) {
  FencedStore store;
  ASSERT_TRUE(store.put_records(0, 2, {record(5, 2, 4, 2)}));
  ASSERT_TRUE(store.put_records(0, 2, {record(5, 1, 90, 1)}));  // an older epoch's, late
  ASSERT_TRUE(store.put_records(0, 2, {record(5, 2, 3, 3)}));   // an earlier position
  EXPECT_EQ(store.records(0).at(Key{KeyKind::Inode, 5}).value.nlink, 2u);
}

JournalRec jrec(uint64_t seq, Slot slot, Stamp stamp, bool write) {
  JournalRec j;
  j.origin = 1;
  j.seq = seq;
  j.slot = slot;
  j.stamp = stamp;
  j.write = write;
  return j;
}

TEST(MirrorLog, AClosedSlotRefusesOlderRecordsAndTheReadHasEveryOneBefore) {
  MirrorLog m;
  ASSERT_TRUE(m.append(jrec(1, 2, {1, 0}, false)));
  ASSERT_TRUE(m.append(jrec(2, 2, {1, 4}, true)));
  ASSERT_TRUE(m.append(jrec(3, 5, {1, 0}, false)));
  auto read = m.close_and_read(2, Stamp{2, 0}, false);  // a successor of slot 2 at epoch 2
  ASSERT_EQ(read.size(), 2u);
  EXPECT_FALSE(m.append(jrec(4, 2, {1, 0}, false)));  // the old coordinator cannot go on
  EXPECT_FALSE(m.append(jrec(5, 2, {1, 4}, true)));   // nor its tokens' writes
  EXPECT_TRUE(m.append(jrec(6, 5, {1, 0}, false)));   // other slots are untouched
  EXPECT_TRUE(m.append(jrec(7, 2, {2, 3}, true)));    // a token of the new epoch
}

TEST(MirrorLog, AForcedRevocationClosesOnlyTheOriginsWrites) {
  MirrorLog m;
  ASSERT_TRUE(m.append(jrec(1, 2, {3, 0}, false)));
  ASSERT_TRUE(m.append(jrec(2, 2, {3, 5}, true)));
  auto read = m.close_and_read(2, Stamp{3, 7}, true);
  ASSERT_EQ(read.size(), 1u);
  EXPECT_TRUE(read[0].write);
  EXPECT_FALSE(m.append(jrec(3, 2, {3, 6}, true)));  // a voided token's write
  EXPECT_TRUE(m.append(jrec(4, 2, {3, 8}, true)));   // a token granted after the close
  EXPECT_TRUE(m.append(jrec(5, 2, {3, 0}, false)));  // the origin coordinating slot 2 goes on
  EXPECT_TRUE(m.append(jrec(2, 2, {3, 5}, true)));   // a copy of a record it holds: idempotent
}

TEST(Designation, ALostNodeMovesOnlyItsOwnSlotsAndSpreadsThem) {
  const std::vector<NodeId> four{1, 2, 3, 4}, three{1, 2, 4};
  std::map<NodeId, int> before, after;
  int moved = 0;
  for (Slot s = 0; s < 1024; ++s) {
    const NodeId a = designated(s, four), b = designated(s, three);
    ++before[a];
    if (a != 3) {
      EXPECT_EQ(a, b) << "slot " << s;
    } else {
      ++after[b];
      ++moved;
    }
  }
  for (NodeId n : four) EXPECT_GT(before[n], 1024 / 4 * 3 / 4) << "node " << n;  // about a quarter
  for (NodeId n : three) EXPECT_GT(after[n], moved / 3 / 2) << "node " << n;    // spread over all
}

}  // namespace
}  // namespace nasd::scaleout::coord
