#include "bench/drill/verifying_client.h"

#include <chrono>
#include <cstring>

namespace nasd::drill {
namespace {

constexpr uint64_t kRecord = 512;
// A file full of records is removed rather than appended to, so a long drill's directories
// (and the read-back after every fault) stay bounded: 200 files of at most 32 KiB.
constexpr uint64_t kMaxRecords = 64;

int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

uint64_t next_random(uint64_t& state) {  // xorshift64*: reproducible from --seed
  state ^= state >> 12;
  state ^= state << 25;
  state ^= state >> 27;
  return state * 0x2545F4914F6CDD1DULL;
}

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// The handle a CREATE/MKDIR result carries (libnfs lays both out alike); empty if none.
bench::FileHandle created_handle(const post_op_fh3& obj) {
  return obj.handle_follows ? bench::FileHandle::from(obj.post_op_fh3_u.handle) : bench::FileHandle{};
}

}  // namespace

std::string drill_record(const std::string& client, uint64_t id, uint64_t index) {
  std::string head = client + " file " + std::to_string(id) + " record " + std::to_string(index) + "\n";
  std::string r(kRecord, '.');
  for (size_t i = 0; i < r.size(); ++i) r[i] = static_cast<char>('a' + (i * 7 + id + index) % 26);
  std::memcpy(r.data(), head.data(), std::min<size_t>(head.size(), r.size()));
  r.back() = '\n';
  return r;
}

VerifyingClient::VerifyingClient(ClientOptions options)
    : o_(std::move(options)),
      next_xid_(static_cast<uint32_t>(o_.seed * 0x2545F4914F6CDD1DULL >> 32) | 1),
      rng_(o_.seed * 0x9E3779B97F4A7C15ULL + 1) {}

VerifyingClient::~VerifyingClient() { stop(); }

bench::NfsSession* VerifyingClient::session() {
  if (!session_) {
    std::string error;
    session_ = bench::NfsSession::open(o_.target, o_.call_timeout_ms, &error);
  }
  return session_.get();
}

bool VerifyingClient::setup(std::string* error) {
  session_ = bench::NfsSession::open(o_.target, o_.call_timeout_ms, error);
  if (!session_) return false;
  bool retried = false;
  auto status = send(
      [&](rpc_context* rpc, rpc_cb cb, void* ctx) {
        MKDIR3args a{};
        a.where.dir = session_->root().view();
        a.where.name = const_cast<char*>(o_.dir_name.c_str());
        a.attributes.mode.set_it = 1;
        a.attributes.mode.set_mode3_u.mode = 0755;
        return rpc_nfs3_mkdir_async(rpc, cb, &a, ctx);
      },
      [&](void* r) { dir_ = created_handle(static_cast<MKDIR3res*>(r)->MKDIR3res_u.resok.obj); },
      &retried);
  if (!status || *status != NFS3_OK || dir_.bytes.empty()) {
    *error = o_.name + ": MKDIR " + o_.dir_name + ": " + (status ? nfsstat_name(*status) : "no answer");
    return false;
  }
  return true;
}

void VerifyingClient::start() { thread_ = std::thread([this] { run(); }); }

void VerifyingClient::stop() {
  stop_ = true;
  resume();
  if (thread_.joinable()) thread_.join();
}

bool VerifyingClient::pause(int limit_ms) {
  std::unique_lock lock(mu_);
  pause_wanted_ = true;
  return cv_.wait_for(lock, std::chrono::milliseconds(limit_ms), [this] { return paused_ || !thread_.joinable(); });
}

void VerifyingClient::resume() {
  std::lock_guard lock(mu_);
  pause_wanted_ = false;
  cv_.notify_all();
}

ClientStats VerifyingClient::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

std::vector<int64_t> VerifyingClient::ack_times() const {
  std::lock_guard lock(mu_);
  return acks_;
}

void VerifyingClient::run() {
  while (!stop_) {
    {
      std::unique_lock lock(mu_);
      if (pause_wanted_) {
        paused_ = true;
        cv_.notify_all();
        cv_.wait(lock, [this] { return !pause_wanted_; });
        paused_ = false;
        if (stop_) break;
      }
    }
    one_op();
    if (o_.op_delay_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(o_.op_delay_us));
  }
  std::lock_guard lock(mu_);
  paused_ = true;
  cv_.notify_all();
}

void VerifyingClient::acknowledge() {  // with mu_ held
  ++stats_.acknowledged;
  acks_.push_back(unix_ms());
}

std::optional<nfsstat3> VerifyingClient::send(const std::function<int(rpc_context*, rpc_cb, void*)>& issue,
                                              const std::function<void(void*)>& on_ok, bool* retried) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(o_.retry_budget_ms);
  int attempts = 0;
  int backoff_ms = 50;
  // As a real client: a call that got no answer is retransmitted with the same xid, also on a
  // new connection (from a new port), so the server's reply cache can recognise it; after
  // NFS3ERR_JUKEBOX the call is made again as a new call (a new xid), as Linux does.
  uint32_t xid = next_xid_++;
  auto issue_with_xid = [&](rpc_context* rpc, rpc_cb cb, void* ctx) {
    rpc_set_next_xid(rpc, xid);
    return issue(rpc, cb, ctx);
  };
  while (true) {
    if (attempts++ > 0) {
      *retried = true;
      if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
      sleep_ms(backoff_ms);
      backoff_ms = std::min(backoff_ms * 2, 500);
    }
    bench::NfsSession* s = session();
    if (!s) {
      std::lock_guard lock(mu_);
      ++stats_.reconnects;
      continue;
    }
    std::string error;
    auto status = call_once(*s, issue_with_xid, on_ok, &error);
    if (!status) {
      session_.reset();  // no answer: this connection is done
      std::lock_guard lock(mu_);
      ++stats_.reconnects;
      continue;
    }
    if (*status == NFS3ERR_JUKEBOX) {
      xid = next_xid_++;
      std::lock_guard lock(mu_);
      ++stats_.jukebox;
      continue;
    }
    if (*retried) {
      std::lock_guard lock(mu_);
      ++stats_.retried;
    }
    return status;
  }
}

std::string VerifyingClient::pick_file() {
  std::lock_guard lock(mu_);
  auto it = files_.begin();
  std::advance(it, next_random(rng_) % files_.size());
  return it->first;
}

void VerifyingClient::one_op() {
  size_t files;
  {
    std::lock_guard lock(mu_);
    files = files_.size();
  }
  const uint64_t dice = next_random(rng_) % 100;
  Outcome out;
  if (files < 3 || (dice < 15 && files < 200)) out = op_create();
  else if (dice < 70) out = op_append();
  else if (dice < 80) out = op_rename();
  else if (dice < 90) out = op_remove("");
  else out = op_mkdir();
  if (out == Outcome::GaveUp) {
    std::lock_guard lock(mu_);
    ++stats_.gave_up;
  }
}

VerifyingClient::Outcome VerifyingClient::op_create() {
  const uint64_t id = next_id_++;
  const std::string name = "f" + std::to_string(id);
  bench::FileHandle fh;
  bool retried = false;
  {
    std::lock_guard lock(mu_);
    uncertain_.insert(name);
  }
  auto status = send(
      [&](rpc_context* rpc, rpc_cb cb, void* ctx) {
        CREATE3args a{};
        a.where.dir = dir_.view();
        a.where.name = const_cast<char*>(name.c_str());
        a.how.mode = GUARDED;
        a.how.createhow3_u.obj_attributes.mode.set_it = 1;
        a.how.createhow3_u.obj_attributes.mode.set_mode3_u.mode = 0644;
        return rpc_nfs3_create_async(rpc, cb, &a, ctx);
      },
      [&](void* r) { fh = created_handle(static_cast<CREATE3res*>(r)->CREATE3res_u.resok.obj); }, &retried);
  if (!status) return Outcome::GaveUp;
  const bool done = *status == NFS3_OK || (retried && *status == NFS3ERR_EXIST);
  if (done && fh.bytes.empty()) {
    // No handle in the reply (or the retry met our own earlier CREATE): look the name up.
    auto looked = send(
        [&](rpc_context* rpc, rpc_cb cb, void* ctx) {
          LOOKUP3args a{};
          a.what.dir = dir_.view();
          a.what.name = const_cast<char*>(name.c_str());
          return rpc_nfs3_lookup_async(rpc, cb, &a, ctx);
        },
        [&](void* r) { fh = bench::FileHandle::from(static_cast<LOOKUP3res*>(r)->LOOKUP3res_u.resok.object); },
        &retried);
    if (!looked || *looked != NFS3_OK) return Outcome::GaveUp;  // stays uncertain
  }
  std::lock_guard lock(mu_);
  if (!done) return Outcome::Failed;  // stays uncertain: EXIST without a retry is not ours to judge
  uncertain_.erase(name);
  files_[name] = File{id, fh, 0};
  gone_.erase(name);
  acknowledge();
  return Outcome::Done;
}

VerifyingClient::Outcome VerifyingClient::op_append() {
  const std::string name = pick_file();
  File f;
  {
    std::lock_guard lock(mu_);
    f = files_.at(name);
  }
  if (f.records >= kMaxRecords) return op_remove(name);
  const std::string record = drill_record(o_.name, f.id, f.records);
  const bool unstable = next_random(rng_) % 2 == 0;
  bool retried = false;
  // UNSTABLE: the write is stable only once a COMMIT answers with the verifier of the WRITE; a
  // changed verifier means the server lost its unstable data, so the record is written again.
  for (int round = 0; round < 20; ++round) {
    char write_verf[NFS3_WRITEVERFSIZE] = {};
    char commit_verf[NFS3_WRITEVERFSIZE] = {};
    stable_how committed = UNSTABLE;
    auto status = send(
        [&](rpc_context* rpc, rpc_cb cb, void* ctx) {
          WRITE3args a{};
          a.file = f.fh.view();
          a.offset = f.records * kRecord;
          a.count = kRecord;
          a.stable = unstable ? UNSTABLE : FILE_SYNC;
          a.data.data_len = kRecord;
          a.data.data_val = const_cast<char*>(record.data());
          return rpc_nfs3_write_async(rpc, cb, &a, ctx);
        },
        [&](void* r) {
          auto& ok = static_cast<WRITE3res*>(r)->WRITE3res_u.resok;
          std::memcpy(write_verf, ok.verf, NFS3_WRITEVERFSIZE);
          committed = ok.committed;
          if (ok.count != kRecord) committed = UNSTABLE, std::memset(write_verf, 0, NFS3_WRITEVERFSIZE);
        },
        &retried);
    if (!status) return Outcome::GaveUp;
    if (*status != NFS3_OK) return Outcome::Failed;
    if (!unstable && committed == FILE_SYNC) break;
    auto c = send(
        [&](rpc_context* rpc, rpc_cb cb, void* ctx) {
          COMMIT3args a{};
          a.file = f.fh.view();
          a.offset = 0;
          a.count = 0;
          return rpc_nfs3_commit_async(rpc, cb, &a, ctx);
        },
        [&](void* r) { std::memcpy(commit_verf, static_cast<COMMIT3res*>(r)->COMMIT3res_u.resok.verf, NFS3_WRITEVERFSIZE); },
        &retried);
    if (!c) return Outcome::GaveUp;
    if (*c != NFS3_OK) return Outcome::Failed;
    if (std::memcmp(write_verf, commit_verf, NFS3_WRITEVERFSIZE) == 0) break;
    std::lock_guard lock(mu_);
    ++stats_.rewrites;
    if (round == 19) return Outcome::GaveUp;
  }
  std::lock_guard lock(mu_);
  auto it = files_.find(name);
  if (it != files_.end()) it->second.records = f.records + 1;
  acknowledge();
  return Outcome::Done;
}

VerifyingClient::Outcome VerifyingClient::op_rename() {
  const std::string from = pick_file();
  const std::string to = "f" + std::to_string(next_id_++);
  {
    std::lock_guard lock(mu_);
    uncertain_.insert(from);
    uncertain_.insert(to);
  }
  bool retried = false;
  auto status = send(
      [&](rpc_context* rpc, rpc_cb cb, void* ctx) {
        RENAME3args a{};
        a.from.dir = dir_.view();
        a.from.name = const_cast<char*>(from.c_str());
        a.to.dir = dir_.view();
        a.to.name = const_cast<char*>(to.c_str());
        return rpc_nfs3_rename_async(rpc, cb, &a, ctx);
      },
      nullptr, &retried);
  if (!status) return Outcome::GaveUp;
  std::lock_guard lock(mu_);
  if (!(*status == NFS3_OK || (retried && *status == NFS3ERR_NOENT))) return Outcome::Failed;
  uncertain_.erase(from);
  uncertain_.erase(to);
  files_[to] = files_.at(from);
  files_.erase(from);
  gone_.insert(from);
  acknowledge();
  return Outcome::Done;
}

VerifyingClient::Outcome VerifyingClient::op_remove(std::string name) {
  if (name.empty()) name = pick_file();
  {
    std::lock_guard lock(mu_);
    uncertain_.insert(name);
  }
  bool retried = false;
  auto status = send(
      [&](rpc_context* rpc, rpc_cb cb, void* ctx) {
        REMOVE3args a{};
        a.object.dir = dir_.view();
        a.object.name = const_cast<char*>(name.c_str());
        return rpc_nfs3_remove_async(rpc, cb, &a, ctx);
      },
      nullptr, &retried);
  if (!status) return Outcome::GaveUp;
  std::lock_guard lock(mu_);
  if (!(*status == NFS3_OK || (retried && *status == NFS3ERR_NOENT))) return Outcome::Failed;
  uncertain_.erase(name);
  files_.erase(name);
  gone_.insert(name);
  acknowledge();
  return Outcome::Done;
}

VerifyingClient::Outcome VerifyingClient::op_mkdir() {
  const std::string name = "d" + std::to_string(next_id_++);
  {
    std::lock_guard lock(mu_);
    uncertain_.insert(name);
  }
  bool retried = false;
  auto status = send(
      [&](rpc_context* rpc, rpc_cb cb, void* ctx) {
        MKDIR3args a{};
        a.where.dir = dir_.view();
        a.where.name = const_cast<char*>(name.c_str());
        a.attributes.mode.set_it = 1;
        a.attributes.mode.set_mode3_u.mode = 0755;
        return rpc_nfs3_mkdir_async(rpc, cb, &a, ctx);
      },
      nullptr, &retried);
  if (!status) return Outcome::GaveUp;
  std::lock_guard lock(mu_);
  if (!(*status == NFS3_OK || (retried && *status == NFS3ERR_EXIST))) return Outcome::Failed;
  uncertain_.erase(name);
  dirs_.insert(name);
  acknowledge();
  return Outcome::Done;
}

VerifyResult VerifyingClient::verify(const bench::Target& through, int budget_ms) const {
  VerifyResult out;
  std::map<std::string, File> files;
  std::set<std::string> dirs, gone, uncertain;
  {
    std::lock_guard lock(mu_);
    files = files_;
    dirs = dirs_;
    gone = gone_;
    uncertain = uncertain_;
  }
  // The node may still be coming back: retry the whole read-back until the budget is spent.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(budget_ms);
  std::string why;
  while (true) {
    out = VerifyResult{};
    why.clear();
    auto s = bench::NfsSession::open(through, o_.call_timeout_ms, &why);
    bool answered = s != nullptr;
    std::optional<std::vector<std::string>> names;
    if (answered) {
      // The directory by name from the export's root, as another client would find it.
      bench::FileHandle dir;
      std::string lookup_name = o_.dir_name;
      auto st = call_once(
          *s,
          [&](rpc_context* rpc, rpc_cb cb, void* ctx) {
            LOOKUP3args a{};
            a.what.dir = s->root().view();
            a.what.name = const_cast<char*>(lookup_name.c_str());
            return rpc_nfs3_lookup_async(rpc, cb, &a, ctx);
          },
          [&](void* r) { dir = bench::FileHandle::from(static_cast<LOOKUP3res*>(r)->LOOKUP3res_u.resok.object); },
          &why);
      if (!st || *st != NFS3_OK) {
        answered = false;
        if (st) why = "LOOKUP " + lookup_name + ": " + nfsstat_name(*st);
      } else {
        names = list_dir(*s, dir, &why);
        answered = names.has_value();
      }
    }
    if (answered) {
      std::set<std::string> present(names->begin(), names->end());
      for (const auto& [name, f] : files) {
        ++out.checked;
        if (!present.count(name)) {
          if (uncertain.count(name)) continue;  // a REMOVE/RENAME of it got no final answer
          out.lost.push_back("file " + name + " (acknowledged created/renamed) is missing");
          continue;
        }
        // Its content: every acknowledged record, in order.
        const uint64_t want = f.records * kRecord;
        std::string data;
        bool eof = false;
        std::optional<nfsstat3> st;
        while (data.size() < want + 1 && !eof) {
          st = call_once(
              *s,
              [&](rpc_context* rpc, rpc_cb cb, void* ctx) {
                READ3args a{};
                a.file = f.fh.view();
                a.offset = data.size();
                a.count = 65536;
                return rpc_nfs3_read_async(rpc, cb, &a, ctx);
              },
              [&](void* r) {
                auto& ok = static_cast<READ3res*>(r)->READ3res_u.resok;
                data.append(ok.data.data_val, ok.data.data_len);
                eof = ok.eof || ok.data.data_len == 0;
              },
              &why);
          if (!st || *st != NFS3_OK) break;
        }
        if (!st) {
          answered = false;
          break;
        }
        if (*st == NFS3ERR_JUKEBOX) {
          // "Try again later" is no answer about the data (the volume may be moving or its
          // owner unreachable for a moment): read everything back again, within the budget.
          answered = false;
          why = "READ " + name + ": " + nfsstat_name(*st);
          break;
        }
        if (*st != NFS3_OK) {
          out.lost.push_back("file " + name + ": READ " + nfsstat_name(*st));
          continue;
        }
        out.checked += f.records;
        for (uint64_t i = 0; i < f.records; ++i) {
          if (data.size() < (i + 1) * kRecord ||
              data.compare(i * kRecord, kRecord, drill_record(o_.name, f.id, i)) != 0) {
            out.lost.push_back("file " + name + ": acknowledged record " + std::to_string(i) + " of " +
                               std::to_string(f.records) + " is " +
                               (data.size() < (i + 1) * kRecord ? "missing" : "different"));
            break;
          }
        }
      }
      if (answered) {
        for (const std::string& d : dirs) {
          ++out.checked;
          if (!present.count(d)) out.lost.push_back("directory " + d + " (acknowledged MKDIR) is missing");
        }
        for (const std::string& g : gone) {
          if (files.count(g)) continue;  // created again since
          ++out.checked;
          if (present.count(g) && !uncertain.count(g))
            out.lost.push_back(g + " is back although its REMOVE/RENAME was acknowledged");
        }
        return out;
      }
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      out.error = through.text + ": " + why;
      return out;
    }
    sleep_ms(200);
  }
}

}  // namespace nasd::drill
