// Copies of one client call reaching the owner along different paths (issue 13): node a forwards
// a client's CREATE/REMOVE to the owner and dies (or its link breaks) before answering; the
// client retransmits the same xid to a's address, now on node c, which forwards it again; and
// a's own copy may still arrive late on its old connection. The owner must answer every copy
// with the first one's reply and run the call once, whichever connection or node it came from,
// and a late copy must never undo what the client did since. Real sockets and a real journal:
// two PeerClients (nodes "a" and "c") -> InterconnectServer -> VolumeServer -> JournalVolume ->
// MemoryFs.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "cluster/interconnect/interconnect_server.h"
#include "cluster/interconnect/peer_client.h"
#include "cluster/interconnect/remote_volume.h"
#include "cluster/interconnect/volume_server.h"
#include "fs/call_identity.h"
#include "nvram/journal_volume.h"
#include "tests/support/memory_fs.h"
#include "tests/support/memory_resolver.h"

namespace nasd::interconnect {
namespace {

using namespace std::chrono_literals;

constexpr uint32_t kVolume = 5;
const std::vector<uint8_t> kKey(32, 0x3c);
constexpr uint32_t kNfsCreate = 8, kNfsRemove = 12;

// The NFS program's name for a client call (fs/call_identity.h): one client, its xid.
fs::CallIdentity client_call(uint32_t xid, uint32_t proc) {
  fs::CallIdentity id;
  id.family = AF_INET;
  id.address = {192, 0, 2, 7};
  id.xid = xid;
  id.prog = 100003;
  id.vers = 3;
  id.proc = proc;
  id.args_hash = 0x9e3779b97f4a7c15ull * (xid + 1);
  return id;
}

// The client is root (the file system's root directory is root's, mode 0755).
fs::OpContext root_ctx() {
  fs::OpContext ctx;
  ctx.cred = {0, 0, {}};
  return ctx;
}

// The owner's file system, whose CREATE takes `create_delay`: long enough for the second of two
// copies sent together to arrive while the first one runs.
class SlowCreateFs : public test_support::MemoryFs {
 public:
  explicit SlowCreateFs(uint32_t id) : MemoryFs(id) {}
  std::atomic<int> create_delay_ms{0};
  fs::Status create(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                    fs::CreateMode mode, const fs::SetAttr& sa, uint64_t verifier,
                    fs::InodeId* out, std::optional<fs::Attr>* obj_attr,
                    fs::Wcc* dir_wcc) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(create_delay_ms.load()));
    return MemoryFs::create(ctx, dir, name, mode, sa, verifier, out, obj_attr, dir_wcc);
  }
};

// The owner: its journal and volume, served to the interconnect. crash() drops it all without a
// clean close (the fs loses what it had not flushed); open() again recovers from the journal.
class Owner {
 public:
  Owner() {
    char tmpl[] = "/tmp/nasd-fwdcopies-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp");
    dir_ = tmpl;
    fs_ = std::make_shared<SlowCreateFs>(kVolume);
    open();
  }
  ~Owner() {
    crash();
    std::filesystem::remove_all(dir_);
  }
  void open() {
    nvram::JournalOptions jo;
    jo.path = dir_ + "/nvram.img";
    jo.size = 4 << 20;
    journal_ = nvram::Journal::open(jo);
    volume_ = std::make_unique<nvram::JournalVolume>(journal_, fs_);
    volume_->recover();
    volumes_ = std::make_unique<test_support::MemoryResolver>();
    volumes_->add(volume_.get());
    InterconnectServerOptions so;
    so.cluster_name = "c";
    so.local_node = "owner";
    so.credentials = {kKey, "owner"};
    server_ = std::make_unique<InterconnectServer>(so);
    executor_ = std::make_unique<VolumeServer>(volumes_.get(), VolumeServerOptions{.threads = 4});
    executor_->attach(*server_);
    server_->start();
  }
  void crash() {
    if (!server_) return;
    server_->stop();
    server_.reset();
    executor_.reset();
    volume_.reset();
    journal_.reset();
    fs_->crash();
  }
  uint16_t port() const { return server_->port(); }
  nvram::JournalVolume& volume() { return *volume_; }
  void slow_creates(std::chrono::milliseconds d) { fs_->create_delay_ms = int(d.count()); }
  // Mutations the file system ran since it was created (replays included).
  size_t applied() const { return fs_->applied_seqs().size(); }
  bool has(const std::string& name) {
    fs::InodeId id;
    std::optional<fs::Attr> obj, dir;
    return volume_->lookup(fs::OpContext{}, volume_->root(), name, &id, &obj, &dir) ==
           fs::Status::Ok;
  }

 private:
  std::string dir_;
  std::shared_ptr<SlowCreateFs> fs_;
  std::shared_ptr<nvram::Journal> journal_;
  std::unique_ptr<nvram::JournalVolume> volume_;
  std::unique_ptr<test_support::MemoryResolver> volumes_;
  std::unique_ptr<InterconnectServer> server_;
  std::unique_ptr<VolumeServer> executor_;
};

// A forwarding node: its own link (its own connection and session) to the owner.
class Forwarder {
 public:
  Forwarder(const std::string& node, uint16_t owner_port) {
    PeerClientOptions o;
    o.port = owner_port;
    o.cluster_name = "c";
    o.local_node = node;
    o.expected_peer = "owner";
    o.credentials = {kKey, node};
    link_ = std::make_shared<PeerClient>(o);
    link_->start();
    if (!link_->wait_connected(5s)) throw std::runtime_error("no link: " + link_->last_error());
    RemoteVolumeOptions ro;
    ro.call_timeout = 3s;
    remote_ = std::make_unique<RemoteVolume>(kVolume, link_, ro);
  }
  ~Forwarder() { link_->stop(); }

  // The client's call `identity` as this node forwards it.
  fs::Status create(const fs::CallIdentity& identity, const std::string& name,
                    fs::InodeId* made = nullptr) {
    fs::CallIdentityScope scope(&identity);
    fs::InodeId out;
    std::optional<fs::Attr> attr;
    fs::Wcc wcc;
    fs::Status s = remote_->create(root_ctx(), root(), name, fs::CreateMode::Guarded,
                                   fs::SetAttr{}, 0, &out, &attr, &wcc);
    if (made) *made = out;
    return s;
  }
  fs::Status remove(const fs::CallIdentity& identity, const std::string& name) {
    fs::CallIdentityScope scope(&identity);
    fs::Wcc wcc;
    return remote_->remove(root_ctx(), root(), name, &wcc);
  }

 private:
  fs::InodeId root() const { return {test_support::MemoryFs::kRootIno, 1}; }
  std::shared_ptr<PeerClient> link_;
  std::unique_ptr<RemoteVolume> remote_;
};

// a forwards CREATE and REMOVE and "dies" before the client hears back; the client retransmits
// both (same xids) to c. c's copies must get the replies a's got, not EXIST and NOENT, and the
// file system must run each call once.
TEST(ForwardedCopies, ARetransmissionForwardedByAnotherNodeGetsTheFirstReply) {
  Owner owner;
  Forwarder a("a", owner.port()), c("c", owner.port());
  const fs::CallIdentity create = client_call(100, kNfsCreate), remove = client_call(101, kNfsRemove);

  fs::InodeId first, again;
  ASSERT_EQ(a.create(create, "f", &first), fs::Status::Ok);
  EXPECT_EQ(c.create(create, "f", &again), fs::Status::Ok) << "the retransmitted CREATE ran again";
  EXPECT_EQ(again, first) << "the retransmission's reply names another file";
  ASSERT_EQ(a.remove(remove, "f"), fs::Status::Ok);
  EXPECT_EQ(c.remove(remove, "f"), fs::Status::Ok) << "the retransmitted REMOVE ran again";
  EXPECT_EQ(owner.applied(), 2u) << "a copy of a call reached the file system";
  EXPECT_FALSE(owner.has("f"));
}

// The client's calls went through c (CREATE, then REMOVE); a's copy of the CREATE, which sat in
// a's buffers when a died, arrives afterwards on a's connection. It must not bring the file back.
TEST(ForwardedCopies, ALateCopyOnAnOldConnectionNeverRunsAfterTheNextCalls) {
  Owner owner;
  Forwarder a("a", owner.port()), c("c", owner.port());
  const fs::CallIdentity create = client_call(200, kNfsCreate), remove = client_call(201, kNfsRemove);

  ASSERT_EQ(c.create(create, "g"), fs::Status::Ok);
  ASSERT_EQ(c.remove(remove, "g"), fs::Status::Ok);
  EXPECT_EQ(a.create(create, "g"), fs::Status::Ok) << "the late copy got another answer";
  EXPECT_FALSE(owner.has("g")) << "the late CREATE ran after the acknowledged REMOVE";
  EXPECT_EQ(owner.applied(), 2u);
}

// Both copies arrive at the same time on the two connections: one runs, the other waits for it
// and takes its reply (a GUARDED CREATE run twice answers EXIST to one of them).
TEST(ForwardedCopies, CopiesArrivingTogetherRunOnceAndGetTheSameReply) {
  Owner owner;
  Forwarder a("a", owner.port()), c("c", owner.port());
  owner.slow_creates(30ms);
  constexpr int kRounds = 20;
  for (int round = 0; round < kRounds; ++round) {
    const fs::CallIdentity create = client_call(300 + round, kNfsCreate);
    const std::string name = "h" + std::to_string(round);
    std::atomic<int> ready{0};
    fs::Status sa = fs::Status::ServerFault, sc = fs::Status::ServerFault;
    fs::InodeId ia, ic;
    auto go = [&](Forwarder& f, fs::Status* s, fs::InodeId* made) {
      ready.fetch_add(1);
      while (ready.load() < 2) std::this_thread::yield();
      *s = f.create(create, name, made);
    };
    std::thread ta(go, std::ref(a), &sa, &ia), tc(go, std::ref(c), &sc, &ic);
    ta.join();
    tc.join();
    ASSERT_EQ(sa, fs::Status::Ok) << "round " << round;
    ASSERT_EQ(sc, fs::Status::Ok) << "round " << round << ": both copies ran";
    ASSERT_EQ(ia, ic) << "round " << round;
  }
  EXPECT_EQ(owner.applied(), size_t(kRounds));
}

// The owner is killed after running a's CREATE and REMOVE and comes back from its journal (as the
// node taking over a volume replays its NVRAM copy); the client's retransmissions through c then
// get the journalled replies, and nothing runs twice.
TEST(ForwardedCopies, ACopyAfterTheOwnerRestartsGetsTheJournalledReply) {
  Owner owner;
  const fs::CallIdentity create = client_call(400, kNfsCreate), remove = client_call(401, kNfsRemove);
  const fs::CallIdentity create2 = client_call(402, kNfsCreate);
  fs::InodeId first;
  {
    Forwarder a("a", owner.port());
    ASSERT_EQ(a.create(create, "k", &first), fs::Status::Ok);
    ASSERT_EQ(a.remove(remove, "k"), fs::Status::Ok);
    ASSERT_EQ(a.create(create2, "k2"), fs::Status::Ok);
  }
  owner.crash();
  owner.open();
  const size_t replayed = owner.applied();
  Forwarder c("c", owner.port());
  fs::InodeId again;
  EXPECT_EQ(c.create(create, "k", &again), fs::Status::Ok) << "the CREATE ran again";
  EXPECT_EQ(again, first);
  EXPECT_EQ(c.remove(remove, "k"), fs::Status::Ok) << "the REMOVE ran again";
  EXPECT_EQ(c.create(create2, "k2"), fs::Status::Ok) << "the second CREATE ran again";
  EXPECT_FALSE(owner.has("k"));
  EXPECT_TRUE(owner.has("k2"));
  EXPECT_EQ(owner.applied(), replayed) << "a retransmission reached the file system";
}

// A new call is never taken for a copy: the same xid with other arguments, or from another
// client, runs (the key is the reply cache's: address, xid, procedure, arguments).
TEST(ForwardedCopies, OnlyTheSameClientCallIsACopy) {
  Owner owner;
  Forwarder a("a", owner.port()), c("c", owner.port());
  fs::CallIdentity one = client_call(500, kNfsCreate);
  ASSERT_EQ(a.create(one, "m"), fs::Status::Ok);
  fs::CallIdentity other_args = one;
  other_args.args_hash ^= 1;
  EXPECT_EQ(c.create(other_args, "m"), fs::Status::Exist);
  fs::CallIdentity other_client = one;
  other_client.address[3] = 8;
  EXPECT_EQ(c.create(other_client, "m"), fs::Status::Exist);
  EXPECT_EQ(c.create(one, "m"), fs::Status::Ok);
}

}  // namespace
}  // namespace nasd::interconnect
