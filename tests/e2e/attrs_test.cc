// NULL, GETATTR, SETATTR, ACCESS, FSSTAT, FSINFO, PATHCONF, and how the server treats handles
// that no longer (or never did) name a file.
#include "tests/e2e/e2e_fixture.h"

namespace nasd::e2e {
namespace {

constexpr uint32_t kOwner = 1000, kOwnerGroup = 1000;
constexpr uint32_t kGroupMember = 3000;
constexpr uint32_t kOther = 2000, kOtherGroup = 2000;

using AttrsTest = E2eTest;

TEST_F(AttrsTest, NullProcedureAnswers) {
  nfs().null();
  nfs().null();  // twice: the connection stays usable after a void reply
}

TEST_F(AttrsTest, GetattrDescribesRootAndNewFile) {
  fattr3 r = attrs_of(root());
  EXPECT_EQ(r.type, NF3DIR);
  EXPECT_GE(r.nlink, 2u);
  EXPECT_NE(r.fileid, 0u);

  Fh f = make_file(root(), "f", std::string(1234, 'x'));
  fattr3 a = attrs_of(f);
  EXPECT_EQ(a.type, NF3REG);
  EXPECT_EQ(a.size, 1234u);
  EXPECT_EQ(a.mode & 07777, 0644u);
  EXPECT_EQ(a.nlink, 1u);
  EXPECT_EQ(a.uid, 0u);
  EXPECT_EQ(a.fsid, r.fsid);
  EXPECT_NE(a.fileid, r.fileid);
}

TEST_F(AttrsTest, SetattrGuardMismatchIsNotSync) {
  Fh f = make_file(root(), "g");
  nfstime3 ctime = attrs_of(f).ctime;
  nfstime3 wrong{ctime.seconds - 5, ctime.nseconds};

  SETATTR3res bad = nfs().setattr(f, sattr_mode(0600), wrong);
  EXPECT_EQ(bad.status, NFS3ERR_NOT_SYNC) << st(bad.status);
  EXPECT_EQ(attrs_of(f).mode & 07777, 0644u) << "a failed guard must not change the file";

  SETATTR3res good = nfs().setattr(f, sattr_mode(0600), ctime);
  ASSERT_EQ(good.status, NFS3_OK) << st(good.status);
  EXPECT_TRUE(has_wcc(good.SETATTR3res_u.resok.obj_wcc));
  EXPECT_EQ(attrs_of(f).mode & 07777, 0600u);
}

TEST_F(AttrsTest, SetattrSizeTruncatesAndExtends) {
  std::string content(10000, '\0');
  for (size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>('a' + i % 26);
  Fh f = make_file(root(), "t", content);

  SETATTR3res shrink = nfs().setattr(f, sattr_size(100));
  ASSERT_EQ(shrink.status, NFS3_OK) << st(shrink.status);
  const wcc_data& w = shrink.SETATTR3res_u.resok.obj_wcc;
  ASSERT_TRUE(has_wcc(w));
  EXPECT_EQ(w.before.pre_op_attr_u.attributes.size, 10000u);
  EXPECT_EQ(w.after.post_op_attr_u.attributes.size, 100u);

  ReadReply r = nfs().read(f, 0, 20000);
  ASSERT_EQ(r.status, NFS3_OK) << st(r.status);
  EXPECT_EQ(r.data, content.substr(0, 100));
  EXPECT_TRUE(r.eof);

  ASSERT_EQ(nfs().setattr(f, sattr_size(5000)).status, NFS3_OK);
  EXPECT_EQ(attrs_of(f).size, 5000u);
  r = nfs().read(f, 0, 20000);
  ASSERT_EQ(r.status, NFS3_OK);
  ASSERT_EQ(r.data.size(), 5000u);
  EXPECT_EQ(r.data.substr(0, 100), content.substr(0, 100));
  EXPECT_EQ(r.data.substr(100), std::string(4900, '\0')) << "an extended file reads as zeros";
}

TEST_F(AttrsTest, RootMayChmodAndChown) {
  Fh f = make_file(root(), "c");
  ASSERT_EQ(nfs().setattr(f, sattr_mode(0751)).status, NFS3_OK);
  ASSERT_EQ(nfs().setattr(f, sattr_owner(1234, 5678)).status, NFS3_OK);
  fattr3 a = attrs_of(f);
  EXPECT_EQ(a.mode & 07777, 0751u);
  EXPECT_EQ(a.uid, 1234u);
  EXPECT_EQ(a.gid, 5678u);
}

TEST_F(AttrsTest, NonRootChmodChownRules) {
  Fh f = make_file(root(), "owned");
  ASSERT_EQ(nfs().setattr(f, sattr_owner(kOwner, kOwnerGroup)).status, NFS3_OK);

  Session other = connect_as(kOther, kOtherGroup);
  EXPECT_EQ(other.nfs->setattr(f, sattr_mode(0777)).status, NFS3ERR_PERM)
      << "only the owner (or root) may chmod";
  EXPECT_EQ(other.nfs->setattr(f, sattr_owner(kOther, std::nullopt)).status, NFS3ERR_PERM);

  Session owner = connect_as(kOwner, kOwnerGroup);
  EXPECT_EQ(owner.nfs->setattr(f, sattr_mode(0600)).status, NFS3_OK) << "the owner may chmod";
  SETATTR3res give_away = owner.nfs->setattr(f, sattr_owner(kOther, std::nullopt));
  EXPECT_EQ(give_away.status, NFS3ERR_PERM) << "only root may change the owner: "
                                            << st(give_away.status);
  fattr3 a = attrs_of(f);
  EXPECT_EQ(a.uid, kOwner);
  EXPECT_EQ(a.mode & 07777, 0600u);
}

// ACCESS must predict what READ and WRITE will then allow, for each class of user.
TEST_F(AttrsTest, AccessAgreesWithReadAndWrite) {
  Fh f = make_file(root(), "acc", "secret");
  ASSERT_EQ(nfs().setattr(f, sattr_owner(kOwner, kOwnerGroup)).status, NFS3_OK);
  ASSERT_EQ(nfs().setattr(f, sattr_mode(0640)).status, NFS3_OK);

  struct Case {
    const char* who;
    uint32_t uid, gid;
    bool may_read, may_write;
  } cases[] = {
      {"owner", kOwner, kOwnerGroup, true, true},
      {"group", kGroupMember, kOwnerGroup, true, false},
      {"other", kOther, kOtherGroup, false, false},
  };
  const uint32_t asked = ACCESS3_READ | ACCESS3_MODIFY | ACCESS3_EXTEND | ACCESS3_EXECUTE;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.who);
    Session s = connect_as(c.uid, c.gid);
    ACCESS3res a = s.nfs->access(f, asked);
    ASSERT_EQ(a.status, NFS3_OK) << st(a.status);
    uint32_t granted = a.ACCESS3res_u.resok.access;
    EXPECT_TRUE(has_attrs(a.ACCESS3res_u.resok.obj_attributes));
    EXPECT_EQ((granted & ~asked), 0u) << "granted bits that were not asked for";
    EXPECT_EQ((granted & ACCESS3_READ) != 0, c.may_read);
    EXPECT_EQ((granted & ACCESS3_MODIFY) != 0, c.may_write);
    EXPECT_EQ((granted & ACCESS3_EXECUTE), 0u) << "mode 0640 has no execute bit";

    ReadReply r = s.nfs->read(f, 0, 100);
    EXPECT_EQ(r.status == NFS3_OK, (granted & ACCESS3_READ) != 0) << st(r.status);
    if (!c.may_read) {
      EXPECT_EQ(r.status, NFS3ERR_ACCES) << st(r.status);
    }
    WRITE3res w = s.nfs->write(f, 0, "x", FILE_SYNC);
    EXPECT_EQ(w.status == NFS3_OK, (granted & ACCESS3_MODIFY) != 0) << st(w.status);
    if (!c.may_write) {
      EXPECT_EQ(w.status, NFS3ERR_ACCES) << st(w.status);
    }
  }
}

TEST_F(AttrsTest, AccessOnDirectoryGrantsLookupToOthers) {
  Fh d = make_dir(root(), "d");  // 0755, owned by root
  Session other = connect_as(kOther, kOtherGroup);
  ACCESS3res a = other.nfs->access(d, ACCESS3_READ | ACCESS3_LOOKUP | ACCESS3_MODIFY |
                                          ACCESS3_EXTEND | ACCESS3_DELETE);
  ASSERT_EQ(a.status, NFS3_OK) << st(a.status);
  uint32_t granted = a.ACCESS3res_u.resok.access;
  EXPECT_NE(granted & ACCESS3_LOOKUP, 0u);
  EXPECT_NE(granted & ACCESS3_READ, 0u);
  EXPECT_EQ(granted & (ACCESS3_MODIFY | ACCESS3_EXTEND | ACCESS3_DELETE), 0u);
  EXPECT_EQ(other.nfs->create(d, "nope", UNCHECKED).status, NFS3ERR_ACCES)
      << "no MODIFY granted, so CREATE in it must fail";
}

TEST_F(AttrsTest, FsstatIsConsistent) {
  FSSTAT3res r = nfs().fsstat(root());
  ASSERT_EQ(r.status, NFS3_OK) << st(r.status);
  const FSSTAT3resok& s = r.FSSTAT3res_u.resok;
  EXPECT_TRUE(has_attrs(s.obj_attributes));
  EXPECT_GT(s.tbytes, 0u);
  EXPECT_LE(s.fbytes, s.tbytes);
  EXPECT_LE(s.abytes, s.fbytes);
  EXPECT_LE(s.ffiles, s.tfiles);
  EXPECT_LE(s.afiles, s.ffiles);
}

TEST_F(AttrsTest, FsinfoAllowsMegabyteTransfers) {
  FSINFO3res r = nfs().fsinfo(root());
  ASSERT_EQ(r.status, NFS3_OK) << st(r.status);
  const FSINFO3resok& i = r.FSINFO3res_u.resok;
  EXPECT_GE(i.rtmax, 1u << 20);
  EXPECT_GE(i.wtmax, 1u << 20);
  EXPECT_GT(i.rtpref, 0u);
  EXPECT_LE(i.rtpref, i.rtmax);
  EXPECT_GT(i.wtpref, 0u);
  EXPECT_LE(i.wtpref, i.wtmax);
  EXPECT_GT(i.dtpref, 0u);
  EXPECT_GE(i.maxfilesize, uint64_t{1} << 30);
  EXPECT_NE(i.properties & FSF3_LINK, 0u);
  EXPECT_NE(i.properties & FSF3_SYMLINK, 0u);
  EXPECT_NE(i.properties & FSF3_CANSETTIME, 0u);
}

TEST_F(AttrsTest, PathconfReportsPosixNames) {
  PATHCONF3res r = nfs().pathconf(root());
  ASSERT_EQ(r.status, NFS3_OK) << st(r.status);
  const PATHCONF3resok& p = r.PATHCONF3res_u.resok;
  EXPECT_EQ(p.name_max, 255u);
  EXPECT_GE(p.linkmax, 2u);
  EXPECT_TRUE(p.no_trunc) << "over-long names must be refused, not truncated";
  EXPECT_FALSE(p.case_insensitive);
  EXPECT_TRUE(p.case_preserving);
}

TEST_F(AttrsTest, HandleOfRemovedFileIsStale) {
  Fh f = make_file(root(), "gone");
  ASSERT_EQ(nfs().remove(root(), "gone").status, NFS3_OK);
  GETATTR3res r = nfs().getattr(f);
  EXPECT_EQ(r.status, NFS3ERR_STALE) << st(r.status);
  EXPECT_EQ(nfs().read(f, 0, 10).status, NFS3ERR_STALE);
}

TEST_F(AttrsTest, CorruptedHandleIsBadHandle) {
  Fh f = make_file(root(), "victim");
  for (size_t pos : {f.bytes.size() - 1, f.bytes.size() / 2}) {
    SCOPED_TRACE("flipped byte " + std::to_string(pos) + " of " + std::to_string(f.bytes.size()));
    Fh bad = f;
    bad.bytes[pos] = static_cast<char>(bad.bytes[pos] ^ 0x5a);
    GETATTR3res r = nfs().getattr(bad);
    EXPECT_EQ(r.status, NFS3ERR_BADHANDLE) << st(r.status);
  }
  EXPECT_EQ(nfs().getattr(Fh{"abc"}).status, NFS3ERR_BADHANDLE) << "a 3-byte handle";
  EXPECT_EQ(nfs().getattr(f).status, NFS3_OK) << "the genuine handle still works";
}

}  // namespace
}  // namespace nasd::e2e
