#include "tests/e2e/e2e_fixture.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <random>
#include <stdexcept>

namespace nasd::e2e {
namespace {

// Against a target, how long one call may be retried while it answers NFS3ERR_JUKEBOX.
constexpr std::chrono::seconds kJukeboxBudget{60};

bool keep_scratch() {
  const char* keep = std::getenv("NASD_E2E_KEEP");
  return keep && std::string(keep) == "1";
}

// The test's own directory below a target's export root: the test's name (so a leftover says
// whose it is), this process and a counter (so two runs, or two processes on one export, never
// meet). Names stay well below 255 bytes.
std::string test_directory_name() {
  static std::atomic<unsigned> counter{0};
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = info ? std::string(info->test_suite_name()) + "." + info->name() : "test";
  for (char& c : name)
    if (c == '/') c = '_';  // parameterized names
  if (name.size() > 160) name.resize(160);
  return "e2e-" + name + "-" + std::to_string(getpid()) + "-" + std::to_string(++counter);
}

// Removes everything below `dir` (bounded: depth and calls), restarting each listing from
// cookie 0 since removals may invalidate cookies. Returns false with *why when something
// could not be removed.
bool remove_below(Nfs3Client& nfs, const Fh& dir, int depth, int* budget, std::string* why) {
  if (depth > 32) {
    *why = "directories nested deeper than 32";
    return false;
  }
  for (;;) {
    if (--*budget < 0) {
      *why = "more than the call budget";
      return false;
    }
    ReaddirReply r = nfs.readdirplus(dir, 0, 0, 8192, 65536);
    if (r.status != NFS3_OK) {
      *why = std::string("READDIRPLUS: ") + nfsstat_name(r.status);
      return false;
    }
    size_t removed = 0, listed = 0;
    for (const DirEntry& e : r.entries) {
      if (e.name == "." || e.name == "..") continue;
      ++listed;
      bool is_dir = e.attributes.attributes_follow &&
                    e.attributes.post_op_attr_u.attributes.type == NF3DIR;
      if (is_dir && e.fh) {
        if (!remove_below(nfs, *e.fh, depth + 1, budget, why)) return false;
        if (nfs.rmdir(dir, e.name).status == NFS3_OK) ++removed;
      } else if (nfs.remove(dir, e.name).status == NFS3_OK) {
        ++removed;
      }
      --*budget;
    }
    if (listed == 0 && r.eof) return true;
    if (removed == 0) {
      *why = "could not remove " + std::to_string(listed) + " entries";
      return false;
    }
  }
}

}  // namespace

bool E2eTest::has_own_server() { return !E2eTarget::from_environment().has_value(); }

std::string E2eTest::target_description() {
  auto t = E2eTarget::from_environment();
  return t ? t->describe() : "(none)";
}

void E2eTest::SetUp() {
  std::optional<E2eTarget> target;
  try {
    target = E2eTarget::from_environment();
  } catch (const std::exception& e) {
    FAIL() << e.what();
  }
  if (target) {
    set_up_target(*target);
    return;
  }
  std::string why_not;
  std::optional<ServerChoice> choice = ServerChoice::from_environment(&why_not);
  if (!choice) {
    const char* require = std::getenv("NASD_E2E_REQUIRE");
    if (require && std::string(require) == "1") FAIL() << why_not;
    GTEST_SKIP() << why_not;
  }
  scratch_ = std::make_unique<TempDir>("nasd-e2e");
  server_ = std::make_unique<ServerProcess>(*choice, scratch_->path());
  nfs_port_ = server_->nfs_port();
  mount_port_ = server_->mount_port();
  server_->start();
  reconnect();
}

void E2eTest::set_up_target(const E2eTarget& target) {
  target_ = target;
  host_ = target.host;
  nfs_port_ = target.nfs_port;
  mount_port_ = target.mount_port;
  export_path_ = target.export_path;
  scratch_ = std::make_unique<TempDir>("nasd-e2e");
  jukebox_retries_at_start_ = RpcChannel::process_jukebox_retries();
  reconnect();
  test_dir_ = test_directory_name();
  NewObjectReply r = nfs().mkdir(export_root_, test_dir_, sattr_mode(0755));
  ASSERT_EQ(r.status, NFS3_OK) << "MKDIR " << test_dir_ << " in " << target.describe() << ": "
                               << st(r.status);
  ASSERT_TRUE(r.fh) << "MKDIR " << test_dir_ << " gave no handle";
  root_ = *r.fh;
}

void E2eTest::TearDown() {
  if (target_) {
    tear_down_target();
    return;
  }
  nfs_.reset();
  channel_.reset();
  if (!server_) return;
  if (server_->running()) {
    bool clean = server_->stop();
    EXPECT_TRUE(clean) << server_->choice().name() << " did not exit 0 on SIGTERM ("
                       << server_->last_exit() << "); log tail:\n"
                       << server_->log_tail();
  }
  server_.reset();
  scratch_.reset();
}

// What the clean stop checks for a server of the test's own: the target still answers on a
// new connection (it did not crash or hang during the test), and the test's directory goes.
void E2eTest::tear_down_target() {
  try {
    nfs_.reset();
    channel_.reset();
    reconnect();
    nfs().null();
    EXPECT_EQ(nfs().getattr(export_root_).status, NFS3_OK)
        << target_->describe() << ": GETATTR of the export root failed after the test";
    if (!test_dir_.empty() && !keep_scratch()) {
      int budget = 200000;
      std::string why;
      bool emptied = remove_below(nfs(), root_, 0, &budget, &why);
      EXPECT_TRUE(emptied) << "removing what the test made in " << test_dir_ << ": " << why;
      if (emptied) {
        RMDIR3res r = nfs().rmdir(export_root_, test_dir_);
        EXPECT_EQ(r.status, NFS3_OK) << "RMDIR " << test_dir_ << ": " << st(r.status);
      }
    }
  } catch (const std::exception& e) {
    ADD_FAILURE() << target_->describe() << " stopped answering during the test: " << e.what();
  }
  // Visible in the output and the XML report: a cluster that keeps saying "later" is slow.
  if (uint64_t n = RpcChannel::process_jukebox_retries() - jukebox_retries_at_start_; n > 0) {
    std::cout << "[   NOTE   ] " << n << " calls answered NFS3ERR_JUKEBOX and were sent again\n";
    RecordProperty("jukebox_retries", std::to_string(n));
  }
  nfs_.reset();
  channel_.reset();
  scratch_.reset();
}

ServerProcess& E2eTest::server() {
  if (!server_)
    throw std::logic_error("this test uses a server of its own; against NASD_E2E_TARGET it must "
                           "start with NASD_E2E_NEEDS_OWN_SERVER");
  return *server_;
}

std::string E2eTest::url(const std::string& path, const std::string& extra_query) const {
  if (target_) return target_->url("/" + test_dir_ + path, extra_query);
  return server_->url(path, extra_query);
}

void E2eTest::reconnect() {
  nfs_.reset();
  channel_.reset();
  export_root_ = mount_root(host_, mount_port_, export_path_);
  if (!target_) root_ = export_root_;
  channel_ = std::make_unique<RpcChannel>(host_, nfs_port_, Credential{});
  if (target_) channel_->set_jukebox_retry(kJukeboxBudget);
  nfs_ = std::make_unique<Nfs3Client>(*channel_);
}

void E2eTest::restart_server() {
  nfs_.reset();
  channel_.reset();
  bool clean = server().restart();
  EXPECT_TRUE(clean) << "stop before restart: " << server().last_exit() << "\n"
                     << server().log_tail();
  reconnect();
}

E2eTest::Session E2eTest::connect_as(uint32_t uid, uint32_t gid) {
  Session s;
  s.channel = std::make_unique<RpcChannel>(host_, nfs_port_, Credential{uid, gid, {gid}});
  if (target_) s.channel->set_jukebox_retry(kJukeboxBudget);
  s.nfs = std::make_unique<Nfs3Client>(*s.channel);
  return s;
}

std::unique_ptr<NfsClient> E2eTest::libnfs_client(uint32_t uid, uint32_t gid) {
  return std::make_unique<NfsClient>(url(), uid, gid);
}

Fh E2eTest::make_file(const Fh& dir, const std::string& name, const std::string& content) {
  NewObjectReply r = nfs().create(dir, name, UNCHECKED, sattr_mode(0644));
  if (r.status != NFS3_OK || !r.fh)
    throw RpcError("CREATE " + name + ": " + st(r.status) + (r.fh ? "" : " (no handle)"));
  if (!content.empty()) {
    WRITE3res w = nfs().write(*r.fh, 0, content, FILE_SYNC);
    if (w.status != NFS3_OK) throw RpcError("WRITE " + name + ": " + st(w.status));
  }
  return *r.fh;
}

Fh E2eTest::make_dir(const Fh& dir, const std::string& name) {
  NewObjectReply r = nfs().mkdir(dir, name, sattr_mode(0755));
  if (r.status != NFS3_OK || !r.fh)
    throw RpcError("MKDIR " + name + ": " + st(r.status) + (r.fh ? "" : " (no handle)"));
  return *r.fh;
}

::testing::AssertionResult has_wcc(const wcc_data& w) {
  if (!w.before.attributes_follow) return ::testing::AssertionFailure() << "no pre-op attributes";
  if (!w.after.attributes_follow) return ::testing::AssertionFailure() << "no post-op attributes";
  const nfstime3& pre = w.before.pre_op_attr_u.attributes.ctime;
  const nfstime3& post = w.after.post_op_attr_u.attributes.ctime;
  if (post.seconds < pre.seconds || (post.seconds == pre.seconds && post.nseconds < pre.nseconds))
    return ::testing::AssertionFailure() << "post-op ctime earlier than pre-op ctime";
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult has_attrs(const post_op_attr& a) {
  if (!a.attributes_follow) return ::testing::AssertionFailure() << "no post-op attributes";
  return ::testing::AssertionSuccess();
}

fattr3 E2eTest::attrs_of(const Fh& fh) {
  GETATTR3res r = nfs().getattr(fh);
  if (r.status != NFS3_OK) throw RpcError("GETATTR: " + st(r.status));
  return r.GETATTR3res_u.resok.obj_attributes;
}

std::string pattern(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

}  // namespace nasd::e2e
