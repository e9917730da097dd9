// Writes the seed corpus for nfs_service_fuzzer: one well-formed call (or short sequence) per
// procedure, with handle placeholders (fuzz_input.h) naming the objects the fuzzer's world has:
// inode 1 the root, 2 "dir", 3 "dir/file", 4 "link", 5 the first object a seed creates.
//   make_nfs_fuzz_seeds <output-dir>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "server/nfs/xdr/mount3_prot.h"
#include "server/nfs/xdr/nfs3_prot.h"
#include "server/nfs/xdr/xdr_codec.h"
#include "tests/fuzz/nfs/fuzz_input.h"

using namespace nasd::nfs;

namespace {

struct Placeholder {
  uint8_t bytes[32] = {};
  nfs_fh3 fh{};
  explicit Placeholder(uint8_t ino, uint8_t volume_sel = 0) {
    bytes[0] = fuzz::kHandleMarker;
    bytes[1] = volume_sel;
    bytes[2] = ino;
    fh.data.data_len = 32;
    fh.data.data_val = reinterpret_cast<char*>(bytes);
  }
};

std::vector<uint8_t> input;

template <typename T>
void add(uint8_t selector, uint8_t flags, xdr::Routine<T> routine, const T& args) {
  std::vector<uint8_t> bytes;
  if (!xdr::append(routine, args, &bytes)) std::abort();
  input.push_back(selector);
  input.push_back(flags);
  input.push_back(static_cast<uint8_t>(bytes.size() >> 8));
  input.push_back(static_cast<uint8_t>(bytes.size()));
  input.insert(input.end(), bytes.begin(), bytes.end());
}

void add_empty(uint8_t selector, uint8_t flags = 0) { input.insert(input.end(), {selector, flags, 0, 0}); }

void save(const std::string& dir, const std::string& name) {
  std::ofstream(dir + "/" + name, std::ios::binary)
      .write(reinterpret_cast<const char*>(input.data()), static_cast<std::streamsize>(input.size()));
  input.clear();
}

diropargs3 where(Placeholder& dir, const char* name) { return diropargs3{dir.fh, const_cast<char*>(name)}; }

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <output-dir>\n", argv[0]);
    return 2;
  }
  const std::string out = argv[1];
  Placeholder root(1), dir(2), file(3), link(4), created(5), archive_root(1, 1);

  add_empty(NFSPROC3_NULL);
  save(out, "null");
  add(NFSPROC3_GETATTR, 0, xdr_GETATTR3args, GETATTR3args{root.fh});
  add(NFSPROC3_GETATTR, 2, xdr_GETATTR3args, GETATTR3args{archive_root.fh});
  save(out, "getattr");
  {
    SETATTR3args a{};
    a.object = file.fh;
    a.new_attributes.size.set_it = TRUE;
    a.new_attributes.size.set_size3_u.size = 4;
    a.new_attributes.mtime.set_it = SET_TO_CLIENT_TIME;
    a.new_attributes.mtime.set_mtime_u.mtime = {5, 6};
    add(NFSPROC3_SETATTR, 0, xdr_SETATTR3args, a);
    a.guard.check = TRUE;  // ctime 0 never matches: NOT_SYNC
    add(NFSPROC3_SETATTR, 0, xdr_SETATTR3args, a);
    save(out, "setattr");
  }
  add(NFSPROC3_LOOKUP, 0, xdr_LOOKUP3args, LOOKUP3args{where(root, "dir")});
  add(NFSPROC3_LOOKUP, 0, xdr_LOOKUP3args, LOOKUP3args{where(dir, "..")});
  save(out, "lookup");
  add(NFSPROC3_ACCESS, 16, xdr_ACCESS3args, ACCESS3args{dir.fh, 0x3f});
  save(out, "access");
  add(NFSPROC3_READLINK, 0, xdr_READLINK3args, READLINK3args{link.fh});
  save(out, "readlink");
  add(NFSPROC3_READ, 0, xdr_READ3args, READ3args{file.fh, 5, 100});
  add(NFSPROC3_READ, 1, xdr_READ3args, READ3args{file.fh, 0, 1u << 20});
  save(out, "read");
  {
    WRITE3args w{};
    w.file = file.fh;
    w.offset = 2;
    w.count = 5;
    w.stable = DATA_SYNC;
    char data[] = "hello";
    w.data.data_len = 5;
    w.data.data_val = data;
    add(NFSPROC3_WRITE, 0, xdr_WRITE3args, w);
    add(NFSPROC3_COMMIT, 0, xdr_COMMIT3args, COMMIT3args{file.fh, 0, 0});
    save(out, "write-commit");
  }
  {
    CREATE3args c{};
    c.where = where(root, "new");
    c.how.mode = GUARDED;
    c.how.createhow3_u.obj_attributes.mode.set_it = TRUE;
    c.how.createhow3_u.obj_attributes.mode.set_mode3_u.mode = 0600;
    add(NFSPROC3_CREATE, 0, xdr_CREATE3args, c);
    WRITE3args w{};
    w.file = created.fh;
    char data[] = "abcdefgh";
    w.count = w.data.data_len = 8;
    w.data.data_val = data;
    add(NFSPROC3_WRITE, 0, xdr_WRITE3args, w);
    add(NFSPROC3_READ, 0, xdr_READ3args, READ3args{created.fh, 0, 8});
    save(out, "create-write-read");
    c.how.mode = EXCLUSIVE;
    add(NFSPROC3_CREATE, 0, xdr_CREATE3args, c);
    add(NFSPROC3_CREATE, 0, xdr_CREATE3args, c);
    save(out, "create-exclusive");
  }
  {
    MKDIR3args m{};
    m.where = where(dir, "sub");
    add(NFSPROC3_MKDIR, 0, xdr_MKDIR3args, m);
    add(NFSPROC3_RMDIR, 0, xdr_RMDIR3args, RMDIR3args{where(dir, "sub")});
    save(out, "mkdir-rmdir");
  }
  {
    SYMLINK3args s{};
    s.where = where(root, "sl");
    s.symlink.symlink_data = const_cast<char*>("/some/where");
    add(NFSPROC3_SYMLINK, 0, xdr_SYMLINK3args, s);
    add(NFSPROC3_READLINK, 0, xdr_READLINK3args, READLINK3args{created.fh});
    save(out, "symlink");
  }
  {
    MKNOD3args m{};
    m.where = where(root, "dev");
    m.what.type = NF3BLK;
    m.what.mknoddata3_u.device.spec = {8, 1};
    add(NFSPROC3_MKNOD, 0, xdr_MKNOD3args, m);
    m.where = where(root, "sock");
    m.what.type = NF3SOCK;
    add(NFSPROC3_MKNOD, 0, xdr_MKNOD3args, m);
    save(out, "mknod");
  }
  add(NFSPROC3_REMOVE, 0, xdr_REMOVE3args, REMOVE3args{where(root, "link")});
  save(out, "remove");
  add(NFSPROC3_RENAME, 0, xdr_RENAME3args, RENAME3args{where(dir, "file"), where(root, "moved")});
  save(out, "rename");
  add(NFSPROC3_LINK, 0, xdr_LINK3args, LINK3args{file.fh, where(root, "hard")});
  save(out, "link");
  {
    READDIR3args r{};
    r.dir = root.fh;
    r.count = 4096;
    add(NFSPROC3_READDIR, 0, xdr_READDIR3args, r);
    r.cookie = 2;
    r.count = 130;
    add(NFSPROC3_READDIR, 0, xdr_READDIR3args, r);
    save(out, "readdir");
    READDIRPLUS3args p{};
    p.dir = dir.fh;
    p.dircount = 512;
    p.maxcount = 8192;
    add(NFSPROC3_READDIRPLUS, 0, xdr_READDIRPLUS3args, p);
    save(out, "readdirplus");
  }
  add(NFSPROC3_FSSTAT, 0, xdr_FSSTAT3args, FSSTAT3args{root.fh});
  add(NFSPROC3_FSINFO, 1, xdr_FSINFO3args, FSINFO3args{root.fh});
  add(NFSPROC3_PATHCONF, 0, xdr_PATHCONF3args, PATHCONF3args{root.fh});
  save(out, "fsinfo");

  constexpr uint8_t kMount = fuzz::kNfsProcs;
  char* main_path = const_cast<char*>("/r/main/dir");
  char* archive_path = const_cast<char*>("/r/archive");
  add_empty(kMount + MOUNTPROC3_NULL);
  add(kMount + MOUNTPROC3_MNT, 0x40, xdr_mnt_dirpath, main_path);  // version 3
  add(kMount + MOUNTPROC3_MNT, 0x04, xdr_mnt_dirpath, archive_path);
  add_empty(kMount + MOUNTPROC3_DUMP, 0x40);
  add(kMount + MOUNTPROC3_UMNT, 0x40, xdr_mnt_dirpath, main_path);
  add_empty(kMount + MOUNTPROC3_UMNTALL, 0x40);
  add_empty(kMount + MOUNTPROC3_EXPORT, 0x00);  // version 1
  save(out, "mount");
  return 0;
}
