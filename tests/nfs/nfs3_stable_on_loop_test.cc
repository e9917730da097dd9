// Run-to-completion for stable calls, through the whole server path a transport uses: the RPC
// dispatcher hands a WRITE FILE_SYNC or a COMMIT to the NFS program on the "event loop" (the
// test's thread); the program reaches a journalled volume whose NVRAM is mirrored to a partner
// that holds its acknowledgements. The call must park instead of occupying the executor, no
// reply may be sent while the partner has not acknowledged the record, and once it has, the
// reply comes from the journal's committer thread through the dispatcher's inline resumption,
// never from the executor. In process mode without a mirror the same calls are answered on the
// loop at once, their records committed.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "nvram/journal_volume.h"
#include "server/nfs/exports/exports.h"
#include "server/nfs/handle/handle_codec.h"
#include "server/nfs/nfs3/nfs3_service.h"
#include "server/nfs/xdr/nfs3_prot.h"
#include "server/nfs/xdr/xdr_codec.h"
#include "server/rpc/call_dispatcher.h"
#include "server/rpc/call_stats.h"
#include "tests/nvram/loop_test_doubles.h"
#include "tests/nvram/test_util.h"
#include "tests/nfs/xdr_encode.h"
#include "tests/rpc/loopback_call.h"
#include "tests/rpc/rpc_test_client.h"
#include "tests/support/memory_resolver.h"
#include "util/config.h"
#include "util/task_queue.h"

namespace nasd::nfs {
namespace {

const char* kConfig = R"(
[volume main]
id = 7
[export /r/main]
volume = main
clients = 127.0.0.0/8
options = rw, insecure, no_root_squash
)";

using testing::encode;

nfs_fh3 wire(FileHandle& fh) {
  nfs_fh3 w{};
  w.data.data_len = FileHandle::kSize;
  w.data.data_val = reinterpret_cast<char*>(fh.bytes.data());
  return w;
}

class StableOnTheLoop : public ::testing::Test {
 protected:
  // `mirrored`: the journal's partner is a HeldAckMirror; else process mode, no mirror.
  void start(bool mirrored) {
    nvram::JournalOptions opts = nvram::testing::small_options(dir_.file("nv"), 8 << 20);
    std::unique_ptr<nvram::Mirror> mirror;
    if (mirrored) {
      opts.mirror_policy = nvram::MirrorPolicy::Fail;
      opts.mirror_timeout = std::chrono::seconds(30);
      auto m = std::make_unique<nvram::testing::HeldAckMirror>();
      mirror_ = m.get();
      mirror = std::move(m);
    }
    journal_ = nvram::Journal::open(opts, std::move(mirror));
    fs_ = std::make_shared<nvram::testing::AttemptingMemoryFs>(
        7, nvram::testing::mem_target_options());
    volume_ = std::make_unique<nvram::JournalVolume>(journal_, fs_);
    volume_->recover();
    resolver_ = std::make_shared<test_support::MemoryResolver>();
    resolver_->add(volume_.get());
    handles_ = std::make_shared<HandleCodec>(std::vector<uint8_t>(32, 0x42));
    exports_ = Exports::from_config(Config::parse(kConfig));
    dispatcher_.add_service(std::make_shared<Nfs3Service>(resolver_, exports_, handles_));
    fs::OpContext ctx;
    std::optional<fs::Attr> a;
    fs::Wcc w;
    ASSERT_EQ(volume_->create(ctx, volume_->root(), "f", fs::CreateMode::Guarded, {}, 0, &file_,
                              &a, &w),
              fs::Status::Ok);
    fh_ = handles_->encode(7, file_, exports_->all().front().export_id);
  }
  void TearDown() override {
    dispatcher_.close();
    executor_.stop();
  }

  // Hands one call to the dispatcher as the event loop would; SendNow replies are collected.
  rpc::CallDispatcher::Outcome::Kind send(uint32_t proc, std::vector<uint8_t> args) {
    const std::vector<uint8_t> message =
        rpc::testing::nfs3_call(next_xid_++, proc, 0, 0, std::move(args));
    auto outcome = dispatcher_.handle(rpc::Record(message.begin(), message.end()),
                                      rpc::testing::loopback_origin(40123),
                                      rpc::CallDispatcher::Clock::now(),
                                      [this](rpc::CallDispatcher::Reply r) { collect(*r); });
    if (outcome.kind == rpc::CallDispatcher::Outcome::SendNow) collect(*outcome.reply);
    return outcome.kind;
  }
  std::vector<uint8_t> write_args(uint64_t offset, const std::vector<uint8_t>& bytes,
                                  stable_how stable) {
    WRITE3args a{};
    a.file = wire(fh_);
    a.offset = offset;
    a.count = static_cast<count3>(bytes.size());
    a.stable = stable;
    a.data.data_len = static_cast<u_int>(bytes.size());
    a.data.data_val = reinterpret_cast<char*>(const_cast<uint8_t*>(bytes.data()));
    return encode(xdr_WRITE3args, a);
  }
  std::vector<uint8_t> commit_args() {
    COMMIT3args a{};
    a.file = wire(fh_);
    return encode(xdr_COMMIT3args, a);
  }
  bool wait_replies(size_t n, std::chrono::milliseconds limit) {
    std::unique_lock lk(mu_);
    return cv_.wait_for(lk, limit, [&] { return results_.size() >= n; });
  }
  size_t replies() {
    std::lock_guard lk(mu_);
    return results_.size();
  }
  // The NFS results of reply i: status first.
  std::vector<uint8_t> results(size_t i) {
    std::lock_guard lk(mu_);
    return results_.at(i);
  }
  static uint32_t word(const std::vector<uint8_t>& r, size_t at) {
    return r.size() < at + 4 ? UINT32_MAX : rpc::testing::read_u32(r, at);
  }
  // The stability a WRITE's reply promises (UINT32_MAX if it is no successful WRITE3res).
  static uint32_t write_committed(const std::vector<uint8_t>& r) {
    xdr::Decoded<WRITE3res> res(xdr_WRITE3res);
    if (!res.decode(r) || res->status != NFS3_OK) return UINT32_MAX;
    return res->WRITE3res_u.resok.committed;
  }
  std::string file_bytes(uint64_t offset, uint32_t count) {
    std::vector<uint8_t> data;
    bool eof;
    std::optional<fs::Attr> a;
    EXPECT_EQ(volume_->read(fs::OpContext{}, file_, offset, count, &data, &eof, &a),
              fs::Status::Ok);
    return {data.begin(), data.end()};
  }

  nvram::testing::ScratchDir dir_;
  nvram::testing::HeldAckMirror* mirror_ = nullptr;
  std::shared_ptr<nvram::Journal> journal_;
  std::shared_ptr<nvram::testing::AttemptingMemoryFs> fs_;
  std::unique_ptr<nvram::JournalVolume> volume_;
  std::shared_ptr<test_support::MemoryResolver> resolver_;
  std::shared_ptr<HandleCodec> handles_;
  std::shared_ptr<Exports> exports_;
  fs::InodeId file_;
  FileHandle fh_;
  util::TaskQueue executor_{{.threads = 1}};
  rpc::CallStats stats_;
  rpc::CallDispatcher dispatcher_{&executor_, nullptr, &stats_, /*run_inline=*/true};
  uint32_t next_xid_ = 0x7000;

 private:
  void collect(const rpc::EncodedReply& encoded) {
    std::vector<uint8_t> message(encoded.udp_head().begin(), encoded.udp_head().end());
    message.insert(message.end(), encoded.body.begin(), encoded.body.end());
    encoded.tail.copy_to(&message);
    rpc::testing::ParsedReply p = rpc::testing::parse_reply(message);
    std::lock_guard lk(mu_);
    results_.push_back(p.ok ? p.results : std::vector<uint8_t>{});
    cv_.notify_all();
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::vector<uint8_t>> results_;
};

TEST_F(StableOnTheLoop, InProcessModeFileSyncWriteAndCommitAreAnsweredOnTheLoop) {
  start(/*mirrored=*/false);
  const std::vector<uint8_t> data(4096, 's');
  ASSERT_EQ(send(NFSPROC3_WRITE, write_args(0, data, FILE_SYNC)),
            rpc::CallDispatcher::Outcome::SendNow)
      << "a FILE_SYNC WRITE whose commit is a store in memory left the loop";
  ASSERT_EQ(replies(), 1u);
  EXPECT_EQ(word(results(0), 0), uint32_t{NFS3_OK});
  EXPECT_EQ(write_committed(results(0)), uint32_t{FILE_SYNC});
  nvram::JournalStats s = journal_->stats();
  EXPECT_EQ(s.records_committed, s.appends) << "answered before its record was committed";
  ASSERT_EQ(send(NFSPROC3_WRITE, write_args(4096, data, UNSTABLE)),
            rpc::CallDispatcher::Outcome::SendNow);
  ASSERT_EQ(send(NFSPROC3_COMMIT, commit_args()), rpc::CallDispatcher::Outcome::SendNow)
      << "COMMIT left the loop";
  ASSERT_EQ(replies(), 3u);
  EXPECT_EQ(word(results(2), 0), uint32_t{NFS3_OK});
  s = journal_->stats();
  EXPECT_EQ(s.records_committed, s.appends) << "COMMIT answered before the commit";
  EXPECT_EQ(dispatcher_.parks(), 0u);
  EXPECT_EQ(file_bytes(0, 8192), std::string(8192, 's'));
}

TEST_F(StableOnTheLoop, MirroredFileSyncWriteAndCommitParkUntilThePartnerAcknowledges) {
  start(/*mirrored=*/true);
  const std::vector<uint8_t> data(4096, 'm');
  mirror_->hold();
  const uint64_t appends = journal_->stats().appends;
  ASSERT_EQ(send(NFSPROC3_WRITE, write_args(0, data, FILE_SYNC)),
            rpc::CallDispatcher::Outcome::Pending);
  EXPECT_EQ(dispatcher_.parks(), 1u) << "the stable WRITE did not park on its commit";
  EXPECT_EQ(journal_->stats().appends, appends + 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  EXPECT_EQ(replies(), 0u) << "a reply left before the partner acknowledged the record";
  mirror_->release();
  ASSERT_TRUE(wait_replies(1, std::chrono::seconds(5)));
  EXPECT_EQ(word(results(0), 0), uint32_t{NFS3_OK});
  EXPECT_EQ(write_committed(results(0)), uint32_t{FILE_SYNC});
  EXPECT_EQ(dispatcher_.inline_resumes(), 1u) << "the resumed WRITE went to the executor";
  EXPECT_EQ(journal_->stats().appends, appends + 1) << "the resumed WRITE was applied again";
  EXPECT_EQ(file_bytes(0, 4096), std::string(4096, 'm'));

  // COMMIT after an UNSTABLE WRITE the partner has not acknowledged yet.
  mirror_->hold();
  ASSERT_EQ(send(NFSPROC3_WRITE, write_args(4096, data, UNSTABLE)),
            rpc::CallDispatcher::Outcome::SendNow);
  ASSERT_EQ(replies(), 2u);
  ASSERT_EQ(send(NFSPROC3_COMMIT, commit_args()), rpc::CallDispatcher::Outcome::Pending);
  EXPECT_EQ(dispatcher_.parks(), 2u) << "COMMIT did not park on the commit";
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  EXPECT_EQ(replies(), 2u) << "COMMIT answered before the partner acknowledged";
  mirror_->release();
  ASSERT_TRUE(wait_replies(3, std::chrono::seconds(5)));
  EXPECT_EQ(word(results(2), 0), uint32_t{NFS3_OK});
  EXPECT_EQ(dispatcher_.inline_resumes(), 2u);
  EXPECT_EQ(dispatcher_.parked(), 0u);
  EXPECT_EQ(journal_->stats().commit_callbacks, 2u);
}

}  // namespace
}  // namespace nasd::nfs
