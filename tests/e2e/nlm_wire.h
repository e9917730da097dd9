// NLM v4 / NSM for the end-to-end tests, kept apart from libnfs (whose headers clash with
// libtirpc's): argument and result encodings made with the server's rpcgen routines, and the
// clients' lockd and statd that the server calls back (libtirpc services registered with the
// local rpcbind).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace nasd::e2e::nlmwire {

inline constexpr uint32_t kNlmProg = 100021, kNlmVers = 4, kNsmProg = 100024, kNsmVers = 1;
enum Proc : uint32_t { kTest = 1, kLock = 2, kCancel = 3, kUnlock = 4, kTestMsg = 6,
                       kLockMsg = 7, kUnlockMsg = 9, kTestRes = 11, kLockRes = 12,
                       kUnlockRes = 14, kGrantedRes = 15, kShare = 20,
                       kUnshare = 21, kFreeAll = 23, kSmNotify = 6 };
enum Stat : uint32_t { kGranted = 0, kDenied = 1, kNoLocks = 2, kBlocked = 3, kGrace = 4,
                       kStaleFh = 7, kFailed = 9 };
enum Access : uint32_t { kAccessNone = 0, kAccessR = 1, kAccessW = 2, kAccessRW = 3 };
enum Deny : uint32_t { kDenyNone = 0, kDenyR = 1, kDenyW = 2, kDenyRW = 3 };

struct LockArgs {
  std::string cookie = "cookie";
  std::string caller, fh, oh;
  int32_t svid = 1;
  uint64_t offset = 0, len = 0;
  bool exclusive = false, block = false, reclaim = false;
};

std::string encode_lock(const LockArgs& a);
std::string encode_unlock(const LockArgs& a);
std::string encode_cancel(const LockArgs& a);
std::string encode_test(const LockArgs& a);
std::string encode_share(const std::string& caller, const std::string& fh, const std::string& oh,
                         Access access, Deny deny);
std::string encode_free_all(const std::string& name, int32_t state);
std::string encode_sm_notify(const std::string& mon_name, int32_t state);
// An nlm4_res (a client's GRANTED_RES).
std::string encode_res(const std::string& cookie, uint32_t stat);

struct TestOutcome {
  uint32_t stat = kFailed;
  bool exclusive = false;
  int32_t svid = 0;
  uint64_t offset = 0, len = 0;
};
// nlm4_res / nlm4_shareres status, or kFailed when the bytes do not decode.
uint32_t decode_res(const std::string& bytes);
uint32_t decode_shareres(const std::string& bytes);
TestOutcome decode_testres(const std::string& bytes);

// What the server called back: GRANTED on the clients' NLM, SM_NOTIFY on their status monitor.
struct Callbacks {
  struct Granted {
    std::string caller_name;
    int32_t svid;
    uint64_t offset, len;
    bool exclusive;
    std::string from;  // the address the GRANTED came from
  };
  std::vector<Granted> granted;
  std::vector<std::pair<std::string, int32_t>> notified;
  // _RES calls: (procedure, status, cookie).
  struct Result {
    uint32_t proc, stat;
    std::string cookie;
  };
  std::vector<Result> results;
};

// The clients' lockd and statd: UDP services registered with the local rpcbind, served by a
// thread of their own. One at a time per process.
class CallbackServer {
 public:
  // `answer_granted` false: GRANTED calls are recorded but never answered (a client whose
  // answer is late, or comes as a GRANTED_RES of its own).
  explicit CallbackServer(bool answer_granted = true);
  ~CallbackServer();
  bool registered() const { return registered_; }
  Callbacks snapshot();
  // Waits (bounded) until `pred(snapshot())` holds.
  template <typename Pred>
  bool wait_for(Pred pred, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (pred(snapshot())) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

 private:
  void run();
  void* nlm_ = nullptr;  // SVCXPRT*
  void* nsm_ = nullptr;
  bool registered_ = false;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace nasd::e2e::nlmwire
