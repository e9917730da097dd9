// libFuzzer target: feeds arbitrary bytes as the arguments of every NFSv3 and MOUNT procedure
// to the real services over the in-memory test volume, and checks that every accepted reply
// decodes again. Input format: fuzz_input.h.
#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "tests/fuzz/call_records.h"
#include "server/nfs/mount/mount_service.h"
#include "server/nfs/nfs3/nfs3_service.h"
#include "server/nfs/xdr/mount3_prot.h"
#include "server/nfs/xdr/nfs3_prot.h"
#include "tests/fuzz/nfs/fuzz_input.h"
#include "tests/support/memory_fs.h"
#include "tests/support/memory_resolver.h"
#include "util/config.h"

namespace nasd::nfs::fuzz {
namespace {

const char* kConfig = R"(
[volume main]
id = 7
[volume archive]
id = 8
[export /r/main]
volume = main
clients = 127.0.0.0/8, ::1
access = rw
squash = root
[export /r/main-ro]
volume = main
clients = 10.1.0.0/16
access = ro
[export /r/archive]
volume = archive
clients = *
access = ro
squash = all
)";

// Result decoders per NFS procedure, to check every reply the services produce is valid XDR.
const xdrproc_t kNfsResults[kNfsProcs] = {
    (xdrproc_t)xdr_void,          (xdrproc_t)xdr_GETATTR3res,  (xdrproc_t)xdr_SETATTR3res,
    (xdrproc_t)xdr_LOOKUP3res,    (xdrproc_t)xdr_ACCESS3res,   (xdrproc_t)xdr_READLINK3res,
    (xdrproc_t)xdr_READ3res,      (xdrproc_t)xdr_WRITE3res,    (xdrproc_t)xdr_CREATE3res,
    (xdrproc_t)xdr_MKDIR3res,     (xdrproc_t)xdr_SYMLINK3res,  (xdrproc_t)xdr_MKNOD3res,
    (xdrproc_t)xdr_REMOVE3res,    (xdrproc_t)xdr_RMDIR3res,    (xdrproc_t)xdr_RENAME3res,
    (xdrproc_t)xdr_LINK3res,      (xdrproc_t)xdr_READDIR3res,  (xdrproc_t)xdr_READDIRPLUS3res,
    (xdrproc_t)xdr_FSSTAT3res,    (xdrproc_t)xdr_FSINFO3res,   (xdrproc_t)xdr_PATHCONF3res,
    (xdrproc_t)xdr_COMMIT3res,
};

union AnyResult {
  GETATTR3res getattr;
  SETATTR3res setattr;
  LOOKUP3res lookup;
  ACCESS3res access;
  READLINK3res readlink;
  READ3res read;
  WRITE3res write;
  CREATE3res create;
  MKDIR3res mkdir;
  SYMLINK3res symlink;
  MKNOD3res mknod;
  REMOVE3res remove;
  RMDIR3res rmdir;
  RENAME3res rename;
  LINK3res link;
  READDIR3res readdir;
  READDIRPLUS3res readdirplus;
  FSSTAT3res fsstat;
  FSINFO3res fsinfo;
  PATHCONF3res pathconf;
  COMMIT3res commit;
  mountres3 mnt;
  mnt_fhstatus fhstatus;
  mnt_mountlist dump;
  mnt_exports exports;
};

void check_decodes(xdrproc_t routine, const std::vector<uint8_t>& bytes) {
  AnyResult value;
  std::memset(&value, 0, sizeof value);
  XDR x;
  xdrmem_create(&x, reinterpret_cast<char*>(const_cast<uint8_t*>(bytes.data())),
                static_cast<u_int>(bytes.size()), XDR_DECODE);
  bool ok = routine(&x, &value) && xdr_getpos(&x) == bytes.size();
  xdr_destroy(&x);
  xdr_free(routine, reinterpret_cast<char*>(&value));
  if (!ok) {
    std::fprintf(stderr, "reply of %zu bytes does not decode as its result type\n", bytes.size());
    std::abort();
  }
}

xdrproc_t mount_result(uint32_t proc, uint32_t vers) {
  switch (proc) {
    case 1: return vers == 3 ? (xdrproc_t)xdr_mountres3 : (xdrproc_t)xdr_mnt_fhstatus;
    case 2: return (xdrproc_t)xdr_mnt_mountlist;
    case 5: return (xdrproc_t)xdr_mnt_exports;
    default: return (xdrproc_t)xdr_void;
  }
}

sockaddr_storage peer_for(int which) {
  static const char* v4[] = {"127.0.0.1", "10.1.2.3", "192.0.2.1"};
  sockaddr_storage ss{};
  if (which < 3) {
    auto* sin = reinterpret_cast<sockaddr_in*>(&ss);
    sin->sin_family = AF_INET;
    inet_pton(AF_INET, v4[which], &sin->sin_addr);
  } else {
    auto* sin6 = reinterpret_cast<sockaddr_in6*>(&ss);
    sin6->sin6_family = AF_INET6;
    sin6->sin6_addr = in6addr_loopback;
  }
  return ss;
}

// A fresh world per input so inputs replay deterministically: two volumes with a few objects.
struct World {
  World()
      : main(7), archive(8), codec(std::make_shared<HandleCodec>(std::vector<uint8_t>(32, kHandleKeyByte))) {
    fs::OpContext root;
    root.cred.uid = 0;
    fs::SetAttr owner;
    owner.uid = owner.gid = 1000;
    fs::Wcc w;
    main.setattr(root, main.root(), owner, std::nullopt, &w);
    fs::OpContext user;  // the fuzzer's usual caller, so its changes are permitted
    user.cred.uid = user.cred.gid = 1000;
    fs::InodeId dir, file, link;
    std::optional<fs::Attr> a;
    main.mkdir(user, main.root(), "dir", {}, &dir, &a, &w);
    main.create(user, dir, "file", fs::CreateMode::Guarded, {}, 0, &file, &a, &w);
    const uint8_t text[] = "some file contents";
    fs::Stability st;
    main.write(user, file, 0, text, fs::Stability::FileSync, &st, &w);
    main.symlink(user, main.root(), "link", "dir/file", {}, &link, &a, &w);
    resolver->add(&main);
    resolver->add(&archive);
    nfs = std::make_unique<Nfs3Service>(resolver, exports(), codec);
    mount = std::make_unique<MountService>(resolver, exports(), codec, std::make_shared<MountTable>(""));
  }

  static std::shared_ptr<Exports> exports() {
    static std::shared_ptr<Exports> e = Exports::from_config(Config::parse(kConfig));
    return e;
  }

  // Swaps handle placeholders (fuzz_input.h) for real handles.
  void patch_handles(std::vector<uint8_t>* args) const {
    for (size_t i = 0; i + 4 + FileHandle::kSize <= args->size(); i += 4) {
      uint8_t* p = args->data() + i;
      if (p[0] != 0 || p[1] != 0 || p[2] != 0 || p[3] != 32 || p[4] != kHandleMarker) continue;
      // Issued under the volume's first export, as MNT would (volume 9 has none: id 0).
      const uint32_t volume = 7 + p[5] % 3;
      const uint32_t export_id = volume == 7   ? export_id_for_path("/r/main")
                                 : volume == 8 ? export_id_for_path("/r/archive")
                                               : 0;
      FileHandle fh = codec->encode(volume, {p[6], 1}, export_id);
      std::memcpy(p + 4, fh.bytes.data(), FileHandle::kSize);
      i += FileHandle::kSize;
    }
  }

  test_support::MemoryFs main, archive;
  std::shared_ptr<test_support::MemoryResolver> resolver =
      std::make_shared<test_support::MemoryResolver>();
  std::shared_ptr<HandleCodec> codec;
  std::unique_ptr<Nfs3Service> nfs;
  std::unique_ptr<MountService> mount;
};

void run_call(World& world, uint8_t selector, uint8_t flags, std::vector<uint8_t> args) {
  world.patch_handles(&args);
  const uint32_t pick = selector % (kNfsProcs + kMountProcs);
  const bool is_nfs = pick < kNfsProcs;
  rpc::CallContext call;
  call.proc = is_nfs ? pick : pick - kNfsProcs;
  call.prog = is_nfs ? 100003 : 100005;
  call.vers = is_nfs ? 3 : 1 + ((flags >> 5) & 3) % 3;
  call.tcp = !(flags & 1);
  call.peer = peer_for((flags >> 1) & 3);
  call.cred.flavor = (flags & 8) ? rpc::kAuthNone : rpc::kAuthSys;
  call.cred.uid = call.cred.gid = (flags & 16) ? 0 : 1000;

  std::vector<uint8_t> results;
  rpc::Service& service = is_nfs ? static_cast<rpc::Service&>(*world.nfs) : *world.mount;
  service.may_cache(call, args);  // the reply cache's admission check decodes a handle too
  // The transport's payload locator reads a WRITE's head before the call is complete.
  if (auto at = service.bulk_payload_offset(call, args); at && *at > args.size()) __builtin_trap();
  rpc::DispatchResult r = service.dispatch(call, args, &results);
  r.tail.copy_to(&results);  // as the transport sends it
  if (r.kind == rpc::DispatchResult::Accepted && r.accept == rpc::AcceptStat::Success)
    check_decodes(is_nfs ? kNfsResults[call.proc] : mount_result(call.proc, call.vers), results);
  // NASD_FUZZ_TRACE=1 shows what each call of an input did (seed debugging).
  static const bool trace = std::getenv("NASD_FUZZ_TRACE") != nullptr;
  if (trace) {
    uint32_t status = results.size() >= 4 ? ntohl(*reinterpret_cast<const uint32_t*>(results.data())) : 0;
    std::fprintf(stderr, "%s %s: accept %u, status %u, %zu reply bytes\n", is_nfs ? "NFS" : "MOUNT",
                 std::string(service.proc_name(call.proc)).c_str(), static_cast<unsigned>(r.accept),
                 status, results.size());
  }
}

}  // namespace
}  // namespace nasd::nfs::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nasd::nfs::fuzz;
  World world;
  nasd::fuzz::for_each_call_record(data, size, kMaxCalls,
                                   [&](uint8_t selector, uint8_t flags, std::vector<uint8_t> args) {
                                     run_call(world, selector, flags, std::move(args));
                                   });
  return 0;
}
