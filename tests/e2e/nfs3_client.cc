#include "tests/e2e/nfs3_client.h"

#include <cstring>
#include <sstream>
#include <thread>

namespace nasd::e2e {
namespace {

template <class Args>
using AsyncFn = int (*)(rpc_context*, rpc_cb, Args*, void*);

// Runs `once()` (one call, returning a reply with a `status`) and, while it answers
// NFS3ERR_JUKEBOX and the channel's retry budget lasts, again after a pause: what a client does
// with "try again later". Every reply type here carries the procedure's nfsstat3 as `status`.
template <class Once>
auto with_jukebox_retry(RpcChannel& ch, Once once) {
  const auto deadline = std::chrono::steady_clock::now() + ch.jukebox_budget();
  auto delay = std::chrono::milliseconds(50);
  for (;;) {
    auto r = once();
    if (r.status != NFS3ERR_JUKEBOX || std::chrono::steady_clock::now() + delay > deadline)
      return r;
    ch.count_jukebox_retry();
    std::this_thread::sleep_for(delay);
    delay = std::min(delay * 2, std::chrono::milliseconds(1000));
  }
}

// For reply structs without pointers: a plain copy outlives libnfs's buffer.
template <class Res, class Args>
Res call_copy(RpcChannel& ch, const char* what, AsyncFn<Args> fn, Args* args) {
  return with_jukebox_retry(ch, [&] {
    Res res{};
    ch.call(what, [&](rpc_context* rpc, rpc_cb cb, void* priv) { return fn(rpc, cb, args, priv); },
            [&](void* data) { res = *static_cast<Res*>(data); });
    return res;
  });
}

// For replies with pointers: `convert` copies out what it needs while the reply is alive.
template <class Res, class Args, class Out, class Convert>
Out call_convert(RpcChannel& ch, const char* what, AsyncFn<Args> fn, Args* args,
                 Convert convert) {
  return with_jukebox_retry(ch, [&] {
    Out out{};
    ch.call(what, [&](rpc_context* rpc, rpc_cb cb, void* priv) { return fn(rpc, cb, args, priv); },
            [&](void* data) { out = convert(*static_cast<Res*>(data)); });
    return out;
  });
}

diropargs3 dirop(const Fh& dir, const std::string& name) {
  diropargs3 d{};
  d.dir = dir.wire();
  d.name = const_cast<char*>(name.c_str());
  return d;
}

std::optional<Fh> handle_of(const post_op_fh3& p) {
  if (!p.handle_follows) return std::nullopt;
  return Fh::from(p.post_op_fh3_u.handle);
}

// `u` is the reply's resok/resfail union; the four procedures share its shape.
template <class Union>
NewObjectReply new_object(nfsstat3 status, const Union& u) {
  NewObjectReply out;
  out.status = status;
  if (status == NFS3_OK) {
    out.fh = handle_of(u.resok.obj);
    out.attributes = u.resok.obj_attributes;
    out.dir_wcc = u.resok.dir_wcc;
  } else {
    out.dir_wcc = u.resfail.dir_wcc;
  }
  return out;
}

void put_verifier(char (&dst)[8], uint64_t v) { std::memcpy(dst, &v, sizeof v); }

}  // namespace

nfs_fh3 Fh::wire() const {
  nfs_fh3 fh{};
  fh.data.data_len = static_cast<u_int>(bytes.size());
  fh.data.data_val = const_cast<char*>(bytes.data());
  return fh;
}

sattr3 sattr_none() {
  sattr3 s{};
  s.atime.set_it = DONT_CHANGE;
  s.mtime.set_it = DONT_CHANGE;
  return s;
}

sattr3 sattr_mode(uint32_t mode) {
  sattr3 s = sattr_none();
  s.mode.set_it = 1;
  s.mode.set_mode3_u.mode = mode;
  return s;
}

sattr3 sattr_size(uint64_t size) {
  sattr3 s = sattr_none();
  s.size.set_it = 1;
  s.size.set_size3_u.size = size;
  return s;
}

sattr3 sattr_owner(std::optional<uint32_t> uid, std::optional<uint32_t> gid) {
  sattr3 s = sattr_none();
  if (uid) {
    s.uid.set_it = 1;
    s.uid.set_uid3_u.uid = *uid;
  }
  if (gid) {
    s.gid.set_it = 1;
    s.gid.set_gid3_u.gid = *gid;
  }
  return s;
}

uint64_t verifier_of(const char (&verf)[8]) {
  uint64_t v = 0;
  std::memcpy(&v, verf, sizeof v);
  return v;
}

const char* nfsstat_name(nfsstat3 s) { return nfsstat3_to_str(static_cast<int>(s)); }

void Nfs3Client::null() {
  ch_.call("NULL", [](rpc_context* rpc, rpc_cb cb, void* priv) {
    return rpc_nfs3_null_async(rpc, cb, priv);
  }, nullptr);
}

GETATTR3res Nfs3Client::getattr(const Fh& fh) {
  GETATTR3args a{};
  a.object = fh.wire();
  return call_copy<GETATTR3res>(ch_, "GETATTR", rpc_nfs3_getattr_async, &a);
}

SETATTR3res Nfs3Client::setattr(const Fh& fh, const sattr3& attrs,
                                std::optional<nfstime3> guard_ctime) {
  SETATTR3args a{};
  a.object = fh.wire();
  a.new_attributes = attrs;
  a.guard.check = guard_ctime.has_value();
  if (guard_ctime) a.guard.sattrguard3_u.obj_ctime = *guard_ctime;
  return call_copy<SETATTR3res>(ch_, "SETATTR", rpc_nfs3_setattr_async, &a);
}

LookupReply Nfs3Client::lookup(const Fh& dir, const std::string& name) {
  LOOKUP3args a{};
  a.what = dirop(dir, name);
  return call_convert<LOOKUP3res, LOOKUP3args, LookupReply>(
      ch_, "LOOKUP", rpc_nfs3_lookup_async, &a, [](const LOOKUP3res& r) {
        LookupReply out;
        out.status = r.status;
        if (r.status == NFS3_OK) {
          out.fh = Fh::from(r.LOOKUP3res_u.resok.object);
          out.obj_attributes = r.LOOKUP3res_u.resok.obj_attributes;
          out.dir_attributes = r.LOOKUP3res_u.resok.dir_attributes;
        } else {
          out.dir_attributes = r.LOOKUP3res_u.resfail.dir_attributes;
        }
        return out;
      });
}

ACCESS3res Nfs3Client::access(const Fh& fh, uint32_t bits) {
  ACCESS3args a{};
  a.object = fh.wire();
  a.access = bits;
  return call_copy<ACCESS3res>(ch_, "ACCESS", rpc_nfs3_access_async, &a);
}

ReadlinkReply Nfs3Client::readlink(const Fh& fh) {
  READLINK3args a{};
  a.symlink = fh.wire();
  return call_convert<READLINK3res, READLINK3args, ReadlinkReply>(
      ch_, "READLINK", rpc_nfs3_readlink_async, &a, [](const READLINK3res& r) {
        ReadlinkReply out;
        out.status = r.status;
        if (r.status == NFS3_OK) {
          out.target = r.READLINK3res_u.resok.data ? r.READLINK3res_u.resok.data : "";
          out.attributes = r.READLINK3res_u.resok.symlink_attributes;
        } else {
          out.attributes = r.READLINK3res_u.resfail.symlink_attributes;
        }
        return out;
      });
}

ReadReply Nfs3Client::read(const Fh& fh, uint64_t offset, uint32_t count) {
  READ3args a{};
  a.file = fh.wire();
  a.offset = offset;
  a.count = count;
  return call_convert<READ3res, READ3args, ReadReply>(
      ch_, "READ", rpc_nfs3_read_async, &a, [](const READ3res& r) {
        ReadReply out;
        out.status = r.status;
        if (r.status == NFS3_OK) {
          const auto& ok = r.READ3res_u.resok;
          out.data.assign(ok.data.data_val, ok.data.data_len);
          out.count = ok.count;
          out.eof = ok.eof;
          out.attributes = ok.file_attributes;
        } else {
          out.attributes = r.READ3res_u.resfail.file_attributes;
        }
        return out;
      });
}

WRITE3res Nfs3Client::write(const Fh& fh, uint64_t offset, const std::string& data,
                            stable_how stable) {
  WRITE3args a{};
  a.file = fh.wire();
  a.offset = offset;
  a.count = static_cast<count3>(data.size());
  a.stable = stable;
  a.data.data_len = static_cast<u_int>(data.size());
  a.data.data_val = const_cast<char*>(data.data());
  return call_copy<WRITE3res>(ch_, "WRITE", rpc_nfs3_write_async, &a);
}

NewObjectReply Nfs3Client::create(const Fh& dir, const std::string& name, createmode3 mode,
                                  const sattr3& attrs, uint64_t verifier) {
  CREATE3args a{};
  a.where = dirop(dir, name);
  a.how.mode = mode;
  if (mode == EXCLUSIVE)
    put_verifier(a.how.createhow3_u.verf, verifier);
  else
    a.how.createhow3_u.obj_attributes = attrs;
  return call_convert<CREATE3res, CREATE3args, NewObjectReply>(
      ch_, "CREATE", rpc_nfs3_create_async, &a,
      [](const CREATE3res& r) { return new_object(r.status, r.CREATE3res_u); });
}

NewObjectReply Nfs3Client::mkdir(const Fh& dir, const std::string& name, const sattr3& attrs) {
  MKDIR3args a{};
  a.where = dirop(dir, name);
  a.attributes = attrs;
  return call_convert<MKDIR3res, MKDIR3args, NewObjectReply>(
      ch_, "MKDIR", rpc_nfs3_mkdir_async, &a,
      [](const MKDIR3res& r) { return new_object(r.status, r.MKDIR3res_u); });
}

NewObjectReply Nfs3Client::symlink(const Fh& dir, const std::string& name,
                                   const std::string& target) {
  SYMLINK3args a{};
  a.where = dirop(dir, name);
  a.symlink.symlink_attributes = sattr_none();
  a.symlink.symlink_data = const_cast<char*>(target.c_str());
  return call_convert<SYMLINK3res, SYMLINK3args, NewObjectReply>(
      ch_, "SYMLINK", rpc_nfs3_symlink_async, &a,
      [](const SYMLINK3res& r) { return new_object(r.status, r.SYMLINK3res_u); });
}

NewObjectReply Nfs3Client::mknod(const Fh& dir, const std::string& name, ftype3 type,
                                 specdata3 rdev, const sattr3& attrs) {
  MKNOD3args a{};
  a.where = dirop(dir, name);
  a.what.type = type;
  switch (type) {
    case NF3CHR:
      a.what.mknoddata3_u.chr_device.dev_attributes = attrs;
      a.what.mknoddata3_u.chr_device.spec = rdev;
      break;
    case NF3BLK:
      a.what.mknoddata3_u.blk_device.dev_attributes = attrs;
      a.what.mknoddata3_u.blk_device.spec = rdev;
      break;
    case NF3SOCK:
      a.what.mknoddata3_u.sock_attributes = attrs;
      break;
    case NF3FIFO:
      a.what.mknoddata3_u.pipe_attributes = attrs;
      break;
    default:  // REG, DIR, LNK carry no data on the wire
      break;
  }
  return call_convert<MKNOD3res, MKNOD3args, NewObjectReply>(
      ch_, "MKNOD", rpc_nfs3_mknod_async, &a,
      [](const MKNOD3res& r) { return new_object(r.status, r.MKNOD3res_u); });
}

REMOVE3res Nfs3Client::remove(const Fh& dir, const std::string& name) {
  REMOVE3args a{};
  a.object = dirop(dir, name);
  return call_copy<REMOVE3res>(ch_, "REMOVE", rpc_nfs3_remove_async, &a);
}

RMDIR3res Nfs3Client::rmdir(const Fh& dir, const std::string& name) {
  RMDIR3args a{};
  a.object = dirop(dir, name);
  return call_copy<RMDIR3res>(ch_, "RMDIR", rpc_nfs3_rmdir_async, &a);
}

RENAME3res Nfs3Client::rename(const Fh& from_dir, const std::string& from_name,
                              const Fh& to_dir, const std::string& to_name) {
  RENAME3args a{};
  a.from = dirop(from_dir, from_name);
  a.to = dirop(to_dir, to_name);
  return call_copy<RENAME3res>(ch_, "RENAME", rpc_nfs3_rename_async, &a);
}

LINK3res Nfs3Client::link(const Fh& file, const Fh& dir, const std::string& name) {
  LINK3args a{};
  a.file = file.wire();
  a.link = dirop(dir, name);
  return call_copy<LINK3res>(ch_, "LINK", rpc_nfs3_link_async, &a);
}

ReaddirReply Nfs3Client::readdir(const Fh& dir, uint64_t cookie, uint64_t cookieverf,
                                 uint32_t count) {
  READDIR3args a{};
  a.dir = dir.wire();
  a.cookie = cookie;
  put_verifier(a.cookieverf, cookieverf);
  a.count = count;
  return call_convert<READDIR3res, READDIR3args, ReaddirReply>(
      ch_, "READDIR", rpc_nfs3_readdir_async, &a, [](const READDIR3res& r) {
        ReaddirReply out;
        out.status = r.status;
        if (r.status != NFS3_OK) {
          out.dir_attributes = r.READDIR3res_u.resfail.dir_attributes;
          return out;
        }
        const auto& ok = r.READDIR3res_u.resok;
        out.dir_attributes = ok.dir_attributes;
        out.cookieverf = verifier_of(ok.cookieverf);
        out.eof = ok.reply.eof;
        for (const entry3* e = ok.reply.entries; e; e = e->nextentry)
          out.entries.push_back(DirEntry{e->name, e->fileid, e->cookie, std::nullopt, {}});
        return out;
      });
}

ReaddirReply Nfs3Client::readdirplus(const Fh& dir, uint64_t cookie, uint64_t cookieverf,
                                     uint32_t dircount, uint32_t maxcount) {
  READDIRPLUS3args a{};
  a.dir = dir.wire();
  a.cookie = cookie;
  put_verifier(a.cookieverf, cookieverf);
  a.dircount = dircount;
  a.maxcount = maxcount;
  return call_convert<READDIRPLUS3res, READDIRPLUS3args, ReaddirReply>(
      ch_, "READDIRPLUS", rpc_nfs3_readdirplus_async, &a, [](const READDIRPLUS3res& r) {
        ReaddirReply out;
        out.status = r.status;
        if (r.status != NFS3_OK) {
          out.dir_attributes = r.READDIRPLUS3res_u.resfail.dir_attributes;
          return out;
        }
        const auto& ok = r.READDIRPLUS3res_u.resok;
        out.dir_attributes = ok.dir_attributes;
        out.cookieverf = verifier_of(ok.cookieverf);
        out.eof = ok.reply.eof;
        for (const entryplus3* e = ok.reply.entries; e; e = e->nextentry)
          out.entries.push_back(
              DirEntry{e->name, e->fileid, e->cookie, handle_of(e->name_handle), e->name_attributes});
        return out;
      });
}

FSSTAT3res Nfs3Client::fsstat(const Fh& fh) {
  FSSTAT3args a{};
  a.fsroot = fh.wire();
  return call_copy<FSSTAT3res>(ch_, "FSSTAT", rpc_nfs3_fsstat_async, &a);
}

FSINFO3res Nfs3Client::fsinfo(const Fh& fh) {
  FSINFO3args a{};
  a.fsroot = fh.wire();
  return call_copy<FSINFO3res>(ch_, "FSINFO", rpc_nfs3_fsinfo_async, &a);
}

PATHCONF3res Nfs3Client::pathconf(const Fh& fh) {
  PATHCONF3args a{};
  a.object = fh.wire();
  return call_copy<PATHCONF3res>(ch_, "PATHCONF", rpc_nfs3_pathconf_async, &a);
}

COMMIT3res Nfs3Client::commit(const Fh& fh, uint64_t offset, uint32_t count) {
  COMMIT3args a{};
  a.file = fh.wire();
  a.offset = offset;
  a.count = count;
  return call_copy<COMMIT3res>(ch_, "COMMIT", rpc_nfs3_commit_async, &a);
}

Fh Nfs3Client::resolve(const Fh& root, const std::string& path) {
  Fh cur = root;
  std::stringstream ss(path);
  std::string part;
  while (std::getline(ss, part, '/')) {
    if (part.empty()) continue;
    LookupReply r = lookup(cur, part);
    if (r.status != NFS3_OK)
      throw RpcError("LOOKUP " + part + " in " + path + ": " + nfsstat_name(r.status));
    cur = r.fh;
  }
  return cur;
}

}  // namespace nasd::e2e
