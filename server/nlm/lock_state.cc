#include "server/nlm/lock_state.h"

#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <iomanip>
#include <set>
#include <sstream>

#include "server/nfs/xdr/xdr_codec.h"
#include "server/nlm/xdr/nlm4_prot.h"
#include "server/nlm/xdr/sm_prot.h"

namespace nasd::nlm {
namespace {

constexpr uint32_t kNlmGranted = 5;
// The byte quotas: an entry's strings are at most a few KiB (NLM bounds each to 1024), most
// far less; 4 KiB per entry of the count quota leaves honest clients the whole count.
constexpr size_t kBytesPerEntry = 4096;
constexpr uint32_t kSmNotify = 6;

std::string printable(const std::string& bytes) {
  bool text = !bytes.empty() && std::all_of(bytes.begin(), bytes.end(), [](char c) {
    return c >= 0x21 && c < 0x7f;
  });
  if (text) return bytes;
  std::ostringstream out;
  out << "0x";
  for (unsigned char c : bytes.substr(0, 16)) out << std::hex << std::setw(2) << std::setfill('0') << int(c);
  if (bytes.size() > 16) out << "...";
  return out.str();
}

// A GRANTED's cookie: 16 random bytes, so that a client cannot answer a GRANTED it was not
// sent (a counter would let any host guess the cookies of other clients' grants).
std::string random_cookie() {
  std::string cookie(16, '\0');
  size_t got = 0;
  while (got < cookie.size()) {
    ssize_t n = ::getrandom(cookie.data() + got, cookie.size() - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error("getrandom failed");
    got += static_cast<size_t>(n);
  }
  return cookie;
}

std::string client_text(const std::string& host, const std::string& address) {
  return address.empty() ? host : host + "@" + address;
}

std::string range_text(const ByteRange& r) {
  return std::to_string(r.start) + "-" + (r.end == ByteRange::kToEof ? "EOF" : std::to_string(r.end - 1));
}

}  // namespace

LockState::LockState(NlmOptions options, const std::string& monitor_dir,
                     std::shared_ptr<VolumeClientLog> volume_clients)
    : options_(std::move(options)),
      monitor_(std::make_unique<StatusMonitor>(monitor_dir, options_.max_hosts,
                                               options_.max_names_per_address)),
      volume_clients_(std::move(volume_clients)),
      manager_(LockLimits{options_.max_locks, options_.max_locks_per_host,
                          options_.max_locks_per_host * kBytesPerEntry, options_.max_locks_per_file,
                          options_.max_locks_per_file * kBytesPerEntry}) {
  CallbackSender::Options co;
  co.timeout = std::chrono::milliseconds(options_.callback_timeout_ms);
  co.attempts = options_.callback_attempts;
  co.threads = options_.callback_threads;
  co.max_per_host = options_.callback_queue_per_host;
  if (!options_.send_callbacks) co.max_queue = 0;
  callbacks_ = std::make_unique<CallbackSender>(co);
}

LockState::~LockState() { stop(); }

uint64_t LockState::now_ms() const {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::steady_clock::now() - epoch_)
                                   .count());
}

void LockState::start() {
  {
    std::lock_guard lock(mu_);
    manager_.begin_grace(now_ms() + options_.grace_ms);
  }
  notify(monitor_->hosts(), options_.notify_name);
}

void LockState::stop() { callbacks_->stop(); }

void LockState::begin_volume_grace(uint32_t volume) {
  std::lock_guard lock(mu_);
  manager_.begin_volume_grace(volume, now_ms() + options_.grace_ms);
}

void LockState::drop_volume(uint32_t volume) {
  std::lock_guard lock(mu_);
  manager_.drop_volume(volume);
  std::erase_if(pending_grants_, [&](const auto& p) { return p.second.lock.file.volume == volume; });
}

std::vector<MonitoredHost> LockState::volume_clients(uint32_t volume) const {
  return volume_clients_ ? volume_clients_->clients(volume) : std::vector<MonitoredHost>{};
}

VolumeHandover LockState::take_volume(uint32_t volume) {
  VolumeHandover out;
  out.volume = volume;
  {
    std::lock_guard lock(mu_);
    out.table = manager_.take_volume(volume, now_ms());
    std::erase_if(pending_grants_, [&](const auto& p) { return p.second.lock.file.volume == volume; });
  }
  std::set<ClientKey> holders;
  for (const Lock& l : out.table.locks) holders.insert({l.owner.address, l.owner.host});
  for (const Waiter& w : out.table.waiters) holders.insert({w.lock.owner.address, w.lock.owner.host});
  for (const Share& s : out.table.shares) holders.insert({s.address, s.host});
  // Each with the server addresses it locked at, from the volume's list when there is one.
  std::vector<MonitoredHost> listed = volume_clients(volume);
  for (const ClientKey& k : holders) {
    if (k.address.empty()) continue;
    bool called_known = false;
    for (const MonitoredHost& c : listed) {
      if (c.name != k.host || c.address != k.address || c.called.empty()) continue;
      out.clients.push_back({k.host, k.address, c.called});
      called_known = true;
    }
    if (!called_known) out.clients.push_back({k.host, k.address, ""});
  }
  return out;
}

bool LockState::adopt_volume(const VolumeHandover& handover) {
  // Recorded first, as for a new lock: a client whose lock is held here is told when this node
  // restarts, and by whoever takes the volume over should this node die.
  std::vector<ClientKey> recorded;
  bool ok = true;
  for (const MonitoredHost& c : handover.clients) {
    if (!record_client(handover.volume, c)) {
      ok = false;
      break;
    }
    if (!c.address.empty()) recorded.push_back({c.address, c.name});
  }
  std::lock_guard lock(mu_);
  if (ok) ok = manager_.adopt_volume(handover.volume, handover.table, now_ms());
  for (const ClientKey& k : recorded) done_recording_locked(k);
  return ok;
}

bool LockState::record_client(uint32_t volume, const MonitoredHost& client) {
  if (client.address.empty()) return true;
  const ClientKey key{client.address, client.name};
  std::lock_guard record(record_mu_);
  {
    std::lock_guard lock(mu_);
    recording_[key]++;
  }
  try {
    for (int attempt = 0;; ++attempt) {
      bool listed = monitor_->monitor(client.name, client.address);
      if (listed && (!volume_clients_ || volume_clients_->record(volume, client))) return true;
      if (attempt == 1) break;
      forget_idle_clients(volume, client, /*volume_full=*/listed);
    }
  } catch (...) {
    std::lock_guard lock(mu_);
    done_recording_locked(key);
    throw;
  }
  std::lock_guard lock(mu_);
  done_recording_locked(key);
  return false;
}

void LockState::done_recording_locked(const ClientKey& client) {
  auto it = recording_.find(client);
  if (it != recording_.end() && --it->second == 0) recording_.erase(it);
}

void LockState::forget_idle_clients(uint32_t volume, const MonitoredHost& client, bool volume_full) {
  std::vector<MonitoredHost> candidates =
      volume_full ? volume_clients_->clients(volume) : monitor_->hosts();
  // When only the client's address is out of names, only that address's idle names go.
  const bool own_address_only =
      !volume_full && monitor_->hosts().size() < options_.max_hosts;
  std::vector<MonitoredHost> idle;
  {
    std::lock_guard lock(mu_);
    // Clients restored at a start have no locks until they reclaim them in the grace period:
    // they stay until it is over.
    if (manager_.grace_until(now_ms()) != 0) return;
    for (const MonitoredHost& h : candidates) {
      const ClientKey key{h.address, h.name};
      if (own_address_only && h.address != client.address) continue;
      if (recording_.count(key)) continue;
      if (volume_full ? manager_.holds(key, volume) : manager_.holds(key)) continue;
      idle.push_back(h);
    }
  }
  if (volume_full) volume_clients_->forget(volume, idle);
  else monitor_->forget(idle);
}

void LockState::notify(const std::vector<MonitoredHost>& clients, const std::string& server_name) {
  int32_t state = monitor_->state();
  for (const MonitoredHost& h : clients) {
    // From any address: a status monitor matches SM_NOTIFY by the name it carries, the server
    // as the client knows it.
    CallbackCall call = callback_to(CallbackRoute{h.address, "", ""}, kNsmProgram, kNsmVersion,
                                    kSmNotify);
    call.urgent = true;
    const std::string& name = h.called.empty() ? server_name : h.called;
    sm_stat_chge args{};
    args.mon_name = const_cast<char*>(name.c_str());
    args.state = state;
    if (nfs::xdr::append(xdr_sm_stat_chge, args, &call.args)) callbacks_->post(std::move(call));
  }
}

LockStatus LockState::test(const Lock& probe, std::optional<Lock>* conflicting) const {
  std::lock_guard lock(mu_);
  return manager_.test(probe, now_ms(), conflicting);
}

LockStatus LockState::lock(const LockRequest& request) {
  // Recorded (and written) before the lock exists: a client that holds a lock is always told
  // when this server restarts.
  const LockOwner& o = request.lock.owner;
  if (!record_client(request.lock.file.volume, {o.host, o.address, request.callback.from}))
    return LockStatus::NoLocks;
  std::lock_guard lock(mu_);
  LockStatus st = manager_.lock(request, now_ms());
  done_recording_locked({o.address, o.host});
  return st;
}

void LockState::unlock(const FileId& file, const LockOwner& owner, const ByteRange& range) {
  std::vector<Waiter> granted;
  {
    std::lock_guard lock(mu_);
    granted = manager_.unlock(file, owner, range);
  }
  send_granted(std::move(granted));
}

bool LockState::cancel(const Lock& waiting) {
  std::lock_guard lock(mu_);
  return manager_.cancel(waiting);
}

LockStatus LockState::share(const Share& share, bool reclaim, const std::string& called) {
  if (!record_client(share.file.volume, {share.host, share.address, called}))
    return LockStatus::NoLocks;
  std::lock_guard lock(mu_);
  LockStatus st = manager_.share(share, reclaim, now_ms());
  done_recording_locked({share.address, share.host});
  return st;
}

void LockState::unshare(const FileId& file, const std::string& host, const std::string& oh,
                        const std::string& address) {
  std::lock_guard lock(mu_);
  manager_.unshare(file, host, oh, address);
}

bool LockState::host_rebooted(const std::string& host, const std::string& from_address) {
  const ClientKey client{from_address, host};
  bool known = monitor_->monitored(host, from_address);
  std::vector<Waiter> granted;
  {
    std::lock_guard lock(mu_);
    known = known || manager_.holds(client);
    granted = manager_.free_all(client);
    std::erase_if(pending_grants_, [&](const auto& p) {
      return p.second.lock.owner.host == host && p.second.lock.owner.address == from_address;
    });
  }
  send_granted(std::move(granted));
  return known;
}

void LockState::granted_result(const std::string& cookie, bool accepted,
                               const std::string& from_address) {
  {
    std::lock_guard guard(mu_);
    auto it = pending_grants_.find(cookie);
    if (it == pending_grants_.end() || it->second.host != from_address) return;
  }
  settle_grant(cookie, accepted);
}

void LockState::settle_grant(const std::string& cookie, bool accepted) {
  Lock lock;
  {
    std::lock_guard guard(mu_);
    auto it = pending_grants_.find(cookie);
    if (it == pending_grants_.end()) return;
    lock = it->second.lock;
    pending_grants_.erase(it);
  }
  if (!accepted) unlock(lock.file, lock.owner, lock.range);  // the client no longer wants it
}

void LockState::send_granted(std::vector<Waiter> granted) {
  for (Waiter& w : granted) {
    std::string cookie = random_cookie();
    {
      std::lock_guard lock(mu_);
      pending_grants_[cookie] = PendingGrant{w.lock, w.callback.host};
    }
    nlm4_testargs args{};
    args.cookie.nlm4_netobj_len = static_cast<u_int>(cookie.size());
    args.cookie.nlm4_netobj_val = cookie.data();
    args.exclusive = w.lock.exclusive;
    args.alock.caller_name = w.lock.owner.host.data();
    args.alock.fh.nlm4_netobj_len = static_cast<u_int>(w.fh.size());
    args.alock.fh.nlm4_netobj_val = w.fh.data();
    args.alock.oh.nlm4_netobj_len = static_cast<u_int>(w.lock.owner.oh.size());
    args.alock.oh.nlm4_netobj_val = w.lock.owner.oh.data();
    args.alock.svid = w.lock.owner.svid;
    args.alock.l_offset = w.lock.range.start;
    args.alock.l_len = w.lock.range.nlm_len();
    CallbackCall call = callback_to(w.callback, kNlmProgram, kNlmVersion, kNlmGranted);
    call.wants_status = true;
    call.urgent = true;
    if (!nfs::xdr::append(xdr_nlm4_testargs, args, &call.args)) {
      std::lock_guard lock(mu_);
      pending_grants_.erase(cookie);
      continue;
    }
    auto on_answer = [this, cookie](uint32_t stat) {
      if (stat == NLM4_DENIED_GRACE_PERIOD) return false;  // the client restarted: later
      settle_grant(cookie, stat == NLM4_GRANTED);
      return true;
    };
    // A client that never answers keeps the lock: it retransmits its blocked LOCK (and is told
    // GRANTED), or its status monitor's SM_NOTIFY frees it after a reboot.
    callbacks_->post(std::move(call), on_answer, [this, cookie] {
      std::lock_guard lock(mu_);
      pending_grants_.erase(cookie);
    });
  }
}

std::string LockState::describe(const std::function<std::string(uint32_t)>& volume_name) const {
  std::ostringstream out;
  std::lock_guard lock(mu_);
  uint64_t now = now_ms();
  out << "status monitor state " << monitor_->state() << ", " << monitor_->hosts().size()
      << " client(s) monitored; callbacks sent " << callbacks_->sent() << ", failed "
      << callbacks_->failed() << "\n";
  auto file_text = [&](const FileId& f) {
    return volume_name(f.volume) + ":" + std::to_string(f.inode);
  };
  std::vector<Lock> locks = manager_.locks();
  std::vector<Waiter> waiters = manager_.waiters();
  std::vector<Share> shares = manager_.shares();
  if (uint64_t until = manager_.grace_until(now))
    out << "grace period (only reclaims granted): every volume, " << (until - now) << " ms left\n";
  for (const auto& [volume, until] : manager_.volume_graces(now))
    out << "grace period (only reclaims granted): volume " << volume_name(volume) << ", "
        << (until - now) << " ms left\n";
  out << "state    client               owner(svid/oh)        file             range                 mode\n";
  auto row = [&](const char* what, const std::string& host, const std::string& owner,
                 const std::string& file, const std::string& range, const std::string& mode) {
    out << std::left << std::setw(9) << what << std::setw(21) << host << " " << std::setw(21)
        << owner << " " << std::setw(16) << file << " " << std::setw(21) << range << " " << mode
        << "\n";
  };
  for (const Lock& l : locks)
    row("held", client_text(l.owner.host, l.owner.address), std::to_string(l.owner.svid) + "/" + printable(l.owner.oh),
        file_text(l.file), range_text(l.range), l.exclusive ? "exclusive" : "shared");
  for (const Waiter& w : waiters)
    row("waiting", client_text(w.lock.owner.host, w.lock.owner.address),
        std::to_string(w.lock.owner.svid) + "/" + printable(w.lock.owner.oh), file_text(w.lock.file),
        range_text(w.lock.range), w.lock.exclusive ? "exclusive" : "shared");
  static const char* kAccess[] = {"none", "read", "write", "read-write"};
  for (const Share& s : shares)
    row("share", client_text(s.host, s.address), printable(s.oh), file_text(s.file), "whole file",
        std::string("access ") + kAccess[static_cast<int>(s.access) & 3] + ", deny " +
            kAccess[static_cast<int>(s.deny) & 3]);
  out << locks.size() << " lock(s), " << waiters.size() << " waiting, " << shares.size()
      << " share(s)\n";
  return out.str();
}

}  // namespace nasd::nlm
