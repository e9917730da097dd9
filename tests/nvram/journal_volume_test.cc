// JournalVolume over the MemoryFs test fixture: every acknowledged mutation survives a crash of the
// file system's unflushed state, and replay applies each record exactly once.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <set>
#include <thread>

#include "fs/call/codec.h"
#include "fs/call_identity.h"
#include "nvram/journal_volume.h"
#include "nvram/reply_window.h"
#include "tests/support/memory_fs.h"
#include "tests/nvram/loop_test_doubles.h"
#include "tests/nvram/test_util.h"

namespace nasd::nvram {
namespace {

using fs::Status;

class JournalVolumeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    opts = testing::small_options(dir.file("nv"), 8 << 20);
    target = std::make_shared<test_support::MemoryFs>(7, testing::mem_target_options());
    open();
  }
  void open() {
    journal = Journal::open(opts);
    volume = std::make_unique<JournalVolume>(journal, target);
    report = volume->recover();
  }
  // Drops the volume and journal without a clean shutdown and loses the fs's unflushed state.
  void crash() {
    volume.reset();
    journal.reset();
    target->crash();
  }
  void crash_and_reopen() {
    crash();
    open();
  }

  fs::InodeId mkdir(fs::InodeId parent, const std::string& name) {
    fs::InodeId out;
    std::optional<fs::Attr> a;
    fs::Wcc w;
    EXPECT_EQ(volume->mkdir(ctx, parent, name, {}, &out, &a, &w), Status::Ok);
    return out;
  }
  fs::InodeId create(fs::InodeId parent, const std::string& name) {
    fs::InodeId out;
    std::optional<fs::Attr> a;
    fs::Wcc w;
    EXPECT_EQ(volume->create(ctx, parent, name, fs::CreateMode::Guarded, {}, 0, &out, &a, &w),
              Status::Ok);
    return out;
  }
  Status write(fs::InodeId f, uint64_t off, const std::vector<uint8_t>& data,
               fs::Stability stable, fs::Stability* committed) {
    fs::Wcc w;
    return volume->write(ctx, f, off, data, stable, committed, &w);
  }

  // A mixed history touching every journalled operation.
  void run_history(int round) {
    const std::string r = std::to_string(round);
    fs::InodeId d = mkdir(volume->root(), "dir" + r);
    fs::InodeId f = create(d, "file");
    fs::Stability c;
    for (int b = 0; b < 3; ++b)
      ASSERT_EQ(write(f, b * 4096, testing::pattern(round * 10 + b, 4096), fs::Stability::FileSync, &c),
                Status::Ok);
    fs::SetAttr sa;
    sa.mode = 0600;
    fs::Wcc w, w2;
    ASSERT_EQ(volume->setattr(ctx, f, sa, std::nullopt, &w), Status::Ok);
    fs::InodeId l, n;
    std::optional<fs::Attr> a;
    ASSERT_EQ(volume->symlink(ctx, d, "link", "file", {}, &l, &a, &w), Status::Ok);
    ASSERT_EQ(volume->mknod(ctx, d, "fifo", fs::FileType::Fifo, {}, 0, 0, &n, &a, &w), Status::Ok);
    ASSERT_EQ(volume->link(ctx, f, d, "hard", &a, &w), Status::Ok);
    ASSERT_EQ(volume->rename(ctx, d, "file", d, "renamed", &w, &w2), Status::Ok);
    fs::InodeId gone = create(d, "temp");
    (void)gone;
    ASSERT_EQ(volume->remove(ctx, d, "temp", &w), Status::Ok);
    mkdir(d, "empty");
    ASSERT_EQ(volume->rmdir(ctx, d, "empty", &w), Status::Ok);
    // A file whose inode number is reused after removal must come back with the same id.
    fs::InodeId again = create(d, "again");
    ASSERT_EQ(write(again, 100, testing::pattern(round, 10), fs::Stability::Unstable, &c),
              Status::Ok);
  }

  testing::ScratchDir dir;
  JournalOptions opts;
  std::shared_ptr<test_support::MemoryFs> target;
  std::shared_ptr<Journal> journal;
  std::unique_ptr<JournalVolume> volume;
  ReplayReport report;
  fs::OpContext ctx;
};

TEST_F(JournalVolumeTest, EveryMutationSurvivesLosingTheUnflushedFs) {
  run_history(1);
  uint64_t d;
  ASSERT_EQ(target->flush(&d), Status::Ok);  // round 1 is durable in the fs itself
  run_history(2);
  const std::string before = testing::tree_snapshot(*volume);
  const size_t applied_before_crash = target->applied_seqs().size();

  crash();
  EXPECT_NE(testing::tree_snapshot(*target), before) << "the crash should have lost round 2";
  open();
  EXPECT_EQ(testing::tree_snapshot(*volume), before);
  EXPECT_EQ(report.durable_seq_before, d);
  EXPECT_GT(report.skipped, 0u);
  EXPECT_GT(report.applied, 0u);
  EXPECT_EQ(report.failed, 0u);

  // Exactly once: nothing at or below the durable seq was applied again, nothing twice.
  auto seqs = target->applied_seqs();
  std::vector<uint64_t> replayed(seqs.begin() + static_cast<long>(applied_before_crash), seqs.end());
  EXPECT_EQ(replayed.size(), report.applied);
  std::set<uint64_t> unique(replayed.begin(), replayed.end());
  EXPECT_EQ(unique.size(), replayed.size());
  EXPECT_TRUE(std::all_of(replayed.begin(), replayed.end(), [&](uint64_t s) { return s > d; }));
  EXPECT_TRUE(std::is_sorted(replayed.begin(), replayed.end()));
}

// A cluster node abandons a volume when its lease runs out (nothing more is written: the
// partner may own it already) and opens it again, in the same process, when the lease comes
// back. The fs is back at its last flush; the journal is the same one, still holding the
// records acknowledged since. They must be replayed as after a restart, and the sequence must
// go on above them.
TEST_F(JournalVolumeTest, AVolumeAbandonedAndReopenedInTheSameProcessKeepsEveryMutation) {
  run_history(1);
  uint64_t d;
  ASSERT_EQ(target->flush(&d), Status::Ok);
  run_history(2);
  const std::string before = testing::tree_snapshot(*volume);

  volume->seal();
  volume.reset();   // detaches it from the journal, which lives on
  target->crash();  // the abandoned fs's unflushed state is gone
  volume = std::make_unique<JournalVolume>(journal, target);
  report = volume->recover();
  EXPECT_EQ(testing::tree_snapshot(*volume), before) << "acknowledged mutations were lost";
  EXPECT_GT(report.applied, 0u);
  EXPECT_EQ(report.failed, 0u);

  // Its new mutations take sequence numbers above the replayed ones, so a crash now replays
  // the whole history once more without a clash.
  run_history(3);
  const std::string after = testing::tree_snapshot(*volume);
  crash_and_reopen();
  EXPECT_EQ(report.failed, 0u);
  EXPECT_EQ(testing::tree_snapshot(*volume), after);
}

TEST_F(JournalVolumeTest, ReplayTwiceAppliesNothingTheSecondTime) {
  run_history(1);
  const std::string before = testing::tree_snapshot(*volume);
  crash_and_reopen();
  EXPECT_GT(report.applied, 0u);
  crash_and_reopen();  // recover() flushed the fs, so the records are absorbed
  EXPECT_EQ(report.applied, 0u);
  EXPECT_EQ(testing::tree_snapshot(*volume), before);
  run_history(2);  // sequence numbers continue above everything seen
  const std::string after = testing::tree_snapshot(*volume);
  crash_and_reopen();
  EXPECT_EQ(report.failed, 0u);
  EXPECT_EQ(testing::tree_snapshot(*volume), after);
}

TEST_F(JournalVolumeTest, StabilityAndCommit) {
  fs::InodeId f = create(volume->root(), "f");
  fs::Stability c;
  ASSERT_EQ(write(f, 0, testing::pattern(1, 512), fs::Stability::Unstable, &c), Status::Ok);
  EXPECT_EQ(c, fs::Stability::Unstable);
  ASSERT_EQ(write(f, 512, testing::pattern(2, 512), fs::Stability::DataSync, &c), Status::Ok);
  EXPECT_EQ(c, fs::Stability::FileSync);
  fs::Wcc w;
  ASSERT_EQ(volume->commit(ctx, f, 0, 0, &w), Status::Ok);
  ASSERT_TRUE(w.after.has_value());
  EXPECT_EQ(w.after->size, 1024u);
  EXPECT_EQ(volume->commit(ctx, {999, 1}, 0, 0, &w), Status::Stale);
  EXPECT_EQ(volume->write_verifier(), target->write_verifier());
  EXPECT_EQ(target->flushes(), 0u) << "COMMIT must not force the fs to sync";
}

TEST_F(JournalVolumeTest, FailedMutationsAreNotJournalled) {
  fs::Wcc w;
  EXPECT_EQ(volume->remove(ctx, volume->root(), "missing", &w), Status::NoEnt);
  create(volume->root(), "x");
  fs::InodeId out;
  std::optional<fs::Attr> a;
  EXPECT_EQ(volume->create(ctx, volume->root(), "x", fs::CreateMode::Guarded, {}, 0, &out, &a, &w),
            Status::Exist);
  EXPECT_EQ(journal->stats().appends, 1u);
  crash_and_reopen();
  EXPECT_EQ(report.applied, 1u);
  EXPECT_EQ(report.failed, 0u);
}

TEST_F(JournalVolumeTest, TooLargeForTheRegionIsIoAndLeavesTheFsAlone) {
  fs::InodeId f = create(volume->root(), "f");
  const size_t before = target->applied_seqs().size();
  std::vector<uint8_t> huge(journal->max_payload() + 1);
  fs::Stability c;
  EXPECT_EQ(write(f, 0, huge, fs::Stability::FileSync, &c), Status::Io);
  EXPECT_EQ(target->applied_seqs().size(), before);
}

class JournalWriteAttemptTest : public JournalVolumeTest {
 protected:
  void SetUp() override {
    opts = testing::small_options(dir.file("nv"), 8 << 20);
    attempting = std::make_shared<testing::AttemptingMemoryFs>(7, testing::mem_target_options());
    target = attempting;
    open();
  }
  std::shared_ptr<testing::AttemptingMemoryFs> attempting;
};

TEST_F(JournalWriteAttemptTest, UnstableAttemptIsJournalledLikeTheCallAndReplayedAfterACrash) {
  fs::InodeId f = create(volume->root(), "f");
  const std::vector<uint64_t> seqs_before = target->applied_seqs();
  ASSERT_FALSE(seqs_before.empty());
  const std::vector<uint8_t> data = testing::pattern(7, 4096 + 100);
  fs::Stability c = fs::Stability::FileSync;
  fs::Wcc w;
  attempting->answer = false;
  EXPECT_FALSE(volume->try_write(ctx, f, 0, data, fs::Stability::Unstable, &c, &w));
  EXPECT_EQ(journal->stats().appends, 1u) << "a refused attempt was journalled";
  attempting->answer = true;
  ASSERT_EQ(volume->try_write(ctx, f, 0, data, fs::Stability::Unstable, &c, &w),
            std::optional<Status>(Status::Ok));
  EXPECT_EQ(c, fs::Stability::Unstable);
  ASSERT_TRUE(w.after.has_value());
  EXPECT_EQ(w.after->size, data.size());
  EXPECT_EQ(journal->stats().appends, 2u);
  const std::vector<uint64_t> seqs = target->applied_seqs();
  ASSERT_EQ(seqs.size(), seqs_before.size() + 1);
  EXPECT_EQ(seqs.back(), seqs_before.back() + 1) << "a refused attempt used up a sequence";
  // Errors are answers, and not journalled.
  EXPECT_EQ(volume->try_write(ctx, volume->root(), 0, data, fs::Stability::Unstable, &c, &w),
            std::optional<Status>(Status::IsDir));
  EXPECT_EQ(journal->stats().appends, 2u);
  const std::string before = testing::tree_snapshot(*volume);
  crash_and_reopen();
  EXPECT_EQ(report.failed, 0u);
  EXPECT_GE(report.applied, 2u);
  EXPECT_EQ(testing::tree_snapshot(*volume), before);
}

// Process mode without a mirror: committing is a store of the commit marker, so a stable WRITE
// and a COMMIT are answered on the loop, and only once their records are committed.
TEST_F(JournalWriteAttemptTest, StableAttemptsCommitInPlaceWhenTheCommitIsAStoreInMemory) {
  fs::InodeId f = create(volume->root(), "f");
  const JournalStats before = journal->stats();
  const std::vector<uint8_t> data = testing::pattern(9, 4096);
  fs::Stability c = fs::Stability::Unstable;
  fs::Wcc w;
  ASSERT_EQ(volume->try_write(ctx, f, 0, data, fs::Stability::FileSync, &c, &w),
            std::optional<Status>(Status::Ok));
  EXPECT_EQ(c, fs::Stability::FileSync);
  ASSERT_TRUE(w.after.has_value());
  EXPECT_EQ(w.after->size, data.size());
  JournalStats after = journal->stats();
  EXPECT_EQ(after.appends, before.appends + 1);
  EXPECT_EQ(after.records_committed, after.appends) << "answered before its record was committed";
  EXPECT_EQ(after.loop_commit_answers, before.loop_commit_answers + 1);
  EXPECT_EQ(after.commit_callbacks, 0u);
  // An UNSTABLE WRITE is not committed by itself; the COMMIT after it commits it in place.
  ASSERT_EQ(volume->try_write(ctx, f, 4096, data, fs::Stability::Unstable, &c, &w),
            std::optional<Status>(Status::Ok));
  EXPECT_LT(journal->stats().records_committed, journal->stats().appends);
  fs::Wcc cw;
  ASSERT_EQ(volume->try_commit(ctx, f, 0, 0, &cw), std::optional<Status>(Status::Ok));
  ASSERT_TRUE(cw.after.has_value());
  EXPECT_EQ(cw.after->size, 2 * data.size());
  after = journal->stats();
  EXPECT_EQ(after.records_committed, after.appends) << "COMMIT answered before the commit";
  // A COMMIT with nothing new is answered too; errors are answers.
  EXPECT_EQ(volume->try_commit(ctx, f, 0, 0, &cw), std::optional<Status>(Status::Ok));
  EXPECT_EQ(volume->try_commit(ctx, fs::InodeId{999, 1}, 0, 0, &cw),
            std::optional<Status>(Status::Stale));
  // Nothing is taken from memory when the fs's own attempt would block.
  attempting->answer = false;
  EXPECT_FALSE(volume->try_write(ctx, f, 0, data, fs::Stability::FileSync, &c, &w));
  EXPECT_FALSE(volume->try_commit(ctx, f, 0, 0, &cw));
  attempting->answer = true;
  const std::string snapshot = testing::tree_snapshot(*volume);
  crash_and_reopen();
  EXPECT_EQ(report.failed, 0u);
  EXPECT_EQ(testing::tree_snapshot(*volume), snapshot);
}

// Host mode: a commit is an msync. Outside a call that can park, a stable attempt must not
// make the loop wait for it: refused before anything is applied or journalled.
TEST_F(JournalWriteAttemptTest, StableAttemptThatWouldWaitForAnMsyncStaysOffTheLoop) {
  crash();
  opts.mode = DurabilityMode::Host;
  open();
  fs::InodeId f = create(volume->root(), "f");
  const JournalStats before = journal->stats();
  const size_t seqs = target->applied_seqs().size();
  const std::vector<uint8_t> data = testing::pattern(4, 4096);
  fs::Stability c;
  fs::Wcc w;
  EXPECT_FALSE(volume->try_write(ctx, f, 0, data, fs::Stability::FileSync, &c, &w));
  EXPECT_EQ(journal->stats().appends, before.appends);
  EXPECT_EQ(target->applied_seqs().size(), seqs) << "a refused attempt changed the fs";
  // Already committed: COMMIT needs no msync and is answered.
  EXPECT_EQ(volume->try_commit(ctx, f, 0, 0, &w), std::optional<Status>(Status::Ok));
  // An UNSTABLE record not yet synced: COMMIT would wait, so it goes to the pool.
  ASSERT_EQ(volume->try_write(ctx, f, 0, data, fs::Stability::Unstable, &c, &w),
            std::optional<Status>(Status::Ok));
  EXPECT_FALSE(volume->try_commit(ctx, f, 0, 0, &w));
  EXPECT_EQ(volume->commit(ctx, f, 0, 0, &w), Status::Ok);
}

bool wait_until(const std::function<bool()>& cond, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return cond();
}

// A mirrored journal whose partner holds its acknowledgements: a stable WRITE or COMMIT on the
// loop parks (no thread waits), is not resumed while the partner has not acknowledged its
// record -- the reply cannot leave early --, is resumed by the committer once it has, and the
// run after the park answers from the stored reply without applying or journalling again.
TEST(JournalVolumeOnTheLoop, StableCallsParkUntilTheMirrorAcknowledgesAndAreNeverAppliedTwice) {
  testing::ScratchDir dir;
  testing::HeldAckJournal held = testing::open_held_ack_journal(dir.file("nv"));
  std::shared_ptr<Journal> journal = held.journal;
  testing::HeldAckMirror* mirror = held.mirror;
  auto target = std::make_shared<testing::AttemptingMemoryFs>(3, testing::mem_target_options());
  JournalVolume v(journal, target);
  v.recover();
  ASSERT_TRUE(journal->accepts_mutations());
  fs::OpContext ctx;
  fs::InodeId f;
  std::optional<fs::Attr> a;
  fs::Wcc w;
  ASSERT_EQ(v.create(ctx, v.root(), "f", fs::CreateMode::Guarded, {}, 0, &f, &a, &w), Status::Ok);
  const std::vector<uint8_t> data = testing::pattern(5, 4096);
  fs::Stability c = fs::Stability::Unstable;

  // Outside a resumable call the commit would wait for the partner: refused, nothing applied.
  mirror->hold();
  const uint64_t appends0 = journal->stats().appends;
  EXPECT_FALSE(v.try_write(ctx, f, 0, data, fs::Stability::FileSync, &c, &w));
  EXPECT_EQ(journal->stats().appends, appends0);

  // WRITE FILE_SYNC: parks.
  const uint64_t before_partner = mirror->received();
  auto call = std::make_shared<util::ResumableCall>();
  std::optional<Status> first;
  {
    util::ResumableCall::Run run(call, /*may_park=*/true);
    first = v.try_write(ctx, f, 0, data, fs::Stability::FileSync, &c, &w);
  }
  ASSERT_TRUE(call->parked()) << "a stable WRITE on the loop did not park on its commit";
  EXPECT_EQ(first, std::optional<Status>(Status::Jukebox));
  const uint64_t appends1 = journal->stats().appends;
  EXPECT_EQ(appends1, appends0 + 1);
  std::atomic<bool> resumed{false};
  ASSERT_TRUE(call->end_run([&] { resumed = true; }));
  ASSERT_TRUE(wait_until([&] { return mirror->received() > before_partner; },
                         std::chrono::seconds(5)))
      << "the record never reached the partner";
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(resumed.load()) << "resumed (the reply would leave) before the partner acknowledged";
  mirror->release();
  ASSERT_TRUE(wait_until([&] { return resumed.load(); }, std::chrono::seconds(5)));
  EXPECT_EQ(journal->stats().commit_callbacks, 1u);
  {
    util::ResumableCall::Run run(call, /*may_park=*/false);
    w = {};
    c = fs::Stability::Unstable;
    EXPECT_EQ(v.try_write(ctx, f, 0, data, fs::Stability::FileSync, &c, &w),
              std::optional<Status>(Status::Ok));
    EXPECT_EQ(c, fs::Stability::FileSync);
    ASSERT_TRUE(w.after.has_value());
    EXPECT_EQ(w.after->size, data.size());
  }
  {
    // The same call resumed on the pool (blocking write()) answers the same way.
    util::ResumableCall::Run run(call, /*may_park=*/false);
    EXPECT_EQ(v.write(ctx, f, 0, data, fs::Stability::FileSync, &c, &w), Status::Ok);
    EXPECT_EQ(c, fs::Stability::FileSync);
  }
  EXPECT_EQ(journal->stats().appends, appends1) << "the resumed call was journalled again";
  {
    // The run after the park may find the volume moved (a failback) and read the stored answer
    // through the forwarding proxy, as the owner's reply: it must say FILE_SYNC by itself.
    util::ResumableCall::Run run(call, /*may_park=*/false);
    const std::optional<size_t> slot = call->next_wait();
    ASSERT_TRUE(slot.has_value());
    const util::ResumableCall::Answer* stored = call->answer(*slot);
    ASSERT_NE(stored, nullptr);
    fs::call::VolumeReply as_forwarded;
    ASSERT_TRUE(fs::call::decode_reply(stored->bytes, fs::call::VolumeOp::Write, &as_forwarded));
    EXPECT_EQ(as_forwarded.status, Status::Ok);
    const auto* wr = std::get_if<fs::call::WriteResult>(&as_forwarded.result);
    ASSERT_NE(wr, nullptr);
    EXPECT_EQ(wr->committed, fs::Stability::FileSync)
        << "a proxy reading the stored answer would tell the client UNSTABLE";
  }

  // COMMIT after an UNSTABLE WRITE the partner has not acknowledged: parks likewise.
  mirror->hold();
  ASSERT_EQ(v.try_write(ctx, f, 4096, data, fs::Stability::Unstable, &c, &w),
            std::optional<Status>(Status::Ok));
  auto commit_call = std::make_shared<util::ResumableCall>();
  {
    util::ResumableCall::Run run(commit_call, /*may_park=*/true);
    EXPECT_EQ(v.try_commit(ctx, f, 0, 0, &w), std::optional<Status>(Status::Jukebox));
  }
  ASSERT_TRUE(commit_call->parked()) << "COMMIT on the loop did not park on the commit";
  std::atomic<bool> commit_resumed{false};
  ASSERT_TRUE(commit_call->end_run([&] { commit_resumed = true; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(commit_resumed.load()) << "COMMIT resumed before the partner acknowledged";
  mirror->release();
  ASSERT_TRUE(wait_until([&] { return commit_resumed.load(); }, std::chrono::seconds(5)));
  {
    util::ResumableCall::Run run(commit_call, /*may_park=*/false);
    fs::Wcc cw;
    EXPECT_EQ(v.try_commit(ctx, f, 0, 0, &cw), std::optional<Status>(Status::Ok));
    ASSERT_TRUE(cw.after.has_value());
    EXPECT_EQ(cw.after->size, 2 * data.size());
  }
  EXPECT_EQ(journal->stats().commit_callbacks, 2u);
}

TEST_F(JournalVolumeTest, CleanShutdownLeavesNothingToReplay) {
  run_history(1);
  const std::string before = testing::tree_snapshot(*volume);
  journal->shutdown();
  EXPECT_EQ(journal->stats().live_records, 0u);
  EXPECT_NE(journal->status().find("0 records"), std::string::npos) << journal->status();
  crash_and_reopen();  // the fs flushed everything at shutdown, so losing "unflushed" is a no-op
  EXPECT_EQ(report.records, 0u);
  EXPECT_EQ(testing::tree_snapshot(*volume), before);
}

TEST(JournalVolumeLifecycle, MutationsWaitForRecovery) {
  testing::ScratchDir dir;
  auto journal = Journal::open(testing::small_options(dir.file("nv"), 1 << 20));
  auto target = std::make_shared<test_support::MemoryFs>(1, testing::mem_target_options());
  JournalVolume v(journal, target);
  fs::OpContext ctx;
  fs::InodeId out;
  std::optional<fs::Attr> a;
  fs::Wcc w;
  EXPECT_EQ(v.mkdir(ctx, v.root(), "d", {}, &out, &a, &w), Status::Jukebox);
  fs::Attr attr;
  EXPECT_EQ(v.getattr(ctx, v.root(), &attr), Status::Ok) << "reads need no recovery";
  v.recover();
  EXPECT_EQ(v.mkdir(ctx, v.root(), "d", {}, &out, &a, &w), Status::Ok);
}

TEST_F(JournalVolumeTest, SealRefusesMutationsAndAFlushThenHoldsEverything) {
  run_history(1);
  const std::string before = testing::tree_snapshot(*volume);
  volume->seal();
  fs::InodeId out;
  std::optional<fs::Attr> a;
  fs::Wcc w;
  EXPECT_EQ(volume->mkdir(ctx, volume->root(), "late", {}, &out, &a, &w), Status::Jukebox);
  uint64_t durable = 0;
  ASSERT_EQ(target->flush(&durable), Status::Ok);
  // The next owner opens the fs alone, without this journal's records.
  volume.reset();
  journal.reset();
  target->crash();
  EXPECT_EQ(testing::tree_snapshot(*target), before);
}

// A node that lost its lease while a record was in flight must not say "done": the client is
// sent to retry (JUKEBOX), and the record itself stays whatever the journal made of it.
TEST(JournalVolumeLifecycle, AcknowledgeGateTurnsCommittedMutationsIntoJukebox) {
  testing::ScratchDir dir;
  const JournalOptions opts = testing::small_options(dir.file("nv"), 1 << 20);
  auto target = std::make_shared<test_support::MemoryFs>(1, testing::mem_target_options());
  std::atomic<bool> owned{true};
  fs::OpContext ctx;
  fs::InodeId f, d;
  std::optional<fs::Attr> a;
  fs::Wcc w;
  fs::Stability c;
  const std::vector<uint8_t> data = testing::pattern(3, 100);
  {
    auto journal = Journal::open(opts);
    JournalVolume v(journal, target, [&] { return owned.load(); });
    v.recover();
    ASSERT_EQ(v.create(ctx, v.root(), "f", fs::CreateMode::Guarded, {}, 0, &f, &a, &w),
              Status::Ok);
    owned = false;
    EXPECT_EQ(v.mkdir(ctx, v.root(), "d", {}, &d, &a, &w), Status::Jukebox);
    EXPECT_EQ(v.write(ctx, f, 0, data, fs::Stability::FileSync, &c, &w), Status::Jukebox);
    EXPECT_EQ(v.commit(ctx, f, 0, 0, &w), Status::Jukebox);
    // UNSTABLE promises nothing, so there is nothing to withhold; its COMMIT is what is gated.
    EXPECT_EQ(v.write(ctx, f, 200, data, fs::Stability::Unstable, &c, &w), Status::Ok);
    EXPECT_EQ(v.commit(ctx, f, 0, 0, &w), Status::Jukebox);
    fs::Attr attr;
    EXPECT_EQ(v.getattr(ctx, f, &attr), Status::Ok) << "reads are fenced elsewhere, not here";
    owned = true;
    EXPECT_EQ(v.commit(ctx, f, 0, 0, &w), Status::Ok);
  }
  // What was refused may still have happened, as after any lost reply: it is in the journal.
  target->crash();
  auto journal = Journal::open(opts);
  JournalVolume v(journal, target);
  v.recover();
  EXPECT_EQ(v.lookup(ctx, v.root(), "d", &d, &a, &a), Status::Ok);
}

}  // namespace
}  // namespace nasd::nvram

namespace nasd::nvram {
namespace {

// What recovery hands to the reply cache.
struct CollectingSink : fs::RecoveredCallSink {
  struct Entry {
    fs::CallIdentity identity;
    fs::call::VolumeOp op;
    fs::call::VolumeReply reply;
  };
  std::vector<Entry> entries;
  void recovered(const fs::CallIdentity& identity, const fs::call::VolumeRequest& request,
                 const fs::call::VolumeReply& reply) override {
    entries.push_back({identity, request.op(), reply});
  }
};

fs::CallIdentity identity(uint32_t xid, uint32_t proc) {
  fs::CallIdentity id;
  id.family = 2;
  id.address = {10, 0, 0, 9};
  id.port = 801;
  id.xid = xid;
  id.prog = 100003;
  id.vers = 3;
  id.proc = proc;
  id.args_hash = 0x1234567890abcdefull ^ xid;
  return id;
}

// The encoded form of a result (what the client's reply is rebuilt from).
std::vector<uint8_t> encoded(fs::call::VolumeOp op, fs::call::CallResult result) {
  fs::call::VolumeReply r;
  r.op = op;
  r.status = Status::Ok;
  r.result = std::move(result);
  return fs::call::encode_reply(r);
}

class ReplyCacheRebuildTest : public JournalVolumeTest {};

TEST_F(ReplyCacheRebuildTest, AfterACrashEveryIdentifiedCallComesBackWithTheReplyItGave) {
  const fs::InodeId root = volume->root();
  fs::InodeId made;
  std::optional<fs::Attr> made_attr;
  fs::Wcc made_wcc;
  {
    fs::CallIdentity id = identity(1001, 8);
    fs::CallIdentityScope scope(&id);
    ASSERT_EQ(volume->create(ctx, root, "f", fs::CreateMode::Guarded, {}, 0, &made, &made_attr,
                             &made_wcc), Status::Ok);
  }
  fs::Wcc removed_wcc;
  create(root, "g");  // no identity: an internal call, not for the cache
  {
    fs::CallIdentity id = identity(1002, 12);
    fs::CallIdentityScope scope(&id);
    ASSERT_EQ(volume->remove(ctx, root, "g", &removed_wcc), Status::Ok);
  }
  EXPECT_EQ(volume->reply_window().size(), 2u);

  crash();
  journal = Journal::open(opts);
  volume = std::make_unique<JournalVolume>(journal, target);
  CollectingSink sink;
  report = volume->recover(&sink);

  ASSERT_EQ(sink.entries.size(), 2u) << "the call without an identity is not handed on";
  EXPECT_EQ(sink.entries[0].identity, identity(1001, 8));
  EXPECT_EQ(sink.entries[0].op, fs::call::VolumeOp::Create);
  EXPECT_EQ(encoded(fs::call::VolumeOp::Create, sink.entries[0].reply.result),
            encoded(fs::call::VolumeOp::Create,
                    fs::call::CreatedResult{made, made_attr, made_wcc}))
      << "the inode, attributes and WCC data the client got";
  EXPECT_EQ(sink.entries[1].identity, identity(1002, 12));
  EXPECT_EQ(encoded(fs::call::VolumeOp::Remove, sink.entries[1].reply.result),
            encoded(fs::call::VolumeOp::Remove, fs::call::WccResult{removed_wcc}));
  EXPECT_EQ(volume->reply_window().size(), 2u) << "recovered replies seed the window";
}

// The window is saved beside the volume for the next opener, which may be a node replaying a
// copy of this node's mirror: a call this node refused (here: its lease lapsed before the
// commit was in) may be in no such copy, so its reply must not be in the window.
TEST(ReplyWindow, HoldsOnlyAcknowledgedCalls) {
  testing::ScratchDir dir;
  const JournalOptions opts = testing::small_options(dir.file("nv"), 1 << 20);
  auto target = std::make_shared<test_support::MemoryFs>(1, testing::mem_target_options());
  std::atomic<bool> owned{true};
  auto journal = Journal::open(opts);
  JournalVolume v(journal, target, [&] { return owned.load(); });
  v.recover();
  fs::OpContext ctx;
  fs::InodeId d;
  std::optional<fs::Attr> a;
  fs::Wcc w;
  {
    fs::CallIdentity id = identity(3001, 9);
    fs::CallIdentityScope scope(&id);
    ASSERT_EQ(v.mkdir(ctx, v.root(), "acknowledged", {}, &d, &a, &w), Status::Ok);
  }
  owned = false;
  {
    fs::CallIdentity id = identity(3002, 9);
    fs::CallIdentityScope scope(&id);
    ASSERT_EQ(v.mkdir(ctx, v.root(), "refused", {}, &d, &a, &w), Status::Jukebox);
  }
  EXPECT_EQ(v.reply_window().size(), 1u) << "a refused call's reply is in the window";
}

TEST_F(ReplyCacheRebuildTest, AReplyWindowSavedAtACleanHandOverComesBackAfterTheTrim) {
  {
    fs::CallIdentity id = identity(2001, 9);
    fs::CallIdentityScope scope(&id);
    mkdir(volume->root(), "d");
  }
  const std::string path = dir.file("v.replies");
  std::string error;
  ASSERT_TRUE(save_reply_window(path, volume->reply_window(), &error)) << error;
  // A clean hand-over: flushed, so the next open replays (and finds) no record.
  uint64_t durable = 0;
  volume->seal();
  ASSERT_EQ(target->flush(&durable), Status::Ok);
  volume.reset();
  journal->trim();  // as HostedVolumes' clean close: the fs holds the record, so it goes
  journal.reset();
  journal = Journal::open(opts);
  volume = std::make_unique<JournalVolume>(journal, target);

  std::vector<std::vector<uint8_t>> carried;
  ASSERT_TRUE(load_reply_window(path, &carried, &error)) << error;
  CollectingSink sink;
  report = volume->recover(&sink, carried);
  EXPECT_EQ(report.applied, 0u);
  ASSERT_EQ(sink.entries.size(), 1u);
  EXPECT_EQ(sink.entries[0].identity, identity(2001, 9));
  EXPECT_EQ(sink.entries[0].op, fs::call::VolumeOp::Mkdir);
}

TEST(ReplyWindowFile, DamageIsRefusedAsAWholeAndAMissingFileIsEmpty) {
  testing::ScratchDir dir;
  const std::string path = dir.file("w");
  std::vector<std::vector<uint8_t>> out;
  std::string error;
  EXPECT_TRUE(load_reply_window(path, &out, &error));
  EXPECT_TRUE(out.empty());
  ASSERT_TRUE(save_reply_window(path, {{1, 2, 3}, {4}}, &error)) << error;
  ASSERT_TRUE(load_reply_window(path, &out, &error)) << error;
  EXPECT_EQ(out, (std::vector<std::vector<uint8_t>>{{1, 2, 3}, {4}}));
  std::vector<uint8_t> file_bytes = {0x4e, 0x56, 0x52, 0x57, 1, 0, 9, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_FALSE(parse_reply_window(file_bytes, &out, &error));
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace nasd::nvram
