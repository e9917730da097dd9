// TEST FIXTURE: an etcd of one or three members on loopback, started with deploy/start-etcd.sh
// in a scratch folder and stopped (and wiped) with deploy/stop-etcd.sh when it goes away.
// The tests that use it run inside bench/netns.sh (see CMakeLists.txt), so the members' ports
// are private to the test and every process dies with it.
#pragma once

#include <signal.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "tests/cluster/scratch_dir.h"

namespace nasd::cluster::testing {

class EtcdProcess {
 public:
  // `base_port`: member i serves clients on base_port + 2i.
  EtcdProcess(int members, int base_port) : dir_("nasd-etcd"), members_(members), base_(base_port) {}
  ~EtcdProcess() { stop(); }

  // False when the members did not become healthy (the script's messages go to stderr).
  bool start() {
    return run(std::string(NASD_SOURCE_DIR) + "/deploy/start-etcd.sh --members " +
               std::to_string(members_) + " --base-port " + std::to_string(base_) +
               " --dir " + dir_.path + " >/dev/null");
  }
  void stop() {
    run(std::string(NASD_SOURCE_DIR) + "/deploy/stop-etcd.sh --wipe --dir " + dir_.path +
        " >/dev/null");
  }
  // kill -9 of member i (it stays dead until start() again).
  void kill_member(int i) {
    std::ifstream in(dir_.path + "/m" + std::to_string(i) + ".pid");
    int pid = 0;
    if (in >> pid && pid > 0) ::kill(pid, SIGKILL);
  }
  std::string endpoint(int i) const {
    return "http://127.0.0.1:" + std::to_string(base_ + 2 * i);
  }
  // `ETCDCTL_API=3 etcdctl --endpoints <member 0> <args>`; true on exit status 0.
  bool etcdctl(const std::string& args) const {
    return run("ETCDCTL_API=3 etcdctl --command-timeout=5s --endpoints " + endpoint(0) + " " + args +
               " >/dev/null 2>&1");
  }
  std::vector<std::string> endpoints() const {
    std::vector<std::string> e;
    for (int i = 0; i < members_; ++i) e.push_back(endpoint(i));
    return e;
  }

 private:
  static bool run(const std::string& command) {
    const int rc = std::system(command.c_str());
    return rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 0;
  }
  ScratchDir dir_;
  const int members_, base_;
};

}  // namespace nasd::cluster::testing
