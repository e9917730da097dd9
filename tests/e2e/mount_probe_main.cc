// nasd-mount-probe: what a client that mounts sees while a volume changes hands
// (mount_during_moves_test.sh). Over and over, as a new client would: a MNT of the export on a
// new connection, then FSINFO of the root it got on another, each with its own long timeout,
// until --seconds pass or the --stop-file appears. Every answer is written to --log as
// `<unix ms> <ms taken> MNT|FSINFO <status>`; a summary goes to stdout. A call that gets no
// answer (the address is moving with the volume: refused, reset) is made again on a new
// connection every 100 ms, as a client retransmits, for up to --timeout-ms; the time until it
// is answered counts as the call's.
//   nasd-mount-probe --host H --mount-port P --nfs-port P --export /r/v0 --log FILE
//                    [--seconds 120] [--stop-file F] [--pause-ms 50] [--timeout-ms 30000]
// Exit 0 when every MNT answered MNT3_OK and every FSINFO NFS3_OK or NFS3ERR_JUKEBOX (the
// only error a volume that is only moving may give); 1 otherwise; 2 for a usage error.
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <thread>

#include "tests/e2e/mount3_client.h"
#include "tests/e2e/nfs3_client.h"
#include "tests/e2e/rpc_channel.h"

namespace {

using namespace nasd::e2e;
using Clock = std::chrono::steady_clock;

int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool exists(const std::string& path) {
  struct stat st;
  return !path.empty() && ::stat(path.c_str(), &st) == 0;
}

struct Tally {
  std::map<std::string, uint64_t> answers;  // status name -> count
  int64_t longest_ms = 0;
  uint64_t bad = 0;
  void add(const std::string& status, int64_t ms, bool good) {
    ++answers[status];
    longest_ms = std::max(longest_ms, ms);
    if (!good) ++bad;
  }
  std::string text() const {
    std::string out;
    for (const auto& [name, n] : answers) out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + name;
    return out + "; longest " + std::to_string(longest_ms) + " ms";
  }
};

std::string mount_status_name(mountstat3 s) {
  switch (s) {
    case MNT3_OK: return "MNT3_OK";
    case MNT3ERR_PERM: return "MNT3ERR_PERM";
    case MNT3ERR_NOENT: return "MNT3ERR_NOENT";
    case MNT3ERR_IO: return "MNT3ERR_IO";
    case MNT3ERR_ACCES: return "MNT3ERR_ACCES";
    case MNT3ERR_NOTDIR: return "MNT3ERR_NOTDIR";
    case MNT3ERR_INVAL: return "MNT3ERR_INVAL";
    case MNT3ERR_NAMETOOLONG: return "MNT3ERR_NAMETOOLONG";
    case MNT3ERR_NOTSUPP: return "MNT3ERR_NOTSUPP";
    case MNT3ERR_SERVERFAULT: return "MNT3ERR_SERVERFAULT";
  }
  return "MNT3ERR_" + std::to_string(static_cast<int>(s));
}

// Makes `call(time left)` until it is answered (returns the answer's name) or `budget` passes
// ("NO_ANSWER(last error)").
template <class Call>
std::string answered(std::chrono::milliseconds budget, Call call) {
  const Clock::time_point deadline = Clock::now() + budget;
  std::string last;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return "NO_ANSWER(" + last + ")";
    try {
      return call(left);
    } catch (const std::exception& e) {
      last = e.what();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string host = "127.0.0.1", export_path, log_path, stop_file;
  int mount_port = 0, nfs_port = 0, seconds = 120, pause_ms = 50, timeout_ms = 30000;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    try {
      if (a == "--host") host = v;
      else if (a == "--mount-port") mount_port = std::stoi(v);
      else if (a == "--nfs-port") nfs_port = std::stoi(v);
      else if (a == "--export") export_path = v;
      else if (a == "--log") log_path = v;
      else if (a == "--stop-file") stop_file = v;
      else if (a == "--seconds") seconds = std::stoi(v);
      else if (a == "--pause-ms") pause_ms = std::stoi(v);
      else if (a == "--timeout-ms") timeout_ms = std::stoi(v);
      else {
        std::cerr << "nasd-mount-probe: unknown option " << a << "\n";
        return 2;
      }
    } catch (const std::exception&) {
      std::cerr << "nasd-mount-probe: " << a << " takes a number\n";
      return 2;
    }
  }
  if (argc % 2 == 0 || export_path.empty() || log_path.empty() || mount_port <= 0 || nfs_port <= 0) {
    std::cerr << "usage: nasd-mount-probe --host H --mount-port P --nfs-port P --export PATH --log FILE "
                 "[--seconds S] [--stop-file F] [--pause-ms MS] [--timeout-ms MS]\n";
    return 2;
  }
  std::ofstream log(log_path);
  const auto timeout = std::chrono::milliseconds(timeout_ms);
  const Clock::time_point end = Clock::now() + std::chrono::seconds(seconds);
  Tally mnt, fsinfo;
  while (Clock::now() < end && !exists(stop_file)) {
    const int64_t at = unix_ms();
    const Clock::time_point start = Clock::now();
    auto took = [&start] {
      return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
    };
    Fh root;
    const std::string status = answered(timeout, [&](std::chrono::milliseconds left) {
      RpcChannel channel(host, static_cast<uint16_t>(mount_port), Credential{}, left);
      MountReply r = Mount3Client(channel).mnt(export_path);
      root = r.root;
      return mount_status_name(r.status);
    });
    const int64_t mnt_ms = took();
    log << at << " " << mnt_ms << " MNT " << status << "\n" << std::flush;
    mnt.add(status.substr(0, status.find('(')), mnt_ms, status == "MNT3_OK");
    if (status == "MNT3_OK") {
      const int64_t fsinfo_at = unix_ms();
      const Clock::time_point fsinfo_start = Clock::now();
      const std::string info = answered(timeout, [&](std::chrono::milliseconds left) {
        RpcChannel channel(host, static_cast<uint16_t>(nfs_port), Credential{}, left);
        return std::string(nfsstat_name(Nfs3Client(channel).fsinfo(root).status));
      });
      const int64_t ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - fsinfo_start).count();
      log << fsinfo_at << " " << ms << " FSINFO " << info << "\n" << std::flush;
      fsinfo.add(info.substr(0, info.find('(')), ms, info == "NFS3_OK" || info == "NFS3ERR_JUKEBOX");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
  }
  std::cout << "MNT " << export_path << " via " << host << ":" << mount_port << ": " << mnt.text() << "\n";
  std::cout << "FSINFO: " << fsinfo.text() << "\n";
  return mnt.bad + fsinfo.bad == 0 ? 0 : 1;
}
