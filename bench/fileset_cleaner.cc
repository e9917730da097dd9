#include "bench/fileset_cleaner.h"

#include <utility>
#include <vector>

#include "bench/rpc_batch.h"

namespace nasd::bench {

namespace {

constexpr size_t kWindow = 32;

struct Entry {
  const FileHandle* dir;
  std::string name;
};

// REMOVE or RMDIR every entry; NOENT counts as done, `also_fine` (e.g. NOTEMPTY) is tolerated.
bool remove_all(NfsSession& s, const std::vector<Entry>& entries, bool directories, int also_fine,
                std::string* error) {
  rpc_context* rpc = s.rpc();
  auto issue = [&](size_t i, rpc_cb cb, void* ctx) {
    diropargs3 where{};
    where.dir = entries[i].dir->view();
    where.name = const_cast<char*>(entries[i].name.c_str());
    if (directories) {
      RMDIR3args a{where};
      return rpc_nfs3_rmdir_async(rpc, cb, &a, ctx);
    }
    REMOVE3args a{where};
    return rpc_nfs3_remove_async(rpc, cb, &a, ctx);
  };
  auto reply = [&](size_t i, void* data) {
    int status = *static_cast<nfsstat3*>(data);  // RMDIR3res and REMOVE3res both start with it
    if (status == NFS3_OK || status == NFS3ERR_NOENT || status == also_fine) return std::string();
    return std::string(directories ? "RMDIR " : "REMOVE ") + entries[i].name + ": " + nfsstat3_to_str(status);
  };
  return run_batch(rpc, entries.size(), kWindow, issue, reply, s.timeout_ms(), error);
}

}  // namespace

bool remove_fileset(NfsSession& s, const Fileset& f, std::string* error) {
  std::vector<Entry> files, dirs;
  for (const FilesetDir& d : f.dirs) {
    for (const std::string& n : d.names) files.push_back({&d.fh, n});
    for (const std::string& n : d.removable) files.push_back({&d.fh, n});
    dirs.push_back({&f.top, d.name});
  }
  std::vector<std::string> listed;
  for (size_t i = 0; i < f.listing_entries; ++i) listed.push_back("l" + std::to_string(i));
  for (const std::string& n : listed) files.push_back({&f.listing_dir, n});
  if (f.listing_entries > 0) dirs.push_back({&f.top, "listing"});
  return remove_all(s, files, false, NFS3_OK, error) && remove_all(s, dirs, true, NFS3_OK, error) &&
         remove_all(s, {{&f.workdir_fh, f.owner}}, true, NFS3_OK, error);
}

bool remove_workdir(NfsSession& s, const Fileset& f, std::string* error) {
  return remove_all(s, {{&f.export_root, f.workdir}}, true, NFS3ERR_NOTEMPTY, error);
}

}  // namespace nasd::bench
