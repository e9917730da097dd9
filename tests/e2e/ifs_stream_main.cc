// nasd-ifs-stream: a verifying streaming writer for the scale-out volume tests. It writes
// files of --file-mib MiB in 64 KiB FILE_SYNC writes (content derived from file and offset, so
// nothing needs remembering but how far each file was acknowledged) through one node for
// --seconds, riding out a node's death: a call that gets no answer or NFS3ERR_JUKEBOX is sent
// again on a fresh connection until --retry-budget-s runs out (writes are idempotent). It
// records, per file, the bytes acknowledged in --report. With --verify it instead reads every
// file of a report back through --host and checks every acknowledged byte.
//   nasd-ifs-stream --host H --export /r/ifs --dir D --seconds S [--file-mib M | --file-kib K]
//                   [--max-mib T] --report F
// (--file-kib: files of K KiB, a multiple of 64, e.g. 128 for files the volume mirrors;
// --max-mib: stop after T MiB acknowledged, for a fixed amount of work such as CPU per MiB.)
//   nasd-ifs-stream --verify --host H --export /r/ifs --dir D --report F
// Exit 0: everything acknowledged reads back (verify), or the load ran and had acknowledgements.
#include <chrono>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <thread>

#include "tests/e2e/nfs3_client.h"
#include "tests/e2e/retrying_session.h"

namespace nasd::e2e {
namespace {

constexpr uint32_t kChunk = 64 * 1024;

struct Args {
  std::string host = "127.0.0.1", export_path = "/r/ifs", dir, report;
  uint16_t nfs_port = 2049, mount_port = 20048;
  int seconds = 10, file_mib = 4, file_kib = 0, max_mib = 0, retry_budget_s = 60;
  bool verify = false;
};

std::string chunk_of(const std::string& file, uint64_t offset, uint32_t len) {
  std::mt19937_64 rng(std::hash<std::string>{}(file) ^ (offset * 0x9e3779b97f4a7c15ull));
  std::string out(len, '\0');
  for (uint32_t i = 0; i < len; i += 8) {
    uint64_t v = rng();
    for (uint32_t k = 0; k < 8 && i + k < len; k++) out[i + k] = char(v >> (8 * k));
  }
  return out;
}

RetryingSession session_of(const Args& a) {
  return RetryingSession({a.host, a.nfs_port, a.mount_port, a.export_path,
                          std::chrono::seconds(a.retry_budget_s), std::chrono::seconds(5)});
}

int write_load(const Args& a) {
  RetryingSession s = session_of(a);
  Fh dir = s.make_dir(a.dir);
  std::map<std::string, uint64_t> acked;
  const uint64_t file_bytes = a.file_kib > 0 ? uint64_t(a.file_kib) << 10 : uint64_t(a.file_mib) << 20;
  const uint64_t max_bytes = a.max_mib > 0 ? uint64_t(a.max_mib) << 20 : UINT64_MAX;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(a.seconds);
  uint64_t total = 0;
  auto save = [&] {
    std::ofstream out(a.report + ".tmp");
    for (const auto& [f, n] : acked) out << f << " " << n << "\n";
    out.close();
    std::rename((a.report + ".tmp").c_str(), a.report.c_str());
  };
  try {
    for (int i = 0; std::chrono::steady_clock::now() < end && total < max_bytes; i++) {
      const std::string name = "s" + std::to_string(i);
      Fh fh = s.retry("CREATE " + name, [&](Nfs3Client& nfs, bool) {
        NewObjectReply r = nfs.create(dir, name, UNCHECKED, sattr_mode(0644));
        if (r.status != NFS3_OK && r.status != NFS3ERR_JUKEBOX) throw std::runtime_error("CREATE " + name + ": " + nfsstat_name(r.status));
        return std::pair{r.fh ? *r.fh : Fh{}, r.status};
      });
      acked[name] = 0;
      for (uint64_t off = 0;
           off < file_bytes && total < max_bytes && std::chrono::steady_clock::now() < end;
           off += kChunk) {
        const std::string data = chunk_of(name, off, kChunk);
        s.retry("WRITE " + name, [&](Nfs3Client& nfs, bool) {
          WRITE3res w = nfs.write(fh, off, data, FILE_SYNC);
          if (w.status == NFS3_OK && w.WRITE3res_u.resok.committed != FILE_SYNC) throw std::runtime_error("WRITE not FILE_SYNC");
          if (w.status == NFS3_OK && w.WRITE3res_u.resok.count != kChunk) throw std::runtime_error("short WRITE");
          if (w.status != NFS3_OK && w.status != NFS3ERR_JUKEBOX) throw std::runtime_error("WRITE " + name + ": " + nfsstat_name(w.status));
          return std::pair{0, w.status};
        });
        acked[name] = off + kChunk;
        total += kChunk;
        if ((total / kChunk) % 16 == 0) save();
      }
    }
  } catch (const std::exception& e) {
    save();
    std::cout << "ifs-stream " << a.dir << ": FAILED after " << (total >> 20) << " MiB: " << e.what() << "\n";
    return 1;
  }
  save();
  std::cout << "ifs-stream " << a.dir << ": acknowledged " << total << " bytes in " << acked.size()
            << " files, " << s.retried << " calls retried\n";
  return total > 0 ? 0 : 1;
}

int verify(const Args& a) {
  RetryingSession s = session_of(a);
  std::ifstream in(a.report);
  std::string name;
  uint64_t n = 0, checked = 0;
  int bad = 0;
  Fh dir = s.retry("LOOKUP", [&](Nfs3Client& nfs, bool) {
    LookupReply l = nfs.lookup(s.root(), a.dir);
    return std::pair{l.fh, l.status};
  });
  while (in >> name >> n) {
    Fh fh = s.retry("LOOKUP " + name, [&](Nfs3Client& nfs, bool) {
      LookupReply l = nfs.lookup(dir, name);
      return std::pair{l.fh, l.status};
    });
    for (uint64_t off = 0; off < n; off += kChunk) {
      ReadReply r = s.retry("READ " + name, [&](Nfs3Client& nfs, bool) {
        ReadReply rr = nfs.read(fh, off, kChunk);
        return std::pair{rr, rr.status};
      });
      if (r.status != NFS3_OK || r.data != chunk_of(name, off, kChunk)) {
        if (bad++ < 10) std::cout << "  " << name << " @" << off << ": acknowledged bytes not read back (" << nfsstat_name(r.status) << ", " << r.data.size() << " bytes)\n";
      }
      checked += kChunk;
    }
  }
  std::cout << "ifs-stream verify " << a.dir << " via " << a.host << ": " << checked << " acknowledged bytes, "
            << bad << " chunks wrong: " << (bad ? "FAILED" : "OK") << "\n";
  return bad == 0 ? 0 : 1;
}

}  // namespace
}  // namespace nasd::e2e

int main(int argc, char** argv) {
  nasd::e2e::Args a;
  for (int i = 1; i < argc; i++) {
    std::string k = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) { std::cerr << k << " needs a value\n"; std::exit(2); }
      return argv[++i];
    };
    if (k == "--host") a.host = next();
    else if (k == "--export") a.export_path = next();
    else if (k == "--dir") a.dir = next();
    else if (k == "--report") a.report = next();
    else if (k == "--seconds") a.seconds = std::stoi(next());
    else if (k == "--file-mib") a.file_mib = std::stoi(next());
    else if (k == "--file-kib") a.file_kib = std::stoi(next());
    else if (k == "--max-mib") a.max_mib = std::stoi(next());
    else if (k == "--retry-budget-s") a.retry_budget_s = std::stoi(next());
    else if (k == "--verify") a.verify = true;
    else { std::cerr << "unknown argument " << k << "\n"; return 2; }
  }
  if (a.dir.empty() || a.report.empty()) { std::cerr << "--dir and --report are required\n"; return 2; }
  if (a.file_mib < 1 || a.file_mib > 65536 || a.file_kib < 0 || a.file_kib > (1 << 26) ||
      a.file_kib % 64 != 0 || a.max_mib < 0 || a.seconds < 1) {
    std::cerr << "--file-mib 1..65536, --file-kib a multiple of 64, --max-mib >= 0, --seconds >= 1\n";
    return 2;
  }
  try {
    return a.verify ? nasd::e2e::verify(a) : nasd::e2e::write_load(a);
  } catch (const std::exception& e) {
    std::cout << "ifs-stream: " << e.what() << "\n";
    return 1;
  }
}
