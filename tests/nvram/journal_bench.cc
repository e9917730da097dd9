// nvram_bench: stable 4 KiB WRITE throughput and latency, direct to a file system versus
// through a JournalVolume (process and host mode). Not a test; run by hand:
//   nvram_bench [threads] [writes-per-thread] [dir]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "nvram/journal_volume.h"
#include "tests/nvram/backing.h"
#include "tests/nvram/test_util.h"

using namespace nasd;

namespace {

struct Result {
  double ops_per_sec, avg_us;
};

Result run(fs::Volume& v, int threads, int per_thread) {
  fs::OpContext ctx;
  ctx.cred.uid = ctx.cred.gid = 0;
  std::vector<fs::InodeId> files(threads);
  for (int t = 0; t < threads; ++t) {
    std::optional<fs::Attr> a;
    fs::Wcc w;
    if (v.create(ctx, v.root(), "bench" + std::to_string(t), fs::CreateMode::Unchecked, {}, 0,
                 &files[t], &a, &w) != fs::Status::Ok) {
      std::fprintf(stderr, "create failed\n");
      std::exit(1);
    }
  }
  const auto data = nvram::testing::pattern(1, 4096);
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (int i = 0; i < per_thread; ++i) {
        fs::Stability c;
        fs::Wcc w;
        // Rewrites a 16 MiB window so the file system's cache is not the limit.
        if (v.write(ctx, files[t], uint64_t(i % 4096) * 4096, data, fs::Stability::FileSync, &c,
                    &w) != fs::Status::Ok)
          std::exit(2);
      }
    });
  for (auto& p : pool) p.join();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double ops = double(threads) * per_thread;
  return {ops / secs, secs * 1e6 * threads / ops};
}

void report(const char* what, int threads, Result r) {
  std::printf("%-34s threads=%-2d %9.0f writes/s  %8.1f us avg\n", what, threads, r.ops_per_sec,
              r.avg_us);
}

}  // namespace

int main(int argc, char** argv) {
  const int per_thread = argc > 2 ? std::atoi(argv[2]) : 2000;
  const std::vector<int> thread_counts =
      argc > 1 ? std::vector<int>{std::atoi(argv[1])} : std::vector<int>{1, 8};
  for (auto backing : nvram::testing::available_backings()) {
    const std::string name = nvram::testing::backing_name(backing);
    for (int threads : thread_counts) {
      {
        nvram::testing::ScratchDir dir;
        auto target = nvram::testing::open_backing(backing, dir.path(), 1);
        report((name + " direct FILE_SYNC").c_str(), threads, run(*target, threads, per_thread));
      }
      for (auto mode : {nvram::DurabilityMode::Process, nvram::DurabilityMode::Host}) {
        nvram::testing::ScratchDir dir;
        auto target = nvram::testing::open_backing(backing, dir.path(), 1);
        const uint64_t region = std::getenv("NVRAM_BENCH_REGION_MB") ? std::strtoull(std::getenv("NVRAM_BENCH_REGION_MB"), nullptr, 10) << 20 : 256ull << 20;
        auto opts = nvram::testing::small_options(dir.file("nvram.img"), region, mode);
        opts.flush_threshold_pct = 50;
        opts.flush_interval = std::chrono::milliseconds(1000);
        auto journal = nvram::Journal::open(opts);
        nvram::JournalVolume jv(journal, target);
        jv.recover();
        const std::string label =
            name + " via NVRAM (" + nvram::durability_mode_name(mode) + ")";
        report(label.c_str(), threads, run(jv, threads, per_thread));
        auto s = journal->stats();
        std::printf("    commits=%llu avg group=%.2f fs flushes=%llu space waits=%llu\n",
                    (unsigned long long)s.commits,
                    s.commits ? double(s.records_committed) / double(s.commits) : 0.0,
                    (unsigned long long)s.fs_flushes, (unsigned long long)s.space_waits);
        journal->shutdown();
      }
    }
  }
}
