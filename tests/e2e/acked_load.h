// A client load for crash and failover tests: one thread issues a bounded mix of CREATE,
// FILE_SYNC WRITE, MKDIR, RENAME, REMOVE and RMDIR in one directory and records each operation
// only once the server has acknowledged it. Afterwards, verify() checks that the directory holds
// exactly what was acknowledged. What it made a few thousand steps ago it removes again, so the
// directory stays small however long or fast the load runs.
//
// Two modes. Crash test (the default): the first call that fails ends the load; that call may
// or may not have happened, so verify() accepts the names it touched either way. Retry mode
// (failover): a call that gets no answer (refused, reset, timed out) or NFS3ERR_JUKEBOX is sent
// again, on a fresh connection to the same address and with the same handles, until it is
// answered or a time budget runs out. The duplicate request cache does not move with a
// failover, so a retried CREATE or MKDIR may answer EXIST and a retried REMOVE, RMDIR or
// RENAME NOENT: for a retried call, and only then, that counts as done.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/nfs3_client.h"

namespace nasd::e2e {

struct AckedLoadOptions {
  std::string host = "127.0.0.1";
  bool retry = false;
  // How long one attempt may wait for its reply.
  std::chrono::milliseconds call_timeout{15000};
  // Retry mode: how long one call may go unanswered, over all its attempts, before the load
  // gives up. Also bounds how long stop() can take.
  std::chrono::milliseconds retry_budget{60000};
  // What step i made is removed again at step i + live_steps, so the live set stays a few
  // thousand entries however fast the server answers (a fast run once filled a test's 256 MiB
  // volume: NFS3ERR_NOSPC after 36,000 steps on a node whose mirror was down).
  int live_steps = 3000;
};

struct AckedLoadStats {
  int acknowledged = 0;
  int retried = 0;          // calls that needed more than one attempt
  int retried_as_done = 0;  // of those, answered EXIST/NOENT: the first attempt had happened
  int reconnects = 0;       // fresh connections after a failed attempt
  int jukebox = 0;          // NFS3ERR_JUKEBOX answers
  int64_t longest_stall_ms = 0;  // longest time between two consecutive acknowledgements
  // Acknowledged after the last retried call was: shows that the load resumed.
  int acknowledged_since_retry = 0;
};

class AckedLoad {
 public:
  AckedLoad(uint16_t nfs_port, Fh dir) : AckedLoad(nfs_port, std::move(dir), AckedLoadOptions{}) {}
  AckedLoad(uint16_t nfs_port, Fh dir, AckedLoadOptions options);
  ~AckedLoad();

  void start() { thread_ = std::thread([this] { run(); }); }
  // Asks the thread to start no further call and waits for it. Returns at once after a
  // failure; in retry mode a call being retried goes on until answered or out of budget.
  void stop();

  int acknowledged() const;
  AckedLoadStats stats() const;
  // Why the load ended: "stopped" when asked to, otherwise the error that ended it (empty while
  // it runs).
  std::string stopped_by() const;

  // Compares the directory, read through `nfs`, with the acknowledged state. Returns one line
  // per discrepancy (empty: everything acknowledged survived and nothing else appeared).
  std::vector<std::string> verify(Nfs3Client& nfs, const Fh& dir) const;

 private:
  void run();
  void issue_all();
  // Removes what step `step` made that still exists (its file under either name, its
  // directory), each as an acknowledged call.
  void retire(int step);
  Nfs3Client& client();  // connects when there is no connection
  void drop_connection();
  // Marks `names` as in flight and runs `call(nfs, retried)`, which returns the NFS status
  // (RpcError when there was no answer), retrying as the mode says; on success applies
  // `effect` to the acknowledged state. `done_status` is the answer that means "already done"
  // for a retried call (NFS3_OK when there is none).
  template <class Call, class Effect>
  void op(const std::string& what, std::initializer_list<std::string> names, nfsstat3 done_status,
          Call call, Effect effect);
  void acknowledge(bool retried);  // with mu_ held

  const uint16_t port_;
  const Fh dir_;
  const AckedLoadOptions options_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  // The load thread's connection.
  std::unique_ptr<RpcChannel> channel_;
  std::unique_ptr<Nfs3Client> nfs_;

  mutable std::mutex mu_;
  std::map<std::string, std::string> files_;  // name -> content last written FILE_SYNC
  std::set<std::string> dirs_;
  std::set<std::string> gone_;       // acknowledged as removed or renamed away
  std::set<std::string> in_flight_;  // names the unacknowledged call touches
  AckedLoadStats stats_;
  std::optional<std::chrono::steady_clock::time_point> last_ack_;
  std::string stopped_by_;
};

}  // namespace nasd::e2e
