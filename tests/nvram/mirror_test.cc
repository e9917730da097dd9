// The mirror link against a real nasd-mirror process on a loopback port.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "nvram/journal_volume.h"
#include "nvram/tcp_mirror.h"
#include "util/resumable_call.h"
#include "tests/support/memory_fs.h"
#include "tests/nvram/loop_test_doubles.h"
#include "tests/nvram/mirror_process.h"
#include "tests/nvram/test_util.h"

namespace nasd::nvram {
namespace {

using fs::Status;

JournalOptions mirrored_options(const std::string& region, const std::string& mirror,
                                MirrorPolicy policy) {
  auto o = testing::small_options(region, 32 << 20);  // large enough that nothing is trimmed
  o.mirror = mirror;
  o.mirror_credentials = testing::test_link_credentials();
  o.mirror_policy = policy;
  o.mirror_timeout = std::chrono::milliseconds(1000);
  return o;
}

bool wait_until(const std::function<bool()>& cond, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return cond();
}

fs::InodeId create(fs::Volume& v, const std::string& name) {
  fs::OpContext ctx;
  fs::InodeId id;
  std::optional<fs::Attr> a;
  fs::Wcc w;
  EXPECT_EQ(v.create(ctx, v.root(), name, fs::CreateMode::Guarded, {}, 0, &id, &a, &w), Status::Ok);
  return id;
}

Status write_block(fs::Volume& v, fs::InodeId f, uint64_t block) {
  fs::OpContext ctx;
  fs::Stability c;
  fs::Wcc w;
  auto data = testing::pattern(block, 4096);
  return v.write(ctx, f, block * 4096, data, fs::Stability::FileSync, &c, &w);
}

std::string write_line(fs::InodeId f, uint64_t block) {
  return "WRITE file=" + std::to_string(f.ino) + "/" + std::to_string(f.gen) +
         " offset=" + std::to_string(block * 4096) + " len=4096";
}

// The primary runs in a child so it can be killed like a crashed node.
[[noreturn]] void run_primary(const std::string& region, const std::string& mirror, int ack_fd) {
  auto journal = Journal::open(mirrored_options(region, mirror, MirrorPolicy::Fail));
  auto target = std::make_shared<test_support::MemoryFs>(0, testing::mem_target_options());
  JournalVolume volume(journal, target);
  volume.recover();
  if (!wait_until([&] { return journal->accepts_mutations(); }, std::chrono::seconds(10))) _exit(9);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 100000; ++i) {
        fs::InodeId f = create(volume, "m" + std::to_string(t) + "_" + std::to_string(i));
        for (uint64_t b = 0; b < 3; ++b) {
          if (write_block(volume, f, b) != Status::Ok) _exit(10);
          std::string line = write_line(f, b) + "\n";
          if (::write(ack_fd, line.data(), line.size()) < 0) _exit(11);
        }
      }
    });
  for (auto& th : threads) th.join();
  _exit(0);
}

// A stable WRITE as the event loop runs it (rpc::CallDispatcher): a resumable call whose
// attempt parks on the group commit and is run again, on the thread that delivers the commit's
// status, to build the reply. Returns that reply's status, i.e. what the client is told.
Status write_block_on_the_loop(fs::Volume& v, fs::InodeId f, uint64_t block) {
  fs::OpContext ctx;
  fs::Stability c;
  fs::Wcc w;
  auto data = testing::pattern(block, 4096);
  auto call = std::make_shared<util::ResumableCall>();
  std::optional<Status> st;
  {
    util::ResumableCall::Run run(call, /*may_park=*/true);
    st = v.try_write(ctx, f, block * 4096, data, fs::Stability::FileSync, &c, &w);
  }
  if (!call->parked()) {
    call->end_run(nullptr);
    return st ? *st : v.write(ctx, f, block * 4096, data, fs::Stability::FileSync, &c, &w);
  }
  std::mutex mu;
  std::condition_variable cv;
  std::optional<Status> answer;
  call->end_run([&] {
    // As the dispatcher's resume_inline: the run after the park builds the reply.
    util::ResumableCall::Run run(call, /*may_park=*/false);
    std::optional<Status> r = v.try_write(ctx, f, block * 4096, data, fs::Stability::FileSync,
                                          &c, &w);
    std::lock_guard lk(mu);
    answer = r ? *r : Status::ServerFault;
    cv.notify_all();
  });
  std::unique_lock lk(mu);
  if (!cv.wait_for(lk, std::chrono::seconds(20), [&] { return answer.has_value(); }))
    return Status::ServerFault;
  return *answer;
}

// The primary runs in a child so it can be killed like a crashed node.
[[noreturn]] void run_loop_primary(const std::string& region, const std::string& mirror,
                                   int ack_fd) {
  auto journal = Journal::open(mirrored_options(region, mirror, MirrorPolicy::Fail));
  auto target = std::make_shared<testing::AttemptingMemoryFs>(0, testing::mem_target_options());
  JournalVolume volume(journal, target);
  volume.recover();
  if (!wait_until([&] { return journal->accepts_mutations(); }, std::chrono::seconds(10))) _exit(9);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 100000; ++i) {
        fs::InodeId f = create(volume, "l" + std::to_string(t) + "_" + std::to_string(i));
        for (uint64_t b = 0; b < 3; ++b) {
          if (write_block_on_the_loop(volume, f, b) != Status::Ok) _exit(10);
          std::string line = write_line(f, b) + "\n";
          if (::write(ack_fd, line.data(), line.size()) < 0) _exit(11);
        }
      }
    });
  for (auto& th : threads) th.join();
  _exit(0);
}

// Reads acknowledgements (lines on the pipe) until `want` came or `limit` passed.
void read_acks(int fd, std::string* acks, size_t want, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (static_cast<size_t>(std::count(acks->begin(), acks->end(), '\n')) < want &&
         std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 20) <= 0) continue;
    char buf[4096];
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    acks->append(buf, static_cast<size_t>(n));
  }
}

// Lets the primary run until `want` acknowledgements came, freezes the partner (SIGSTOP: it
// receives and acknowledges nothing more) for a while shorter than the mirror timeout, kills
// the primary (SIGKILL) and returns every acknowledgement it gave. A reply that left before
// the partner acknowledged its record shows up as one given while the partner was frozen.
std::string acks_until_kill(pid_t pid, int fd, size_t want, testing::MirrorProcess* mirror) {
  std::string acks;
  read_acks(fd, &acks, want, std::chrono::seconds(30));
  mirror->freeze();
  read_acks(fd, &acks, SIZE_MAX, std::chrono::milliseconds(300));
  kill(pid, SIGKILL);
  int status;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status)) << "primary exited on its own with " << status;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) acks.append(buf, static_cast<size_t>(n));
  close(fd);
  acks.erase(acks.find_last_of('\n') + 1);
  return acks;
}

// Stable WRITEs answered the event loop's way (parked, resumed by the journal's committer):
// with the partner frozen and then the primary killed (kill -9), every write whose reply was
// built is in the partner's region.
TEST(Mirror, StableWritesAnsweredByTheCommitterAreInThePartnersRegionAfterKill9) {
  testing::ScratchDir dir;
  const std::string mirror_region = dir.file("mirror.img");
  testing::MirrorProcess mirror(mirror_region);
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    run_loop_primary(dir.file("primary.img"), mirror.address(), fds[1]);
  }
  close(fds[1]);
  const std::string acks = acks_until_kill(pid, fds[0], 1500, &mirror);
  mirror.kill_now();  // frozen: it holds what it wrote before
  const std::string dump = testing::MirrorProcess::dump(mirror_region);
  std::set<std::string> held;
  std::istringstream lines(dump);
  for (std::string line; std::getline(lines, line);) {
    auto at = line.find("WRITE ");
    if (at != std::string::npos) held.insert(line.substr(at, line.find(" uid=") - at));
  }
  std::istringstream in(acks);
  size_t checked = 0;
  for (std::string line; std::getline(in, line); ++checked)
    ASSERT_TRUE(held.count(line)) << "acknowledged but not mirrored: " << line;
  EXPECT_GT(checked, 100u);
  std::printf("mirror test (loop): %zu acknowledged writes all found among %zu mirrored\n",
              checked, held.size());
}

TEST(Mirror, EveryAcknowledgedRecordIsInThePartnersRegion) {
  testing::ScratchDir dir;
  const std::string mirror_region = dir.file("mirror.img");
  testing::MirrorProcess mirror(mirror_region);
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    run_primary(dir.file("primary.img"), mirror.address(), fds[1]);
  }
  close(fds[1]);
  std::string acks;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::count(acks.begin(), acks.end(), '\n') < 1500 &&
         std::chrono::steady_clock::now() < deadline) {
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    char buf[4096];
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    acks.append(buf, static_cast<size_t>(n));
  }
  kill(pid, SIGKILL);
  int status;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "primary exited on its own with " << status;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) acks.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  acks.erase(acks.find_last_of('\n') + 1);

  mirror.terminate();
  const std::string dump = testing::MirrorProcess::dump(mirror_region);
  std::set<std::string> held;
  std::istringstream lines(dump);
  for (std::string line; std::getline(lines, line);) {
    auto at = line.find("WRITE ");
    if (at != std::string::npos) held.insert(line.substr(at, line.find(" uid=") - at));
  }
  std::istringstream in(acks);
  size_t checked = 0;
  for (std::string line; std::getline(in, line); ++checked)
    ASSERT_TRUE(held.count(line)) << "acknowledged but not mirrored: " << line;
  EXPECT_GT(checked, 100u);
  std::printf("mirror test: %zu acknowledged writes all found among %zu mirrored\n", checked,
              held.size());

  // Takeover: the partner replays its copy with the ordinary journal code onto a file system
  // that never saw the primary's operations, and has every acknowledged write.
  JournalOptions takeover_opts = testing::small_options(mirror_region, 0);
  auto journal = Journal::open(takeover_opts);
  auto target = std::make_shared<test_support::MemoryFs>(0, testing::mem_target_options());
  JournalVolume takeover(journal, target);
  ReplayReport rep = takeover.recover();
  EXPECT_EQ(rep.failed, 0u);
  EXPECT_GE(rep.applied, checked);
  std::istringstream again(acks);
  fs::OpContext ctx;
  for (std::string line; std::getline(again, line);) {
    fs::InodeId id;
    unsigned long long offset;
    ASSERT_EQ(std::sscanf(line.c_str(), "WRITE file=%lu/%u offset=%llu", &id.ino, &id.gen, &offset),
              3);
    std::vector<uint8_t> data;
    bool eof;
    std::optional<fs::Attr> a;
    ASSERT_EQ(takeover.read(ctx, id, offset, 4096, &data, &eof, &a), Status::Ok) << line;
    ASSERT_EQ(data, testing::pattern(offset / 4096, 4096)) << line;
  }
}

TEST(Mirror, TrimsReachThePartner) {
  testing::ScratchDir dir;
  const std::string mirror_region = dir.file("mirror.img");
  testing::MirrorProcess mirror(mirror_region);
  auto opts = mirrored_options(dir.file("p.img"), mirror.address(), MirrorPolicy::Fail);
  opts.size = kRegionHeaderSize + (256 << 10);
  auto journal = Journal::open(opts);
  auto target = std::make_shared<test_support::MemoryFs>(0, testing::mem_target_options());
  JournalVolume volume(journal, target);
  volume.recover();
  ASSERT_TRUE(wait_until([&] { return journal->accepts_mutations(); }, std::chrono::seconds(10)));
  fs::InodeId f = create(volume, "f");
  // Four times the log: the partner must follow the primary around the ring.
  for (uint64_t b = 0; b < 256; ++b) {
    ASSERT_EQ(write_block(volume, f, b), Status::Ok);
    if (b % 16 == 15) journal->flush_targets_and_trim();
  }
  journal->flush_targets_and_trim();
  EXPECT_EQ(journal->stats().live_records, 0u);
  std::string dump;
  EXPECT_TRUE(wait_until(
      [&] {
        dump = testing::MirrorProcess::dump(mirror_region);
        return dump.find(" records=0\n") != std::string::npos;
      },
      std::chrono::seconds(5)))
      << dump;
  EXPECT_EQ(dump.find("head=0 "), std::string::npos) << dump;
}

TEST(Mirror, LossOfThePartnerFailsMutationsUnderFailPolicyAndResyncsOnReturn) {
  testing::ScratchDir dir;
  const std::string mirror_region = dir.file("mirror.img");
  auto mirror = std::make_unique<testing::MirrorProcess>(mirror_region);
  const uint16_t port = mirror->port();
  auto journal =
      Journal::open(mirrored_options(dir.file("p.img"), mirror->address(), MirrorPolicy::Fail));
  auto target = std::make_shared<test_support::MemoryFs>(0, testing::mem_target_options());
  JournalVolume volume(journal, target);
  volume.recover();
  ASSERT_TRUE(wait_until([&] { return journal->accepts_mutations(); }, std::chrono::seconds(10)));
  fs::InodeId f = create(volume, "f");
  ASSERT_EQ(write_block(volume, f, 0), Status::Ok);

  mirror->kill_now();
  Status st = Status::Ok;
  uint64_t block = 1;
  ASSERT_TRUE(wait_until([&] { return (st = write_block(volume, f, block++)) == Status::Jukebox; },
                         std::chrono::seconds(10)));
  EXPECT_TRUE(journal->stats().degraded);
  EXPECT_NE(journal->status().find("DEGRADED"), std::string::npos) << journal->status();
  // The writes that returned Ok while the loss was being noticed were mirrored; the fs has
  // every one of them, including those refused (they ran before the commit failed).
  const uint64_t acked_before_loss = block - 2;

  mirror = std::make_unique<testing::MirrorProcess>(mirror_region, port);
  ASSERT_TRUE(wait_until([&] { return journal->accepts_mutations(); }, std::chrono::seconds(10)));
  ASSERT_EQ(write_block(volume, f, 100), Status::Ok);
  EXPECT_FALSE(journal->stats().degraded);
  mirror->terminate();
  const std::string dump = testing::MirrorProcess::dump(mirror_region);
  for (uint64_t b = 0; b <= acked_before_loss; ++b)
    EXPECT_NE(dump.find(write_line(f, b)), std::string::npos) << "block " << b;
  EXPECT_NE(dump.find(write_line(f, 100)), std::string::npos) << dump;
}

TEST(Mirror, ContinuePolicyKeepsServingLocally) {
  testing::ScratchDir dir;
  auto mirror = std::make_unique<testing::MirrorProcess>(dir.file("mirror.img"));
  auto journal = Journal::open(
      mirrored_options(dir.file("p.img"), mirror->address(), MirrorPolicy::Continue));
  auto target = std::make_shared<test_support::MemoryFs>(0, testing::mem_target_options());
  JournalVolume volume(journal, target);
  volume.recover();
  ASSERT_TRUE(wait_until([&] { return journal->stats().mirror_connected; }, std::chrono::seconds(10)));
  fs::InodeId f = create(volume, "f");
  mirror->kill_now();
  for (uint64_t b = 0; b < 50; ++b) ASSERT_EQ(write_block(volume, f, b), Status::Ok);
  EXPECT_TRUE(wait_until([&] { return journal->stats().degraded; }, std::chrono::seconds(5)));
  EXPECT_GT(journal->stats().mirror_losses, 0u);
}

// A TcpMirror whose journal trims at the worst moment of a reconnect: after the hello (which
// carries the old head) went out and before the link can carry frames, so the trim never
// reaches the partner.
class TrimDuringReconnectMirror : public Mirror, private Mirror::Listener {
 public:
  explicit TrimDuringReconnectMirror(const std::string& address)
      : inner_(address, TcpMirror::Options{.credentials = testing::test_link_credentials()}) {}
  std::function<void()> on_reconnect;  // runs inside the second and later handshakes
  int reconnects = 0;

  void start(Mirror::Listener* journal) override {
    journal_ = journal;
    inner_.start(this);
  }
  bool replicate(std::span<const RecordView> records) override { return inner_.replicate(records); }
  void trim(uint64_t head) override { inner_.trim(head); }
  void reset(const std::string& why) override { inner_.reset(why); }
  void stop() override { inner_.stop(); }
  std::string describe() const override { return inner_.describe(); }

 private:
  MirrorHello mirror_hello() override { return journal_->mirror_hello(); }
  void mirror_connected(uint64_t resume_pos) override {
    if (connected_once_++ && on_reconnect) {
      on_reconnect();
      ++reconnects;
    }
    journal_->mirror_connected(resume_pos);
  }
  void mirror_acked(uint64_t end_pos) override { journal_->mirror_acked(end_pos); }
  void mirror_lost(const std::string& why) override { journal_->mirror_lost(why); }

  TcpMirror inner_;
  Mirror::Listener* journal_ = nullptr;
  int connected_once_ = 0;
};

TEST(Mirror, ATrimLostInTheReconnectHandshakeLeavesNoGap) {
  testing::ScratchDir dir;
  const std::string mirror_region = dir.file("mirror.img");
  auto mirror = std::make_unique<testing::MirrorProcess>(mirror_region);
  const uint16_t port = mirror->port();
  auto link = std::make_unique<TrimDuringReconnectMirror>(mirror->address());
  TrimDuringReconnectMirror* raw = link.get();
  auto journal = Journal::open(
      mirrored_options(dir.file("p.img"), mirror->address(), MirrorPolicy::Continue),
      std::move(link));
  raw->on_reconnect = [&] { journal->flush_targets_and_trim(); };
  auto target = std::make_shared<test_support::MemoryFs>(0, testing::mem_target_options());
  JournalVolume volume(journal, target);
  volume.recover();
  ASSERT_TRUE(wait_until([&] { return journal->stats().mirror_connected; }, std::chrono::seconds(10)));
  fs::InodeId f = create(volume, "f");
  ASSERT_EQ(write_block(volume, f, 0), Status::Ok);

  // The partner restarts; meanwhile records go to local NVRAM only, and then the trim in the
  // handshake frees them all, so the journal's head is past where the partner's log ends.
  mirror->kill_now();
  for (uint64_t b = 1; b < 20; ++b) ASSERT_EQ(write_block(volume, f, b), Status::Ok);
  mirror = std::make_unique<testing::MirrorProcess>(mirror_region, port);
  ASSERT_TRUE(wait_until([&] { return raw->reconnects > 0 && journal->stats().mirror_connected; },
                         std::chrono::seconds(10)));
  const uint64_t losses = journal->stats().mirror_losses;
  for (uint64_t b = 20; b < 30; ++b) ASSERT_EQ(write_block(volume, f, b), Status::Ok);
  EXPECT_TRUE(wait_until([&] { return journal->stats().mirror_acks > 0 && !journal->stats().degraded; },
                         std::chrono::seconds(5)));
  EXPECT_EQ(journal->stats().mirror_losses, losses) << journal->status();
  mirror->terminate();
  const std::string dump = testing::MirrorProcess::dump(mirror_region);
  for (uint64_t b = 20; b < 30; ++b)
    EXPECT_NE(dump.find(write_line(f, b)), std::string::npos) << "block " << b << "\n" << dump;
}

}  // namespace
}  // namespace nasd::nvram

namespace nasd::nvram {
namespace {

// A gate that admits or refuses as told and remembers what it was asked and told.
class RecordingGate : public UnmirroredGate {
 public:
  bool admit_unmirrored(uint64_t end) override {
    std::lock_guard lk(mu_);
    ++asked_;
    if (admit_) admitted_end_ = std::max(admitted_end_, end);
    return admit_;
  }
  void mirror_holds(uint64_t end) override {
    std::lock_guard lk(mu_);
    holds_ = std::max(holds_, end);
  }
  void set_admit(bool admit) {
    std::lock_guard lk(mu_);
    admit_ = admit;
  }
  int asked() const {
    std::lock_guard lk(mu_);
    return asked_;
  }
  uint64_t admitted_end() const {
    std::lock_guard lk(mu_);
    return admitted_end_;
  }
  uint64_t holds() const {
    std::lock_guard lk(mu_);
    return holds_;
  }

 private:
  mutable std::mutex mu_;
  bool admit_ = false;
  int asked_ = 0;
  uint64_t admitted_end_ = 0, holds_ = 0;
};

// Under mirror_policy = continue, a record the mirror lacks is acknowledged only when the gate
// admits it (in a cluster: once the stale mirror is marked at the authority), and refused with
// JUKEBOX when it does not; once the partner is back and caught up the gate hears that the
// mirror holds everything admitted.
TEST(Mirror, ContinuePolicyAcknowledgesUnmirroredRecordsOnlyThroughTheGate) {
  testing::ScratchDir dir;
  const std::string mirror_region = dir.file("mirror.img");
  auto mirror = std::make_unique<testing::MirrorProcess>(mirror_region);
  const uint16_t port = mirror->port();
  auto journal = Journal::open(
      mirrored_options(dir.file("p.img"), mirror->address(), MirrorPolicy::Continue));
  auto gate = std::make_shared<RecordingGate>();
  journal->set_unmirrored_gate(gate);
  auto target = std::make_shared<test_support::MemoryFs>(0, testing::mem_target_options());
  JournalVolume volume(journal, target);
  volume.recover();
  ASSERT_TRUE(wait_until([&] { return journal->stats().mirror_connected; }, std::chrono::seconds(10)));
  fs::InodeId f = create(volume, "f");
  ASSERT_EQ(write_block(volume, f, 0), Status::Ok);
  EXPECT_EQ(gate->asked(), 0);  // mirrored: nothing to ask

  mirror->kill_now();
  Status st = Status::Ok;
  uint64_t block = 1;
  ASSERT_TRUE(wait_until([&] { return (st = write_block(volume, f, block++)) == Status::Jukebox; },
                         std::chrono::seconds(10)));
  EXPECT_GT(gate->asked(), 0);
  EXPECT_GT(journal->stats().unmirrored_refusals, 0u);

  gate->set_admit(true);
  for (uint64_t b = 200; b < 210; ++b) ASSERT_EQ(write_block(volume, f, b), Status::Ok);
  const uint64_t admitted = gate->admitted_end();
  EXPECT_GT(admitted, 0u);

  mirror = std::make_unique<testing::MirrorProcess>(mirror_region, port);
  ASSERT_TRUE(wait_until([&] { return gate->holds() >= admitted; }, std::chrono::seconds(10)))
      << journal->status();
  mirror->terminate();
  const std::string dump = testing::MirrorProcess::dump(mirror_region);
  for (uint64_t b = 200; b < 210; ++b)
    EXPECT_NE(dump.find(write_line(f, b)), std::string::npos) << "block " << b;
}

}  // namespace
}  // namespace nasd::nvram
