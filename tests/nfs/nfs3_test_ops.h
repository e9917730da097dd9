// Typed one-line wrappers around the harness for the NFS procedures the tests use most.
#pragma once

#include <cstring>
#include <string>

#include "tests/nfs/service_harness.h"

namespace nasd::nfs::fixture {

class Nfs3Ops : public ServiceHarness {
 public:
  nfsstat3 getattr(FileHandle fh, fattr3* out = nullptr) {
    GETATTR3args a{wire(fh)};
    Reply<GETATTR3res> r(xdr_GETATTR3res);
    call(NFSPROC3_GETATTR, xdr_GETATTR3args, a, xdr_GETATTR3res, &r);
    if (out && r->status == NFS3_OK) *out = r->GETATTR3res_u.resok.obj_attributes;
    return r->status;
  }

  nfsstat3 lookup(FileHandle dir, const std::string& name, FileHandle* out = nullptr) {
    LOOKUP3args a{};
    a.what.dir = wire(dir);
    a.what.name = const_cast<char*>(name.c_str());
    Reply<LOOKUP3res> r(xdr_LOOKUP3res);
    call(NFSPROC3_LOOKUP, xdr_LOOKUP3args, a, xdr_LOOKUP3res, &r);
    if (out && r->status == NFS3_OK) *out = from_wire(r->LOOKUP3res_u.resok.object);
    return r->status;
  }

  nfsstat3 create(FileHandle dir, const std::string& name, FileHandle* out = nullptr,
                  createmode3 mode = GUARDED, uint64_t verf = 0) {
    CREATE3args a{};
    a.where.dir = wire(dir);
    a.where.name = const_cast<char*>(name.c_str());
    a.how.mode = mode;
    if (mode == EXCLUSIVE) {
      for (int i = 0; i < 8; i++) a.how.createhow3_u.verf[i] = static_cast<char>(verf >> (8 * i));
    } else {
      a.how.createhow3_u.obj_attributes.mode.set_it = TRUE;
      a.how.createhow3_u.obj_attributes.mode.set_mode3_u.mode = 0644;
    }
    Reply<CREATE3res> r(xdr_CREATE3res);
    call(NFSPROC3_CREATE, xdr_CREATE3args, a, xdr_CREATE3res, &r);
    if (out && r->status == NFS3_OK) {
      EXPECT_TRUE(r->CREATE3res_u.resok.obj.handle_follows);
      *out = from_wire(r->CREATE3res_u.resok.obj.post_op_fh3_u.handle);
    }
    return r->status;
  }

  nfsstat3 mkdir(FileHandle dir, const std::string& name, FileHandle* out = nullptr) {
    MKDIR3args a{};
    a.where.dir = wire(dir);
    a.where.name = const_cast<char*>(name.c_str());
    Reply<MKDIR3res> r(xdr_MKDIR3res);
    call(NFSPROC3_MKDIR, xdr_MKDIR3args, a, xdr_MKDIR3res, &r);
    if (out && r->status == NFS3_OK)
      *out = from_wire(r->MKDIR3res_u.resok.obj.post_op_fh3_u.handle);
    return r->status;
  }

  nfsstat3 write(FileHandle file, uint64_t offset, const std::string& data,
                 WRITE3resok* ok_out = nullptr, stable_how stable = UNSTABLE) {
    WRITE3args a{};
    a.file = wire(file);
    a.offset = offset;
    a.count = static_cast<count3>(data.size());
    a.stable = stable;
    a.data.data_len = static_cast<u_int>(data.size());
    a.data.data_val = const_cast<char*>(data.data());
    Reply<WRITE3res> r(xdr_WRITE3res);
    call(NFSPROC3_WRITE, xdr_WRITE3args, a, xdr_WRITE3res, &r);
    if (ok_out && r->status == NFS3_OK) *ok_out = r->WRITE3res_u.resok;
    return r->status;
  }

  nfsstat3 read(FileHandle file, uint64_t offset, uint32_t count, std::string* data,
                bool* eof = nullptr) {
    READ3args a{wire(file), offset, count};
    Reply<READ3res> r(xdr_READ3res);
    call(NFSPROC3_READ, xdr_READ3args, a, xdr_READ3res, &r);
    if (r->status == NFS3_OK) {
      auto& ok = r->READ3res_u.resok;
      EXPECT_EQ(ok.count, ok.data.data_len);
      data->assign(ok.data.data_val, ok.data.data_len);
      if (eof) *eof = ok.eof;
    }
    return r->status;
  }

  nfsstat3 remove(FileHandle dir, const std::string& name) {
    REMOVE3args a{};
    a.object.dir = wire(dir);
    a.object.name = const_cast<char*>(name.c_str());
    Reply<REMOVE3res> r(xdr_REMOVE3res);
    call(NFSPROC3_REMOVE, xdr_REMOVE3args, a, xdr_REMOVE3res, &r);
    return r->status;
  }

  FileHandle root() { return root_handle(main_); }
};

}  // namespace nasd::nfs::fixture
