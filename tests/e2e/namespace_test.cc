// LOOKUP, CREATE (all three modes), MKDIR, SYMLINK, READLINK, MKNOD, REMOVE, RMDIR, RENAME, LINK.
#include "tests/e2e/e2e_fixture.h"

namespace nasd::e2e {
namespace {

using NamespaceTest = E2eTest;

TEST_F(NamespaceTest, LookupFindsWhatCreateMade) {
  NewObjectReply c = nfs().create(root(), "a", GUARDED, sattr_mode(0644));
  ASSERT_EQ(c.status, NFS3_OK) << st(c.status);
  ASSERT_TRUE(c.fh);
  LookupReply l = nfs().lookup(root(), "a");
  ASSERT_EQ(l.status, NFS3_OK) << st(l.status);
  EXPECT_EQ(l.fh, *c.fh) << "LOOKUP returns the handle CREATE gave";
  EXPECT_TRUE(has_attrs(l.obj_attributes));
  EXPECT_TRUE(has_attrs(l.dir_attributes));
  EXPECT_EQ(l.obj_attributes.post_op_attr_u.attributes.fileid,
            c.attributes.post_op_attr_u.attributes.fileid);
}

TEST_F(NamespaceTest, LookupErrors) {
  Fh f = make_file(root(), "file");
  LookupReply missing = nfs().lookup(root(), "no-such-name");
  EXPECT_EQ(missing.status, NFS3ERR_NOENT) << st(missing.status);
  EXPECT_TRUE(has_attrs(missing.dir_attributes)) << "a failed LOOKUP still reports dir attributes";

  LookupReply in_file = nfs().lookup(f, "x");
  EXPECT_EQ(in_file.status, NFS3ERR_NOTDIR) << st(in_file.status);

  LookupReply longest = nfs().lookup(root(), std::string(255, 'n'));
  EXPECT_EQ(longest.status, NFS3ERR_NOENT) << "255 bytes is a legal name: " << st(longest.status);
}

// filename3 is an unbounded XDR string, so a long name is well-formed arguments: the answer
// is NAMETOOLONG from the procedure, never GARBAGE_ARGS from the RPC layer.
TEST_F(NamespaceTest, OverlongNamesAreNameTooLong) {
  const std::string name(256, 'n');
  const char* garbage = "a 256-byte name is valid XDR; the call must not be rejected";
  Fh f = make_file(root(), "f");
  LookupReply lookup;
  ASSERT_NO_THROW(lookup = nfs().lookup(root(), name)) << garbage;
  EXPECT_EQ(lookup.status, NFS3ERR_NAMETOOLONG) << st(lookup.status);
  NewObjectReply create, mkdir;
  ASSERT_NO_THROW(create = nfs().create(root(), name, GUARDED)) << garbage;
  EXPECT_EQ(create.status, NFS3ERR_NAMETOOLONG) << st(create.status);
  ASSERT_NO_THROW(mkdir = nfs().mkdir(root(), name)) << garbage;
  EXPECT_EQ(mkdir.status, NFS3ERR_NAMETOOLONG) << st(mkdir.status);
  RENAME3res rename{};
  ASSERT_NO_THROW(rename = nfs().rename(root(), "f", root(), name)) << garbage;
  EXPECT_EQ(rename.status, NFS3ERR_NAMETOOLONG) << st(rename.status);
  EXPECT_EQ(nfs().lookup(root(), "f").fh, f) << "the refused rename left the file alone";
}

TEST_F(NamespaceTest, CreateUncheckedGuardedExclusive) {
  NewObjectReply first = nfs().create(root(), "u", UNCHECKED, sattr_mode(0600));
  ASSERT_EQ(first.status, NFS3_OK) << st(first.status);
  EXPECT_TRUE(has_wcc(first.dir_wcc));
  EXPECT_TRUE(has_attrs(first.attributes));

  NewObjectReply again = nfs().create(root(), "u", UNCHECKED, sattr_mode(0600));
  EXPECT_EQ(again.status, NFS3_OK) << "UNCHECKED over an existing file succeeds: "
                                   << st(again.status);
  NewObjectReply guarded = nfs().create(root(), "u", GUARDED, sattr_mode(0600));
  EXPECT_EQ(guarded.status, NFS3ERR_EXIST) << st(guarded.status);
  EXPECT_TRUE(has_wcc(guarded.dir_wcc)) << "failed CREATE still carries dir WCC";

  const uint64_t verf = 0x1122334455667788ull;
  NewObjectReply ex = nfs().create(root(), "x", EXCLUSIVE, sattr_none(), verf);
  ASSERT_EQ(ex.status, NFS3_OK) << st(ex.status);
  ASSERT_TRUE(ex.fh);
  NewObjectReply retry = nfs().create(root(), "x", EXCLUSIVE, sattr_none(), verf);
  ASSERT_EQ(retry.status, NFS3_OK) << "a retried EXCLUSIVE with the same verifier succeeds: "
                                   << st(retry.status);
  LookupReply l = nfs().lookup(root(), "x");
  ASSERT_EQ(l.status, NFS3_OK);
  EXPECT_EQ(l.fh, *ex.fh);
  if (retry.fh) {
    EXPECT_EQ(*retry.fh, *ex.fh) << "the retry names the same file";
  }
  NewObjectReply other = nfs().create(root(), "x", EXCLUSIVE, sattr_none(), verf + 1);
  EXPECT_EQ(other.status, NFS3ERR_EXIST) << st(other.status);

  // After an exclusive create the client sets the real attributes.
  ASSERT_EQ(nfs().setattr(*ex.fh, sattr_mode(0640)).status, NFS3_OK);
  EXPECT_EQ(attrs_of(*ex.fh).mode & 07777, 0640u);
}

TEST_F(NamespaceTest, MkdirMakesADirectory) {
  fattr3 before = attrs_of(root());
  NewObjectReply d = nfs().mkdir(root(), "sub", sattr_mode(0750));
  ASSERT_EQ(d.status, NFS3_OK) << st(d.status);
  ASSERT_TRUE(d.fh);
  EXPECT_TRUE(has_wcc(d.dir_wcc));
  fattr3 a = attrs_of(*d.fh);
  EXPECT_EQ(a.type, NF3DIR);
  EXPECT_EQ(a.mode & 07777, 0750u);
  EXPECT_EQ(a.nlink, 2u);
  EXPECT_EQ(attrs_of(root()).nlink, before.nlink + 1) << "the new '..' links the parent";
  EXPECT_EQ(nfs().mkdir(root(), "sub").status, NFS3ERR_EXIST);
  Fh inner = make_file(*d.fh, "inner");
  EXPECT_EQ(nfs().resolve(root(), "sub/inner"), inner);
}

TEST_F(NamespaceTest, SymlinkAndReadlink) {
  NewObjectReply s = nfs().symlink(root(), "ln", "some/where/else");
  ASSERT_EQ(s.status, NFS3_OK) << st(s.status);
  ASSERT_TRUE(s.fh);
  EXPECT_TRUE(has_wcc(s.dir_wcc));
  EXPECT_EQ(attrs_of(*s.fh).type, NF3LNK);
  ReadlinkReply r = nfs().readlink(*s.fh);
  ASSERT_EQ(r.status, NFS3_OK) << st(r.status);
  EXPECT_EQ(r.target, "some/where/else");
  EXPECT_TRUE(has_attrs(r.attributes));

  Fh f = make_file(root(), "plain");
  ReadlinkReply not_link = nfs().readlink(f);
  EXPECT_EQ(not_link.status, NFS3ERR_INVAL) << "READLINK of a regular file: "
                                            << st(not_link.status);
}

// RFC 1813 lets a server refuse special files with NOTSUPP; what it must not do is accept
// a REG (or DIR/LNK) type through MKNOD.
TEST_F(NamespaceTest, MknodSpecialFilesAndBadType) {
  NewObjectReply fifo = nfs().mknod(root(), "fifo", NF3FIFO, {0, 0}, sattr_mode(0644));
  ASSERT_TRUE(fifo.status == NFS3_OK || fifo.status == NFS3ERR_NOTSUPP) << st(fifo.status);
  if (fifo.status == NFS3_OK) {
    ASSERT_TRUE(fifo.fh);
    EXPECT_TRUE(has_wcc(fifo.dir_wcc));
    EXPECT_EQ(attrs_of(*fifo.fh).type, NF3FIFO);
  }
  NewObjectReply chr = nfs().mknod(root(), "chr", NF3CHR, {1, 3}, sattr_mode(0644));
  ASSERT_TRUE(chr.status == NFS3_OK || chr.status == NFS3ERR_NOTSUPP) << st(chr.status);
  if (chr.status == NFS3_OK) {
    ASSERT_TRUE(chr.fh);
    fattr3 a = attrs_of(*chr.fh);
    EXPECT_EQ(a.type, NF3CHR);
    EXPECT_EQ(a.rdev.specdata1, 1u);
    EXPECT_EQ(a.rdev.specdata2, 3u);
  }
  NewObjectReply reg = nfs().mknod(root(), "reg", NF3REG);
  EXPECT_EQ(reg.status, NFS3ERR_BADTYPE) << st(reg.status);
  EXPECT_EQ(nfs().lookup(root(), "reg").status, NFS3ERR_NOENT) << "BADTYPE created nothing";
}

TEST_F(NamespaceTest, RemoveAndRmdir) {
  make_file(root(), "f");
  REMOVE3res r = nfs().remove(root(), "f");
  ASSERT_EQ(r.status, NFS3_OK) << st(r.status);
  EXPECT_TRUE(has_wcc(r.REMOVE3res_u.resok.dir_wcc));
  EXPECT_EQ(nfs().lookup(root(), "f").status, NFS3ERR_NOENT);
  EXPECT_EQ(nfs().remove(root(), "f").status, NFS3ERR_NOENT);

  Fh d = make_dir(root(), "d");
  make_file(d, "keep");
  RMDIR3res full = nfs().rmdir(root(), "d");
  EXPECT_EQ(full.status, NFS3ERR_NOTEMPTY) << st(full.status);
  EXPECT_TRUE(has_wcc(full.RMDIR3res_u.resfail.dir_wcc));
  ASSERT_EQ(nfs().remove(d, "keep").status, NFS3_OK);
  RMDIR3res empty = nfs().rmdir(root(), "d");
  ASSERT_EQ(empty.status, NFS3_OK) << st(empty.status);
  EXPECT_TRUE(has_wcc(empty.RMDIR3res_u.resok.dir_wcc));
  EXPECT_EQ(nfs().lookup(root(), "d").status, NFS3ERR_NOENT);

  make_file(root(), "notadir");
  EXPECT_EQ(nfs().rmdir(root(), "notadir").status, NFS3ERR_NOTDIR);
}

TEST_F(NamespaceTest, RenameOverExistingAndAcrossDirectories) {
  Fh src = make_file(root(), "src", "new content");
  Fh victim = make_file(root(), "dst", "old content");
  RENAME3res over = nfs().rename(root(), "src", root(), "dst");
  ASSERT_EQ(over.status, NFS3_OK) << st(over.status);
  EXPECT_TRUE(has_wcc(over.RENAME3res_u.resok.fromdir_wcc));
  EXPECT_TRUE(has_wcc(over.RENAME3res_u.resok.todir_wcc));
  EXPECT_EQ(nfs().lookup(root(), "src").status, NFS3ERR_NOENT);
  EXPECT_EQ(nfs().resolve(root(), "dst"), src) << "the renamed file keeps its handle";
  EXPECT_EQ(nfs().read(src, 0, 100).data, "new content");
  EXPECT_EQ(nfs().getattr(victim).status, NFS3ERR_STALE) << "the replaced file is gone";

  Fh other = make_dir(root(), "other");
  RENAME3res across = nfs().rename(root(), "dst", other, "moved");
  ASSERT_EQ(across.status, NFS3_OK) << st(across.status);
  EXPECT_EQ(nfs().resolve(root(), "other/moved"), src);
  EXPECT_EQ(nfs().lookup(root(), "dst").status, NFS3ERR_NOENT);

  EXPECT_EQ(nfs().rename(root(), "missing", root(), "x").status, NFS3ERR_NOENT);
  make_file(other, "occupant");
  Fh dir2 = make_dir(root(), "dir2");
  make_file(dir2, "child");
  RENAME3res onto_full = nfs().rename(root(), "other", root(), "dir2");
  EXPECT_TRUE(onto_full.status == NFS3ERR_NOTEMPTY || onto_full.status == NFS3ERR_EXIST)
      << "a directory cannot replace a non-empty one: " << st(onto_full.status);
  EXPECT_EQ(nfs().lookup(dir2, "child").status, NFS3_OK) << "the target keeps its entry";
  EXPECT_EQ(nfs().lookup(root(), "other").status, NFS3_OK) << "the refused rename moved nothing";
}

TEST_F(NamespaceTest, LinkAddsANameAndCountsIt) {
  Fh f = make_file(root(), "orig", "shared");
  Fh d = make_dir(root(), "d");
  LINK3res l = nfs().link(f, d, "alias");
  ASSERT_EQ(l.status, NFS3_OK) << st(l.status);
  ASSERT_TRUE(has_attrs(l.LINK3res_u.resok.file_attributes));
  EXPECT_EQ(l.LINK3res_u.resok.file_attributes.post_op_attr_u.attributes.nlink, 2u);
  EXPECT_TRUE(has_wcc(l.LINK3res_u.resok.linkdir_wcc));
  EXPECT_EQ(attrs_of(f).nlink, 2u);
  EXPECT_EQ(nfs().resolve(root(), "d/alias"), f);

  EXPECT_EQ(nfs().link(f, d, "alias").status, NFS3ERR_EXIST);
  ASSERT_EQ(nfs().remove(root(), "orig").status, NFS3_OK);
  EXPECT_EQ(attrs_of(f).nlink, 1u);
  EXPECT_EQ(nfs().read(f, 0, 100).data, "shared") << "the data lives on under the other name";
}

}  // namespace
}  // namespace nasd::e2e
