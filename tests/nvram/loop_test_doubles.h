// Test doubles for the stable calls on the event loop (JournalVolume::try_write/try_commit):
// a mirror whose acknowledgements the test holds back, so that a group commit is provably not
// complete while a reply would be early, and a MemoryFs that answers the non-blocking attempts
// the journal needs (a WRITE taken from memory, attributes for COMMIT).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>

#include "nvram/journal.h"
#include "nvram/mirror.h"
#include "nvram/record.h"
#include "tests/nvram/test_util.h"
#include "tests/support/memory_fs.h"

namespace nasd::nvram::testing {

// An in-process partner that "holds" every record it is sent and acknowledges at once, or,
// while hold() is in force, only when release() is called.
class HeldAckMirror : public Mirror {
 public:
  void start(Listener* listener) override {
    std::lock_guard lk(mu_);
    listener_ = listener;
    listener_->mirror_connected(0);
  }
  bool replicate(std::span<const RecordView> records) override {
    std::unique_lock lk(mu_);
    if (listener_ == nullptr) return false;
    for (const RecordView& r : records) received_ = r.end();
    ++batches_;
    if (holding_) return true;
    const uint64_t end = received_;
    lk.unlock();
    listener_->mirror_acked(end);
    return true;
  }
  void trim(uint64_t) override {}
  void reset(const std::string&) override {}
  void stop() override {
    std::lock_guard lk(mu_);
    listener_ = nullptr;
  }
  std::string describe() const override { return "held-ack test mirror"; }

  // From now on records are acknowledged only by release().
  void hold() {
    std::lock_guard lk(mu_);
    holding_ = true;
  }
  // Acknowledges everything received so far and stops holding.
  void release() {
    std::unique_lock lk(mu_);
    holding_ = false;
    Listener* l = listener_;
    const uint64_t end = received_;
    lk.unlock();
    if (l) l->mirror_acked(end);
  }
  // Whether the partner was sent records up to `pos` (the feeder runs on its own thread).
  bool received_up_to(uint64_t pos) const {
    std::lock_guard lk(mu_);
    return received_ >= pos;
  }
  uint64_t received() const {
    std::lock_guard lk(mu_);
    return received_;
  }

 private:
  mutable std::mutex mu_;
  Listener* listener_ = nullptr;
  bool holding_ = false;
  uint64_t received_ = 0;
  uint64_t batches_ = 0;
};

// MemoryFs with the attempts a journalled volume uses on the event loop: each answers like its
// blocking twin (memory never waits) unless `answer` is false.
class AttemptingMemoryFs : public test_support::MemoryFs {
 public:
  using MemoryFs::MemoryFs;
  std::optional<fs::Status> try_write(const fs::OpContext& ctx, fs::InodeId id, uint64_t offset,
                                      std::span<const uint8_t> data, fs::Stability stable,
                                      fs::Stability* committed, fs::Wcc* wcc) override {
    if (!answer) return std::nullopt;
    fs::Status st = write(ctx, id, offset, data, stable, committed, wcc);
    // As a disk file system: an UNSTABLE write (what the journal asks of it) is not on disk yet.
    if (st == fs::Status::Ok && stable == fs::Stability::Unstable)
      *committed = fs::Stability::Unstable;
    return st;
  }
  std::optional<fs::Status> try_getattr(const fs::OpContext& ctx, fs::InodeId id,
                                        fs::Attr* out) override {
    if (!answer) return std::nullopt;
    return getattr(ctx, id, out);
  }
  std::atomic<bool> answer{true};
};

// An 8 MiB journal in `region_path` whose every commit waits for a HeldAckMirror the test
// drives (mirror_policy Fail, a long mirror timeout): a reply that leaves before release()
// left before its record was mirrored.
struct HeldAckJournal {
  std::shared_ptr<Journal> journal;
  HeldAckMirror* mirror = nullptr;  // owned by the journal
};
inline HeldAckJournal open_held_ack_journal(const std::string& region_path) {
  JournalOptions opts = small_options(region_path, 8 << 20);
  opts.mirror_policy = MirrorPolicy::Fail;
  opts.mirror_timeout = std::chrono::seconds(30);
  auto owned = std::make_unique<HeldAckMirror>();
  HeldAckMirror* mirror = owned.get();
  return {Journal::open(opts, std::move(owned)), mirror};
}

}  // namespace nasd::nvram::testing
