#include "bench/drill/nfs_calls.h"

#include <vector>

#include "bench/rpc_batch.h"

namespace nasd::drill {

std::optional<nfsstat3> call_once(bench::NfsSession& session, const Issue& issue, const OnOk& on_ok,
                                  std::string* error) {
  nfsstat3 status = NFS3ERR_SERVERFAULT;
  auto issue_one = [&](size_t, rpc_cb cb, void* ctx) { return issue(session.rpc(), cb, ctx); };
  auto reply = [&](size_t, void* data) {
    status = *static_cast<nfsstat3*>(data);
    if (status == NFS3_OK && on_ok) on_ok(data);
    return std::string();
  };
  if (!bench::run_batch(session.rpc(), 1, 1, issue_one, reply, session.timeout_ms(), error))
    return std::nullopt;
  return status;
}

std::optional<std::vector<std::string>> list_dir(bench::NfsSession& session, const bench::FileHandle& dir,
                                                 std::string* error) {
  std::vector<std::string> names;
  cookie3 cookie = 0;
  char verf[NFS3_COOKIEVERFSIZE] = {};
  bool eof = false;
  // Bounded: a directory of a drill client holds at most a few thousand names.
  for (int round = 0; !eof && round < 10000; ++round) {
    auto status = call_once(
        session,
        [&](rpc_context* rpc, rpc_cb cb, void* ctx) {
          READDIR3args a{};
          a.dir = dir.view();
          a.cookie = cookie;
          std::copy(verf, verf + NFS3_COOKIEVERFSIZE, a.cookieverf);
          a.count = 32768;
          return rpc_nfs3_readdir_async(rpc, cb, &a, ctx);
        },
        [&](void* result) {
          auto& ok = static_cast<READDIR3res*>(result)->READDIR3res_u.resok;
          std::copy(ok.cookieverf, ok.cookieverf + NFS3_COOKIEVERFSIZE, verf);
          for (entry3* e = ok.reply.entries; e; e = e->nextentry) {
            cookie = e->cookie;
            std::string name = e->name;
            if (name != "." && name != "..") names.push_back(name);
          }
          eof = ok.reply.eof;
        },
        error);
    if (!status) return std::nullopt;
    if (*status != NFS3_OK) {
      *error = "READDIR: " + nfsstat_name(*status);
      return std::nullopt;
    }
  }
  return names;
}

std::string nfsstat_name(nfsstat3 status) {
  switch (status) {
    case NFS3_OK: return "NFS3_OK";
    case NFS3ERR_NOENT: return "NFS3ERR_NOENT";
    case NFS3ERR_IO: return "NFS3ERR_IO";
    case NFS3ERR_ACCES: return "NFS3ERR_ACCES";
    case NFS3ERR_EXIST: return "NFS3ERR_EXIST";
    case NFS3ERR_NOTDIR: return "NFS3ERR_NOTDIR";
    case NFS3ERR_NOSPC: return "NFS3ERR_NOSPC";
    case NFS3ERR_ROFS: return "NFS3ERR_ROFS";
    case NFS3ERR_STALE: return "NFS3ERR_STALE";
    case NFS3ERR_BADHANDLE: return "NFS3ERR_BADHANDLE";
    case NFS3ERR_SERVERFAULT: return "NFS3ERR_SERVERFAULT";
    case NFS3ERR_JUKEBOX: return "NFS3ERR_JUKEBOX";
    default: return "nfsstat3 " + std::to_string(static_cast<int>(status));
  }
}

}  // namespace nasd::drill
