// NFS service, run-to-completion: dispatch_inline answers GETATTR, LOOKUP, ACCESS, READ,
// READLINK, READDIR(PLUS), FSSTAT and UNSTABLE WRITE on the event loop through the volume's
// non-blocking attempts, byte for byte as dispatch() would; an attempt that would block gives
// the call back (to the executor) having done nothing; the export checks apply on the loop as
// on the executor; nothing a local volume does not take (mutations) runs on the loop.
#include <atomic>
#include <memory>

#include "fs/wrapped_volume.h"
#include "tests/nfs/nfs3_test_ops.h"

namespace nasd::nfs::fixture {
namespace {

// The in-memory volume with non-blocking attempts: each answers with the blocking call (the
// memory volume never waits), or refuses while `refuse` is set. Counts both.
class AttemptingVolume : public fs::WrappedVolume {
 public:
  explicit AttemptingVolume(fs::Volume* inner)
      : WrappedVolume(std::shared_ptr<fs::Volume>(inner, [](fs::Volume*) {})) {}

  // The reads, and UNSTABLE WRITE (as a real volume: only UNSTABLE data is taken on the
  // loop), answered by the blocking call; the rest as WrappedVolume passes them on.
  std::optional<fs::call::VolumeReply> try_call(const fs::call::VolumeRequest& req) override {
    using fs::call::VolumeOp;
    switch (req.op()) {
      case VolumeOp::Write:
        if (std::get<fs::call::WriteArgs>(req.args).stable != fs::Stability::Unstable) {
          refused();
          return std::nullopt;
        }
        [[fallthrough]];
      case VolumeOp::Getattr:
      case VolumeOp::Lookup:
      case VolumeOp::Access:
      case VolumeOp::Read:
      case VolumeOp::Readlink:
      case VolumeOp::Readdir:
      case VolumeOp::Fsstat:
        if (refused()) return std::nullopt;
        return call(req);
      default:
        return WrappedVolume::try_call(req);
    }
  }
  // What the blocking readdir was asked for, to compare with the attempt's.
  fs::call::VolumeReply call(const fs::call::VolumeRequest& req) override {
    if (const auto* a = std::get_if<fs::call::ReaddirArgs>(&req.args))
      asked_entries = a->max_entries;
    return WrappedVolume::call(req);
  }

  // The Volume default (try_read into a buffer of its own), not WrappedVolume's forwarding to
  // the memory volume, which has no attempts.
  std::optional<fs::Status> try_read_shared(const fs::OpContext& ctx, fs::InodeId id,
                                            uint64_t offset, uint32_t count,
                                            util::ByteSlices* data, bool* eof,
                                            std::optional<fs::Attr>* attr) override {
    return fs::Volume::try_read_shared(ctx, id, offset, count, data, eof, attr);
  }

  std::atomic<bool> refuse{false};
  std::atomic<int> attempts{0};
  std::atomic<uint32_t> asked_entries{0};

 private:
  bool refused() {
    attempts++;
    return refuse.load();
  }
};

class Nfs3Inline : public Nfs3Ops {
 protected:
  Nfs3Inline() : attempting_(&main_) { resolver_->add(&attempting_); }

  // The reply bytes (results + tail) of `args` as procedure `proc`, run on the executor.
  std::vector<uint8_t> on_executor(uint32_t proc, const std::vector<uint8_t>& args,
                                   rpc::AcceptStat* accept = nullptr) {
    rpc::CallContext c = call_;
    c.proc = proc;
    std::vector<uint8_t> out;
    rpc::DispatchResult r = nfs_->dispatch(c, args, &out);
    if (accept) *accept = r.accept;
    r.tail.copy_to(&out);
    return out;
  }
  // The same on the event loop; nullopt when the service gave the call back.
  std::optional<std::vector<uint8_t>> on_loop(uint32_t proc, const std::vector<uint8_t>& args,
                                              rpc::AcceptStat* accept = nullptr) {
    rpc::CallContext c = call_;
    c.proc = proc;
    std::vector<uint8_t> out;
    std::optional<rpc::DispatchResult> r = nfs_->dispatch_inline(c, args, &out);
    if (!r) return std::nullopt;
    if (accept) *accept = r->accept;
    r->tail.copy_to(&out);
    return out;
  }

  std::vector<uint8_t> getattr_args(FileHandle& fh) { return encode(xdr_GETATTR3args, {wire(fh)}); }
  std::vector<uint8_t> lookup_args(FileHandle& dir, const char* name) {
    LOOKUP3args a{};
    a.what.dir = wire(dir);
    a.what.name = const_cast<char*>(name);
    return encode(xdr_LOOKUP3args, a);
  }
  std::vector<uint8_t> access_args(FileHandle& fh) {
    ACCESS3args a{};
    a.object = wire(fh);
    a.access = ACCESS3_READ | ACCESS3_MODIFY | ACCESS3_LOOKUP;
    return encode(xdr_ACCESS3args, a);
  }
  std::vector<uint8_t> read_args(FileHandle& fh, uint64_t offset, uint32_t count) {
    READ3args a{};
    a.file = wire(fh);
    a.offset = offset;
    a.count = count;
    return encode(xdr_READ3args, a);
  }

  std::vector<uint8_t> write_args(FileHandle& fh, uint64_t offset, const std::string& bytes,
                                  stable_how stable) {
    WRITE3args a{};
    a.file = wire(fh);
    a.offset = offset;
    a.count = static_cast<count3>(bytes.size());
    a.stable = stable;
    a.data.data_len = static_cast<u_int>(bytes.size());
    a.data.data_val = const_cast<char*>(bytes.data());
    return encode(xdr_WRITE3args, a);
  }

  int attempts() const { return attempting_.attempts.load(); }
  // The nfsstat3 every NFSv3 result starts with.
  static uint32_t status_of(const std::vector<uint8_t>& reply) {
    return reply.size() < 4 ? UINT32_MAX
                            : (uint32_t{reply[0]} << 24) | (uint32_t{reply[1]} << 16) |
                                  (uint32_t{reply[2]} << 8) | reply[3];
  }

  AttemptingVolume attempting_;
};

TEST_F(Nfs3Inline, ReadProceduresAnswerOnTheLoopExactlyAsOnTheExecutor) {
  FileHandle dir = root(), f;
  ASSERT_EQ(create(dir, "data", &f), NFS3_OK);
  ASSERT_EQ(write(f, 0, std::string(10000, 'q') + "tail"), NFS3_OK);
  const std::vector<std::pair<uint32_t, std::vector<uint8_t>>> calls = {
      {NFSPROC3_NULL, {}},
      {NFSPROC3_GETATTR, getattr_args(f)},
      {NFSPROC3_LOOKUP, lookup_args(dir, "data")},
      {NFSPROC3_LOOKUP, lookup_args(dir, "missing")},  // an error reply, with dir attributes
      {NFSPROC3_ACCESS, access_args(f)},
      {NFSPROC3_READ, read_args(f, 9990, 100)},
      {NFSPROC3_READ, read_args(dir, 0, 100)},  // ISDIR
  };
  for (const auto& [proc, args] : calls) {
    auto inline_reply = on_loop(proc, args);
    ASSERT_TRUE(inline_reply) << "procedure " << proc << " was not answered on the loop";
    EXPECT_EQ(*inline_reply, on_executor(proc, args)) << "procedure " << proc;
  }
  EXPECT_GE(attempts(), 6);
}

TEST_F(Nfs3Inline, AnAttemptThatWouldBlockGivesTheCallBackToTheExecutor) {
  FileHandle dir = root(), f;
  ASSERT_EQ(create(dir, "data", &f), NFS3_OK);
  ASSERT_EQ(write(f, 0, "contents"), NFS3_OK);
  attempting_.refuse = true;
  EXPECT_FALSE(on_loop(NFSPROC3_GETATTR, getattr_args(f)));
  EXPECT_FALSE(on_loop(NFSPROC3_LOOKUP, lookup_args(dir, "data")));
  EXPECT_FALSE(on_loop(NFSPROC3_ACCESS, access_args(f)));
  EXPECT_FALSE(on_loop(NFSPROC3_READ, read_args(f, 0, 8)));
  EXPECT_EQ(attempts(), 4);
  // The executor then answers them in full.
  std::string data;
  ASSERT_EQ(read(f, 0, 8, &data), NFS3_OK);
  EXPECT_EQ(data, "contents");
}

TEST_F(Nfs3Inline, ExportChecksApplyOnTheLoop) {
  FileHandle f;
  ASSERT_EQ(create(root(), "data", &f), NFS3_OK);
  // A host the export does not list: ACCES, answered on the loop without asking the volume.
  call_.peer = ipv4_peer("192.0.2.9");
  rpc::AcceptStat accept{};
  auto reply = on_loop(NFSPROC3_GETATTR, getattr_args(f), &accept);
  ASSERT_TRUE(reply);
  EXPECT_EQ(*reply, on_executor(NFSPROC3_GETATTR, getattr_args(f)));
  EXPECT_EQ(status_of(*reply), uint32_t{NFS3ERR_ACCES});
  EXPECT_EQ(attempts(), 0);
  // A forged handle: BADHANDLE, the same way.
  call_.peer = ipv4_peer("127.0.0.1");
  FileHandle forged = f;
  forged.bytes[5] ^= 1;
  reply = on_loop(NFSPROC3_GETATTR, getattr_args(forged));
  ASSERT_TRUE(reply);
  EXPECT_EQ(status_of(*reply), uint32_t{NFS3ERR_BADHANDLE});
  // Undecodable arguments: GARBAGE_ARGS on the loop too.
  on_loop(NFSPROC3_GETATTR, {1, 2}, &accept);
  EXPECT_EQ(accept, rpc::AcceptStat::GarbageArgs);
}

TEST_F(Nfs3Inline, UnstableWriteRunsOnTheLoopAndAnAttemptThatWouldBlockChangesNothing) {
  FileHandle dir = root(), f, g;
  ASSERT_EQ(create(dir, "a", &f), NFS3_OK);
  ASSERT_EQ(create(dir, "b", &g), NFS3_OK);
  const std::string bytes(5000, 'w');
  // The same WRITE to two equal files, one on the loop and one on the executor: the replies
  // differ only in the WCC times, so compare what the files then hold and the reply's shape.
  auto inline_reply = on_loop(NFSPROC3_WRITE, write_args(f, 100, bytes, UNSTABLE));
  ASSERT_TRUE(inline_reply) << "an UNSTABLE WRITE the volume can take went to the executor";
  std::vector<uint8_t> pooled = on_executor(NFSPROC3_WRITE, write_args(g, 100, bytes, UNSTABLE));
  EXPECT_EQ(status_of(*inline_reply), uint32_t{NFS3_OK});
  EXPECT_EQ(inline_reply->size(), pooled.size());
  std::string a, b;
  ASSERT_EQ(read(f, 0, 6000, &a), NFS3_OK);
  ASSERT_EQ(read(g, 0, 6000, &b), NFS3_OK);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, std::string(100, '\0') + bytes);
  // Refused: the call goes back to the executor and the file is untouched.
  attempting_.refuse = true;
  EXPECT_FALSE(on_loop(NFSPROC3_WRITE, write_args(f, 0, "zz", UNSTABLE)));
  attempting_.refuse = false;
  ASSERT_EQ(read(f, 0, 2, &a), NFS3_OK);
  EXPECT_EQ(a, std::string(2, '\0'));
  // Errors are answered on the loop like on the executor (a directory is not written).
  auto on_dir = on_loop(NFSPROC3_WRITE, write_args(dir, 0, "x", UNSTABLE));
  ASSERT_TRUE(on_dir);
  EXPECT_EQ(*on_dir, on_executor(NFSPROC3_WRITE, write_args(dir, 0, "x", UNSTABLE)));
  EXPECT_EQ(status_of(*on_dir), uint32_t{NFS3ERR_ISDIR});
}

// READLINK, READDIR, READDIRPLUS and FSSTAT on the loop: the same bytes as on the executor,
// and the volume asked for the same number of entries, whichever of READDIRPLUS's two byte
// bounds (dircount, maxcount) is the tighter one, down to a reply no entry fits (TOOSMALL).
TEST_F(Nfs3Inline, DirectoryListingsLinksAndFsstatAnswerOnTheLoopExactlyAsOnTheExecutor) {
  FileHandle dir = root(), f, l;
  for (int i = 0; i < 40; ++i) {
    FileHandle ignored;
    ASSERT_EQ(create(dir, ("name-" + std::string(i % 7 + 1, 'x') + std::to_string(i)).c_str(),
                     &ignored),
              NFS3_OK);
  }
  ASSERT_EQ(create(dir, "data", &f), NFS3_OK);
  SYMLINK3args sl{};
  sl.where.dir = wire(dir);
  sl.where.name = const_cast<char*>("link");
  sl.symlink.symlink_data = const_cast<char*>("data/../data");
  Reply<SYMLINK3res> made(xdr_SYMLINK3res);
  call(NFSPROC3_SYMLINK, xdr_SYMLINK3args, sl, xdr_SYMLINK3res, &made);
  ASSERT_EQ(made->status, NFS3_OK);
  l = from_wire(made->SYMLINK3res_u.resok.obj.post_op_fh3_u.handle);

  std::vector<std::pair<uint32_t, std::vector<uint8_t>>> calls = {
      {NFSPROC3_READLINK, encode(xdr_READLINK3args, READLINK3args{wire(l)})},
      {NFSPROC3_READLINK, encode(xdr_READLINK3args, READLINK3args{wire(f)})},  // INVAL
      {NFSPROC3_FSSTAT, encode(xdr_FSSTAT3args, FSSTAT3args{wire(f)})},
  };
  for (uint32_t count : {65536u, 400u, 60u}) {
    READDIR3args rd{};
    rd.dir = wire(dir);
    rd.count = count;
    calls.emplace_back(NFSPROC3_READDIR, encode(xdr_READDIR3args, rd));
  }
  for (auto [dircount, maxcount] :
       {std::pair{65536u, 65536u}, {200u, 65536u}, {65536u, 1500u}, {10u, 100u}}) {
    READDIRPLUS3args rdp{};
    rdp.dir = wire(dir);
    rdp.dircount = dircount;
    rdp.maxcount = maxcount;
    calls.emplace_back(NFSPROC3_READDIRPLUS, encode(xdr_READDIRPLUS3args, rdp));
  }
  for (const auto& [proc, args] : calls) {
    auto inline_reply = on_loop(proc, args);
    ASSERT_TRUE(inline_reply) << "procedure " << proc << " was not answered on the loop";
    const uint32_t asked_on_loop = attempting_.asked_entries.exchange(0);
    EXPECT_EQ(*inline_reply, on_executor(proc, args)) << "procedure " << proc;
    EXPECT_EQ(attempting_.asked_entries.load(), asked_on_loop) << "procedure " << proc;
  }
  // Refused: given back to the executor.
  attempting_.refuse = true;
  for (const auto& [proc, args] : calls) EXPECT_FALSE(on_loop(proc, args)) << "procedure " << proc;
}

// A local volume takes no name-space mutation on the loop (only a forwarded one may: its owner
// runs it), a stable WRITE only when its commit needs no wait; FSINFO and PATHCONF never.
TEST_F(Nfs3Inline, MutationsAndOtherProceduresNeverRunOnTheLoop) {
  FileHandle dir = root(), f;
  ASSERT_EQ(create(dir, "data", &f), NFS3_OK);
  EXPECT_FALSE(on_loop(NFSPROC3_WRITE, write_args(f, 0, "x", FILE_SYNC)));
  CREATE3args c{};
  c.where.dir = wire(dir);
  c.where.name = const_cast<char*>("other");
  EXPECT_FALSE(on_loop(NFSPROC3_CREATE, encode(xdr_CREATE3args, c)));
  // Limits may have to be asked of another node (RemoteVolume::limits()): never on the loop.
  EXPECT_FALSE(on_loop(NFSPROC3_FSINFO, getattr_args(f)));
  EXPECT_FALSE(on_loop(NFSPROC3_PATHCONF, getattr_args(f)));
  EXPECT_EQ(lookup(dir, "other"), NFS3ERR_NOENT) << "the CREATE ran on the loop";
  std::string data;
  ASSERT_EQ(read(f, 0, 10, &data), NFS3_OK);
  EXPECT_EQ(data, "") << "the FILE_SYNC WRITE ran on the loop";
  rpc::CallContext v2 = call_;
  v2.vers = 2;
  std::vector<uint8_t> out;
  EXPECT_FALSE(nfs_->dispatch_inline(v2, getattr_args(f), &out));
}

}  // namespace
}  // namespace nasd::nfs::fixture
