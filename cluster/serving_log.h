// The serving record of a node: one line per moment a volume starts or stops being served here,
// appended and fdatasync'd to `<data_dir>/serving.log`, so a fault drill (bench/drill) can prove
// afterwards that no two nodes ever served one volume at once. Lines (times in Unix ms, the
// node's wall clock):
//   <ms> boot <pid>                       this process started (ends every interval left open
//                                         by a previous incarnation that died without a word)
//   <ms> start <volume> <epoch>           the node may act for the volume from now on (written
//                                         before the volume is opened: the replay writes too)
//   <ms> ready <volume> <epoch>           opened (replayed) and routed here: clients are served
//                                         from now on (for takeover times; the interval began
//                                         at its start line)
//   <ms> stop <volume> <epoch> trusted_until=<ms|-> last_served=<ms|->
//                                         the volume is closed here. trusted_until: the latest
//                                         lease-trust deadline this node was granted while it
//                                         served (- without a lease: static ownership);
//                                         last_served: the last instant a call or write passed
//                                         the lease check (-: none).
// Why the two bounds on a stop line: a node paused past its lease writes its stop line only
// when it wakes, long after the next owner started. It stopped serving at its trust deadline
// already (every call and write asks the lease first) -- unless something passed that check
// later, which last_served shows. A checker therefore ends the interval at
//   min(stop time, max(trusted_until, last_served)),
// and a node killed with no stop line at the time it was killed (which the drill knows).
// Invariant: lines of one volume alternate start/stop within one incarnation (boot to boot).
// Thread-safe; a failed write is logged once and never stops the node from serving.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

namespace nasd::cluster {

class ServingLog {
 public:
  // Opens (creates) `path` for appending and writes the boot line; null with *error if the
  // file cannot be opened.
  static std::unique_ptr<ServingLog> open(const std::string& path, std::string* error);
  ~ServingLog();
  ServingLog(const ServingLog&) = delete;
  ServingLog& operator=(const ServingLog&) = delete;

  void started(const std::string& volume, uint64_t epoch);
  void ready(const std::string& volume, uint64_t epoch);
  // `trusted_until_ms` / `last_served_ms`: Unix ms, 0 for "none" (written as -).
  void stopped(const std::string& volume, uint64_t epoch, int64_t trusted_until_ms,
               int64_t last_served_ms);

  // Unix ms now, the clock of every line.
  static int64_t now_ms();

 private:
  ServingLog(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  void append(const std::string& line);

  std::mutex mu_;
  const int fd_;
  const std::string path_;
  bool warned_ = false;  // guarded by mu_
};

// What one served volume's stop line reports, kept by whoever serves it (the pair's and the
// N-node failover): the lease-trust deadline on the wall clock (the largest granted while it
// served) and the last instant a call passed the lease check. Thread-safe: the membership sets
// the deadline, request threads mark calls, the volumes thread reads both at the stop.
struct ServedBounds {
  std::atomic<int64_t> trusted_until_ms{0};
  std::atomic<int64_t> last_served_ms{0};
  uint64_t epoch = 0;  // of the lease it was opened under (volumes thread only)

  // A lease-trust deadline on the steady clock, kept as wall ms if later than the one held.
  void trusted_until(std::chrono::steady_clock::time_point until);
  // A call or a write passed the lease check now.
  void served_now() { last_served_ms.store(ServingLog::now_ms(), std::memory_order_relaxed); }
  // The start line for `volume` under the lease of `lease_epoch` (0: none), from a clean slate.
  void write_start(ServingLog* log, const std::string& volume, uint64_t lease_epoch);
  // The ready line: opened and routed here.
  void write_ready(ServingLog* log, const std::string& volume) const {
    if (log) log->ready(volume, epoch);
  }
  // The stop line for `volume` (and a fresh start: both bounds back to none).
  void write_stop(ServingLog* log, const std::string& volume);
};

}  // namespace nasd::cluster
