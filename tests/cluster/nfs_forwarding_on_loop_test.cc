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

#include <atomic>
#include <chrono>
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
#include "tests/rpc/rpc_test_client.h"
#include "tests/support/memory_resolver.h"
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

template <typename T>
std::vector<uint8_t> encode(nfs::xdr::Routine<T> routine, const T& value) {
  std::vector<uint8_t> out;
  EXPECT_TRUE(nfs::xdr::append(routine, value, &out));
  return out;
}

nfs_fh3 wire(nfs::FileHandle& fh) {
  nfs_fh3 w{};
  w.data.data_len = nfs::FileHandle::kSize;
  w.data.data_val = reinterpret_cast<char*>(fh.bytes.data());
  return w;
}

// One NFS server: the program over `volume`, behind a dispatcher whose executor has one thread.
// Collects the NFS results of every reply by xid.
class NfsNode {
 public:
  NfsNode(fs::Volume* volume, std::shared_ptr<nfs::Exports> exports,
          std::shared_ptr<nfs::HandleCodec> handles)
      : resolver_(std::make_shared<test_support::MemoryResolver>()) {
    resolver_->add(volume);
    dispatcher_.add_service(std::make_shared<nfs::Nfs3Service>(resolver_, exports, handles));
  }
  ~NfsNode() {
    dispatcher_.close();
    executor_.stop();
  }

  rpc::CallDispatcher::Outcome::Kind send(uint32_t xid, uint32_t proc, std::vector<uint8_t> args) {
    rpc::testing::CallSpec spec;
    spec.xid = xid;
    spec.prog = 100003;
    spec.vers = 3;
    spec.proc = proc;
    spec.cred_flavor = 1;  // AUTH_SYS
    rpc::testing::AuthSysParams cred;
    cred.uid = 1234;
    cred.gid = 567;
    spec.cred_body = rpc::testing::auth_sys_body(cred);
    spec.args = std::move(args);
    const std::vector<uint8_t> message = rpc::testing::make_call(spec);
    rpc::CallOrigin origin;
    auto* in = reinterpret_cast<sockaddr_in*>(&origin.peer);
    in->sin_family = AF_INET;
    in->sin_port = htons(40123);
    in->sin_addr.s_addr = htonl(0x7f000001);
    origin.peer_len = sizeof(sockaddr_in);
    auto outcome = dispatcher_.handle(rpc::Record(message.begin(), message.end()), origin,
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

  std::shared_ptr<test_support::MemoryResolver> resolver_;
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
      arrived_.fetch_add(1);
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
    forwarder_.reset();
    link_->stop();
    server_->stop();
  }

  nfs::FileHandle handle(uint64_t ino) {
    return handles_->encode(kVolume, fs::InodeId{ino, 1}, exports_->all().front().export_id);
  }

  // Sends every call (xid 1, 2, ...) to the forwarder with its executor held, then to the
  // reference; each must be answered without the executor, run once on the owner, and give
  // the reference's reply.
  void expect_forwarded_on_the_loop(const std::vector<std::pair<uint32_t, std::vector<uint8_t>>>& calls) {
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
    EXPECT_EQ(arrived_.load(), calls.size());  // each sent once
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
  std::atomic<size_t> arrived_{0};
  std::unique_ptr<InterconnectServer> server_;
  std::shared_ptr<PeerClient> link_;
  std::unique_ptr<RemoteVolume> remote_;
  std::shared_ptr<nfs::Exports> exports_;
  std::shared_ptr<nfs::HandleCodec> handles_;
  EchoVolume reference_volume_{kVolume};
  std::unique_ptr<NfsNode> forwarder_;
  std::unique_ptr<NfsNode> reference_;
};

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

}  // namespace
}  // namespace nasd::interconnect
