// The reply cache moves with the data (issue 10), at the unit level: the NFS program serves
// every non-idempotent procedure through a journalled volume, the journal is lost with the fs's
// unflushed state (kill -9), and recovery rebuilds the duplicate request cache. Each rebuilt
// entry must be the reply the client was sent -- the whole RPC message, byte for byte: status,
// the new object's handle (which names the export the call came through), attributes and WCC
// data. The file handles name two different exports of the volume, and one is a handle issued
// before handles named their export, which is answered under its export's real id.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "nvram/journal_volume.h"
#include "server/nfs/exports/exports.h"
#include "server/nfs/handle/handle_codec.h"
#include "server/nfs/nfs3/nfs3_service.h"
#include "server/nfs/nfs3/recovered_replies.h"
#include "server/nfs/xdr/nfs3_prot.h"
#include "server/nfs/xdr/xdr_codec.h"
#include "server/rpc/duplicate_request_cache.h"
#include "tests/nfs/xdr_encode.h"
#include "tests/nvram/test_util.h"
#include "tests/support/memory_fs.h"
#include "tests/support/memory_resolver.h"
#include "util/config.h"

namespace nasd::nfs {
namespace {

// Two read-write exports of volume 7; 10.2.0.0/16 is listed by /r/alt only, so a legacy handle
// (export id 0) from there is answered under /r/alt.
const char* kConfig = R"(
[volume main]
id = 7
[export /r/main]
volume = main
clients = 127.0.0.0/8
options = rw, insecure, no_root_squash
[export /r/alt]
volume = main
clients = 127.0.0.0/8, 10.2.0.0/16
options = rw, insecure, no_root_squash
)";

sockaddr_storage ipv4(const char* addr, uint16_t port) {
  sockaddr_storage ss{};
  auto* sin = reinterpret_cast<sockaddr_in*>(&ss);
  sin->sin_family = AF_INET;
  sin->sin_port = htons(port);
  inet_pton(AF_INET, addr, &sin->sin_addr);
  return ss;
}

nfs_fh3 wire(FileHandle& fh) {
  nfs_fh3 w{};
  w.data.data_len = FileHandle::kSize;
  w.data.data_val = reinterpret_cast<char*>(fh.bytes.data());
  return w;
}

using testing::encode;

std::vector<uint8_t> message(const rpc::EncodedReply& r) {
  std::vector<uint8_t> out(r.udp_head().begin(), r.udp_head().end());
  out.insert(out.end(), r.body.begin(), r.body.end());
  return out;
}

class RecoveredRepliesTest : public ::testing::Test {
 protected:
  struct Sent {
    rpc::CallContext call;
    std::vector<uint8_t> args;
    std::vector<uint8_t> reply;  // the whole RPC reply message the client was sent
  };

  void SetUp() override {
    opts_ = nvram::testing::small_options(dir_.file("nv"), 8 << 20);
    fs_ = std::make_shared<test_support::MemoryFs>(7, nvram::testing::mem_target_options());
    handles_ = std::make_shared<HandleCodec>(std::vector<uint8_t>(32, 0x42));
    exports_ = Exports::from_config(Config::parse(kConfig));
    for (const auto& e : exports_->all()) export_ids_[e.path] = e.export_id;
    open(nullptr);
  }

  // Opens the journal and the volume over the fs, recovers into `sink`, and serves it.
  void open(fs::RecoveredCallSink* sink) {
    journal_ = nvram::Journal::open(opts_);
    volume_ = std::make_unique<nvram::JournalVolume>(journal_, fs_);
    volume_->recover(sink);
    resolver_ = std::make_shared<test_support::MemoryResolver>();
    resolver_->add(volume_.get());
    nfs_ = std::make_unique<Nfs3Service>(resolver_, exports_, handles_);
  }

  void crash() {
    nfs_.reset();
    volume_.reset();
    journal_.reset();
    fs_->crash();
  }

  FileHandle root_under(const std::string& export_path) {
    return handles_->encode(7, fs_->root(), export_path.empty() ? 0 : export_ids_[export_path]);
  }

  // Sends one call from `peer` as the transport would, keeps its reply, and returns the NFS
  // status (the first word of the results).
  template <typename A>
  uint32_t send(uint32_t proc, xdr::Routine<A> routine, const A& args,
                const char* peer = "127.0.0.1") {
    Sent s;
    s.call.xid = next_xid_++;
    s.call.prog = 100003;
    s.call.vers = 3;
    s.call.proc = proc;
    s.call.cred.flavor = rpc::kAuthSys;
    s.call.cred.uid = 1000;
    s.call.cred.gid = 1000;
    s.call.peer = ipv4(peer, 40123);
    s.call.peer_len = sizeof(sockaddr_in);
    s.call.tcp = false;
    s.args = encode(routine, args);
    std::vector<uint8_t> results;
    rpc::DispatchResult r = nfs_->dispatch(s.call, s.args, &results);
    EXPECT_EQ(r.accept, rpc::AcceptStat::Success);
    const uint32_t status = results.size() >= 4 ? ntohl(*reinterpret_cast<uint32_t*>(
                                                      results.data()))
                                                : ~0u;
    s.reply = message(rpc::encode_dispatch_reply(s.call.xid, r, std::move(results)));
    sent_.push_back(std::move(s));
    return status;
  }

  nvram::testing::ScratchDir dir_;
  nvram::JournalOptions opts_;
  std::shared_ptr<test_support::MemoryFs> fs_;
  std::shared_ptr<HandleCodec> handles_;
  std::shared_ptr<Exports> exports_;
  std::map<std::string, uint32_t> export_ids_;
  std::shared_ptr<nvram::Journal> journal_;
  std::unique_ptr<nvram::JournalVolume> volume_;
  std::shared_ptr<test_support::MemoryResolver> resolver_;
  std::unique_ptr<Nfs3Service> nfs_;
  uint32_t next_xid_ = 0x5000;
  std::vector<Sent> sent_;
};

diropargs3 where(FileHandle& dir, const std::string& name) {
  diropargs3 d{};
  d.dir = wire(dir);
  d.name = const_cast<char*>(name.c_str());
  return d;
}

TEST_F(RecoveredRepliesTest, EveryRebuiltReplyIsTheLiveReplyByteForByte) {
  FileHandle main_root = root_under("/r/main");
  FileHandle alt_root = root_under("/r/alt");
  FileHandle legacy_root = root_under("");
  const std::string f = "f", g = "g", d = "d", e = "e", l = "l", n = "n", h = "h", to = "to",
                    target = "f", gone = "gone", x = "x";
  ASSERT_NE(export_ids_["/r/main"], export_ids_["/r/alt"]);

  CREATE3args create{};
  create.where = where(main_root, f);
  create.how.mode = GUARDED;
  create.how.createhow3_u.obj_attributes.mode.set_it = TRUE;
  create.how.createhow3_u.obj_attributes.mode.set_mode3_u.mode = 0644;
  ASSERT_EQ(send(8, xdr_CREATE3args, create), NFS3_OK);
  create.where = where(alt_root, g);
  ASSERT_EQ(send(8, xdr_CREATE3args, create), NFS3_OK);
  create.where = where(legacy_root, x);
  ASSERT_EQ(send(8, xdr_CREATE3args, create, "10.2.0.9"), NFS3_OK) << "legacy handle";

  MKDIR3args mkdir{};
  mkdir.where = where(alt_root, d);
  ASSERT_EQ(send(9, xdr_MKDIR3args, mkdir), NFS3_OK);
  mkdir.where = where(main_root, e);
  ASSERT_EQ(send(9, xdr_MKDIR3args, mkdir), NFS3_OK);

  SYMLINK3args symlink{};
  symlink.where = where(alt_root, l);
  symlink.symlink.symlink_data = const_cast<char*>(target.c_str());
  ASSERT_EQ(send(10, xdr_SYMLINK3args, symlink), NFS3_OK);

  MKNOD3args mknod{};
  mknod.where = where(main_root, n);
  mknod.what.type = NF3FIFO;
  ASSERT_EQ(send(11, xdr_MKNOD3args, mknod), NFS3_OK);

  // The file f, found through /r/alt, for SETATTR and LINK.
  fs::InodeId ino;
  std::optional<fs::Attr> ignored, ignored_dir;
  ASSERT_EQ(fs_->lookup(fs::OpContext{}, fs_->root(), f, &ino, &ignored, &ignored_dir),
            fs::Status::Ok);
  FileHandle file = handles_->encode(7, ino, export_ids_["/r/alt"]);
  SETATTR3args setattr{};
  setattr.object = wire(file);
  setattr.new_attributes.size.set_it = TRUE;
  setattr.new_attributes.size.set_size3_u.size = 4096;
  ASSERT_EQ(send(2, xdr_SETATTR3args, setattr), NFS3_OK);

  LINK3args link{};
  link.file = wire(file);
  link.link = where(main_root, h);
  ASSERT_EQ(send(15, xdr_LINK3args, link), NFS3_OK);

  RENAME3args rename{};
  rename.from = where(main_root, g);
  rename.to = where(alt_root, to);
  ASSERT_EQ(send(14, xdr_RENAME3args, rename), NFS3_OK);

  REMOVE3args remove{};
  remove.object = where(alt_root, to);
  ASSERT_EQ(send(12, xdr_REMOVE3args, remove), NFS3_OK);

  RMDIR3args rmdir{};
  rmdir.object = where(main_root, e);
  ASSERT_EQ(send(13, xdr_RMDIR3args, rmdir), NFS3_OK);
  ASSERT_EQ(sent_.size(), 12u);

  crash();
  auto cache = std::make_shared<rpc::DuplicateRequestCache>();
  RecoveredReplies sink(handles_, cache);
  open(&sink);
  EXPECT_EQ(sink.rebuilt(), sent_.size());

  for (const Sent& s : sent_) {
    rpc::DuplicateRequestCache::Lookup got = cache->begin(rpc::DrcKey::make(s.call, s.args));
    ASSERT_EQ(got.state, rpc::DuplicateRequestCache::State::Done)
        << "procedure " << s.call.proc << " xid " << s.call.xid << " was not rebuilt";
    EXPECT_EQ(message(*got.reply), s.reply)
        << "procedure " << s.call.proc << " xid " << s.call.xid
        << ": the rebuilt reply differs from the one the client was sent";
  }
}

}  // namespace
}  // namespace nasd::nfs
