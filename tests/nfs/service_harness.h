// Test harness: NFS and MOUNT services over MemoryFs volumes, with helpers that XDR-encode
// arguments, call dispatch() like the transport does, and decode the results.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "server/nfs/exports/exports.h"
#include "server/nfs/handle/handle_codec.h"
#include "server/nfs/mount/mount_service.h"
#include "server/nfs/nfs3/nfs3_service.h"
#include "server/nfs/xdr/mount3_prot.h"
#include "server/nfs/xdr/nfs3_prot.h"
#include "server/nfs/xdr/xdr_codec.h"
#include "tests/nfs/xdr_encode.h"
#include "tests/support/memory_fs.h"
#include "tests/support/memory_resolver.h"
#include "util/config.h"

namespace nasd::nfs::fixture {

// Volume 7 exported read-write to 127.0.0.0/8 and read-only to 10.1.0.0/16; volume 8
// exported read-only to everyone; volume 9 named by handles but not exported.
inline const char* kHarnessConfig = R"(
[volume main]
id = 7
[volume archive]
id = 8
[volume hidden]
id = 9
[export /r/main]
volume = main
clients = 127.0.0.0/8, ::1
access = rw
squash = root
anonuid = 65534
anongid = 65534
[export /r/main-ro]
volume = main
clients = 10.1.0.0/16
access = ro
[export /r/archive]
volume = archive
clients = *
access = ro
squash = all
anonuid = 4000
anongid = 4000
)";

inline sockaddr_storage ipv4_peer(const char* addr) {
  sockaddr_storage ss{};
  auto* sin = reinterpret_cast<sockaddr_in*>(&ss);
  sin->sin_family = AF_INET;
  inet_pton(AF_INET, addr, &sin->sin_addr);
  return ss;
}

using nfs::testing::encode;

// One decoded reply; frees what the decoder allocated.
template <typename T>
struct Reply {
  explicit Reply(xdr::Routine<T> routine) : value(routine) {}
  rpc::DispatchResult result;
  xdr::Decoded<T> value;
  T* operator->() { return value.operator->(); }
};

class ServiceHarness : public ::testing::Test {
 public:
  ServiceHarness()
      : main_(7), archive_(8), hidden_(9),
        codec_(std::make_shared<HandleCodec>(std::vector<uint8_t>(32, 0x42))),
        resolver_(std::make_shared<test_support::MemoryResolver>()) {
    // The tests act as uid 1000, which owns the main volume's root directory.
    fs::OpContext admin;
    admin.cred.uid = 0;
    fs::SetAttr owner;
    owner.uid = 1000;
    owner.gid = 1000;
    fs::Wcc ignored;
    EXPECT_EQ(main_.setattr(admin, main_.root(), owner, std::nullopt, &ignored), fs::Status::Ok);
    resolver_->add(&main_);
    resolver_->add(&archive_);
    resolver_->add(&hidden_);
    exports_ = Exports::from_config(Config::parse(kHarnessConfig));
    nfs_ = std::make_unique<Nfs3Service>(resolver_, exports_, codec_);
    call_.prog = 100003;
    call_.vers = 3;
    call_.peer = ipv4_peer("127.0.0.1");
    call_.peer_len = sizeof(sockaddr_in);
    call_.cred.flavor = rpc::kAuthSys;
    call_.cred.uid = 1000;
    call_.cred.gid = 1000;
  }

  // Sends `args` as procedure `proc` and decodes the reply (when the call was accepted).
  template <typename A, typename R>
  void call(uint32_t proc, xdr::Routine<A> arg_routine, const A& args,
            xdr::Routine<R> res_routine, Reply<R>* reply) {
    call_raw(proc, encode(arg_routine, args), reply);
  }

  template <typename R>
  void call_raw(uint32_t proc, const std::vector<uint8_t>& bytes, Reply<R>* reply) {
    std::vector<uint8_t> out;
    rpc::CallContext c = call_;
    c.proc = proc;
    reply->result = nfs_->dispatch(c, bytes, &out);
    // What the transport sends: the results, then the tail (a READ's data) after them.
    reply->result.tail.copy_to(&out);
    if (reply->result.accept == rpc::AcceptStat::Success) {
      ASSERT_TRUE(reply->value.decode(out)) << "reply does not decode";
    }
  }

  rpc::DispatchResult call_status_only(uint32_t proc, const std::vector<uint8_t>& bytes) {
    std::vector<uint8_t> out;
    rpc::CallContext c = call_;
    c.proc = proc;
    return nfs_->dispatch(c, bytes, &out);
  }

  // The volume's root handle as MNT issues it: under `export_path`, or by default under the
  // volume's first export (none: a handle that names no export, as made before handles did).
  FileHandle root_handle(const test_support::MemoryFs& v, const std::string& export_path = "") {
    uint32_t export_id = 0;
    for (const auto& e : exports_->all())
      if (e.volume_id == v.id() && (export_path.empty() || e.path == export_path)) {
        export_id = e.export_id;
        break;
      }
    return codec_->encode(v.id(), v.root(), export_id);
  }

  test_support::MemoryFs main_, archive_, hidden_;
  std::shared_ptr<HandleCodec> codec_;
  std::shared_ptr<test_support::MemoryResolver> resolver_;
  std::shared_ptr<Exports> exports_;
  std::unique_ptr<Nfs3Service> nfs_;
  rpc::CallContext call_;
};

// A wire handle that points into `fh`.
inline nfs_fh3 wire(FileHandle& fh) {
  nfs_fh3 w{};
  w.data.data_len = FileHandle::kSize;
  w.data.data_val = reinterpret_cast<char*>(fh.bytes.data());
  return w;
}

// A wire verifier read as the big-endian number nasd puts there.
inline uint64_t get_verifier_bytes(const char* verf) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v = (v << 8) | static_cast<uint8_t>(verf[i]);
  return v;
}

// The handle bytes a reply carried.
inline FileHandle from_wire(const nfs_fh3& w) {
  FileHandle fh;
  EXPECT_EQ(w.data.data_len, FileHandle::kSize);
  if (w.data.data_len == FileHandle::kSize)
    std::copy(w.data.data_val, w.data.data_val + FileHandle::kSize, fh.bytes.begin());
  return fh;
}

}  // namespace nasd::nfs::fixture
