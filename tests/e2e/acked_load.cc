#include "tests/e2e/acked_load.h"

namespace nasd::e2e {
namespace {
constexpr int kMaxFiles = 100000;  // a bound; the test stops the load long before
}  // namespace

void AckedLoad::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

int AckedLoad::acknowledged() const {
  std::lock_guard<std::mutex> lock(mu_);
  return acknowledged_;
}

std::string AckedLoad::stopped_by() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stopped_by_;
}

template <class Call, class Effect>
void AckedLoad::op(std::initializer_list<std::string> names, Call call, Effect effect) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    in_flight_ = names;
  }
  call();  // throws when the server does not acknowledge
  std::lock_guard<std::mutex> lock(mu_);
  effect();
  in_flight_.clear();
  ++acknowledged_;
}

void AckedLoad::run() {
  try {
    RpcChannel channel(port_, Credential{});
    Nfs3Client nfs(channel);
    issue_all(nfs);
    std::lock_guard<std::mutex> lock(mu_);
    stopped_by_ = "stopped";
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_by_ = e.what();
  }
}

void AckedLoad::issue_all(Nfs3Client& nfs) {
  auto require = [](nfsstat3 s, const std::string& what) {
    if (s != NFS3_OK) throw RpcError(what + ": " + nfsstat_name(s));
  };
  for (int i = 0; i < kMaxFiles && !stop_; ++i) {
    const std::string name = "f" + std::to_string(i);
    const std::string content = "content of " + name + std::string(i % 500, '.');
    Fh fh;
    op({name}, [&] {
      NewObjectReply c = nfs.create(dir_, name, GUARDED, sattr_mode(0644));
      require(c.status, "CREATE " + name);
      if (!c.fh) throw RpcError("CREATE " + name + " returned no handle");
      fh = *c.fh;
    }, [&] { files_[name] = ""; });

    op({name}, [&] {
      WRITE3res w = nfs.write(fh, 0, content, FILE_SYNC);
      require(w.status, "WRITE " + name);
      if (w.WRITE3res_u.resok.committed != FILE_SYNC)
        throw RpcError("WRITE " + name + " not committed FILE_SYNC");
    }, [&] { files_[name] = content; });

    if (i % 3 == 0) {
      const std::string d = "d" + std::to_string(i);
      op({d}, [&] { require(nfs.mkdir(dir_, d).status, "MKDIR " + d); },
         [&] { dirs_.insert(d); });
    }
    if (i % 4 == 1) {  // rename the previous file, unless it was removed already
      const std::string from = "f" + std::to_string(i - 1), to = "r" + std::to_string(i - 1);
      op({from, to}, [&] { require(nfs.rename(dir_, from, dir_, to).status, "RENAME " + from); },
         [&] {
           files_[to] = files_[from];
           files_.erase(from);
           gone_.insert(from);
         });
    }
    if (i % 5 == 2) {  // remove the file before last, if it still has its name
      const std::string victim = "f" + std::to_string(i - 2);
      bool exists;
      {
        std::lock_guard<std::mutex> lock(mu_);
        exists = files_.count(victim) != 0;
      }
      if (!exists) continue;
      op({victim}, [&] { require(nfs.remove(dir_, victim).status, "REMOVE " + victim); },
         [&] {
           files_.erase(victim);
           gone_.insert(victim);
         });
    }
  }
}

std::vector<std::string> AckedLoad::verify(Nfs3Client& nfs, const Fh& dir) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> problems;
  for (const auto& [name, content] : files_) {
    if (in_flight_.count(name)) continue;
    LookupReply l = nfs.lookup(dir, name);
    if (l.status != NFS3_OK) {
      problems.push_back("acknowledged file " + name + " lost: " + nfsstat_name(l.status));
      continue;
    }
    ReadReply r = nfs.read(l.fh, 0, 4096);
    if (r.status != NFS3_OK || r.data != content)
      problems.push_back("FILE_SYNC data of " + name + " not as acknowledged");
  }
  for (const std::string& name : dirs_) {
    if (in_flight_.count(name)) continue;
    LookupReply l = nfs.lookup(dir, name);
    if (l.status != NFS3_OK || l.obj_attributes.post_op_attr_u.attributes.type != NF3DIR)
      problems.push_back("acknowledged directory " + name + " lost");
  }
  for (const std::string& name : gone_) {
    if (in_flight_.count(name) || files_.count(name)) continue;
    if (nfs.lookup(dir, name).status != NFS3ERR_NOENT)
      problems.push_back("acknowledged removal or rename of " + name + " undone");
  }
  // Nothing the client was not told about, apart from the call in flight.
  uint64_t cookie = 0, verf = 0;
  for (int calls = 0; calls < 1000; ++calls) {
    ReaddirReply r = nfs.readdir(dir, cookie, verf, 8192);
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
