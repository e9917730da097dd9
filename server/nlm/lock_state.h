// A node's locking state, shared by its NLM and NSM services, `nasd-admin locks` and the
// cluster: the lock manager behind one mutex, the status monitor, and the callbacks to clients
// (GRANTED for a blocked lock that became free, SM_NOTIFY after a restart or a takeover).
//
// What a restart carries over: the list of clients that held locks and the status monitor's
// state number. Not the locks themselves: they live in memory, and the clients reclaim them in
// the grace period that follows, the way NLM was designed.
//
// In a cluster the locks are per-volume state that follows the volume: on a planned move the
// node giving the volume up takes its table out (take_volume) and the next owner adopts it
// (adopt_volume) -- nothing to reclaim, no grace period; on a takeover (the owner died, or lost
// its lease) the table is gone, so the new owner begins the volume's grace period and tells the
// clients on the volume's list (VolumeClientLog) that the volume's server restarted, and they
// reclaim. Blocked requests travel with a planned move; after a takeover the clients resend them.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "server/nlm/callback_sender.h"
#include "server/nlm/lock_manager.h"
#include "server/nlm/nlm_options.h"
#include "server/nlm/status_monitor.h"
#include "server/nlm/volume_client_log.h"
#include "server/nlm/volume_handover.h"

namespace nasd::nlm {

inline constexpr uint32_t kNlmProgram = 100021;
inline constexpr uint32_t kNlmVersion = 4;
inline constexpr uint32_t kNsmProgram = 100024;
inline constexpr uint32_t kNsmVersion = 1;

class LockState {
 public:
  // `monitor_dir`: where the status monitor keeps its files (the node's data folder + /sm);
  // `volume_clients`: where each volume's clients are recorded (a cluster; null when alone).
  LockState(NlmOptions options, const std::string& monitor_dir,
            std::shared_ptr<VolumeClientLog> volume_clients = nullptr);
  ~LockState();  // stop()

  // Begins the grace period of every volume and sends SM_NOTIFY with the new state number to
  // every client the list remembers.
  void start();
  void stop();

  // After a takeover: `volume` is served here now without its table; its grace period begins.
  // Then its clients (volume_clients()) are told that the server they locked at restarted
  // (notify: in the name of the address each called, MonitoredHost::called, else
  // `server_name`, the volume's address), and reclaim.
  void begin_volume_grace(uint32_t volume);
  void notify(const std::vector<MonitoredHost>& clients, const std::string& server_name);
  std::vector<MonitoredHost> volume_clients(uint32_t volume) const;
  // The volume left without its table (its lease ran out): what was held on it is forgotten.
  void drop_volume(uint32_t volume);
  // A planned move, at the node giving the volume up: its table, with the address of every
  // client it names. Requests for the volume are refused (DeniedGrace) from now on.
  VolumeHandover take_volume(uint32_t volume);
  // At the node the volume arrived at: the table is held here as it was. False (nothing
  // adopted) when it does not fit or is inconsistent, or its clients cannot be recorded; the
  // caller then begins the volume's grace period instead.
  bool adopt_volume(const VolumeHandover& handover);

  // The procedures, on the current time. Every owner carries the address its client called
  // from (LockOwner::address, Share::address), which is also where the client answers: the
  // client (name and address) is added to the status monitor's list before a lock is granted
  // (NoLocks when there is no room even after forgetting idle clients).
  LockStatus test(const Lock& probe, std::optional<Lock>* conflicting) const;
  LockStatus lock(const LockRequest& request);
  void unlock(const FileId& file, const LockOwner& owner, const ByteRange& range);
  bool cancel(const Lock& waiting);
  // `called`: the server address the client called (MonitoredHost::called).
  LockStatus share(const Share& share, bool reclaim, const std::string& called = "");
  void unshare(const FileId& file, const std::string& host, const std::string& oh,
               const std::string& address);
  // FREE_ALL from the client itself, or SM_NOTIFY: frees what `host` holds *at
  // `from_address`* -- never what the name holds from another address, so no third party can
  // drop another client's locks. False when nothing was known of that client.
  bool host_rebooted(const std::string& host, const std::string& from_address);
  // GRANTED_RES: the client's answer to a GRANTED callback, sent as a message of its own. Taken
  // only from the address the GRANTED went to, and only with the cookie it carried (random,
  // 16 bytes: not guessable, unlike a counter).
  void granted_result(const std::string& cookie, bool accepted, const std::string& from_address);

  StatusMonitor& monitor() { return *monitor_; }
  CallbackSender& callbacks() { return *callbacks_; }
  const NlmOptions& options() const { return options_; }

  // `nasd-admin locks`: grace, held locks, waiting requests and shares, one per line.
  std::string describe(const std::function<std::string(uint32_t)>& volume_name) const;

 private:
  uint64_t now_ms() const;
  // The status monitor's list and the volume's list both hold `host` at `address` (NoLocks
  // otherwise); nothing to record when `address` is empty.
  bool record_client(uint32_t volume, const MonitoredHost& client);
  // Makes room for `client` on the lists by forgetting clients that hold nothing (and are not
  // being recorded): on the status monitor's list when it or the client's address is full,
  // on `volume`'s list when `volume_full`. Called with record_mu_ held; takes mu_.
  void forget_idle_clients(uint32_t volume, const MonitoredHost& client, bool volume_full);
  void done_recording_locked(const ClientKey& client);  // mu_ held
  void settle_grant(const std::string& cookie, bool accepted);
  void send_granted(std::vector<Waiter> granted);

  struct PendingGrant {
    Lock lock;
    std::string host;  // where the GRANTED went: only that address may answer it
  };

  const NlmOptions options_;
  std::unique_ptr<StatusMonitor> monitor_;
  const std::shared_ptr<VolumeClientLog> volume_clients_;
  std::unique_ptr<CallbackSender> callbacks_;
  // Held while a client is put on a list and while idle clients are chosen and forgotten, so
  // that no client is forgotten between being recorded and its lock being granted. Taken
  // before mu_, never while mu_ is held.
  std::mutex record_mu_;
  mutable std::mutex mu_;
  LockManager manager_;
  std::map<std::string, PendingGrant> pending_grants_;  // cookie -> the GRANTED it answers
  std::map<ClientKey, size_t> recording_;  // clients recorded whose request is still running
  const std::chrono::steady_clock::time_point epoch_ = std::chrono::steady_clock::now();
};

}  // namespace nasd::nlm
