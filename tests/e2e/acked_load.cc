#include "tests/e2e/acked_load.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <thread>

namespace nasd::e2e {
namespace {
constexpr int kMaxFiles = 1000000;  // a bound; the test stops the load long before
constexpr auto kFirstBackoff = std::chrono::milliseconds(50);
constexpr auto kMaxBackoff = std::chrono::milliseconds(1000);

// An answer that ends the load in either mode (a wrong status, a broken promise).
class LoadFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
}  // namespace

AckedLoad::AckedLoad(uint16_t nfs_port, Fh dir, AckedLoadOptions options)
    : port_(nfs_port), dir_(std::move(dir)), options_(std::move(options)) {}

AckedLoad::~AckedLoad() { stop(); }

void AckedLoad::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

int AckedLoad::acknowledged() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_.acknowledged;
}

AckedLoadStats AckedLoad::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

std::string AckedLoad::stopped_by() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stopped_by_;
}

Nfs3Client& AckedLoad::client() {
  if (!nfs_) {
    channel_ = std::make_unique<RpcChannel>(options_.host, port_, Credential{},
                                            options_.call_timeout);
    nfs_ = std::make_unique<Nfs3Client>(*channel_);
  }
  return *nfs_;
}

void AckedLoad::drop_connection() {
  nfs_.reset();
  channel_.reset();
}

void AckedLoad::acknowledge(bool retried) {
  in_flight_.clear();
  ++stats_.acknowledged;
  stats_.acknowledged_since_retry = retried ? 0 : stats_.acknowledged_since_retry + 1;
  auto now = std::chrono::steady_clock::now();
  if (last_ack_) {
    auto gap = std::chrono::duration_cast<std::chrono::milliseconds>(now - *last_ack_).count();
    stats_.longest_stall_ms = std::max<int64_t>(stats_.longest_stall_ms, gap);
  }
  last_ack_ = now;
}

template <class Call, class Effect>
void AckedLoad::op(const std::string& what, std::initializer_list<std::string> names,
                   nfsstat3 done_status, Call call, Effect effect) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    in_flight_ = names;
  }
  bool retried = false, as_done = false;
  auto backoff = std::chrono::milliseconds(kFirstBackoff);
  auto give_up = std::chrono::steady_clock::now() + options_.retry_budget;
  for (;;) {
    std::string failure;
    bool reconnect = false;
    try {
      nfsstat3 s = call(client(), retried);
      if (s == NFS3_OK) break;
      if (retried && done_status != NFS3_OK && s == done_status) {
        as_done = true;
        break;
      }
      if (s != NFS3ERR_JUKEBOX || !options_.retry)
        throw LoadFailure(what + ": " + nfsstat_name(s) + (retried ? " (retried)" : ""));
      failure = "NFS3ERR_JUKEBOX";  // the server is there but not ready: same connection
      std::lock_guard<std::mutex> lock(mu_);
      ++stats_.jukebox;
    } catch (const RpcError& e) {
      if (!options_.retry) throw;
      failure = e.what();
      reconnect = true;
    }
    if (std::chrono::steady_clock::now() + backoff > give_up)
      throw LoadFailure(what + ": no answer within " +
                        std::to_string(options_.retry_budget.count()) + " ms; last: " + failure);
    if (reconnect) drop_connection();
    std::this_thread::sleep_for(backoff);
    backoff = std::min<std::chrono::milliseconds>(backoff * 2, kMaxBackoff);
    std::lock_guard<std::mutex> lock(mu_);
    if (!retried) ++stats_.retried;
    if (reconnect) ++stats_.reconnects;
    retried = true;
  }
  std::lock_guard<std::mutex> lock(mu_);
  effect();
  if (as_done) ++stats_.retried_as_done;
  acknowledge(retried);
}

void AckedLoad::run() {
  try {
    issue_all();
    std::lock_guard<std::mutex> lock(mu_);
    stopped_by_ = "stopped";
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_by_ = e.what();
  }
  drop_connection();
}

void AckedLoad::issue_all() {
  for (int i = 0; i < kMaxFiles && !stop_; ++i) {
    const std::string name = "f" + std::to_string(i);
    const std::string content = "content of " + name + std::string(i % 500, '.');
    Fh fh;
    op("CREATE " + name, {name}, NFS3ERR_EXIST, [&](Nfs3Client& nfs, bool retried) {
      NewObjectReply c = nfs.create(dir_, name, GUARDED, sattr_mode(0644));
      if (c.status == NFS3ERR_EXIST && retried) {
        // The first attempt made it; its handle is what the WRITE needs.
        LookupReply l = nfs.lookup(dir_, name);
        if (l.status != NFS3_OK) return l.status;
        fh = l.fh;
        return NFS3ERR_EXIST;
      }
      if (c.status == NFS3_OK && !c.fh) throw LoadFailure("CREATE " + name + " returned no handle");
      if (c.fh) fh = *c.fh;
      return c.status;
    }, [&] { files_[name] = ""; });

    op("WRITE " + name, {name}, NFS3_OK, [&](Nfs3Client& nfs, bool) {
      WRITE3res w = nfs.write(fh, 0, content, FILE_SYNC);
      if (w.status == NFS3_OK && w.WRITE3res_u.resok.committed != FILE_SYNC)
        throw LoadFailure("WRITE " + name + " not committed FILE_SYNC");
      return w.status;
    }, [&] { files_[name] = content; });

    if (i % 3 == 0) {
      const std::string d = "d" + std::to_string(i);
      op("MKDIR " + d, {d}, NFS3ERR_EXIST,
         [&](Nfs3Client& nfs, bool) { return nfs.mkdir(dir_, d).status; },
         [&] { dirs_.insert(d); });
    }
    if (i % 4 == 1) {  // rename the previous file, unless it was removed already
      const std::string from = "f" + std::to_string(i - 1), to = "r" + std::to_string(i - 1);
      op("RENAME " + from, {from, to}, NFS3ERR_NOENT,
         [&](Nfs3Client& nfs, bool) { return nfs.rename(dir_, from, dir_, to).status; },
         [&] {
           files_[to] = files_[from];
           files_.erase(from);
           gone_.insert(from);
         });
    }
    if (i >= options_.live_steps) retire(i - options_.live_steps);
    if (i % 5 == 2) {  // remove the file before last, if it still has its name
      const std::string victim = "f" + std::to_string(i - 2);
      bool exists;
      {
        std::lock_guard<std::mutex> lock(mu_);
        exists = files_.count(victim) != 0;
      }
      if (!exists) continue;
      op("REMOVE " + victim, {victim}, NFS3ERR_NOENT,
         [&](Nfs3Client& nfs, bool) { return nfs.remove(dir_, victim).status; },
         [&] {
           files_.erase(victim);
           gone_.insert(victim);
         });
    }
  }
}

void AckedLoad::retire(int step) {
  std::string file, dir;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const std::string& name : {"f" + std::to_string(step), "r" + std::to_string(step)})
      if (files_.count(name)) file = name;
    if (dirs_.count("d" + std::to_string(step))) dir = "d" + std::to_string(step);
  }
  if (!file.empty())
    op("REMOVE " + file, {file}, NFS3ERR_NOENT,
       [&](Nfs3Client& nfs, bool) { return nfs.remove(dir_, file).status; },
       [&] {
         files_.erase(file);
         gone_.insert(file);
       });
  if (!dir.empty())
    op("RMDIR " + dir, {dir}, NFS3ERR_NOENT,
       [&](Nfs3Client& nfs, bool) { return nfs.rmdir(dir_, dir).status; },
       [&] {
         dirs_.erase(dir);
         gone_.insert(dir);
       });
}

std::vector<std::string> AckedLoad::verify(Nfs3Client& nfs, const Fh& dir) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> problems;
  // A server may answer JUKEBOX (a volume still opening after a move or failback): asked
  // again, boundedly (30 s: a failback under load), as a client would; any other status is the
  // answer. Every read-back below goes through it, so a volume in the middle of a hand-over
  // is never reported as lost data.
  const auto settled = [](auto call) {
    auto reply = call();
    for (int i = 0; i < 300 && reply.status == NFS3ERR_JUKEBOX; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      reply = call();
    }
    return reply;
  };
  for (const auto& [name, content] : files_) {
    if (in_flight_.count(name)) continue;
    LookupReply l = settled([&] { return nfs.lookup(dir, name); });
    if (l.status != NFS3_OK) {
      problems.push_back("acknowledged file " + name + " lost: " + nfsstat_name(l.status));
      continue;
    }
    ReadReply r = settled([&] { return nfs.read(l.fh, 0, 4096); });
    if (r.status != NFS3_OK)
      problems.push_back("FILE_SYNC data of " + name + " unreadable: " + nfsstat_name(r.status));
    else if (r.data != content)
      problems.push_back("FILE_SYNC data of " + name + " not as acknowledged");
  }
  for (const std::string& name : dirs_) {
    if (in_flight_.count(name)) continue;
    LookupReply l = settled([&] { return nfs.lookup(dir, name); });
    if (l.status != NFS3_OK) {
      problems.push_back("acknowledged directory " + name + " lost: " + nfsstat_name(l.status));
      continue;
    }
    // The object's attributes are optional in a LOOKUP reply (RFC 1813): without them, ask.
    ftype3 type = l.obj_attributes.attributes_follow ? l.obj_attributes.post_op_attr_u.attributes.type
                                                      : ftype3{};
    if (!l.obj_attributes.attributes_follow) {
      GETATTR3res g = settled([&] { return nfs.getattr(l.fh); });
      if (g.status == NFS3_OK) type = g.GETATTR3res_u.resok.obj_attributes.type;
    }
    if (type != NF3DIR)
      problems.push_back("acknowledged directory " + name + " is not a directory" +
                         (l.obj_attributes.attributes_follow ? "" : " (LOOKUP gave no attributes)"));
  }
  for (const std::string& name : gone_) {
    if (in_flight_.count(name) || files_.count(name)) continue;
    const nfsstat3 s = settled([&] { return nfs.lookup(dir, name); }).status;
    if (s != NFS3ERR_NOENT)
      problems.push_back("acknowledged removal or rename of " + name + " undone: LOOKUP answered " +
                         nfsstat_name(s));
  }
  // Nothing the client was not told about, apart from the call in flight.
  uint64_t cookie = 0, verf = 0;
  for (int calls = 0; calls < 1000; ++calls) {
    ReaddirReply r = settled([&] { return nfs.readdir(dir, cookie, verf, 8192); });
    if (r.status != NFS3_OK) {
      problems.push_back(std::string("READDIR failed: ") + nfsstat_name(r.status));
      break;
    }
    verf = r.cookieverf;
    for (const DirEntry& e : r.entries) {
      cookie = e.cookie;
      if (e.name == "." || e.name == ".." || in_flight_.count(e.name)) continue;
      if (!files_.count(e.name) && !dirs_.count(e.name))
        problems.push_back("entry " + e.name + " appeared that was never acknowledged");
    }
    if (r.eof) break;
  }
  return problems;
}

}  // namespace nasd::e2e
