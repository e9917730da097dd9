#include "server/nlm/lock_state.h"

#include <algorithm>
#include <cstring>
#include <iomanip>
#include <set>
#include <sstream>

#include "server/nfs/xdr/xdr_codec.h"
#include "server/nlm/xdr/nlm4_prot.h"
#include "server/nlm/xdr/sm_prot.h"

namespace nasd::nlm {
namespace {

constexpr uint32_t kNlmGranted = 5;
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

std::string range_text(const ByteRange& r) {
  return std::to_string(r.start) + "-" + (r.end == ByteRange::kToEof ? "EOF" : std::to_string(r.end - 1));
}

}  // namespace

LockState::LockState(NlmOptions options, const std::string& monitor_dir,
                     std::shared_ptr<VolumeClientLog> volume_clients)
    : options_(std::move(options)),
      monitor_(std::make_unique<StatusMonitor>(monitor_dir, options_.max_hosts)),
      volume_clients_(std::move(volume_clients)),
      manager_(options_.max_locks) {
  CallbackSender::Options co;
  co.timeout = std::chrono::milliseconds(options_.callback_timeout_ms);
  co.attempts = options_.callback_attempts;
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
  std::erase_if(pending_grants_, [&](const auto& p) { return p.second.file.volume == volume; });
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
    std::erase_if(pending_grants_, [&](const auto& p) { return p.second.file.volume == volume; });
  }
  std::set<std::string> hosts;
  for (const Lock& l : out.table.locks) hosts.insert(l.owner.host);
  for (const Waiter& w : out.table.waiters) hosts.insert(w.lock.owner.host);
  for (const Share& s : out.table.shares) hosts.insert(s.host);
  // Each with the server addresses it locked at, from the volume's list when there is one.
  std::vector<MonitoredHost> listed = volume_clients(volume);
  for (const std::string& h : hosts) {
    std::string address = monitor_->address_of(h);
    if (address.empty()) continue;
    bool called_known = false;
    for (const MonitoredHost& c : listed) {
      if (c.name != h || c.called.empty()) continue;
      out.clients.push_back({h, address, c.called});
      called_known = true;
    }
    if (!called_known) out.clients.push_back({h, address, ""});
  }
  return out;
}

bool LockState::adopt_volume(const VolumeHandover& handover) {
  // Recorded first, as for a new lock: a client whose lock is held here is told when this node
  // restarts, and by whoever takes the volume over should this node die.
  for (const MonitoredHost& c : handover.clients)
    if (!record_client(handover.volume, c)) return false;
  std::lock_guard lock(mu_);
  return manager_.adopt_volume(handover.volume, handover.table, now_ms());
}

bool LockState::record_client(uint32_t volume, const MonitoredHost& client) {
  if (client.address.empty()) return true;
  if (!monitor_->monitor(client.name, client.address)) return false;
  return !volume_clients_ || volume_clients_->record(volume, client);
}

void LockState::notify(const std::vector<MonitoredHost>& clients, const std::string& server_name) {
  int32_t state = monitor_->state();
  for (const MonitoredHost& h : clients) {
    // From any address: a status monitor matches SM_NOTIFY by the name it carries, the server
    // as the client knows it.
    CallbackCall call = callback_to(CallbackRoute{h.address, "", ""}, kNsmProgram, kNsmVersion,
                                    kSmNotify);
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

LockStatus LockState::lock(const LockRequest& request, const std::string& monitor_address) {
  // Recorded (and written) before the lock exists: a client that holds a lock is always told
  // when this server restarts.
  if (!record_client(request.lock.file.volume,
                     {request.lock.owner.host, monitor_address, request.callback.from}))
    return LockStatus::NoLocks;
  std::lock_guard lock(mu_);
  return manager_.lock(request, now_ms());
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

LockStatus LockState::share(const Share& share, bool reclaim, const std::string& monitor_address,
                            const std::string& called) {
  if (!record_client(share.file.volume, {share.host, monitor_address, called}))
    return LockStatus::NoLocks;
  std::lock_guard lock(mu_);
  return manager_.share(share, reclaim, now_ms());
}

void LockState::unshare(const FileId& file, const std::string& host, const std::string& oh) {
  std::lock_guard lock(mu_);
  manager_.unshare(file, host, oh);
}

bool LockState::host_rebooted(const std::string& host, const std::string& from_address) {
  std::string recorded = monitor_->address_of(host);
  if (recorded.empty() || recorded != from_address) return false;
  std::vector<Waiter> granted;
  {
    std::lock_guard lock(mu_);
    granted = manager_.free_all(host);
    std::erase_if(pending_grants_, [&](const auto& p) { return p.second.owner.host == host; });
  }
  send_granted(std::move(granted));
  return true;
}

void LockState::granted_result(const std::string& cookie, bool accepted) {
  Lock lock;
  {
    std::lock_guard guard(mu_);
    auto it = pending_grants_.find(cookie);
    if (it == pending_grants_.end()) return;
    lock = it->second;
    pending_grants_.erase(it);
  }
  if (!accepted) unlock(lock.file, lock.owner, lock.range);  // the client no longer wants it
}

void LockState::send_granted(std::vector<Waiter> granted) {
  for (Waiter& w : granted) {
    std::string cookie(8, '\0');
    {
      std::lock_guard lock(mu_);
      uint64_t n = next_cookie_++;
      std::memcpy(cookie.data(), &n, sizeof n);
      pending_grants_[cookie] = w.lock;
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
    if (!nfs::xdr::append(xdr_nlm4_testargs, args, &call.args)) {
      std::lock_guard lock(mu_);
      pending_grants_.erase(cookie);
      continue;
    }
    auto on_answer = [this, cookie](uint32_t stat) {
      if (stat == NLM4_DENIED_GRACE_PERIOD) return false;  // the client restarted: later
      granted_result(cookie, stat == NLM4_GRANTED);
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
    row("held", l.owner.host, std::to_string(l.owner.svid) + "/" + printable(l.owner.oh),
        file_text(l.file), range_text(l.range), l.exclusive ? "exclusive" : "shared");
  for (const Waiter& w : waiters)
    row("waiting", w.lock.owner.host,
        std::to_string(w.lock.owner.svid) + "/" + printable(w.lock.owner.oh), file_text(w.lock.file),
        range_text(w.lock.range), w.lock.exclusive ? "exclusive" : "shared");
  static const char* kAccess[] = {"none", "read", "write", "read-write"};
  for (const Share& s : shares)
    row("share", s.host, printable(s.oh), file_text(s.file), "whole file",
        std::string("access ") + kAccess[static_cast<int>(s.access) & 3] + ", deny " +
            kAccess[static_cast<int>(s.deny) & 3]);
  out << locks.size() << " lock(s), " << waiters.size() << " waiting, " << shares.size()
      << " share(s)\n";
  return out.str();
}

}  // namespace nasd::nlm
