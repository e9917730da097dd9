#include "tests/e2e/mount3_client.h"

namespace nasd::e2e {

void Mount3Client::null() {
  ch_.call("MOUNT NULL",
           [](rpc_context* rpc, rpc_cb cb, void* p) { return rpc_mount3_null_async(rpc, cb, p); },
           nullptr);
}

MountReply Mount3Client::mnt(const std::string& path) {
  MountReply out;
  ch_.call(
      "MNT",
      [&](rpc_context* rpc, rpc_cb cb, void* p) {
        return rpc_mount3_mnt_async(rpc, cb, const_cast<char*>(path.c_str()), p);
      },
      [&](void* data) {
        const auto& r = *static_cast<mountres3*>(data);
        out.status = r.fhs_status;
        if (r.fhs_status != MNT3_OK) return;
        const auto& ok = r.mountres3_u.mountinfo;
        out.root.bytes.assign(ok.fhandle.fhandle3_val, ok.fhandle.fhandle3_len);
        out.auth_flavors.assign(ok.auth_flavors.auth_flavors_val,
                                ok.auth_flavors.auth_flavors_val + ok.auth_flavors.auth_flavors_len);
      });
  return out;
}

std::vector<MountEntry> Mount3Client::dump() {
  std::vector<MountEntry> out;
  ch_.call("DUMP",
           [](rpc_context* rpc, rpc_cb cb, void* p) { return rpc_mount3_dump_async(rpc, cb, p); },
           [&](void* data) {
             for (mountbody* m = data ? *static_cast<mountlist*>(data) : nullptr; m; m = m->ml_next)
               out.push_back({m->ml_hostname ? m->ml_hostname : "",
                              m->ml_directory ? m->ml_directory : ""});
           });
  return out;
}

void Mount3Client::umnt(const std::string& path) {
  ch_.call(
      "UMNT",
      [&](rpc_context* rpc, rpc_cb cb, void* p) {
        return rpc_mount3_umnt_async(rpc, cb, const_cast<char*>(path.c_str()), p);
      },
      nullptr);
}

void Mount3Client::umntall() {
  ch_.call(
      "UMNTALL",
      [](rpc_context* rpc, rpc_cb cb, void* p) { return rpc_mount3_umntall_async(rpc, cb, p); },
      nullptr);
}

std::vector<ExportEntry> Mount3Client::exports() {
  std::vector<ExportEntry> out;
  ch_.call(
      "EXPORT",
      [](rpc_context* rpc, rpc_cb cb, void* p) { return rpc_mount3_export_async(rpc, cb, p); },
      [&](void* data) {
        for (exportnode* e = data ? *static_cast<::exports*>(data) : nullptr; e; e = e->ex_next) {
          ExportEntry entry{e->ex_dir ? e->ex_dir : "", {}};
          for (groupnode* g = e->ex_groups; g; g = g->gr_next)
            entry.groups.push_back(g->gr_name ? g->gr_name : "");
          out.push_back(std::move(entry));
        }
      });
  return out;
}

Fh mount_root(uint16_t mount_port, const std::string& path, const Credential& cred) {
  return mount_root("127.0.0.1", mount_port, path, cred);
}

Fh mount_root(const std::string& host, uint16_t mount_port, const std::string& path,
              const Credential& cred) {
  RpcChannel ch(host, mount_port, cred);
  MountReply r = Mount3Client(ch).mnt(path);
  if (r.status != MNT3_OK)
    throw RpcError("MNT " + path + ": " + mountstat3_to_str(static_cast<int>(r.status)));
  return r.root;
}

}  // namespace nasd::e2e
