// What a restart and a crash must preserve: handles stay valid across a clean restart, and
// after kill -9 every FILE_SYNC write and every namespace change the server acknowledged is
// still there.
#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "tests/e2e/e2e_fixture.h"

namespace nasd::e2e {
namespace {

using PersistenceTest = E2eTest;

TEST_F(PersistenceTest, HandlesSurviveACleanRestart) {
  Fh dir = make_dir(root(), "d");
  Fh file = make_file(dir, "f", "kept across restarts");
  NewObjectReply link = nfs().symlink(root(), "l", "d/f");
  ASSERT_EQ(link.status, NFS3_OK);
  fattr3 before = attrs_of(file);
  Fh old_root = root();

  restart_server();

  EXPECT_EQ(root(), old_root) << "MNT gives the same root handle after a restart";
  EXPECT_EQ(attrs_of(dir).type, NF3DIR);
  fattr3 after = attrs_of(file);
  EXPECT_EQ(after.fileid, before.fileid);
  EXPECT_EQ(after.size, before.size);
  EXPECT_EQ(nfs().read(file, 0, 100).data, "kept across restarts");
  EXPECT_EQ(nfs().readlink(*link.fh).target, "d/f");
  EXPECT_EQ(nfs().lookup(dir, "f").fh, file);
}

TEST_F(PersistenceTest, StopsCleanlyAndStartsAgain) {
  make_file(root(), "x", "y");
  ASSERT_TRUE(server().stop()) << "SIGTERM must give exit 0, got " << server().last_exit()
                               << "\n" << server().log_tail();
  server().start();
  reconnect();
  EXPECT_EQ(nfs().read(nfs().resolve(root(), "x"), 0, 10).data, "y");
}

// What the load thread was told, op by op. Names touched by the one call in flight at the
// kill are `uncertain`: that call may or may not have happened.
struct AckedState {
  std::mutex mu;
  std::map<std::string, std::optional<std::string>> files;  // name -> content (nullopt: any)
  std::set<std::string> dirs;
  std::set<std::string> gone;  // acknowledged as removed or renamed away
  std::set<std::string> uncertain;
  int acked = 0;
  std::string stopped_by;
};

// Mixed namespace + FILE_SYNC load until `stop` or a call fails (the server was killed).
void run_load(uint16_t nfs_port, Fh dir, std::atomic<bool>* stop, AckedState* s) {
  try {
    RpcChannel ch(nfs_port, Credential{});
    Nfs3Client nfs(ch);
    for (int i = 0; i < 100000 && !stop->load(); ++i) {
      std::string name = "f" + std::to_string(i);
      std::string content = "content of " + name + std::string(i % 500, '.');
      auto in_flight = [&](std::initializer_list<std::string> names) {
        std::lock_guard<std::mutex> lock(s->mu);
        s->uncertain = names;
      };
      auto ack = [&](auto&& apply) {
        std::lock_guard<std::mutex> lock(s->mu);
        apply();
        s->uncertain.clear();
        ++s->acked;
      };
      in_flight({name});
      NewObjectReply c = nfs.create(dir, name, GUARDED, sattr_mode(0644));
      if (c.status != NFS3_OK || !c.fh) throw RpcError("CREATE " + name + ": " + st(c.status));
      ack([&] { s->files[name] = std::string(); });

      in_flight({name});
      WRITE3res w = nfs.write(*c.fh, 0, content, FILE_SYNC);
      if (w.status != NFS3_OK || w.WRITE3res_u.resok.committed != FILE_SYNC)
        throw RpcError("WRITE " + name + ": " + st(w.status));
      ack([&] { s->files[name] = content; });

      if (i % 3 == 0) {
        std::string d = "d" + std::to_string(i);
        in_flight({d});
        if (nfs.mkdir(dir, d).status != NFS3_OK) throw RpcError("MKDIR " + d);
        ack([&] { s->dirs.insert(d); });
      }
      if (i % 4 == 1) {  // rename the previous file
        std::string from = "f" + std::to_string(i - 1), to = "r" + std::to_string(i - 1);
        in_flight({from, to});
        if (nfs.rename(dir, from, dir, to).status != NFS3_OK) throw RpcError("RENAME " + from);
        ack([&] {
          s->files[to] = s->files[from];
          s->files.erase(from);
          s->gone.insert(from);
        });
      }
      if (i % 5 == 2) {  // remove the file before last
        std::string victim = "f" + std::to_string(i - 2);
        bool exists;
        {
          std::lock_guard<std::mutex> lock(s->mu);
          exists = s->files.count(victim) != 0;
        }
        if (!exists) continue;
        in_flight({victim});
        if (nfs.remove(dir, victim).status != NFS3_OK) throw RpcError("REMOVE " + victim);
        ack([&] {
          s->files.erase(victim);
          s->gone.insert(victim);
        });
      }
    }
    s->stopped_by = "load finished before the kill";
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lock(s->mu);
    s->stopped_by = e.what();
  }
}

TEST_F(PersistenceTest, AcknowledgedWorkSurvivesKill9) {
  Fh dir = make_dir(root(), "load");
  AckedState state;
  std::atomic<bool> stop{false};
  std::thread load(run_load, server().nfs_port(), dir, &stop, &state);

  // Let the load run a while (bounded), then crash the server under it.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(4);
  while (std::chrono::steady_clock::now() < deadline) {
    {
      std::lock_guard<std::mutex> lock(state.mu);
      if (state.acked >= 600 || !state.stopped_by.empty()) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  server().kill9();
  stop = true;
  load.join();
  RecordProperty("acknowledged_ops", state.acked);
  ASSERT_GE(state.acked, 30) << "too little load to mean anything; stopped by: "
                             << state.stopped_by;
  EXPECT_NE(state.stopped_by, "load finished before the kill");

  server().start();
  reconnect();
  Fh d = nfs().resolve(root(), "load");
  for (const auto& [name, content] : state.files) {
    if (state.uncertain.count(name)) continue;
    LookupReply l = nfs().lookup(d, name);
    ASSERT_EQ(l.status, NFS3_OK) << "acknowledged file " << name << " lost: " << st(l.status);
    if (!content) continue;
    ReadReply r = nfs().read(l.fh, 0, 4096);
    ASSERT_EQ(r.status, NFS3_OK) << name;
    EXPECT_EQ(r.data, *content) << "FILE_SYNC data of " << name << " not as acknowledged";
  }
  for (const std::string& name : state.dirs) {
    if (state.uncertain.count(name)) continue;
    LookupReply l = nfs().lookup(d, name);
    ASSERT_EQ(l.status, NFS3_OK) << "acknowledged directory " << name << " lost";
    EXPECT_EQ(l.obj_attributes.post_op_attr_u.attributes.type, NF3DIR);
  }
  for (const std::string& name : state.gone) {
    if (state.uncertain.count(name) || state.files.count(name)) continue;
    EXPECT_EQ(nfs().lookup(d, name).status, NFS3ERR_NOENT)
        << "acknowledged removal/rename of " << name << " undone";
  }
  // Nothing the client was not told about, beyond the one call in flight.
  uint64_t cookie = 0, verf = 0;
  for (int calls = 0; calls < 1000; ++calls) {
    ReaddirReply r = nfs().readdir(d, cookie, verf, 8192);
    ASSERT_EQ(r.status, NFS3_OK) << st(r.status);
    verf = r.cookieverf;
    for (const DirEntry& e : r.entries) {
      cookie = e.cookie;
      if (e.name == "." || e.name == ".." || state.uncertain.count(e.name)) continue;
      EXPECT_TRUE(state.files.count(e.name) || state.dirs.count(e.name))
          << "unexpected entry " << e.name << " after recovery";
    }
    if (r.eof) break;
  }
}

}  // namespace
}  // namespace nasd::e2e
