// The NFS and MOUNT services behind the real RPC transport, driven by libnfs: an independent
// client with its own XDR code, so a wire-format mistake shared by our .x files and our own
// tests would still show up here. Listens on 127.0.0.1 on a free port.
#include <poll.h>

#include <gtest/gtest.h>

#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-mount.h>
#include <nfsc/libnfs-raw-nfs.h>

#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "server/nfs/nfs3/nfs3_service.h"
#include "server/nfs/mount/mount_service.h"
#include "server/rpc/rpc_server.h"
#include "tests/support/memory_fs.h"
#include "tests/support/memory_resolver.h"
#include "util/config.h"

namespace nasd::nfs {
namespace {

const char* kConfig = R"(
[volume main]
id = 7
[export /r/main]
volume = main
clients = 127.0.0.0/8
access = rw
)";

// One libnfs RPC connection to one program, used synchronously.
class Client {
 public:
  using Start = std::function<int(rpc_cb cb, void* private_data)>;

  Client(uint16_t port, int program, int version) : rpc_(rpc_init_context()) {
    rpc_set_auth(rpc_, libnfs_authunix_create("interop", 1000, 1000, 0, nullptr));
    connected_ = run([&](rpc_cb cb, void* p) {
      return rpc_connect_port_async(rpc_, "127.0.0.1", port, program, version, cb, p);
    });
  }
  ~Client() { rpc_destroy_context(rpc_); }
  bool connected() const { return connected_; }
  rpc_context* rpc() { return rpc_; }

  // Starts a call and serves the connection until its reply arrived; `on_data` sees the
  // decoded reply while it is valid. False on an RPC-level failure.
  bool run(const Start& start, const std::function<void(void*)>& on_data = nullptr) {
    Pending pending{on_data};
    if (start(on_reply, &pending) != 0) return false;
    for (int i = 0; i < 1000 && !pending.done; i++) {  // at most ~10 s
      pollfd pfd{rpc_get_fd(rpc_), static_cast<short>(rpc_which_events(rpc_)), 0};
      if (poll(&pfd, 1, 10) < 0) return false;
      if (rpc_service(rpc_, pfd.revents) < 0) return false;
    }
    return pending.done && pending.status == RPC_STATUS_SUCCESS;
  }

 private:
  struct Pending {
    std::function<void(void*)> on_data;
    bool done = false;
    int status = -1;
  };
  static void on_reply(rpc_context*, int status, void* data, void* private_data) {
    auto* p = static_cast<Pending*>(private_data);
    p->status = status;
    if (status == RPC_STATUS_SUCCESS && p->on_data) p->on_data(data);
    p->done = true;
  }

  rpc_context* rpc_;
  bool connected_ = false;
};

struct Handle {
  std::vector<char> bytes;
  nfs_fh3 fh() { return nfs_fh3{{static_cast<u_int>(bytes.size()), bytes.data()}}; }
};
Handle copy(const nfs_fh3& fh) { return Handle{{fh.data.data_val, fh.data.data_val + fh.data.data_len}}; }

class LibnfsInterop : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::OpContext admin;
    admin.cred.uid = 0;
    fs::SetAttr owner;
    owner.uid = owner.gid = 1000;
    fs::Wcc ignored;
    volume_.setattr(admin, volume_.root(), owner, std::nullopt, &ignored);
    resolver_->add(&volume_);
    auto exports = Exports::from_config(Config::parse(kConfig));
    auto codec = std::make_shared<HandleCodec>(std::vector<uint8_t>(32, 7));

    rpc::RpcServerOptions options;
    options.ports = {0};
    options.udp = false;
    options.workers = 1;
    options.threads = 2;
    options.rpcbind.mode = rpc::RpcbindMode::Off;
    server_ = std::make_unique<rpc::RpcServer>(options);
    server_->add_service(std::make_shared<Nfs3Service>(resolver_, exports, codec));
    server_->add_service(std::make_shared<MountService>(resolver_, exports, codec,
                                                        std::make_shared<MountTable>("")));
    server_->start();
    port_ = server_->bound_ports().at(0);
  }
  void TearDown() override { server_->stop(); }

  // MNT through libnfs; the export root's handle.
  Handle mount_root(const char* export_path) {
    Client mount(port_, MOUNT_PROGRAM, MOUNT_V3);
    EXPECT_TRUE(mount.connected());
    Handle root;
    std::string path = export_path;
    EXPECT_TRUE(mount.run(
        [&](rpc_cb cb, void* p) { return rpc_mount3_mnt_async(mount.rpc(), cb, path.data(), p); },
        [&](void* d) {
          auto* res = static_cast<mountres3*>(d);
          EXPECT_EQ(res->fhs_status, MNT3_OK);
          if (res->fhs_status != MNT3_OK) return;
          auto& fh = res->mountres3_u.mountinfo.fhandle;
          root.bytes.assign(fh.fhandle3_val, fh.fhandle3_val + fh.fhandle3_len);
          EXPECT_EQ(res->mountres3_u.mountinfo.auth_flavors.auth_flavors_len, 2u);
        }));
    return root;
  }

  test_support::MemoryFs volume_{7};
  std::shared_ptr<test_support::MemoryResolver> resolver_ =
      std::make_shared<test_support::MemoryResolver>();
  std::unique_ptr<rpc::RpcServer> server_;
  uint16_t port_ = 0;
};

TEST_F(LibnfsInterop, MountCreateWriteReadAndList) {
  Handle root = mount_root("/r/main");
  ASSERT_EQ(root.bytes.size(), 32u);
  Client nfs(port_, NFS_PROGRAM, NFS_V3);
  ASSERT_TRUE(nfs.connected());

  FSINFO3args fsinfo{root.fh()};
  uint32_t rtmax = 0;
  ASSERT_TRUE(nfs.run([&](rpc_cb cb, void* p) { return rpc_nfs3_fsinfo_async(nfs.rpc(), cb, &fsinfo, p); },
                      [&](void* d) {
                        auto* res = static_cast<FSINFO3res*>(d);
                        ASSERT_EQ(res->status, NFS3_OK);
                        rtmax = res->FSINFO3res_u.resok.rtmax;
                      }));
  EXPECT_EQ(rtmax, 1u << 20);

  CREATE3args create{};
  create.where.dir = root.fh();
  create.where.name = const_cast<char*>("interop.txt");
  create.how.mode = GUARDED;
  create.how.createhow3_u.obj_attributes.mode.set_it = 1;
  create.how.createhow3_u.obj_attributes.mode.set_mode3_u.mode = 0644;
  Handle file;
  ASSERT_TRUE(nfs.run([&](rpc_cb cb, void* p) { return rpc_nfs3_create_async(nfs.rpc(), cb, &create, p); },
                      [&](void* d) {
                        auto* res = static_cast<CREATE3res*>(d);
                        ASSERT_EQ(res->status, NFS3_OK);
                        ASSERT_TRUE(res->CREATE3res_u.resok.obj.handle_follows);
                        file = copy(res->CREATE3res_u.resok.obj.post_op_fh3_u.handle);
                      }));

  std::string data(8192, '\0');
  for (size_t i = 0; i < data.size(); i++) data[i] = static_cast<char>('a' + i % 26);
  WRITE3args write{};
  write.file = file.fh();
  write.count = static_cast<count3>(data.size());
  write.stable = FILE_SYNC;
  write.data.data_len = static_cast<u_int>(data.size());
  write.data.data_val = data.data();
  count3 written = 0;
  ASSERT_TRUE(nfs.run([&](rpc_cb cb, void* p) { return rpc_nfs3_write_async(nfs.rpc(), cb, &write, p); },
                      [&](void* d) {
                        auto* res = static_cast<WRITE3res*>(d);
                        ASSERT_EQ(res->status, NFS3_OK);
                        written = res->WRITE3res_u.resok.count;
                      }));
  EXPECT_EQ(written, data.size());

  READ3args read{file.fh(), 100, 5000};
  std::string got;
  ASSERT_TRUE(nfs.run([&](rpc_cb cb, void* p) { return rpc_nfs3_read_async(nfs.rpc(), cb, &read, p); },
                      [&](void* d) {
                        auto* res = static_cast<READ3res*>(d);
                        ASSERT_EQ(res->status, NFS3_OK);
                        got.assign(res->READ3res_u.resok.data.data_val, res->READ3res_u.resok.data.data_len);
                      }));
  EXPECT_EQ(got, data.substr(100, 5000));

  MKDIR3args mkdir{};
  mkdir.where.dir = root.fh();
  mkdir.where.name = const_cast<char*>("sub");
  ASSERT_TRUE(nfs.run([&](rpc_cb cb, void* p) { return rpc_nfs3_mkdir_async(nfs.rpc(), cb, &mkdir, p); },
                      [&](void* d) { EXPECT_EQ(static_cast<MKDIR3res*>(d)->status, NFS3_OK); }));

  READDIRPLUS3args list{};
  list.dir = root.fh();
  list.dircount = 4096;
  list.maxcount = 32768;
  std::set<std::string> names;
  bool eof = false;
  ASSERT_TRUE(nfs.run(
      [&](rpc_cb cb, void* p) { return rpc_nfs3_readdirplus_async(nfs.rpc(), cb, &list, p); },
      [&](void* d) {
        auto* res = static_cast<READDIRPLUS3res*>(d);
        ASSERT_EQ(res->status, NFS3_OK);
        for (entryplus3* e = res->READDIRPLUS3res_u.resok.reply.entries; e; e = e->nextentry) {
          names.insert(e->name);
          EXPECT_TRUE(e->name_handle.handle_follows) << e->name;
        }
        eof = res->READDIRPLUS3res_u.resok.reply.eof;
      }));
  EXPECT_EQ(names, (std::set<std::string>{".", "..", "interop.txt", "sub"}));
  EXPECT_TRUE(eof);

  // A handle with a tampered tag is refused, over the wire too.
  Handle forged = file;
  forged.bytes[31] ^= 1;
  GETATTR3args getattr{forged.fh()};
  ASSERT_TRUE(nfs.run([&](rpc_cb cb, void* p) { return rpc_nfs3_getattr_async(nfs.rpc(), cb, &getattr, p); },
                      [&](void* d) { EXPECT_EQ(static_cast<GETATTR3res*>(d)->status, NFS3ERR_BADHANDLE); }));
}

TEST_F(LibnfsInterop, ExportListDecodesInLibnfs) {
  Client mount(port_, MOUNT_PROGRAM, MOUNT_V3);
  ASSERT_TRUE(mount.connected());
  std::vector<std::string> dirs, groups;
  ASSERT_TRUE(mount.run([&](rpc_cb cb, void* p) { return rpc_mount3_export_async(mount.rpc(), cb, p); },
                        [&](void* d) {
                          for (exportnode* e = *static_cast<exports*>(d); e; e = e->ex_next) {
                            dirs.push_back(e->ex_dir);
                            for (groupnode* g = e->ex_groups; g; g = g->gr_next) groups.push_back(g->gr_name);
                          }
                        }));
  EXPECT_EQ(dirs, (std::vector<std::string>{"/r/main"}));
  EXPECT_EQ(groups, (std::vector<std::string>{"127.0.0.0/8"}));
}

}  // namespace
}  // namespace nasd::nfs
