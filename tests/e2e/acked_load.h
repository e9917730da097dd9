// A client load for crash tests: one thread issues a bounded mix of CREATE, FILE_SYNC WRITE,
// MKDIR, RENAME and REMOVE in one directory and records each operation only once the server has
// acknowledged it. After a crash and restart, verify() checks that the directory holds exactly
// what was acknowledged. The one call in flight at the crash may or may not have happened, so
// the names it touched are accepted either way.
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/nfs3_client.h"

namespace nasd::e2e {

class AckedLoad {
 public:
  AckedLoad(uint16_t nfs_port, Fh dir) : port_(nfs_port), dir_(std::move(dir)) {}
  ~AckedLoad() { stop(); }

  void start() { thread_ = std::thread([this] { run(); }); }
  // Asks the thread to finish and waits for it; also returns once a call has failed.
  void stop();

  int acknowledged() const;
  // Why the load ended: an error text once the server went away.
  std::string stopped_by() const;

  // Compares the directory, read through `nfs`, with the acknowledged state. Returns one line
  // per discrepancy (empty: everything acknowledged survived and nothing else appeared).
  std::vector<std::string> verify(Nfs3Client& nfs, const Fh& dir) const;

 private:
  void run();
  void issue_all(Nfs3Client& nfs);
  // Marks `names` as in flight, runs `call`, then applies `effect` to the acknowledged state.
  template <class Call, class Effect>
  void op(std::initializer_list<std::string> names, Call call, Effect effect);

  const uint16_t port_;
  const Fh dir_;
  std::thread thread_;
  std::atomic<bool> stop_{false};

  mutable std::mutex mu_;
  std::map<std::string, std::string> files_;  // name -> content last written FILE_SYNC
  std::set<std::string> dirs_;
  std::set<std::string> gone_;       // acknowledged as removed or renamed away
  std::set<std::string> in_flight_;  // names the unacknowledged call touches
  int acknowledged_ = 0;
  std::string stopped_by_;
};

}  // namespace nasd::e2e
