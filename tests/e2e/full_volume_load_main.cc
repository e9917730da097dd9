// nasd-full-load: fills a volume to NFS3ERR_NOSPC with a metadata-heavy load and proves that
// what the server acknowledged stays (the full-volume tests, full_volume_test.sh).
//   nasd-full-load fill   COMMON [--nospc N] [--full-seconds S] [--kill-pid PID]
//   nasd-full-load verify COMMON
//   nasd-full-load drain  COMMON [--share F] [--files N]
// COMMON: --nfs-port P --mount-port M --export /r/v0 --dir NAME --state FILE.
// fill: makes NAME with a few subdirectories and runs CREATE (1 MiB files now and then until the
//   volume first refuses, small ones always), FILE_SYNC WRITE (overwrite and append), SETATTR
//   (truncate, chmod), RENAME (to a new name or over another file), MKDIR and REMOVE, until N
//   calls got NFS3ERR_NOSPC (default 100), and then S seconds more of the same mix on the full
//   volume. Every answer must be NFS3_OK or NFS3ERR_NOSPC (a refused call changes nothing); the
//   acknowledged state (each file's path, size and content hash) goes to FILE at the end. With
//   --kill-pid, PID (the server) gets SIGKILL right after the last acknowledged call: the newest
//   calls are then only in the NVRAM journal, to be replayed onto the full volume.
// verify: every file of FILE is there with its size and content, and nothing else is.
// drain: removes share F of the files (REMOVE must never be refused), then creates N small
//   files, which must all be acknowledged (writes resume by themselves); rewrites FILE.
// Prints one line per phase; exit 0 on success, 1 with the reason otherwise.
#include <signal.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/e2e/mount3_client.h"
#include "tests/e2e/nfs3_client.h"
#include "tests/e2e/rpc_channel.h"

namespace nasd::e2e {
namespace {

struct Args {
  std::string mode, export_path = "/r/v0", dir, state;
  uint16_t nfs_port = 2049, mount_port = 20048;
  uint64_t nospc = 100;
  int full_seconds = 10;
  double share = 0.5;
  int files = 200;
  int kill_pid = 0;
};

uint64_t hash_of(const std::string& bytes) {  // FNV-1a
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string bytes_of(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    s[i] = char(x);
  }
  return s;
}

[[noreturn]] void die(const std::string& why) { throw std::runtime_error(why); }

class FullLoad {
 public:
  FullLoad(const Args& a, Nfs3Client& nfs, Fh root) : a_(a), nfs_(nfs), root_(std::move(root)) {}

  void fill() {
    top_ = must(nfs_.mkdir(root_, a_.dir, sattr_mode(0755)), "MKDIR " + a_.dir);
    for (int i = 0; i < 4; i++) add_subdir();
    std::mt19937 rng(uint32_t(std::hash<std::string>{}(a_.dir)));
    uint64_t first_nospc = 0;
    while (nospc_ < a_.nospc) {
      step(rng);
      if (nospc_ == 0) first_nospc = calls_ + 1;
    }
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(a_.full_seconds);
    const uint64_t nospc_at_full = nospc_, calls_at_full = calls_;
    while (std::chrono::steady_clock::now() < end) step(rng);
    if (a_.kill_pid > 0 && ::kill(a_.kill_pid, SIGKILL) != 0) die("kill -9 of the server failed");
    std::cout << "fill: the first NOSPC at call " << first_nospc << ", the " << a_.nospc
              << "th at call " << calls_at_full << "; then " << calls_ - calls_at_full
              << " calls on the full volume, "
              << nospc_ - nospc_at_full << " of them NOSPC; " << files_.size() << " files in "
              << subdirs_.size() << " directories acknowledged" << std::endl;
    save();
  }

  void verify() {
    load();
    uint64_t checked = 0;
    for (const auto& [sub, names] : listing()) {
      for (const std::string& n : names)
        if (!files_.count(sub + "/" + n)) die("verify: " + sub + "/" + n + " is there but was not acknowledged");
    }
    for (const auto& [path, f] : files_) {
      const auto slash = path.find('/');
      LookupReply l = nfs_.lookup(sub_fh(path.substr(0, slash)), path.substr(slash + 1));
      if (l.status != NFS3_OK) die("verify: " + path + ": " + nfsstat_name(l.status));
      std::string data;
      for (;;) {
        ReadReply r = nfs_.read(l.fh, data.size(), 65536);
        if (r.status != NFS3_OK) die("verify: READ " + path + ": " + nfsstat_name(r.status));
        data += r.data;
        if (r.eof || r.data.empty()) break;
      }
      if (data.size() != f.size || hash_of(data) != f.hash)
        die("verify: " + path + " has " + std::to_string(data.size()) + " bytes, acknowledged " +
            std::to_string(f.size) + (data.size() == f.size ? " (different content)" : ""));
      checked++;
    }
    std::cout << "verify: " << checked << " acknowledged files in " << subdirs_.size()
              << " directories, all there, nothing else" << std::endl;
  }

  void drain() {
    load();
    std::mt19937 rng(99);
    const size_t n = size_t(double(files_.size()) * a_.share);
    for (size_t i = 0; i < n && !files_.empty(); i++) {
      auto it = files_.begin();
      std::advance(it, rng() % files_.size());
      const std::string path = it->first;
      const auto slash = path.find('/');
      REMOVE3res r = nfs_.remove(sub_fh(path.substr(0, slash)), path.substr(slash + 1));
      if (r.status != NFS3_OK) die("drain: REMOVE " + path + ": " + nfsstat_name(r.status));
      files_.erase(path);
    }
    for (int i = 0; i < a_.files; i++) {
      const std::string sub = subdirs_[rng() % subdirs_.size()].first;
      const std::string name = "after" + std::to_string(i);
      NewObjectReply c = nfs_.create(sub_fh(sub), name, GUARDED, sattr_mode(0644));
      if (c.status != NFS3_OK) die("drain: CREATE " + sub + "/" + name + " after the deletes: " + nfsstat_name(c.status));
      const std::string data = bytes_of(1 + rng() % 16384, rng());
      WRITE3res w = nfs_.write(*c.fh, 0, data, FILE_SYNC);
      if (w.status != NFS3_OK) die("drain: WRITE " + sub + "/" + name + " after the deletes: " + nfsstat_name(w.status));
      files_[sub + "/" + name] = File{*c.fh, data.size(), hash_of(data), {}};
    }
    std::cout << "drain: removed " << n << " files, then " << a_.files
              << " new files acknowledged" << std::endl;
    save();
  }

 private:
  struct File {
    Fh fh;
    uint64_t size = 0;
    uint64_t hash = 0;
    std::string bytes;  // fill only: the content, for partial overwrites and truncates
  };

  template <class Reply>
  Fh must(const Reply& r, const std::string& what) {
    if (r.status != NFS3_OK || !r.fh) die(what + ": " + nfsstat_name(r.status));
    return *r.fh;
  }
  // OK or NOSPC; anything else ends the load.
  bool answered(nfsstat3 st, const std::string& what) {
    calls_++;
    if (st == NFS3_OK) return true;
    if (st == NFS3ERR_NOSPC) {
      nospc_++;
      return false;
    }
    die(what + ": " + nfsstat_name(st) + " (only OK or NOSPC is right)");
  }

  void add_subdir() {
    const std::string name = "s" + std::to_string(subdirs_.size());
    NewObjectReply r = nfs_.mkdir(top_, name, sattr_mode(0755));
    if (!answered(r.status, "MKDIR " + name)) return;
    subdirs_.push_back({name, *r.fh});
  }
  const Fh& sub_fh(const std::string& name) {
    for (auto& [n, fh] : subdirs_)
      if (n == name) return fh;
    die("no directory " + name);
  }
  std::string random_file(std::mt19937& rng) {
    auto it = files_.begin();
    std::advance(it, rng() % files_.size());
    return it->first;
  }

  void write(const std::string& path, uint64_t off, const std::string& data) {
    File& f = files_[path];
    WRITE3res w = nfs_.write(f.fh, off, data, FILE_SYNC);
    if (!answered(w.status, "WRITE " + path)) return;
    if (f.bytes.size() < off + data.size()) f.bytes.resize(off + data.size(), '\0');
    f.bytes.replace(off, data.size(), data);
  }

  void step(std::mt19937& rng) {
    const uint32_t r = rng() % 100;
    if (files_.empty() || r < 30) {
      const std::string sub = subdirs_[rng() % subdirs_.size()].first;
      const std::string name = "f" + std::to_string(next_++);
      NewObjectReply c = nfs_.create(sub_fh(sub), name, GUARDED, sattr_mode(0644));
      if (!answered(c.status, "CREATE " + name)) return;
      const std::string path = sub + "/" + name;
      files_[path] = File{*c.fh, 0, 0, {}};
      // Bulk until the volume first fills (so that it fills quickly), small files always.
      if (nospc_ == 0 && rng() % 2 == 0) {
        for (uint64_t off = 0; off < (1u << 20); off += 256u << 10)
          write(path, off, bytes_of(256u << 10, rng()));
      } else {
        write(path, 0, bytes_of(1 + rng() % 12000, rng()));
      }
    } else if (r < 50) {
      const std::string path = random_file(rng);
      const uint64_t size = files_[path].bytes.size();
      write(path, rng() % (size + 1), bytes_of(1 + rng() % 8192, rng()));
    } else if (r < 60) {
      const std::string path = random_file(rng);
      File& f = files_[path];
      const uint64_t size = rng() % (f.bytes.size() + 8192);
      SETATTR3res s = nfs_.setattr(f.fh, sattr_size(size));
      if (answered(s.status, "SETATTR size " + path)) f.bytes.resize(size, '\0');
    } else if (r < 65) {
      const std::string path = random_file(rng);
      (void)answered(nfs_.setattr(files_[path].fh, sattr_mode(0600 | (rng() % 0100))).status,
                     "SETATTR mode " + path);
    } else if (r < 82) {
      const std::string from = random_file(rng);
      const std::string to_sub = subdirs_[rng() % subdirs_.size()].first;
      std::string to = to_sub + "/f" + std::to_string(next_++);
      const std::string other = random_file(rng);
      if (rng() % 4 == 0 && other != from && other.rfind(to_sub + "/", 0) == 0) to = other;
      const auto fs = from.find('/'), ts = to.find('/');
      RENAME3res rn = nfs_.rename(sub_fh(from.substr(0, fs)), from.substr(fs + 1),
                                  sub_fh(to.substr(0, ts)), to.substr(ts + 1));
      if (!answered(rn.status, "RENAME " + from + " " + to)) return;
      File moved = files_[from];
      files_.erase(from);
      files_[to] = moved;
    } else if (r < 85) {
      add_subdir();
    } else if (r < 92) {
      const std::string path = random_file(rng);
      const auto slash = path.find('/');
      REMOVE3res rm = nfs_.remove(sub_fh(path.substr(0, slash)), path.substr(slash + 1));
      // Deletes go on on a full volume.
      if (rm.status != NFS3_OK) die("REMOVE " + path + ": " + nfsstat_name(rm.status));
      calls_++;
      files_.erase(path);
    } else {
      const std::string path = random_file(rng);
      ReadReply rd = nfs_.read(files_[path].fh, 0, 4096);
      if (rd.status != NFS3_OK) die("READ " + path + ": " + nfsstat_name(rd.status));
      if (rd.data != files_[path].bytes.substr(0, 4096)) die("READ " + path + ": different bytes");
    }
  }

  std::map<std::string, std::vector<std::string>> listing() {
    std::map<std::string, std::vector<std::string>> out;
    for (auto& [name, fh] : subdirs_) {
      uint64_t cookie = 0, verf = 0;
      for (;;) {
        ReaddirReply r = nfs_.readdir(fh, cookie, verf, 32768);
        if (r.status != NFS3_OK) die("READDIR " + name + ": " + nfsstat_name(r.status));
        for (const DirEntry& e : r.entries) {
          cookie = e.cookie;
          if (e.name != "." && e.name != "..") out[name].push_back(e.name);
        }
        verf = r.cookieverf;
        if (r.eof || r.entries.empty()) break;
      }
    }
    return out;
  }

  void save() {
    std::ofstream o(a_.state, std::ios::trunc);
    for (auto& [name, fh] : subdirs_) o << "dir " << name << "\n";
    for (auto& [path, f] : files_) {
      const uint64_t size = f.bytes.empty() ? f.size : f.bytes.size();
      const uint64_t hash = f.bytes.empty() && f.size > 0 ? f.hash : hash_of(f.bytes);
      o << "file " << path << " " << size << " " << hash << "\n";
    }
    if (!o.flush()) die("cannot write " + a_.state);
  }

  void load() {
    std::ifstream in(a_.state);
    if (!in) die("cannot read " + a_.state);
    top_ = nfs_.resolve(root_, a_.dir);
    std::string kind, path;
    while (in >> kind >> path) {
      if (kind == "dir") {
        subdirs_.push_back({path, nfs_.resolve(top_, path)});
      } else {
        File f;
        in >> f.size >> f.hash;
        files_[path] = f;
      }
    }
    for (auto& [path, f] : files_) {
      const auto slash = path.find('/');
      LookupReply l = nfs_.lookup(sub_fh(path.substr(0, slash)), path.substr(slash + 1));
      if (l.status == NFS3_OK) f.fh = l.fh;
    }
  }

  const Args& a_;
  Nfs3Client& nfs_;
  Fh root_, top_;
  std::vector<std::pair<std::string, Fh>> subdirs_;
  std::map<std::string, File> files_;
  uint64_t calls_ = 0, nospc_ = 0, next_ = 0;
};

Args parse(int argc, char** argv) {
  Args a;
  if (argc < 2) die("usage: nasd-full-load fill|verify|drain --nfs-port P --mount-port M --export E --dir D --state F ...");
  a.mode = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--nfs-port") a.nfs_port = uint16_t(std::stoi(v));
    else if (k == "--mount-port") a.mount_port = uint16_t(std::stoi(v));
    else if (k == "--export") a.export_path = v;
    else if (k == "--dir") a.dir = v;
    else if (k == "--state") a.state = v;
    else if (k == "--nospc") a.nospc = std::stoull(v);
    else if (k == "--full-seconds") a.full_seconds = std::stoi(v);
    else if (k == "--share") a.share = std::stod(v);
    else if (k == "--files") a.files = std::stoi(v);
    else if (k == "--kill-pid") a.kill_pid = std::stoi(v);
    else die("unknown option " + k);
  }
  if (a.dir.empty() || a.state.empty()) die("--dir and --state are required");
  return a;
}

}  // namespace
}  // namespace nasd::e2e

int main(int argc, char** argv) {
  using namespace nasd::e2e;
  try {
    Args a = parse(argc, argv);
    Fh root = mount_root(a.mount_port, a.export_path);
    RpcChannel channel(a.nfs_port, Credential{}, std::chrono::seconds(30));
    Nfs3Client nfs(channel);
    FullLoad load(a, nfs, root);
    if (a.mode == "fill") load.fill();
    else if (a.mode == "verify") load.verify();
    else if (a.mode == "drain") load.drain();
    else die("unknown mode " + a.mode);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "nasd-full-load: " << e.what() << std::endl;
    return 1;
  }
}
