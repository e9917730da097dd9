// One volume on the shared disk of two nodes, each with its own NVRAM journal and a copy of the
// other's (its mirror), driven through random ownership changes with the real open and close
// of cluster/hosted_volumes.h, as FoundationDB drives its roles: the owner's clients write,
// then one of
//   - kill -9 of the owner, and its partner takes the volume over from the mirror copy;
//   - kill -9 of the owner and its restart, which opens the volume again from its own NVRAM;
//   - the owner's lease lost (the volume abandoned) and taken again in the same process;
//   - the owner's lease lost and the partner taking over from the mirror, the old owner
//     living on with its journal, to get the volume back later (failback);
//   - a planned move (clean close, clean open on the partner).
// A write is acknowledged only once the mirror copy holds it (as the journal's mirror_policy
// = fail does); writes issued after the latest copy are in flight and may or may not survive.
// Invariant, checked after every step on whoever owns the volume: each file holds its last
// acknowledged value or a value written after it -- never an older one, never a lost one.
// The clients also CREATE a file per batch, as named client calls (fs/call_identity.h): every
// acknowledged one exists, and every call whose reply an opening hands to the reply cache (so
// its retransmission would be answered "done" without running) has its file in the volume.
// Each fault kind is a path on which acknowledged operations were once lost: in-process
// reopen after a lost lease (the journal did not hand the records back) and the old owner's
// unacknowledged tail replayed over the new owner's history at failback, and that tail's
// replies handed to the reply cache at failback although no file system held their effect.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "cluster/hosted_volumes.h"
#include "nvram/journal.h"
#include "tests/cluster/recorded_replies.h"
#include "tests/cluster/scratch_dir.h"
#include "util/config.h"

namespace nasd::cluster {
namespace {

const Config kConfig = Config::parse("[volume v0]\nid = 7\nsize = 64M\nsegment_size = 1M\n");
constexpr uint32_t kVolume = 7;
constexpr int kFiles = 6;
constexpr size_t kBytes = 512;

fs::OpContext root_ctx() {
  fs::OpContext ctx;
  ctx.cred.uid = 0;
  ctx.cred.gid = 0;
  return ctx;
}

std::vector<uint8_t> encode(uint64_t value) {
  std::vector<uint8_t> v(kBytes);
  for (size_t i = 0; i < kBytes; i += sizeof value) std::memcpy(&v[i], &value, sizeof value);
  return v;
}

struct Node {
  std::string name, region;
  std::shared_ptr<nvram::Journal> journal;  // null while the node is down
  std::unique_ptr<HostedVolumes> hosted;
  std::shared_ptr<testing::RecordedReplies> replies;  // what its openings gave the reply cache
  std::string mirror_copy;                  // the partner's copy of this node's NVRAM
};

class Sim {
 public:
  Sim(uint64_t seed, const std::string& dir) : rng_(seed), dir_(dir) {
    shared_ = dir + "/san";
    std::filesystem::create_directories(shared_);
    for (int i = 0; i < 2; ++i) {
      nodes_[i].name = i == 0 ? "a" : "b";
      nodes_[i].region = dir + "/" + nodes_[i].name + "-nvram.img";
      nodes_[i].mirror_copy = dir + "/" + nodes_[i].name + "-mirror.img";
      boot(i);
    }
    open_on(0, "");
    fs::OpContext ctx = root_ctx();
    for (int f = 0; f < kFiles; ++f) {
      std::optional<fs::Attr> attr;
      fs::Wcc wcc;
      fs::InodeId id;
      EXPECT_EQ(volume_->create(ctx, volume_->root(), "f" + std::to_string(f),
                                fs::CreateMode::Guarded, {}, 0, &id, &attr, &wcc),
                fs::Status::Ok);
      files_.push_back(id);
    }
    write_batch(/*acknowledged=*/true, /*every_file=*/true);
  }

  // Runs `steps` random steps; returns false (with the reason in failure()) at the first
  // broken invariant.
  bool run(int steps) {
    for (int i = 0; i < steps && failure_.empty(); ++i) {
      step_ = i;
      write_batch(true);
      if (chance(0.6)) write_batch(false);  // in flight at the fault
      fault();
      check();
    }
    return failure_.empty();
  }
  const std::string& failure() const { return failure_; }
  const std::map<std::string, int>& faults() const { return faults_; }

 private:
  bool chance(double p) { return std::uniform_real_distribution<>(0, 1)(rng_) < p; }

  void boot(int i) {
    nvram::JournalOptions jo;
    jo.path = nodes_[i].region;
    jo.size = 8 << 20;
    nodes_[i].journal = nvram::Journal::open(jo);
    nodes_[i].replies = std::make_shared<testing::RecordedReplies>();
    nodes_[i].hosted = std::make_unique<HostedVolumes>(nodes_[i].journal, nodes_[i].replies);
  }
  // kill -9: nothing closed, nothing flushed; the region file stays.
  void kill(int i) {
    nodes_[i].hosted.reset();  // abandons what it had open
    nodes_[i].journal.reset();
    if (owner_ == i) volume_.reset();
  }
  void open_on(int i, const std::string& partner_copy) {
    std::string copy;
    if (!partner_copy.empty()) {
      // The takeover replays (and writes into) a copy of the mirror, never the mirror itself.
      copy = dir_ + "/takeover.img";
      std::filesystem::copy_file(partner_copy, copy,
                                 std::filesystem::copy_options::overwrite_existing);
    }
    nodes_[i].replies->xids.clear();
    volume_ = nodes_[i].hosted->open(*kConfig.section("volume", "v0"), kConfig, shared_, copy);
    owner_ = i;
    for (uint32_t xid : nodes_[i].replies->xids)
      if (!exists(created_name(xid)))
        fail("opened on " + nodes_[i].name + ", the reply cache answers CREATE " +
             created_name(xid) + " (its retransmission is told it was done), which is in no "
             "file system");
  }

  static std::string created_name(uint32_t xid) { return "c" + std::to_string(xid); }
  bool exists(const std::string& name) { return testing::exists_in_root(*volume_, name); }

  // A few stable WRITEs by the owner's clients. Acknowledged: the mirror copy is taken after
  // them (the partner holds every record), so they count.
  void write_batch(bool acknowledged, bool every_file = false) {
    fs::OpContext ctx = root_ctx();
    const int n = every_file ? kFiles : std::uniform_int_distribution<>(1, 8)(rng_);
    std::map<int, uint64_t> written;
    for (int k = 0; k < n; ++k) {
      const int f = every_file ? k : std::uniform_int_distribution<>(0, kFiles - 1)(rng_);
      const uint64_t value = ++next_value_;
      fs::Wcc wcc;
      fs::Stability got;
      const fs::Status st = volume_->write(ctx, files_[f], 0, encode(value),
                                           fs::Stability::FileSync, &got, &wcc);
      if (st != fs::Status::Ok) {
        fail("WRITE refused with " + std::string(fs::status_name(st)));
        return;
      }
      pending_[f].insert(value);  // executed: the file may show it from now on
      written[f] = value;
    }
    // One named CREATE per batch, acknowledged with the batch or in flight with it.
    const uint32_t xid = static_cast<uint32_t>(++next_value_);
    if (const fs::Status st = testing::create_as_client(*volume_, created_name(xid), xid,
                                                         fs::CreateMode::Guarded);
        st != fs::Status::Ok) {
      fail("CREATE refused with " + std::string(fs::status_name(st)));
      return;
    }
    if (!acknowledged) return;
    acked_creates_.push_back(xid);
    std::filesystem::copy_file(nodes_[owner_].region, nodes_[owner_].mirror_copy,
                               std::filesystem::copy_options::overwrite_existing);
    for (const auto& [f, value] : written) {
      acked_[f] = value;
      pending_[f].clear();  // older values may no longer show
    }
  }

  void fault() {
    const int x = owner_, y = 1 - owner_;
    switch (std::uniform_int_distribution<>(0, 4)(rng_)) {
      case 0:  // the owner dies; its partner takes over from the mirror; it comes back
        ++faults_["kill, takeover"];
        kill(x);
        open_on(y, nodes_[x].mirror_copy);
        boot(x);
        break;
      case 1:  // the owner dies and restarts before anyone takes over
        ++faults_["kill, restart"];
        kill(x);
        boot(x);
        open_on(x, "");
        break;
      case 2:  // the owner's lease runs out and comes back: abandoned, opened again here
        ++faults_["lease lost, reopened"];
        volume_.reset();
        nodes_[x].hosted->close(kVolume, /*clean=*/false);
        open_on(x, "");
        break;
      case 3:  // the lease runs out and the partner takes over; the owner lives on
        ++faults_["lease lost, takeover"];
        volume_.reset();
        nodes_[x].hosted->close(kVolume, /*clean=*/false);
        open_on(y, nodes_[x].mirror_copy);
        break;
      case 4:  // a planned move, or the failback after a takeover
        ++faults_["planned move"];
        volume_.reset();
        if (!nodes_[x].hosted->close(kVolume, /*clean=*/true)) fail("a clean close failed");
        open_on(y, "");
        break;
    }
  }

  void check() {
    fs::OpContext ctx = root_ctx();
    for (int f = 0; f < kFiles; ++f) {
      std::vector<uint8_t> data;
      bool eof = false;
      std::optional<fs::Attr> attr;
      if (volume_->read(ctx, files_[f], 0, kBytes, &data, &eof, &attr) != fs::Status::Ok ||
          data.size() != kBytes) {
        fail("file f" + std::to_string(f) + " unreadable");
        return;
      }
      uint64_t value;
      std::memcpy(&value, data.data(), sizeof value);
      if (value != acked_[f] && !pending_[f].count(value)) {
        fail("file f" + std::to_string(f) + " holds value " + std::to_string(value) +
             ", acknowledged was " + std::to_string(acked_[f]) + " (then " +
             std::to_string(pending_[f].size()) + " unacknowledged)");
        return;
      }
    }
    for (uint32_t xid : acked_creates_)
      if (!exists(created_name(xid))) {
        fail("acknowledged CREATE " + created_name(xid) + " is missing");
        return;
      }
  }

  void fail(const std::string& what) {
    if (failure_.empty())
      failure_ = "step " + std::to_string(step_) + " (owner " + nodes_[owner_].name + "): " + what;
  }

  std::mt19937_64 rng_;
  const std::string dir_;
  std::string shared_;
  Node nodes_[2];
  int owner_ = 0;
  std::shared_ptr<fs::Volume> volume_;
  std::vector<fs::InodeId> files_;
  uint64_t next_value_ = 0;
  std::map<int, uint64_t> acked_;
  std::map<int, std::set<uint64_t>> pending_;
  std::vector<uint32_t> acked_creates_;
  int step_ = -1;
  std::string failure_;
  std::map<std::string, int> faults_;
};

TEST(OwnershipSimulation, NoAcknowledgedWriteIsLostOrOverwrittenByAnOlderOne) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    testing::ScratchDir dir("nasd-ownership-sim");
    Sim sim(seed, dir.path);
    const bool ok = sim.run(60);
    std::string seen;
    for (const auto& [kind, n] : sim.faults()) seen += " " + kind + "=" + std::to_string(n);
    ASSERT_TRUE(ok) << "seed " << seed << ": " << sim.failure() << "; faults so far:" << seen;
    for (const char* kind : {"kill, takeover", "kill, restart", "lease lost, reopened",
                             "lease lost, takeover", "planned move"})
      EXPECT_GT(sim.faults().count(kind), 0u) << "seed " << seed << " never drew " << kind;
  }
}

}  // namespace
}  // namespace nasd::cluster
