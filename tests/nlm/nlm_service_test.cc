// The NLM service's export rule for the procedures that make the server call back (the _MSG
// calls) or name no file (GRANTED_RES, FREE_ALL): a host that no export lists gets nothing
// queued, and one that an export lists but the handle's export does not is refused likewise.
// Calls to clients are turned off here (every callback is refused and counted as failed), so
// the count of failed callbacks is the count of callbacks the service tried to queue.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <rpc/rpc.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>

#include "server/nfs/exports/exports.h"
#include "server/nfs/handle/handle_codec.h"
#include "server/nlm/lock_state.h"
#include "server/nlm/nlm_service.h"
#include "server/nlm/xdr/nlm4_prot.h"
#include "util/config.h"

namespace nasd::nlm {
namespace {

const char* kConfig = R"(
[volume main]
id = 7
[volume other]
id = 8
[export /r/main]
volume = main
clients = 127.0.0.1
access = rw
secure = no
[export /r/other]
volume = other
clients = 127.0.0.2
access = rw
secure = no
)";

sockaddr_storage peer(const char* address) {
  sockaddr_storage ss{};
  auto* sin = reinterpret_cast<sockaddr_in*>(&ss);
  sin->sin_family = AF_INET;
  sin->sin_port = htons(40000);
  inet_pton(AF_INET, address, &sin->sin_addr);
  return ss;
}

template <typename T>
std::vector<uint8_t> encode(bool_t (*fn)(XDR*, T*), T value) {
  std::vector<uint8_t> buf(4096);
  XDR x;
  xdrmem_create(&x, reinterpret_cast<char*>(buf.data()), static_cast<u_int>(buf.size()), XDR_ENCODE);
  EXPECT_TRUE(fn(&x, &value));
  buf.resize(xdr_getpos(&x));
  xdr_destroy(&x);
  return buf;
}

class NlmServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("nasd-nlm-service-test-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    NlmOptions o;
    o.grace_ms = 0;
    o.send_callbacks = false;
    state_ = std::make_shared<LockState>(o, (dir_ / "sm").string());
    codec_ = std::make_shared<nfs::HandleCodec>(std::vector<uint8_t>(32, 0x42));
    service_ = std::make_unique<NlmService>(state_, codec_, nfs::Exports::from_config(Config::parse(kConfig)),
                                            [](uint32_t) { return true; });
  }
  void TearDown() override {
    service_.reset();
    state_.reset();
    std::filesystem::remove_all(dir_);
  }

  // A _MSG call (or any NLM v4 procedure) from `from`; the callbacks it tried to queue.
  uint64_t call(uint32_t proc, const char* from, const std::vector<uint8_t>& args) {
    rpc::CallContext c;
    c.prog = kNlmProgram;
    c.vers = kNlmVersion;
    c.proc = proc;
    c.peer = peer(from);
    c.peer_len = sizeof(sockaddr_in);
    std::vector<uint8_t> results;
    const uint64_t before = state_->callbacks().failed();
    rpc::DispatchResult r = service_->dispatch(c, args, &results);
    EXPECT_EQ(r.accept, rpc::AcceptStat::Success);
    return state_->callbacks().failed() - before;
  }

  std::vector<uint8_t> test_args(uint32_t volume) {
    handle_ = codec_->encode(volume, {42, 1});
    cookie_ = "c1";
    nlm4_testargs a{};
    a.cookie = {static_cast<u_int>(cookie_.size()), cookie_.data()};
    a.exclusive = true;
    a.alock.caller_name = const_cast<char*>("client");
    a.alock.fh = {static_cast<u_int>(handle_.bytes.size()), reinterpret_cast<char*>(handle_.bytes.data())};
    a.alock.oh = {static_cast<u_int>(cookie_.size()), cookie_.data()};
    a.alock.svid = 1;
    a.alock.l_len = 1;
    return encode(xdr_nlm4_testargs, a);
  }

  std::filesystem::path dir_;
  std::shared_ptr<LockState> state_;
  std::shared_ptr<nfs::HandleCodec> codec_;
  std::unique_ptr<NlmService> service_;
  nfs::FileHandle handle_;
  std::string cookie_;
};

constexpr uint32_t kTestMsg = 6, kLockMsg = 7, kUnlockMsg = 9;

TEST_F(NlmServiceTest, MsgResultsGoOnlyToHostsTheHandlesExportLists) {
  EXPECT_EQ(call(kTestMsg, "127.0.0.1", test_args(7)), 1u) << "an export client gets its TEST_RES";
  EXPECT_EQ(call(kTestMsg, "10.9.9.9", test_args(7)), 0u) << "a host no export lists";
  EXPECT_EQ(call(kTestMsg, "127.0.0.2", test_args(7)), 0u) << "a host another export lists";
  EXPECT_EQ(call(kTestMsg, "127.0.0.2", test_args(8)), 1u) << "...on its own export";
  std::vector<uint8_t> stale = test_args(7);
  stale[stale.size() / 2] ^= 0xff;  // the handle no longer verifies
  EXPECT_EQ(call(kTestMsg, "10.9.9.9", stale), 0u) << "a stale handle from a host no export lists";
  EXPECT_EQ(call(kTestMsg, "127.0.0.1", stale), 1u) << "an export client hears of its stale handle";
}

TEST_F(NlmServiceTest, LockAndUnlockMsgFromAnUnlistedHostChangeAndQueueNothing) {
  (void)test_args(7);  // sets handle_ and cookie_
  // nlm4_lockargs: cookie, block, exclusive, alock, reclaim, state.
  nlm4_lockargs l{};
  l.cookie = {static_cast<u_int>(cookie_.size()), cookie_.data()};
  l.exclusive = true;
  l.alock.caller_name = const_cast<char*>("client");
  l.alock.fh = {static_cast<u_int>(handle_.bytes.size()), reinterpret_cast<char*>(handle_.bytes.data())};
  l.alock.oh = l.cookie;
  l.alock.svid = 1;
  l.alock.l_len = 1;
  EXPECT_EQ(call(kLockMsg, "10.9.9.9", encode(xdr_nlm4_lockargs, l)), 0u);
  std::optional<Lock> conflict;
  EXPECT_EQ(state_->test(Lock{FileId{7, 42, 1}, {"x", 1, "x", "127.0.0.1"}, true, ByteRange::from_nlm(0, 1)},
                         &conflict),
            LockStatus::Granted)
      << "an unlisted host's LOCK_MSG took a lock";
  nlm4_unlockargs u{l.cookie, l.alock};
  EXPECT_EQ(call(kUnlockMsg, "10.9.9.9", encode(xdr_nlm4_unlockargs, u)), 0u);
  EXPECT_EQ(call(kLockMsg, "127.0.0.1", encode(xdr_nlm4_lockargs, l)), 1u);
}

}  // namespace
}  // namespace nasd::nlm

namespace nasd::nlm {
namespace {

// A callback refused for want of room still runs its give-up path (a GRANTED's pending grant is
// forgotten there), as one given up after its last attempt does; refusals are counted.
TEST(CallbackSender, ARefusedJobRunsItsGiveUpPath) {
  CallbackSender::Options o;
  o.max_queue = 0;
  CallbackSender sender(o);
  int given_up = 0;
  CallbackCall call = callback_to({"127.0.0.1", "", ""}, kNlmProgram, kNlmVersion, 5);
  call.urgent = true;
  sender.post(call, {}, [&] { given_up++; });
  call.urgent = false;
  sender.post(call, {}, [&] { given_up++; });
  EXPECT_EQ(given_up, 2);
  EXPECT_EQ(sender.failed(), 2u);
  EXPECT_EQ(sender.queued(), 0u);
}

}  // namespace
}  // namespace nasd::nlm
