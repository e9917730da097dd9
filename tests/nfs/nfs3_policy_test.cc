// NFS service: handle validation, export policy and argument decoding errors.
#include "tests/nfs/nfs3_test_ops.h"

namespace nasd::nfs::fixture {
namespace {

class Nfs3Policy : public Nfs3Ops {};

TEST_F(Nfs3Policy, GetattrOfExportRootSucceeds) {
  fattr3 attr{};
  ASSERT_EQ(getattr(root(), &attr), NFS3_OK);
  EXPECT_EQ(attr.type, NF3DIR);
  EXPECT_EQ(attr.fileid, test_support::MemoryFs::kRootIno);
  EXPECT_EQ(attr.fsid, 7u);
}

TEST_F(Nfs3Policy, MalformedHandlesAreBadHandle) {
  FileHandle fh = root();
  fh.bytes[25] ^= 0x80;  // forged tag
  EXPECT_EQ(getattr(fh), NFS3ERR_BADHANDLE);

  FileHandle good = root();
  GETATTR3args a{wire(good)};
  a.object.data.data_len = 20;  // truncated
  Reply<GETATTR3res> r(xdr_GETATTR3res);
  call(NFSPROC3_GETATTR, xdr_GETATTR3args, a, xdr_GETATTR3res, &r);
  EXPECT_EQ(r->status, NFS3ERR_BADHANDLE);
}

TEST_F(Nfs3Policy, HandleOfUnknownVolumeIsStale) {
  EXPECT_EQ(getattr(codec_->encode(99, {1, 1})), NFS3ERR_STALE);
}

TEST_F(Nfs3Policy, HandleOfRemovedFileIsStale) {
  FileHandle f;
  ASSERT_EQ(create(root(), "gone", &f), NFS3_OK);
  ASSERT_EQ(remove(root(), "gone"), NFS3_OK);
  EXPECT_EQ(getattr(f), NFS3ERR_STALE);
}

TEST_F(Nfs3Policy, UnlistedClientGetsAcces) {
  call_.peer = ipv4_peer("192.168.7.7");
  EXPECT_EQ(getattr(root()), NFS3ERR_ACCES);
  // A handle of a volume that exists but is not exported names no export: stale.
  call_.peer = ipv4_peer("127.0.0.1");
  EXPECT_EQ(getattr(root_handle(hidden_)), NFS3ERR_STALE);
}

TEST_F(Nfs3Policy, ReadOnlyExportRefusesEveryChange) {
  ASSERT_EQ(create(root(), "f"), NFS3_OK);  // via the rw export
  call_.peer = ipv4_peer("10.1.0.5");       // now via the ro export of the same volume
  EXPECT_EQ(getattr(root()), NFS3ERR_ACCES) << "the rw export's handles are not this client's";
  FileHandle ro_root = root_handle(main_, "/r/main-ro"), file;
  ASSERT_EQ(lookup(ro_root, "f", &file), NFS3_OK);
  EXPECT_EQ(getattr(file), NFS3_OK);
  EXPECT_EQ(create(ro_root, "g"), NFS3ERR_ROFS);
  EXPECT_EQ(mkdir(ro_root, "d"), NFS3ERR_ROFS);
  EXPECT_EQ(write(file, 0, "x"), NFS3ERR_ROFS);
  EXPECT_EQ(remove(ro_root, "f"), NFS3ERR_ROFS);

  SETATTR3args sa{};
  sa.object = wire(file);
  sa.new_attributes.mode.set_it = TRUE;
  sa.new_attributes.mode.set_mode3_u.mode = 0600;
  Reply<SETATTR3res> r(xdr_SETATTR3res);
  call(NFSPROC3_SETATTR, xdr_SETATTR3args, sa, xdr_SETATTR3res, &r);
  EXPECT_EQ(r->status, NFS3ERR_ROFS);

  RENAME3args rn{};
  FileHandle dir = ro_root;
  rn.from.dir = rn.to.dir = wire(dir);
  rn.from.name = const_cast<char*>("f");
  rn.to.name = const_cast<char*>("h");
  Reply<RENAME3res> rr(xdr_RENAME3res);
  call(NFSPROC3_RENAME, xdr_RENAME3args, rn, xdr_RENAME3res, &rr);
  EXPECT_EQ(rr->status, NFS3ERR_ROFS);
  EXPECT_EQ(lookup(ro_root, "f"), NFS3_OK);  // nothing changed
}

TEST_F(Nfs3Policy, AccessOnReadOnlyExportGrantsNoWriting) {
  // uid 1000 owns the directory, so the volume grants everything; the export must not.
  call_.peer = ipv4_peer("10.1.0.5");
  ACCESS3args a{};
  FileHandle fh = root_handle(main_, "/r/main-ro");
  a.object = wire(fh);
  a.access = ACCESS3_READ | ACCESS3_LOOKUP | ACCESS3_MODIFY | ACCESS3_EXTEND | ACCESS3_DELETE;
  Reply<ACCESS3res> r(xdr_ACCESS3res);
  call(NFSPROC3_ACCESS, xdr_ACCESS3args, a, xdr_ACCESS3res, &r);
  ASSERT_EQ(r->status, NFS3_OK);
  EXPECT_EQ(r->ACCESS3res_u.resok.access, uint32_t{ACCESS3_READ | ACCESS3_LOOKUP});
}

TEST_F(Nfs3Policy, RootIsSquashedOnTheRwExport) {
  call_.cred.uid = 0;
  call_.cred.gid = 0;
  // The export root belongs to uid 1000 (mode 0755): squashed root may not create in it.
  EXPECT_EQ(create(root(), "as-root"), NFS3ERR_ACCES);
}

TEST_F(Nfs3Policy, SquashAllMakesEveryoneTheAnonymousUser) {
  // archive is read-only, so check the mapping through ACCESS: anonymous 4000 is "other".
  call_.cred.uid = 0;
  ACCESS3args a{};
  FileHandle fh = root_handle(archive_);
  a.object = wire(fh);
  a.access = ACCESS3_READ | ACCESS3_MODIFY;
  Reply<ACCESS3res> r(xdr_ACCESS3res);
  call(NFSPROC3_ACCESS, xdr_ACCESS3args, a, xdr_ACCESS3res, &r);
  ASSERT_EQ(r->status, NFS3_OK);
  EXPECT_EQ(r->ACCESS3res_u.resok.access, uint32_t{ACCESS3_READ});
}

TEST_F(Nfs3Policy, GarbageArgumentsAreRejected) {
  std::vector<uint8_t> junk = {0xff, 0xff, 0xff, 0xff, 1, 2};  // handle length 4 GiB
  for (uint32_t proc = 1; proc < 22; proc++)
    EXPECT_EQ(call_status_only(proc, junk).accept, rpc::AcceptStat::GarbageArgs) << "proc " << proc;
  EXPECT_EQ(call_status_only(NFSPROC3_GETATTR, {}).accept, rpc::AcceptStat::GarbageArgs);
}

// filename3 is unbounded in RFC 1813: a name over the volume's limit must reach the volume and
// come back NAMETOOLONG; only a length past the decoder's 4 KiB safety bound is garbage.
std::vector<uint8_t> lookup_args_with_name_length(const std::vector<uint8_t>& dir, size_t n) {
  std::vector<uint8_t> bytes = dir;
  uint32_t len = htonl(static_cast<uint32_t>(n));
  bytes.insert(bytes.end(), reinterpret_cast<uint8_t*>(&len), reinterpret_cast<uint8_t*>(&len) + 4);
  bytes.resize(bytes.size() + ((n + 3) & ~size_t{3}), 'a');
  return bytes;
}

TEST_F(Nfs3Policy, OverlongNameIsNameTooLong) {
  FileHandle dir = root();
  std::vector<uint8_t> fh = encode(xdr_nfs_fh3, wire(dir));
  Reply<LOOKUP3res> reply(xdr_LOOKUP3res);
  call_raw(NFSPROC3_LOOKUP, lookup_args_with_name_length(fh, 256), &reply);
  ASSERT_EQ(reply.result.accept, rpc::AcceptStat::Success);
  EXPECT_EQ(reply->status, NFS3ERR_NAMETOOLONG);
}

TEST_F(Nfs3Policy, NamePastTheDecoderBoundIsGarbage) {
  FileHandle dir = root();
  std::vector<uint8_t> fh = encode(xdr_nfs_fh3, wire(dir));
  EXPECT_EQ(call_status_only(NFSPROC3_LOOKUP, lookup_args_with_name_length(fh, 4097)).accept,
            rpc::AcceptStat::GarbageArgs);
}

TEST_F(Nfs3Policy, WritePayloadAboveOneMebibyteIsGarbage) {
  FileHandle f;
  ASSERT_EQ(create(root(), "big", &f), NFS3_OK);
  // file, offset, count, stable, then a data length one byte over the 1 MiB cap.
  std::vector<uint8_t> bytes = encode(xdr_nfs_fh3, wire(f));
  const uint32_t over = (1u << 20) + 1;
  for (uint32_t word : {0u, 0u, htonl(over), htonl(FILE_SYNC), htonl(over)})
    bytes.insert(bytes.end(), reinterpret_cast<uint8_t*>(&word), reinterpret_cast<uint8_t*>(&word) + 4);
  bytes.resize(bytes.size() + ((over + 3) & ~3u), 'x');
  EXPECT_EQ(call_status_only(NFSPROC3_WRITE, bytes).accept, rpc::AcceptStat::GarbageArgs);
  // A payload shorter than its length word is garbage too.
  std::vector<uint8_t> short_payload = encode(xdr_nfs_fh3, wire(f));
  for (uint32_t word : {0u, 0u, htonl(100), htonl(FILE_SYNC), htonl(100)})
    short_payload.insert(short_payload.end(), reinterpret_cast<uint8_t*>(&word),
                         reinterpret_cast<uint8_t*>(&word) + 4);
  short_payload.resize(short_payload.size() + 52, 'x');
  EXPECT_EQ(call_status_only(NFSPROC3_WRITE, short_payload).accept, rpc::AcceptStat::GarbageArgs);
}

TEST_F(Nfs3Policy, UnknownProcedureAndVersion) {
  EXPECT_EQ(call_status_only(22, {}).accept, rpc::AcceptStat::ProcUnavail);
  call_.vers = 2;
  rpc::DispatchResult r = call_status_only(0, {});
  EXPECT_EQ(r.accept, rpc::AcceptStat::ProgMismatch);
  EXPECT_EQ(r.low_version, 3u);
  EXPECT_EQ(r.high_version, 3u);
}

TEST_F(Nfs3Policy, NullSucceedsWithEmptyReply) {
  std::vector<uint8_t> out;
  rpc::CallContext c = call_;
  c.proc = 0;
  EXPECT_EQ(nfs_->dispatch(c, {}, &out).accept, rpc::AcceptStat::Success);
  EXPECT_TRUE(out.empty());
}

TEST_F(Nfs3Policy, CacheableProceduresAreTheNonIdempotentOnes) {
  std::vector<uint32_t> cacheable;
  for (uint32_t p = 0; p < nfs_->num_procs(); p++)
    if (nfs_->cacheable(p)) cacheable.push_back(p);
  EXPECT_EQ(cacheable, (std::vector<uint32_t>{2, 7, 8, 9, 10, 11, 12, 13, 14, 15, 21}));
  EXPECT_EQ(nfs_->proc_name(17), "READDIRPLUS");
  EXPECT_FALSE(nfs_->cacheable(1000));
}

TEST_F(Nfs3Policy, RepliesAreAppendedAfterExistingBytes) {
  std::vector<uint8_t> out = {9, 9, 9, 9};  // e.g. a reply header the transport wrote first
  FileHandle fh = root();
  GETATTR3args a{wire(fh)};
  rpc::CallContext c = call_;
  c.proc = NFSPROC3_GETATTR;
  ASSERT_EQ(nfs_->dispatch(c, encode(xdr_GETATTR3args, a), &out).accept, rpc::AcceptStat::Success);
  ASSERT_EQ(out.size(), 4u + 4u + 84u);
  EXPECT_EQ(out[0], 9);
  EXPECT_EQ(out[7], 0);  // NFS3_OK
}

}  // namespace
}  // namespace nasd::nfs::fixture

namespace nasd::nfs::fixture {
namespace {

// REMOVE3args by hand: a name with a NUL byte inside, which xdr_string would cut at the NUL.
std::vector<uint8_t> remove_args_with_raw_name(const FileHandle& dir, const std::string& name) {
  std::vector<uint8_t> b;
  auto u32 = [&](uint32_t v) {
    for (int i = 3; i >= 0; i--) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
  };
  u32(FileHandle::kSize);
  b.insert(b.end(), dir.bytes.begin(), dir.bytes.end());
  u32(static_cast<uint32_t>(name.size()));
  b.insert(b.end(), name.begin(), name.end());
  while (b.size() % 4) b.push_back(0);
  return b;
}

class Nfs3Hardening : public Nfs3Ops {};

TEST_F(Nfs3Hardening, NameWithNulIsInvalNeverAShorterName) {
  ASSERT_EQ(create(root(), "a"), NFS3_OK);
  Reply<REMOVE3res> r(xdr_REMOVE3res);
  call_raw(NFSPROC3_REMOVE, remove_args_with_raw_name(root(), std::string("a\0x", 3)), &r);
  ASSERT_EQ(r.result.accept, rpc::AcceptStat::Success);
  EXPECT_EQ(r->status, NFS3ERR_INVAL);
  Reply<REMOVE3res> r2(xdr_REMOVE3res);
  call_raw(NFSPROC3_REMOVE, remove_args_with_raw_name(root(), std::string("a\0", 2)), &r2);
  EXPECT_EQ(r2->status, NFS3ERR_INVAL) << "a trailing NUL inside the length";
  EXPECT_EQ(lookup(root(), "a"), NFS3_OK) << "\"a\" must still exist";
  Reply<REMOVE3res> ok(xdr_REMOVE3res);
  call_raw(NFSPROC3_REMOVE, remove_args_with_raw_name(root(), "a"), &ok);
  EXPECT_EQ(ok->status, NFS3_OK) << "the hand-made encoding itself is right";
}

TEST_F(Nfs3Hardening, SecureExportRefusesUnreservedPorts) {
  exports_->replace(Exports::parse(Config::parse(R"(
[volume main]
id = 7
[export /r/main]
volume = main
clients = 127.0.0.0/8
access = rw
)")));
  reinterpret_cast<sockaddr_in*>(&call_.peer)->sin_port = htons(40000);
  EXPECT_EQ(getattr(root()), NFS3ERR_PERM);
  reinterpret_cast<sockaddr_in*>(&call_.peer)->sin_port = htons(800);
  EXPECT_EQ(getattr(root()), NFS3_OK);
}

TEST_F(Nfs3Hardening, HandleFromReadOnlyExportCannotWriteEvenWhenTheClientHasRw) {
  exports_->replace(Exports::parse(Config::parse(R"(
[volume main]
id = 7
[export /pub]
volume = main
clients = 127.0.0.0/8
options = ro, insecure
[export /adm]
volume = main
clients = 127.0.0.1
options = rw, insecure
)")));
  FileHandle pub = root_handle(main_, "/pub"), adm = root_handle(main_, "/adm");
  EXPECT_EQ(create(pub, "nope"), NFS3ERR_ROFS);
  EXPECT_EQ(create(adm, "yes"), NFS3_OK);
  FileHandle via_pub;
  ASSERT_EQ(lookup(pub, "yes", &via_pub), NFS3_OK);
  EXPECT_EQ(write(via_pub, 0, "x"), NFS3ERR_ROFS) << "a handle found through /pub stays /pub's";
  // Forging the export id breaks the tag.
  FileHandle forged = via_pub;
  uint32_t adm_id = export_id_for_path("/adm");
  forged.bytes[1] = static_cast<uint8_t>(adm_id >> 16);
  forged.bytes[2] = static_cast<uint8_t>(adm_id >> 8);
  forged.bytes[3] = static_cast<uint8_t>(adm_id);
  EXPECT_EQ(getattr(forged), NFS3ERR_BADHANDLE);
}

TEST_F(Nfs3Hardening, OnlyCallersAnExportListsMayTakeACacheEntry) {
  FileHandle dir = root();
  std::vector<uint8_t> args = remove_args_with_raw_name(dir, "x");
  rpc::CallContext c = call_;
  c.proc = NFSPROC3_REMOVE;
  EXPECT_TRUE(nfs_->may_cache(c, args));
  c.peer = ipv4_peer("192.168.7.7");  // in no export
  EXPECT_FALSE(nfs_->may_cache(c, args));
  c = call_;
  std::vector<uint8_t> garbage(args.size(), 0x41);
  EXPECT_FALSE(nfs_->may_cache(c, garbage));
  EXPECT_FALSE(nfs_->may_cache(c, std::span<const uint8_t>(args.data(), 10)));
}

}  // namespace
}  // namespace nasd::nfs::fixture
