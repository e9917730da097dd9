// RetryingSession: one client's NFS session with an address that may move (a node's death, a
// takeover, a planned failover). A call answered NFS3ERR_JUKEBOX, or failing in any way (lost
// connection, no reply, an error the call itself throws), is made again on a fresh mount and
// connection every 200 ms until the retry budget runs out. Shared by the e2e tools that ride
// out failovers: nasd-ifs-stream for every call, nasd-ha-load for making its directory.
#pragma once

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "tests/e2e/mount3_client.h"
#include "tests/e2e/nfs3_client.h"

namespace nasd::e2e {

struct SessionTarget {
  std::string host;
  uint16_t nfs_port = 2049, mount_port = 20048;
  std::string export_path;
  std::chrono::seconds retry_budget{60};
  std::chrono::milliseconds call_timeout{5000};  // one attempt
};

class RetryingSession {
 public:
  explicit RetryingSession(SessionTarget target) : t_(std::move(target)) {}

  // Runs `call(nfs, retried)` until it answers something other than JUKEBOX; `call` returns
  // {value, status} and the value is returned.
  template <class F>
  auto retry(const std::string& what, F call) {
    const auto deadline = std::chrono::steady_clock::now() + t_.retry_budget;
    std::string last;
    for (int attempt = 0;; attempt++) {
      try {
        if (!channel_) {
          root_ = mount_root(t_.host, t_.mount_port, t_.export_path);
          channel_ = std::make_unique<RpcChannel>(t_.host, t_.nfs_port, Credential{},
                                                  t_.call_timeout);
          nfs_ = std::make_unique<Nfs3Client>(*channel_);
        }
        auto r = call(*nfs_, attempt > 0);
        if (r.second != NFS3ERR_JUKEBOX) {
          if (attempt > 0) ++retried;
          return r.first;
        }
        last = "NFS3ERR_JUKEBOX";
      } catch (const std::exception& e) {
        last = e.what();
        nfs_.reset();
        channel_.reset();
      }
      if (std::chrono::steady_clock::now() > deadline)
        throw std::runtime_error(what + ": no answer within the retry budget; last: " + last);
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }

  // The export's root handle (mounting first if needed).
  const Fh& root() {
    retry("MOUNT", [](Nfs3Client&, bool) { return std::pair<int, nfsstat3>{0, NFS3_OK}; });
    return root_;
  }

  // MKDIR `name` in the export's root. A retried MKDIR that finds it (the attempt whose answer
  // was lost made it) looks it up instead.
  Fh make_dir(const std::string& name) {
    return retry("MKDIR " + name, [&](Nfs3Client& nfs, bool retried) {
      NewObjectReply r = nfs.mkdir(root_, name, sattr_mode(0755));
      if (r.status == NFS3ERR_EXIST && retried) {
        LookupReply l = nfs.lookup(root_, name);
        return std::pair{l.fh, l.status};
      }
      if (r.status != NFS3_OK && r.status != NFS3ERR_JUKEBOX)
        throw std::runtime_error("MKDIR " + name + ": " + nfsstat_name(r.status));
      return std::pair{r.fh ? *r.fh : Fh{}, r.status};
    });
  }

  int retried = 0;  // calls that needed more than one attempt

 private:
  SessionTarget t_;
  Fh root_;
  std::unique_ptr<RpcChannel> channel_;
  std::unique_ptr<Nfs3Client> nfs_;
};

}  // namespace nasd::e2e
