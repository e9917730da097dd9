// The server's bytes as Wireshark sees them: a capture of mixed traffic on the test's ports must
// dissect without malformed packets or error-level expert findings, and show the NFS
// procedures that were issued.
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "tests/e2e/e2e_fixture.h"
#include "tests/e2e/raw_rpc.h"

namespace nasd::e2e {
namespace {

using namespace std::chrono_literals;

class WireTest : public E2eTest {
 protected:
  // Starts dumpcap on loopback for the server's ports; skips the test when capturing is not
  // permitted here.
  void start_capture() {
    std::string dumpcap = find_executable("dumpcap");
    if (dumpcap.empty()) GTEST_SKIP() << "dumpcap not installed";
    capture_ = scratch() / "session.pcapng";
    capture_log_ = scratch() / "dumpcap.log";
    std::string filter = "host " + host() + " and (port " + std::to_string(nfs_port()) +
                         " or port " + std::to_string(mount_port()) + ")";
    dumpcap_ = ChildProcess::spawn(
        {dumpcap, "-i", "lo", "-f", filter, "-w", capture_.string()}, capture_log_);
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (file_tail(capture_log_, 4096).find("Capturing on") == std::string::npos) {
      if (dumpcap_.exited() || std::chrono::steady_clock::now() > deadline) {
        dumpcap_.kill9();
        GTEST_SKIP() << "packet capture not permitted here: " << file_tail(capture_log_, 2000);
      }
      std::this_thread::sleep_for(20ms);
    }
    std::this_thread::sleep_for(300ms);  // the filter is attached; let it settle
  }

  void stop_capture() {
    std::this_thread::sleep_for(500ms);  // let the last packets reach the ring buffer
    dumpcap_.terminate(5s);
  }

  std::string tshark(const std::vector<std::string>& extra) {
    std::string bin = find_executable("tshark");
    if (bin.empty()) {
      ADD_FAILURE() << "tshark not installed";
      return "";
    }
    std::string nfs = std::to_string(nfs_port());
    std::string mnt = std::to_string(mount_port());
    std::vector<std::string> argv = {bin, "-n", "-r", capture_.string(),
                                     "-d", "tcp.port==" + nfs + ",rpc",
                                     "-d", "tcp.port==" + mnt + ",rpc",
                                     "-d", "udp.port==" + nfs + ",rpc"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto out = scratch() / "tshark.out";
    CommandResult r = run_command(argv, 60s, scratch().path(), out);
    EXPECT_EQ(r.exit_code, 0) << "tshark failed: " << r.output;
    std::ifstream in(out);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  // One call of every NFSv3 procedure, plus MOUNT and a UDP call.
  void issue_mixed_traffic() {
    Nfs3Client& c = nfs();
    c.null();
    Fh d = make_dir(root(), "dir");
    Fh f = make_file(d, "file", "hello wire");
    c.getattr(f);
    c.setattr(f, sattr_mode(0600));
    c.lookup(d, "file");
    c.access(f, ACCESS3_READ | ACCESS3_MODIFY);
    NewObjectReply l = c.symlink(d, "link", "file");
    if (l.fh) c.readlink(*l.fh);
    c.read(f, 0, 100);
    c.write(f, 10, " and more", UNSTABLE);
    c.commit(f, 0, 0);
    c.create(d, "excl", EXCLUSIVE, sattr_none(), 42);
    c.mknod(d, "fifo", NF3FIFO);
    c.link(f, d, "hard");
    c.rename(d, "hard", d, "hard2");
    c.remove(d, "hard2");
    c.mkdir(d, "sub");
    c.rmdir(d, "sub");
    c.readdir(d, 0, 0, 4096);
    c.readdirplus(d, 0, 0, 4096, 16384);
    c.fsstat(root());
    c.fsinfo(root());
    c.pathconf(root());
    c.lookup(d, "missing");  // an error reply too

    std::string contents;
    auto client = libnfs_client();
    EXPECT_EQ(client->write_file("/dir/via-libnfs", std::string(200000, 'z')), 0) << client->error();
    EXPECT_EQ(client->read_file("/dir/via-libnfs", &contents), 0) << client->error();

    raw::Call getattr;
    getattr.xid = raw::next_xid();
    getattr.proc = 1;
    getattr.args = raw::fh_args(root().bytes);
    EXPECT_TRUE(raw::udp_call(host(), nfs_port(), getattr));
  }

  std::filesystem::path capture_, capture_log_;
  ChildProcess dumpcap_;
};

TEST_F(WireTest, CaptureDissectsCleanly) {
  start_capture();
  if (IsSkipped()) return;
  issue_mixed_traffic();
  stop_capture();

  std::string problems = tshark({"-Y", "_ws.malformed || _ws.expert.severity == error"});
  EXPECT_EQ(problems, "") << "Wireshark finds malformed or erroneous packets:\n" << problems;

  std::string procs = tshark({"-Y", "nfs", "-T", "fields", "-e", "nfs.procedure_v3"});
  std::set<int> seen;
  std::istringstream lines(procs);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) seen.insert(std::stoi(line));
  for (int proc = 0; proc <= 21; ++proc)
    EXPECT_TRUE(seen.count(proc)) << "NFSv3 procedure " << proc << " not in the capture";

  std::string mount = tshark({"-Y", "mount", "-T", "fields", "-e", "mount.procedure_v3"});
  EXPECT_NE(mount.find('1'), std::string::npos) << "MOUNT MNT not in the capture";
}

}  // namespace
}  // namespace nasd::e2e
