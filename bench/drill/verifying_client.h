// One verifying client of the drill: a thread that works in its own directory of one volume,
// through one node's address, and remembers exactly what the server acknowledged:
//   CREATE (guarded) of a file, a 512-byte record appended to a file with a FILE_SYNC WRITE or
//   an UNSTABLE WRITE + COMMIT (rewritten when the COMMIT's verifier differs from the WRITE's:
//   the server restarted in between and the data may be gone), RENAME, REMOVE and MKDIR.
// A call that gets no answer (refused, reset, timed out) or NFS3ERR_JUKEBOX is sent again, on a
// fresh connection when there was no answer, until answered or `retry_budget` runs out. As a
// real client: after no answer with the same xid (a retransmission), after JUKEBOX with a new one. The
// reply cache does not move with a failover, so a retried CREATE/MKDIR may answer EXIST and a
// retried REMOVE/RENAME NOENT: for a retried call, and only then, that counts as done. A call
// that runs out of budget leaves its names uncertain (either outcome is accepted) and the client
// goes on.
// pause() lets the current call finish and holds the thread; verify() then reads the directory
// back through any node and compares it with the acknowledged state.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "bench/file_handle.h"
#include "bench/nfs_session.h"
#include "bench/target.h"
#include "bench/drill/nfs_calls.h"

namespace nasd::drill {

struct ClientOptions {
  std::string name;         // unique in the drill, part of the directory name
  bench::Target target;     // the node's address and the volume's export
  std::string dir_name;     // the client's directory in the export's root
  uint64_t seed = 1;
  int call_timeout_ms = 3000;
  int retry_budget_ms = 60000;
  int op_delay_us = 0;      // pause between calls (0: as fast as the server answers)
};

struct ClientStats {
  uint64_t acknowledged = 0;
  uint64_t retried = 0;       // calls that needed more than one attempt
  uint64_t reconnects = 0;
  uint64_t jukebox = 0;
  uint64_t rewrites = 0;      // UNSTABLE writes sent again after a COMMIT verifier change
  uint64_t gave_up = 0;       // calls that ran out of retry budget
};

struct VerifyResult {
  uint64_t checked = 0;              // acknowledged facts compared
  std::vector<std::string> lost;     // one line per acknowledged fact not found
  std::string error;                 // could not read back at all (the node did not answer)
};

class VerifyingClient {
 public:
  explicit VerifyingClient(ClientOptions options);
  ~VerifyingClient();

  // Mounts, makes the client's directory; false with *error.
  bool setup(std::string* error);
  void start();
  // Holds the thread after its current call (which may be retrying); returns once held or
  // after `limit_ms` (false).
  bool pause(int limit_ms);
  void resume();
  void stop();

  ClientStats stats() const;
  // Unix ms of every acknowledgement so far (for the ops/s timeline and stalls).
  std::vector<int64_t> ack_times() const;
  const ClientOptions& options() const { return o_; }

  // Reads the directory back through `through` (same export, another node's address) and
  // compares it with what was acknowledged. Call while paused.
  VerifyResult verify(const bench::Target& through, int budget_ms) const;

 private:
  struct File {
    uint64_t id = 0;          // the name it was created with; records carry it
    bench::FileHandle fh;
    uint64_t records = 0;     // acknowledged-stable records, 512 bytes each from offset 0
  };
  enum class Outcome { Done, Failed, GaveUp };

  void run();
  void one_op();
  Outcome op_create();
  Outcome op_append();
  Outcome op_rename();
  Outcome op_remove(std::string name);  // "": a file picked at random
  Outcome op_mkdir();
  // Sends the call until answered (other than JUKEBOX) or out of budget; *retried says whether
  // more than one attempt was needed. nullopt: gave up.
  std::optional<nfsstat3> send(const std::function<int(rpc_context*, rpc_cb, void*)>& issue,
                               const std::function<void(void*)>& on_ok, bool* retried);
  bench::NfsSession* session();
  void acknowledge();
  std::string pick_file();

  const ClientOptions o_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::unique_ptr<bench::NfsSession> session_;  // the client thread's
  bench::FileHandle dir_;
  uint64_t next_id_ = 0;
  uint32_t next_xid_;  // this client's calls' xids (its own sequence, kept across connections)
  uint64_t rng_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool pause_wanted_ = false, paused_ = false;
  std::map<std::string, File> files_;
  std::set<std::string> dirs_;
  std::set<std::string> gone_;       // acknowledged as removed or renamed away
  std::set<std::string> uncertain_;  // touched by a call that got no final answer
  ClientStats stats_;
  std::vector<int64_t> acks_;
};

// The 512-byte record `index` of file `id` of client `client`.
std::string drill_record(const std::string& client, uint64_t id, uint64_t index);

}  // namespace nasd::drill
