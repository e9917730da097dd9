// Forwarded NFS procedures on the fast lane (issue 13), through the real NFS program: the RPC
// dispatcher hands each call to Nfs3Service on the "event loop" (the test's thread), the volume
// is a RemoteVolume whose owner is an InterconnectServer in this process, and the forwarding
// node's executor has ONE thread, held for the whole test. A procedure the loop may attempt is
// sent from the loop, parks, and is finished on the link's reader thread; one that needed the
// executor would never be answered. Every reply must be byte for byte the one the same program
// gives over the owner's volume itself (run on an executor), so nothing -- READDIRPLUS's
// entry and byte bounds included -- differs from the blocking path.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <chrono>
#include <cstring>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cluster/interconnect/interconnect_server.h"
#include "cluster/interconnect/peer_client.h"
#include "cluster/interconnect/remote_volume.h"
#include "cluster/interconnect/volume_server.h"
#include "server/nfs/exports/exports.h"
#include "server/nfs/handle/handle_codec.h"
#include "server/nfs/nfs3/nfs3_service.h"
#include "server/nfs/xdr/nfs3_prot.h"
#include "server/nfs/xdr/xdr_codec.h"
#include "server/rpc/call_dispatcher.h"
#include "tests/cluster/echo_volume.h"
#include "tests/cluster/held_executor.h"
#include "tests/nfs/xdr_encode.h"
#include "tests/rpc/loopback_call.h"
#include "tests/rpc/rpc_test_client.h"
#include "util/config.h"
#include "util/task_queue.h"

namespace nasd::interconnect {
namespace {

using namespace std::chrono_literals;
using cluster::testing::EchoVolume;
using cluster::testing::HeldExecutor;

constexpr uint32_t kVolume = 7;
const std::vector<uint8_t> kKey(32, 0x6b);
const char* kConfig = R"(
[volume main]
id = 7
[export /r/main]
volume = main
clients = 127.0.0.0/8
options = rw, insecure, no_root_squash
)";

using nfs::testing::encode;

nfs_fh3 wire(nfs::FileHandle& fh) {
  nfs_fh3 w{};
  w.data.data_len = nfs::FileHandle::kSize;
  w.data.data_val = reinterpret_cast<char*>(fh.bytes.data());
  return w;
}

// What the node's router says serves kVolume; switched while a call is parked (a failover).
class SwitchableResolver : public fs::VolumeResolver {
 public:
  explicit SwitchableResolver(fs::Volume* v) : v_(v) {}
  fs::Volume* find(uint32_t id) override {
    std::lock_guard lock(mu_);
    return id == kVolume ? v_ : nullptr;
  }
  void serve(fs::Volume* v) {
    std::lock_guard lock(mu_);
    v_ = v;
  }

 private:
  std::mutex mu_;
  fs::Volume* v_;
};

// One NFS server: the program over `volume`, behind a dispatcher whose executor has one thread.
// Collects the NFS results of every reply by xid.
class NfsNode {
 public:
  NfsNode(fs::Volume* volume, std::shared_ptr<nfs::Exports> exports,
          std::shared_ptr<nfs::HandleCodec> handles)
      : resolver_(std::make_shared<SwitchableResolver>(volume)) {
    dispatcher_.add_service(std::make_shared<nfs::Nfs3Service>(resolver_, exports, handles));
  }
  SwitchableResolver& resolver() { return *resolver_; }
  ~NfsNode() {
    dispatcher_.close();
    executor_.stop();
  }

  rpc::CallDispatcher::Outcome::Kind send(uint32_t xid, uint32_t proc, std::vector<uint8_t> args) {
    const std::vector<uint8_t> message =
        rpc::testing::nfs3_call(xid, proc, 1234, 567, std::move(args));
    auto outcome = dispatcher_.handle(rpc::Record(message.begin(), message.end()),
                                      rpc::testing::loopback_origin(40123),
                                      rpc::CallDispatcher::Clock::now(),
                                      [this](rpc::CallDispatcher::Reply r) { collect(*r); });
    if (outcome.kind == rpc::CallDispatcher::Outcome::SendNow) collect(*outcome.reply);
    return outcome.kind;
  }
  bool wait_replies(size_t n, std::chrono::milliseconds limit) {
    std::unique_lock lk(mu_);
    return cv_.wait_for(lk, limit, [&] { return results_.size() >= n; });
  }
  std::map<uint32_t, std::vector<uint8_t>> results() {
    std::lock_guard lk(mu_);
    return results_;
  }
  rpc::CallDispatcher& dispatcher() { return dispatcher_; }
  util::TaskQueue& executor() { return executor_; }

 private:
  void collect(const rpc::EncodedReply& encoded) {
    std::vector<uint8_t> message(encoded.udp_head().begin(), encoded.udp_head().end());
    message.insert(message.end(), encoded.body.begin(), encoded.body.end());
    encoded.tail.copy_to(&message);
    rpc::testing::ParsedReply p = rpc::testing::parse_reply(message);
    std::lock_guard lk(mu_);
    results_[p.xid] = p.ok && p.accept_stat == 0 ? p.results : std::vector<uint8_t>{};
    cv_.notify_all();
  }

  std::shared_ptr<SwitchableResolver> resolver_;
  util::TaskQueue executor_{{.threads = 1, .room = "test"}};
  rpc::DuplicateRequestCache drc_;
  rpc::CallStats stats_;
  rpc::CallDispatcher dispatcher_{&executor_, &drc_, &stats_, /*run_inline=*/true};
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<uint32_t, std::vector<uint8_t>> results_;
};

// The owner: its volume behind the interconnect listener; the forwarder: a RemoteVolume on a
// link to it, under the NFS program; the reference: the same program over an EchoVolume of its
// own (every result is a hash of the call's inputs, so equal calls give equal replies).
class NfsForwardingOnLoop : public ::testing::Test {
 protected:
  NfsForwardingOnLoop() {
    InterconnectServerOptions so;
    so.port = 0;
    so.cluster_name = "c";
    so.local_node = "owner";
    so.credentials = {kKey, "owner"};
    server_ = std::make_unique<InterconnectServer>(so);
    server_->set_handler(MessageType::VolumeCall, [this](IncomingRequest r) {
      std::unique_lock lock(gate_mu_);
      ++arrived_;
      gate_cv_.notify_all();
      gate_cv_.wait(lock, [&] { return !gate_closed_; });
      lock.unlock();
      volume_server_.handle(std::move(r));
    });
    server_->start();
    PeerClientOptions lo;
    lo.port = server_->port();
    lo.cluster_name = "c";
    lo.local_node = "fwd";
    lo.expected_peer = "owner";
    lo.credentials = {kKey, "fwd"};
    link_ = std::make_shared<PeerClient>(lo);
    link_->start();
    remote_ = std::make_unique<RemoteVolume>(kVolume, link_);
    exports_ = nfs::Exports::from_config(Config::parse(kConfig));
    handles_ = std::make_shared<nfs::HandleCodec>(std::vector<uint8_t>(32, 0x42));
    forwarder_ = std::make_unique<NfsNode>(remote_.get(), exports_, handles_);
    reference_ = std::make_unique<NfsNode>(&reference_volume_, exports_, handles_);
  }
  ~NfsForwardingOnLoop() override {
    open_gate();
    forwarder_.reset();
    link_->stop();
    server_->stop();
  }

  std::vector<std::pair<uint32_t, std::vector<uint8_t>>> mutations();
  nfs::FileHandle handle(uint64_t ino) {
    return handles_->encode(kVolume, fs::InodeId{ino, 1}, exports_->all().front().export_id);
  }

  // Sends every call (xid 1, 2, ...) to the forwarder with its executor held, then to the
  // reference; each must be answered without the executor, run once on the owner, and give
  // the reference's reply.
  using Calls = std::vector<std::pair<uint32_t, std::vector<uint8_t>>>;
  void expect_forwarded_on_the_loop(const Calls& calls) {
    ASSERT_TRUE(link_->wait_connected(5s)) << link_->last_error();
    {
      HeldExecutor held(forwarder_->executor());
      ASSERT_TRUE(held.holding());
      for (size_t i = 0; i < calls.size(); ++i)
        EXPECT_EQ(forwarder_->send(uint32_t(i + 1), calls[i].first, calls[i].second),
                  rpc::CallDispatcher::Outcome::Pending)
            << "procedure " << calls[i].first << " was not parked";
      ASSERT_TRUE(forwarder_->wait_replies(calls.size(), 10s))
          << forwarder_->results().size() << " of " << calls.size()
          << " replies with the executor held: parked calls went to the executor";
    }
    for (size_t i = 0; i < calls.size(); ++i)
      reference_->send(uint32_t(i + 1), calls[i].first, calls[i].second);
    ASSERT_TRUE(reference_->wait_replies(calls.size(), 10s));
    auto got = forwarder_->results(), want = reference_->results();
    for (size_t i = 0; i < calls.size(); ++i) {
      const uint32_t xid = uint32_t(i + 1);
      EXPECT_FALSE(want[xid].empty()) << "procedure " << calls[i].first;
      EXPECT_EQ(got[xid], want[xid]) << "procedure " << calls[i].first << " (xid " << xid << ")";
    }
    EXPECT_EQ(arrived(), calls.size());  // each sent once
    EXPECT_EQ(owner_volume_.calls(), calls.size());
    EXPECT_EQ(forwarder_->dispatcher().inline_resumes(), calls.size());
    EXPECT_EQ(forwarder_->dispatcher().parked(), 0u);
  }

  // The owner's side (what serves forwarded calls), declared before the listener using it.
  class OwnerVolumes : public fs::VolumeResolver {
   public:
    explicit OwnerVolumes(fs::Volume* v) : v_(v) {}
    fs::Volume* find(uint32_t id) override { return id == kVolume ? v_ : nullptr; }

   private:
    fs::Volume* v_;
  };
  EchoVolume owner_volume_{kVolume};
  OwnerVolumes owner_volumes_{&owner_volume_};
  VolumeServer volume_server_{&owner_volumes_, {.threads = 2, .max_queued = 4096}};
  // While closed, the owner's connection holds every request it reads (nothing is answered).
  void close_gate() {
    std::lock_guard lock(gate_mu_);
    gate_closed_ = true;
  }
  void open_gate() {
    std::lock_guard lock(gate_mu_);
    gate_closed_ = false;
    gate_cv_.notify_all();
  }
  bool wait_arrived(size_t n) {
    std::unique_lock lock(gate_mu_);
    return gate_cv_.wait_for(lock, 5s, [&] { return arrived_ >= n; });
  }
  size_t arrived() {
    std::lock_guard lock(gate_mu_);
    return arrived_;
  }
  std::mutex gate_mu_;
  std::condition_variable gate_cv_;
  bool gate_closed_ = false;
  size_t arrived_ = 0;
  std::unique_ptr<InterconnectServer> server_;
  std::shared_ptr<PeerClient> link_;
  std::unique_ptr<RemoteVolume> remote_;
  std::shared_ptr<nfs::Exports> exports_;
  std::shared_ptr<nfs::HandleCodec> handles_;
  EchoVolume reference_volume_{kVolume};
  std::unique_ptr<NfsNode> forwarder_;
  std::unique_ptr<NfsNode> reference_;
};

// One call of each name-space mutation, CREATE in each of its modes.
std::vector<std::pair<uint32_t, std::vector<uint8_t>>> NfsForwardingOnLoop::mutations() {
  nfs::FileHandle dir = handle(2), file = handle(31), other = handle(3);
  std::vector<std::pair<uint32_t, std::vector<uint8_t>>> calls;
  sattr3 attrs{};
  attrs.mode.set_it = TRUE;
  attrs.mode.set_mode3_u.mode = 0640;
  attrs.size.set_it = TRUE;
  attrs.size.set_size3_u.size = 12345;
  attrs.mtime.set_it = SET_TO_SERVER_TIME;
  SETATTR3args sa{};
  sa.object = wire(file);
  sa.new_attributes = attrs;
  sa.guard.check = TRUE;
  sa.guard.sattrguard3_u.obj_ctime = {77, 88};
  calls.emplace_back(NFSPROC3_SETATTR, encode(xdr_SETATTR3args, sa));
  for (createmode3 mode : {UNCHECKED, GUARDED, EXCLUSIVE}) {
    CREATE3args c{};
    c.where.dir = wire(dir);
    c.where.name = const_cast<char*>("new-file");
    c.how.mode = mode;
    if (mode == EXCLUSIVE)
      std::memcpy(c.how.createhow3_u.verf, "verifier", NFS3_CREATEVERFSIZE);
    else
      c.how.createhow3_u.obj_attributes = attrs;
    calls.emplace_back(NFSPROC3_CREATE, encode(xdr_CREATE3args, c));
  }
  MKDIR3args md{};
  md.where.dir = wire(dir);
  md.where.name = const_cast<char*>("new-dir");
  md.attributes = attrs;
  calls.emplace_back(NFSPROC3_MKDIR, encode(xdr_MKDIR3args, md));
  SYMLINK3args sl{};
  sl.where.dir = wire(dir);
  sl.where.name = const_cast<char*>("new-link");
  sl.symlink.symlink_data = const_cast<char*>("../somewhere/else");
  calls.emplace_back(NFSPROC3_SYMLINK, encode(xdr_SYMLINK3args, sl));
  MKNOD3args mn{};
  mn.where.dir = wire(dir);
  mn.where.name = const_cast<char*>("new-fifo");
  mn.what.type = NF3FIFO;
  calls.emplace_back(NFSPROC3_MKNOD, encode(xdr_MKNOD3args, mn));
  REMOVE3args rm{};
  rm.object.dir = wire(dir);
  rm.object.name = const_cast<char*>("old-file");
  calls.emplace_back(NFSPROC3_REMOVE, encode(xdr_REMOVE3args, rm));
  RMDIR3args rd{};
  rd.object.dir = wire(dir);
  rd.object.name = const_cast<char*>("old-dir");
  calls.emplace_back(NFSPROC3_RMDIR, encode(xdr_RMDIR3args, rd));
  RENAME3args rn{};
  rn.from.dir = wire(dir);
  rn.from.name = const_cast<char*>("from-name");
  rn.to.dir = wire(other);
  rn.to.name = const_cast<char*>("to-name");
  calls.emplace_back(NFSPROC3_RENAME, encode(xdr_RENAME3args, rn));
  LINK3args ln{};
  ln.file = wire(file);
  ln.link.dir = wire(dir);
  ln.link.name = const_cast<char*>("hard-link");
  calls.emplace_back(NFSPROC3_LINK, encode(xdr_LINK3args, ln));
  return calls;
}

TEST_F(NfsForwardingOnLoop, ReadOnlyProceduresParkOnTheLoopAndResumeWithoutTheExecutor) {
  nfs::FileHandle dir = handle(2), link = handle(5);
  std::vector<std::pair<uint32_t, std::vector<uint8_t>>> calls;
  READLINK3args rl{wire(link)};
  calls.emplace_back(NFSPROC3_READLINK, encode(xdr_READLINK3args, rl));
  FSSTAT3args fss{wire(dir)};
  calls.emplace_back(NFSPROC3_FSSTAT, encode(xdr_FSSTAT3args, fss));
  for (uint32_t count : {4096u, 300u, 60u}) {  // 60: not even one entry fits (TOOSMALL)
    READDIR3args rd{};
    rd.dir = wire(dir);
    rd.cookie = 17;
    rd.count = count;
    calls.emplace_back(NFSPROC3_READDIR, encode(xdr_READDIR3args, rd));
  }
  // dircount and maxcount each the tighter bound in turn, and a reply nothing fits.
  for (auto [dircount, maxcount] : {std::pair{512u, 32768u}, {8192u, 2048u}, {100u, 200u}}) {
    READDIRPLUS3args rdp{};
    rdp.dir = wire(dir);
    rdp.cookie = 9;
    rdp.dircount = dircount;
    rdp.maxcount = maxcount;
    calls.emplace_back(NFSPROC3_READDIRPLUS, encode(xdr_READDIRPLUS3args, rdp));
  }
  expect_forwarded_on_the_loop(calls);
}

// SETATTR, CREATE (each mode), MKDIR, SYMLINK, MKNOD, REMOVE, RMDIR, RENAME and LINK the
// same way: sent from the loop once, run once by the owner, and answered with its reply.
TEST_F(NfsForwardingOnLoop, MutationsParkOnTheLoopAndResumeWithoutTheExecutor) {
  expect_forwarded_on_the_loop(mutations());
}

// The volume moves while a forwarded CREATE is parked: the rerun follows the router exactly as
// the executor's rerun does. Moved to another owner (another RemoteVolume): the stored answer
// is the reply and nothing is sent again. Moved here: the local volume takes no mutation on
// the loop, so the rerun goes to the executor and its blocking create() runs here (the
// journal's record of answered calls is what answers a copy the old owner already ran).
TEST_F(NfsForwardingOnLoop, AVolumeThatMovesWhileAMutationIsParkedIsFollowedAsOnTheExecutor) {
  ASSERT_TRUE(link_->wait_connected(5s)) << link_->last_error();
  const std::vector<uint8_t> args = mutations().at(1).second;  // a CREATE
  reference_->send(1, NFSPROC3_CREATE, args);
  ASSERT_TRUE(reference_->wait_replies(1, 10s));
  const std::vector<uint8_t> owners_reply = reference_->results()[1];

  // To another owner.
  RemoteVolume elsewhere(kVolume, link_);
  close_gate();
  ASSERT_EQ(forwarder_->send(1, NFSPROC3_CREATE, args), rpc::CallDispatcher::Outcome::Pending);
  ASSERT_TRUE(wait_arrived(1));
  forwarder_->resolver().serve(&elsewhere);
  {
    HeldExecutor held(forwarder_->executor());
    open_gate();
    ASSERT_TRUE(forwarder_->wait_replies(1, 10s)) << "the rerun went to the executor";
  }
  EXPECT_EQ(forwarder_->results()[1], owners_reply);
  EXPECT_EQ(arrived(), 1u) << "sent again by the new owner's proxy";
  EXPECT_EQ(owner_volume_.calls(), 1u);
  EXPECT_EQ(forwarder_->dispatcher().inline_resumes(), 1u);

  // Here: the local volume (which tells its answers apart) runs it on the executor.
  EchoVolume moved_here(kVolume);
  moved_here.set_status(fs::Status::Exist);
  forwarder_->resolver().serve(remote_.get());
  close_gate();
  ASSERT_EQ(forwarder_->send(2, NFSPROC3_CREATE, args), rpc::CallDispatcher::Outcome::Pending);
  ASSERT_TRUE(wait_arrived(2));
  forwarder_->resolver().serve(&moved_here);
  open_gate();
  ASSERT_TRUE(forwarder_->wait_replies(2, 10s));
  const std::vector<uint8_t> got = forwarder_->results()[2];
  ASSERT_GE(got.size(), 4u);
  EXPECT_EQ(rpc::testing::read_u32(got, 0), uint32_t{NFS3ERR_EXIST}) << "not the local answer";
  EXPECT_EQ(moved_here.calls(), 1u);
  EXPECT_EQ(owner_volume_.calls(), 2u);
  EXPECT_EQ(forwarder_->dispatcher().inline_resumes(), 1u) << "the local rerun stayed inline";
  EXPECT_EQ(forwarder_->dispatcher().parked(), 0u);
}

}  // namespace
}  // namespace nasd::interconnect
