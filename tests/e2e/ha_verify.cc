#include "tests/e2e/ha_verify.h"

#include <thread>

#include "tests/e2e/mount3_client.h"

namespace nasd::e2e {

std::vector<std::string> verify_after_failover(const AckedLoad& load, const Fh& dir,
                                               const HaVerifyTarget& target,
                                               std::chrono::milliseconds budget) {
  auto give_up = std::chrono::steady_clock::now() + budget;
  std::string last = "not tried";
  while (std::chrono::steady_clock::now() < give_up) {
    try {
      RpcChannel channel(target.host, target.nfs_port, Credential{});
      Nfs3Client nfs(channel);
      nfsstat3 s = nfs.getattr(dir).status;
      if (s == NFS3ERR_JUKEBOX) {
        last = "GETATTR of the directory: NFS3ERR_JUKEBOX";
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        continue;
      }
      if (s != NFS3_OK)
        return {std::string("the load's directory handle no longer works: GETATTR ") +
                nfsstat_name(s)};
      std::vector<std::string> problems;
      Fh root = mount_root(target.host, target.mount_port, target.export_path);
      LookupReply l = nfs.lookup(root, target.dir_name);
      if (l.status != NFS3_OK)
        problems.push_back("LOOKUP " + target.dir_name + " from the export root: " +
                           nfsstat_name(l.status));
      else if (!(l.fh == dir))
        problems.push_back("LOOKUP " + target.dir_name + " gives another handle than MKDIR did");
      for (std::string& p : load.verify(nfs, dir)) problems.push_back(std::move(p));
      bool busy = false;
      for (const std::string& p : problems) busy = busy || p.find("JUKEBOX") != std::string::npos;
      if (!busy) return problems;
      last = "a volume answered NFS3ERR_JUKEBOX during the check";  // not ready: read it again
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    } catch (const RpcError& e) {
      last = e.what();  // not there yet, or went away during the check: read it all again
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }
  return {"could not read the directory back within " + std::to_string(budget.count()) +
          " ms; last: " + last};
}

}  // namespace nasd::e2e
