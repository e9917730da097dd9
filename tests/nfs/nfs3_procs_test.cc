// NFS service: what each procedure does and returns, over the in-memory volume.
#include "tests/nfs/nfs3_test_ops.h"

namespace nasd::nfs::fixture {
namespace {

class Nfs3Procs : public Nfs3Ops {};

TEST_F(Nfs3Procs, CreateWriteReadRoundTrip) {
  FileHandle f;
  ASSERT_EQ(create(root(), "data.bin", &f), NFS3_OK);
  WRITE3resok ok{};
  ASSERT_EQ(write(f, 0, "hello, world", &ok), NFS3_OK);
  EXPECT_EQ(ok.count, 12u);
  EXPECT_EQ(ok.committed, FILE_SYNC);
  EXPECT_EQ(get_verifier_bytes(ok.verf), main_.write_verifier());
  EXPECT_TRUE(ok.file_wcc.before.attributes_follow);
  EXPECT_EQ(ok.file_wcc.before.pre_op_attr_u.attributes.size, 0u);
  EXPECT_EQ(ok.file_wcc.after.post_op_attr_u.attributes.size, 12u);

  std::string data;
  bool eof = false;
  ASSERT_EQ(read(f, 7, 100, &data, &eof), NFS3_OK);
  EXPECT_EQ(data, "world");
  EXPECT_TRUE(eof);
  ASSERT_EQ(read(f, 0, 5, &data, &eof), NFS3_OK);
  EXPECT_EQ(data, "hello");
  EXPECT_FALSE(eof);
}

TEST_F(Nfs3Procs, WriteCountShorterThanPayloadWritesCount) {
  FileHandle f;
  ASSERT_EQ(create(root(), "f", &f), NFS3_OK);
  WRITE3args a{};
  a.file = wire(f);
  a.count = 3;
  a.stable = FILE_SYNC;
  std::string payload = "abcdef";
  a.data.data_len = 6;
  a.data.data_val = payload.data();
  Reply<WRITE3res> r(xdr_WRITE3res);
  call(NFSPROC3_WRITE, xdr_WRITE3args, a, xdr_WRITE3res, &r);
  ASSERT_EQ(r->status, NFS3_OK);
  EXPECT_EQ(r->WRITE3res_u.resok.count, 3u);
  std::string data;
  ASSERT_EQ(read(f, 0, 100, &data), NFS3_OK);
  EXPECT_EQ(data, "abc");

  a.count = 7;  // more than the payload holds
  EXPECT_EQ(call_status_only(NFSPROC3_WRITE, encode(xdr_WRITE3args, a)).accept,
            rpc::AcceptStat::GarbageArgs);
}

TEST_F(Nfs3Procs, ReadOverUdpIsCappedToTheDatagramTransfer) {
  FileHandle f;
  ASSERT_EQ(create(root(), "big", &f), NFS3_OK);
  ASSERT_EQ(write(f, 0, std::string(100 * 1024, 'z')), NFS3_OK);
  call_.tcp = false;
  std::string data;
  ASSERT_EQ(read(f, 0, 100 * 1024, &data), NFS3_OK);
  EXPECT_EQ(data.size(), 32u * 1024);
  call_.tcp = true;
  ASSERT_EQ(read(f, 0, 100 * 1024, &data), NFS3_OK);
  EXPECT_EQ(data.size(), 100u * 1024);
}

TEST_F(Nfs3Procs, ReadOfDirectoryIsIsdirWithAttributes) {
  READ3args a{};
  FileHandle fh = root();
  a.file = wire(fh);
  a.count = 10;
  Reply<READ3res> r(xdr_READ3res);
  call(NFSPROC3_READ, xdr_READ3args, a, xdr_READ3res, &r);
  EXPECT_EQ(r->status, NFS3ERR_ISDIR);
  EXPECT_TRUE(r->READ3res_u.resfail.file_attributes.attributes_follow);
}

TEST_F(Nfs3Procs, GuardedCreateOfExistingNameIsExistWithDirWcc) {
  ASSERT_EQ(create(root(), "x"), NFS3_OK);
  CREATE3args a{};
  FileHandle dir = root();
  a.where.dir = wire(dir);
  a.where.name = const_cast<char*>("x");
  a.how.mode = GUARDED;
  Reply<CREATE3res> r(xdr_CREATE3res);
  call(NFSPROC3_CREATE, xdr_CREATE3args, a, xdr_CREATE3res, &r);
  EXPECT_EQ(r->status, NFS3ERR_EXIST);
  EXPECT_TRUE(r->CREATE3res_u.resfail.dir_wcc.after.attributes_follow);
  // UNCHECKED reuses the existing file.
  FileHandle first, again;
  ASSERT_EQ(lookup(root(), "x", &first), NFS3_OK);
  ASSERT_EQ(create(root(), "x", &again, UNCHECKED), NFS3_OK);
  EXPECT_EQ(first.bytes, again.bytes);
}

TEST_F(Nfs3Procs, ExclusiveCreateRetryWithSameVerifierSucceeds) {
  FileHandle a, b;
  ASSERT_EQ(create(root(), "lock", &a, EXCLUSIVE, 0x1122334455667788ull), NFS3_OK);
  ASSERT_EQ(create(root(), "lock", &b, EXCLUSIVE, 0x1122334455667788ull), NFS3_OK);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(create(root(), "lock", nullptr, EXCLUSIVE, 0x99), NFS3ERR_EXIST);
}

TEST_F(Nfs3Procs, NameWithSlashIsInval) {
  EXPECT_EQ(create(root(), "a/b"), NFS3ERR_INVAL);
  EXPECT_EQ(lookup(root(), "a/b"), NFS3ERR_INVAL);
}

TEST_F(Nfs3Procs, LookupReturnsHandleAndBothAttributes) {
  FileHandle d, f, found;
  ASSERT_EQ(mkdir(root(), "sub", &d), NFS3_OK);
  ASSERT_EQ(create(d, "leaf", &f), NFS3_OK);
  ASSERT_EQ(lookup(d, "leaf", &found), NFS3_OK);
  EXPECT_EQ(found.bytes, f.bytes);
  EXPECT_EQ(lookup(d, "missing"), NFS3ERR_NOENT);
  EXPECT_EQ(lookup(f, "x"), NFS3ERR_NOTDIR);

  LOOKUP3args a{};
  a.what.dir = wire(d);
  a.what.name = const_cast<char*>("missing");
  Reply<LOOKUP3res> r(xdr_LOOKUP3res);
  call(NFSPROC3_LOOKUP, xdr_LOOKUP3args, a, xdr_LOOKUP3res, &r);
  EXPECT_EQ(r->status, NFS3ERR_NOENT);
  EXPECT_TRUE(r->LOOKUP3res_u.resfail.dir_attributes.attributes_follow);
}

TEST_F(Nfs3Procs, SetattrGuardMismatchIsNotSync) {
  FileHandle f;
  ASSERT_EQ(create(root(), "g", &f), NFS3_OK);
  fattr3 attr{};
  ASSERT_EQ(getattr(f, &attr), NFS3_OK);

  SETATTR3args a{};
  a.object = wire(f);
  a.new_attributes.size.set_it = TRUE;
  a.new_attributes.size.set_size3_u.size = 10;
  a.guard.check = TRUE;
  a.guard.sattrguard3_u.obj_ctime = attr.ctime;
  a.guard.sattrguard3_u.obj_ctime.seconds += 1;
  Reply<SETATTR3res> bad(xdr_SETATTR3res);
  call(NFSPROC3_SETATTR, xdr_SETATTR3args, a, xdr_SETATTR3res, &bad);
  EXPECT_EQ(bad->status, NFS3ERR_NOT_SYNC);
  EXPECT_TRUE(bad->SETATTR3res_u.resfail.obj_wcc.after.attributes_follow);

  a.guard.sattrguard3_u.obj_ctime = attr.ctime;
  Reply<SETATTR3res> good(xdr_SETATTR3res);
  call(NFSPROC3_SETATTR, xdr_SETATTR3args, a, xdr_SETATTR3res, &good);
  ASSERT_EQ(good->status, NFS3_OK);
  EXPECT_EQ(good->SETATTR3res_u.resok.obj_wcc.after.post_op_attr_u.attributes.size, 10u);
}

TEST_F(Nfs3Procs, SetattrRejectsInvalidClientTime) {
  FileHandle f;
  ASSERT_EQ(create(root(), "t", &f), NFS3_OK);
  SETATTR3args a{};
  a.object = wire(f);
  a.new_attributes.mtime.set_it = SET_TO_CLIENT_TIME;
  a.new_attributes.mtime.set_mtime_u.mtime = {100, 1000000000u};
  Reply<SETATTR3res> r(xdr_SETATTR3res);
  call(NFSPROC3_SETATTR, xdr_SETATTR3args, a, xdr_SETATTR3res, &r);
  EXPECT_EQ(r->status, NFS3ERR_INVAL);
}

TEST_F(Nfs3Procs, SymlinkAndReadlink) {
  SYMLINK3args a{};
  FileHandle dir = root();
  a.where.dir = wire(dir);
  a.where.name = const_cast<char*>("ln");
  a.symlink.symlink_data = const_cast<char*>("../target/path");
  Reply<SYMLINK3res> r(xdr_SYMLINK3res);
  call(NFSPROC3_SYMLINK, xdr_SYMLINK3args, a, xdr_SYMLINK3res, &r);
  ASSERT_EQ(r->status, NFS3_OK);
  FileHandle ln = from_wire(r->SYMLINK3res_u.resok.obj.post_op_fh3_u.handle);

  READLINK3args ra{wire(ln)};
  Reply<READLINK3res> rr(xdr_READLINK3res);
  call(NFSPROC3_READLINK, xdr_READLINK3args, ra, xdr_READLINK3res, &rr);
  ASSERT_EQ(rr->status, NFS3_OK);
  EXPECT_STREQ(rr->READLINK3res_u.resok.data, "../target/path");

  READLINK3args not_link{wire(dir)};
  Reply<READLINK3res> bad(xdr_READLINK3res);
  call(NFSPROC3_READLINK, xdr_READLINK3args, not_link, xdr_READLINK3res, &bad);
  EXPECT_EQ(bad->status, NFS3ERR_INVAL);
}

TEST_F(Nfs3Procs, MknodMakesDevicesAndRefusesRegularTypes) {
  MKNOD3args a{};
  FileHandle dir = root();
  a.where.dir = wire(dir);
  a.where.name = const_cast<char*>("tty");
  a.what.type = NF3CHR;
  a.what.mknoddata3_u.device.spec = {4, 64};
  Reply<MKNOD3res> r(xdr_MKNOD3res);
  call(NFSPROC3_MKNOD, xdr_MKNOD3args, a, xdr_MKNOD3res, &r);
  ASSERT_EQ(r->status, NFS3_OK);
  const fattr3& attr = r->MKNOD3res_u.resok.obj_attributes.post_op_attr_u.attributes;
  EXPECT_EQ(attr.type, NF3CHR);
  EXPECT_EQ(attr.rdev.specdata1, 4u);
  EXPECT_EQ(attr.rdev.specdata2, 64u);

  a.where.name = const_cast<char*>("fifo");
  a.what.type = NF3FIFO;
  Reply<MKNOD3res> fifo(xdr_MKNOD3res);
  call(NFSPROC3_MKNOD, xdr_MKNOD3args, a, xdr_MKNOD3res, &fifo);
  EXPECT_EQ(fifo->status, NFS3_OK);

  for (ftype3 t : {NF3REG, NF3DIR, NF3LNK}) {
    a.where.name = const_cast<char*>("nope");
    a.what.type = t;
    Reply<MKNOD3res> bad(xdr_MKNOD3res);
    call(NFSPROC3_MKNOD, xdr_MKNOD3args, a, xdr_MKNOD3res, &bad);
    EXPECT_EQ(bad->status, NFS3ERR_BADTYPE) << t;
  }
}

TEST_F(Nfs3Procs, RenameMovesAndReportsBothDirectories) {
  FileHandle d, f;
  ASSERT_EQ(mkdir(root(), "dst", &d), NFS3_OK);
  ASSERT_EQ(create(root(), "src", &f), NFS3_OK);
  RENAME3args a{};
  FileHandle dir = root();
  a.from.dir = wire(dir);
  a.from.name = const_cast<char*>("src");
  a.to.dir = wire(d);
  a.to.name = const_cast<char*>("moved");
  Reply<RENAME3res> r(xdr_RENAME3res);
  call(NFSPROC3_RENAME, xdr_RENAME3args, a, xdr_RENAME3res, &r);
  ASSERT_EQ(r->status, NFS3_OK);
  EXPECT_TRUE(r->RENAME3res_u.resok.fromdir_wcc.after.attributes_follow);
  EXPECT_TRUE(r->RENAME3res_u.resok.todir_wcc.after.attributes_follow);
  FileHandle moved;
  ASSERT_EQ(lookup(d, "moved", &moved), NFS3_OK);
  EXPECT_EQ(moved.bytes, f.bytes);
  EXPECT_EQ(lookup(root(), "src"), NFS3ERR_NOENT);
}

TEST_F(Nfs3Procs, TwoHandleProceduresAcrossVolumesAreXdev) {
  FileHandle f;
  ASSERT_EQ(create(root(), "file", &f), NFS3_OK);
  LINK3args a{};
  a.file = wire(f);
  FileHandle foreign = root_handle(hidden_);  // volume 9 is not exported: STALE first
  a.link.dir = wire(foreign);
  a.link.name = const_cast<char*>("l");
  Reply<LINK3res> r(xdr_LINK3res);
  call(NFSPROC3_LINK, xdr_LINK3args, a, xdr_LINK3res, &r);
  EXPECT_EQ(r->status, NFS3ERR_STALE);

  // Re-export volume 8 read-write to see XDEV itself.
  exports_ = Exports::from_config(Config::parse(std::string(kHarnessConfig) +
                                                "[export /r/archive-rw]\nvolume = archive\n"
                                                "clients = 127.0.0.1\naccess = rw\n"));
  Exports rw_first({exports_->all()[3], exports_->all()[0]});
  nfs_ = std::make_unique<Nfs3Service>(resolver_, std::make_shared<Exports>(rw_first), codec_);
  FileHandle archive_root = root_handle(archive_, "/r/archive-rw");
  a.link.dir = wire(archive_root);
  Reply<LINK3res> x(xdr_LINK3res);
  call(NFSPROC3_LINK, xdr_LINK3args, a, xdr_LINK3res, &x);
  EXPECT_EQ(x->status, NFS3ERR_XDEV);
}

TEST_F(Nfs3Procs, LinkAddsANameAndCountsIt) {
  FileHandle f;
  ASSERT_EQ(create(root(), "orig", &f), NFS3_OK);
  LINK3args a{};
  a.file = wire(f);
  FileHandle dir = root();
  a.link.dir = wire(dir);
  a.link.name = const_cast<char*>("alias");
  Reply<LINK3res> r(xdr_LINK3res);
  call(NFSPROC3_LINK, xdr_LINK3args, a, xdr_LINK3res, &r);
  ASSERT_EQ(r->status, NFS3_OK);
  EXPECT_EQ(r->LINK3res_u.resok.file_attributes.post_op_attr_u.attributes.nlink, 2u);
  FileHandle alias;
  ASSERT_EQ(lookup(root(), "alias", &alias), NFS3_OK);
  EXPECT_EQ(alias.bytes, f.bytes);
}

TEST_F(Nfs3Procs, RmdirOfNonEmptyDirectory) {
  FileHandle d;
  ASSERT_EQ(mkdir(root(), "full", &d), NFS3_OK);
  ASSERT_EQ(create(d, "x"), NFS3_OK);
  RMDIR3args a{};
  FileHandle dir = root();
  a.object.dir = wire(dir);
  a.object.name = const_cast<char*>("full");
  Reply<RMDIR3res> r(xdr_RMDIR3res);
  call(NFSPROC3_RMDIR, xdr_RMDIR3args, a, xdr_RMDIR3res, &r);
  EXPECT_EQ(r->status, NFS3ERR_NOTEMPTY);
  EXPECT_TRUE(r->RMDIR3res_u.resfail.dir_wcc.before.attributes_follow);
  ASSERT_EQ(remove(d, "x"), NFS3_OK);
  Reply<RMDIR3res> ok(xdr_RMDIR3res);
  call(NFSPROC3_RMDIR, xdr_RMDIR3args, a, xdr_RMDIR3res, &ok);
  EXPECT_EQ(ok->status, NFS3_OK);
  EXPECT_EQ(getattr(d), NFS3ERR_STALE);
}

TEST_F(Nfs3Procs, FsinfoReportsTransportAndVolumeLimits) {
  FSINFO3args a{};
  FileHandle fh = root();
  a.fsroot = wire(fh);
  Reply<FSINFO3res> tcp(xdr_FSINFO3res);
  call(NFSPROC3_FSINFO, xdr_FSINFO3args, a, xdr_FSINFO3res, &tcp);
  ASSERT_EQ(tcp->status, NFS3_OK);
  const FSINFO3resok& ok = tcp->FSINFO3res_u.resok;
  EXPECT_EQ(ok.rtmax, 1024u * 1024);
  EXPECT_EQ(ok.wtmax, 1024u * 1024);
  EXPECT_EQ(ok.maxfilesize, main_.limits().max_file_size);
  EXPECT_EQ(ok.time_delta.nseconds, 1000u);
  EXPECT_EQ(ok.properties, uint32_t{FSF3_LINK | FSF3_SYMLINK | FSF3_HOMOGENEOUS | FSF3_CANSETTIME});
  EXPECT_TRUE(ok.obj_attributes.attributes_follow);

  call_.tcp = false;
  Reply<FSINFO3res> udp(xdr_FSINFO3res);
  call(NFSPROC3_FSINFO, xdr_FSINFO3args, a, xdr_FSINFO3res, &udp);
  EXPECT_EQ(udp->FSINFO3res_u.resok.rtmax, 32u * 1024);
  EXPECT_EQ(udp->FSINFO3res_u.resok.wtpref, 32u * 1024);
}

TEST_F(Nfs3Procs, PathconfAndFsstat) {
  PATHCONF3args p{};
  FileHandle fh = root();
  p.object = wire(fh);
  Reply<PATHCONF3res> pc(xdr_PATHCONF3res);
  call(NFSPROC3_PATHCONF, xdr_PATHCONF3args, p, xdr_PATHCONF3res, &pc);
  ASSERT_EQ(pc->status, NFS3_OK);
  EXPECT_EQ(pc->PATHCONF3res_u.resok.linkmax, 1000u);
  EXPECT_EQ(pc->PATHCONF3res_u.resok.name_max, 255u);
  EXPECT_TRUE(pc->PATHCONF3res_u.resok.no_trunc);
  EXPECT_TRUE(pc->PATHCONF3res_u.resok.chown_restricted);
  EXPECT_FALSE(pc->PATHCONF3res_u.resok.case_insensitive);
  EXPECT_TRUE(pc->PATHCONF3res_u.resok.case_preserving);

  FSSTAT3args s{wire(fh)};
  Reply<FSSTAT3res> st(xdr_FSSTAT3res);
  call(NFSPROC3_FSSTAT, xdr_FSSTAT3args, s, xdr_FSSTAT3res, &st);
  ASSERT_EQ(st->status, NFS3_OK);
  EXPECT_EQ(st->FSSTAT3res_u.resok.tbytes, 1ull << 30);
  EXPECT_EQ(st->FSSTAT3res_u.resok.tfiles, 1ull << 20);
}

TEST_F(Nfs3Procs, CommitReturnsTheWriteVerifier) {
  FileHandle f;
  ASSERT_EQ(create(root(), "c", &f), NFS3_OK);
  COMMIT3args a{wire(f), 0, 0};
  Reply<COMMIT3res> r(xdr_COMMIT3res);
  call(NFSPROC3_COMMIT, xdr_COMMIT3args, a, xdr_COMMIT3res, &r);
  ASSERT_EQ(r->status, NFS3_OK);
  EXPECT_EQ(get_verifier_bytes(r->COMMIT3res_u.resok.verf), main_.write_verifier());
}


// A directory whose entry "late" is a junction to volume 21, as the cluster's /r answers.
class JunctionDir : public test_support::MemoryFs {
 public:
  using MemoryFs::MemoryFs;
  fs::Status lookup(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                    fs::InodeId* out, std::optional<fs::Attr>* obj_attr,
                    std::optional<fs::Attr>* dir_attr) override {
    if (name != "late") return MemoryFs::lookup(ctx, dir, name, out, obj_attr, dir_attr);
    *out = fs::junction_to(21);
    return fs::Status::Ok;
  }
};

// A forwarded volume whose owner has not told its root yet (interconnect::RemoteVolume).
class RootNotYetKnown : public test_support::MemoryFs {
 public:
  using MemoryFs::MemoryFs;
  fs::InodeId root() const override { return known ? MemoryFs::root() : fs::InodeId{}; }
  bool known = false;
};

// A LOOKUP across a junction into a volume whose root is not known yet used to hand out a
// handle of inode {0, 0}, which no volume ever answers: the client kept a dead handle.
TEST_F(Nfs3Procs, ALookupIntoAVolumeWhoseRootIsNotKnownYetAsksTheClientToRetry) {
  JunctionDir top(20);
  RootNotYetKnown late(21);
  resolver_->add(&top);
  resolver_->add(&late);
  exports_ = Exports::from_config(Config::parse(R"(
[volume top]
id = 20
[volume late]
id = 21
[export /r]
volume = top
clients = *
access = rw
[export /r/late]
volume = late
clients = *
access = rw
)"));
  nfs_ = std::make_unique<Nfs3Service>(resolver_, exports_, codec_);
  FileHandle into;
  EXPECT_EQ(lookup(root_handle(top), "late", &into), NFS3ERR_JUKEBOX);
  late.known = true;
  ASSERT_EQ(lookup(root_handle(top), "late", &into), NFS3_OK);
  EXPECT_EQ(into.bytes, root_handle(late).bytes);
  fattr3 attr{};
  EXPECT_EQ(getattr(into, &attr), NFS3_OK);
  EXPECT_EQ(attr.type, NF3DIR);
}

}  // namespace
}  // namespace nasd::nfs::fixture
