// READ, WRITE (all three stabilities) and COMMIT, including the write verifier's contract:
// constant while the server runs, equal to COMMIT's, different after a restart.

#include "tests/e2e/e2e_fixture.h"

namespace nasd::e2e {
namespace {

using IoTest = E2eTest;

TEST_F(IoTest, ReadReportsEofAndStopsAtTheEnd) {
  Fh f = make_file(root(), "f", "0123456789");
  ReadReply all = nfs().read(f, 0, 100);
  ASSERT_EQ(all.status, NFS3_OK) << st(all.status);
  EXPECT_EQ(all.data, "0123456789");
  EXPECT_EQ(all.count, 10u);
  EXPECT_TRUE(all.eof);
  EXPECT_TRUE(has_attrs(all.attributes));

  ReadReply head = nfs().read(f, 0, 4);
  EXPECT_EQ(head.data, "0123");
  EXPECT_FALSE(head.eof) << "bytes remain after offset 4";

  ReadReply tail = nfs().read(f, 6, 4);
  EXPECT_EQ(tail.data, "6789");
  EXPECT_TRUE(tail.eof) << "the read reached the end of the file";

  ReadReply beyond = nfs().read(f, 1000, 10);
  ASSERT_EQ(beyond.status, NFS3_OK) << st(beyond.status);
  EXPECT_EQ(beyond.count, 0u);
  EXPECT_TRUE(beyond.data.empty());
  EXPECT_TRUE(beyond.eof);
}

TEST_F(IoTest, WriteStabilitiesAndVerifier) {
  Fh f = make_file(root(), "w");
  const std::string chunk = pattern(64 * 1024, 1);
  uint64_t verf = 0;
  const stable_how levels[] = {UNSTABLE, DATA_SYNC, FILE_SYNC};
  for (size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE("stable_how " + std::to_string(levels[i]));
    WRITE3res w = nfs().write(f, i * chunk.size(), chunk, levels[i]);
    ASSERT_EQ(w.status, NFS3_OK) << st(w.status);
    const WRITE3resok& ok = w.WRITE3res_u.resok;
    EXPECT_EQ(ok.count, chunk.size());
    EXPECT_GE(ok.committed, levels[i]) << "committed at least what was asked";
    EXPECT_TRUE(has_wcc(ok.file_wcc));
    EXPECT_EQ(ok.file_wcc.after.post_op_attr_u.attributes.size, (i + 1) * chunk.size());
    if (i == 0) verf = verifier_of(ok.verf);
    EXPECT_EQ(verifier_of(ok.verf), verf) << "one verifier for the life of the server";
  }
  COMMIT3res c = nfs().commit(f, 0, 0);
  ASSERT_EQ(c.status, NFS3_OK) << st(c.status);
  EXPECT_EQ(verifier_of(c.COMMIT3res_u.resok.verf), verf) << "COMMIT's verifier is WRITE's";
  EXPECT_TRUE(has_wcc(c.COMMIT3res_u.resok.file_wcc));

  ReadReply r = nfs().read(f, chunk.size(), static_cast<uint32_t>(chunk.size()));
  ASSERT_EQ(r.status, NFS3_OK);
  EXPECT_TRUE(r.data == chunk) << "data read back differs from data written";
}

TEST_F(IoTest, VerifierChangesAcrossRestart) {
  NASD_E2E_NEEDS_OWN_SERVER("restarts the server");
  Fh f = make_file(root(), "v");
  WRITE3res before = nfs().write(f, 0, "before", UNSTABLE);
  ASSERT_EQ(before.status, NFS3_OK) << st(before.status);
  uint64_t v1 = verifier_of(before.WRITE3res_u.resok.verf);
  ASSERT_EQ(nfs().commit(f, 0, 0).status, NFS3_OK);

  restart_server();
  Fh again = nfs().resolve(root(), "v");
  WRITE3res after = nfs().write(again, 6, "after", UNSTABLE);
  ASSERT_EQ(after.status, NFS3_OK) << st(after.status);
  uint64_t v2 = verifier_of(after.WRITE3res_u.resok.verf);
  EXPECT_NE(v1, v2) << "a client must learn that its uncommitted writes may be lost";
  COMMIT3res c = nfs().commit(again, 0, 0);
  ASSERT_EQ(c.status, NFS3_OK);
  EXPECT_EQ(verifier_of(c.COMMIT3res_u.resok.verf), v2);
  EXPECT_EQ(nfs().read(again, 0, 100).data, "beforeafter");
}

TEST_F(IoTest, MegabyteTransfersInOneCall) {
  Fh f = make_file(root(), "big");
  const std::string mib = pattern(1 << 20, 7);
  WRITE3res w = nfs().write(f, 0, mib, FILE_SYNC);
  ASSERT_EQ(w.status, NFS3_OK) << st(w.status);
  EXPECT_EQ(w.WRITE3res_u.resok.count, mib.size()) << "wtmax >= 1 MiB: no short write";
  ReadReply r = nfs().read(f, 0, 1 << 20);
  ASSERT_EQ(r.status, NFS3_OK) << st(r.status);
  EXPECT_EQ(r.count, mib.size()) << "rtmax >= 1 MiB: no short read";
  EXPECT_TRUE(r.data == mib);
}

TEST_F(IoTest, HolesReadAsZeros) {
  Fh f = make_file(root(), "sparse");
  ASSERT_EQ(nfs().write(f, 300000, "end", FILE_SYNC).status, NFS3_OK);
  fattr3 a = attrs_of(f);
  EXPECT_EQ(a.size, 300003u);
  ReadReply r = nfs().read(f, 0, 300003);
  ASSERT_EQ(r.status, NFS3_OK);
  ASSERT_EQ(r.data.size(), 300003u);
  EXPECT_EQ(r.data.substr(0, 300000), std::string(300000, '\0'));
  EXPECT_EQ(r.data.substr(300000), "end");
}

TEST_F(IoTest, ReadAndWriteOnADirectoryFail) {
  Fh d = make_dir(root(), "d");
  ReadReply r = nfs().read(d, 0, 10);
  EXPECT_TRUE(r.status == NFS3ERR_ISDIR || r.status == NFS3ERR_INVAL) << st(r.status);
  WRITE3res w = nfs().write(d, 0, "x", FILE_SYNC);
  EXPECT_TRUE(w.status == NFS3ERR_ISDIR || w.status == NFS3ERR_INVAL) << st(w.status);
  EXPECT_EQ(attrs_of(d).type, NF3DIR) << "the directory is unharmed";
}

}  // namespace
}  // namespace nasd::e2e
