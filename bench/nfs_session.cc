#include "bench/nfs_session.h"

#include <nfsc/libnfs-raw-mount.h>

#include "bench/rpc_batch.h"
#include "bench/xid_streams.h"

namespace nasd::bench {

namespace {

rpc_context* new_rpc(const Target& t) {
  rpc_context* rpc = rpc_init_context();
  // Never libnfs's own xid start: concurrent sessions may get the same one (xid_streams.h).
  if (rpc) use_own_xid_stream(rpc);
  if (rpc && t.uid >= 0) rpc_set_uid(rpc, t.uid);
  if (rpc && t.gid >= 0) rpc_set_gid(rpc, t.gid);
  return rpc;
}

// Connect `rpc` to program/version, at `port` when given and through the portmapper otherwise.
bool connect(rpc_context* rpc, const Target& t, int port, int program, int version, int timeout_ms,
             std::string* error) {
  auto issue = [&](size_t, rpc_cb cb, void* ctx) {
    return port ? rpc_connect_port_async(rpc, t.server.c_str(), port, program, version, cb, ctx)
                : rpc_connect_program_async(rpc, t.server.c_str(), program, version, cb, ctx);
  };
  return run_batch(rpc, 1, 1, issue, [](size_t, void*) { return std::string(); }, timeout_ms, error);
}

}  // namespace

std::unique_ptr<NfsSession> NfsSession::open(const Target& target, int timeout_ms, std::string* error) {
  std::unique_ptr<NfsSession> s(new NfsSession(target, timeout_ms));
  std::string why;
  if (!s->mount(&why)) {
    *error = target.text + ": MOUNT failed: " + why;
    return nullptr;
  }
  if (!s->connect_nfs(&why)) {
    *error = target.text + ": NFS connect failed: " + why;
    return nullptr;
  }
  if (!s->query_facts(&why)) {
    *error = target.text + ": FSINFO/FSSTAT failed: " + why;
    return nullptr;
  }
  return s;
}

NfsSession::~NfsSession() {
  if (rpc_) rpc_destroy_context(rpc_);
}

bool NfsSession::mount(std::string* error) {
  rpc_context* m = new_rpc(target_);
  if (!m) {
    *error = "out of memory";
    return false;
  }
  bool ok = connect(m, target_, target_.mount_port, MOUNT_PROGRAM, MOUNT_V3, timeout_ms_, error);
  if (ok) {
    std::string path = target_.export_path;
    auto issue = [&](size_t, rpc_cb cb, void* ctx) { return rpc_mount3_mnt_async(m, cb, path.data(), ctx); };
    auto reply = [&](size_t, void* data) {
      auto* res = static_cast<mountres3*>(data);
      if (res->fhs_status != MNT3_OK) return "export refused: status " + std::to_string(res->fhs_status);
      const fhandle3& fh = res->mountres3_u.mountinfo.fhandle;
      root_.bytes.assign(fh.fhandle3_val, fh.fhandle3_len);
      return std::string();
    };
    ok = run_batch(m, 1, 1, issue, reply, timeout_ms_, error);
  }
  rpc_destroy_context(m);
  return ok;
}

bool NfsSession::connect_nfs(std::string* error) {
  rpc_ = new_rpc(target_);
  if (!rpc_) {
    *error = "out of memory";
    return false;
  }
  return connect(rpc_, target_, target_.nfs_port, NFS_PROGRAM, NFS_V3, timeout_ms_, error);
}

bool NfsSession::query_facts(std::string* error) {
  nfs_fh3 root = root_.view();
  auto issue = [&](size_t i, rpc_cb cb, void* ctx) {
    if (i == 0) {
      FSINFO3args a{root};
      return rpc_nfs3_fsinfo_async(rpc_, cb, &a, ctx);
    }
    FSSTAT3args a{root};
    return rpc_nfs3_fsstat_async(rpc_, cb, &a, ctx);
  };
  auto reply = [&](size_t i, void* data) {
    if (i == 0) {
      auto* res = static_cast<FSINFO3res*>(data);
      if (res->status != NFS3_OK) return std::string("FSINFO: ") + nfsstat3_to_str(res->status);
      const FSINFO3resok& ok = res->FSINFO3res_u.resok;
      facts_.rtmax = ok.rtmax;
      facts_.wtmax = ok.wtmax;
      facts_.dtpref = ok.dtpref;
      facts_.maxfilesize = ok.maxfilesize;
      return std::string();
    }
    auto* res = static_cast<FSSTAT3res*>(data);
    if (res->status != NFS3_OK) return std::string("FSSTAT: ") + nfsstat3_to_str(res->status);
    const FSSTAT3resok& ok = res->FSSTAT3res_u.resok;
    facts_.total_bytes = ok.tbytes;
    facts_.free_bytes = ok.fbytes;
    facts_.total_files = ok.tfiles;
    facts_.free_files = ok.ffiles;
    return std::string();
  };
  return run_batch(rpc_, 2, 2, issue, reply, timeout_ms_, error);
}

}  // namespace nasd::bench
