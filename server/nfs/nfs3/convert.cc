#include "server/nfs/nfs3/convert.h"

namespace nasd::nfs::nfs3 {

nfstime3 to_nfstime(const fs::Time& t) {
  nfstime3 out;
  // nfstime3 counts unsigned 32-bit seconds; times outside that range wrap like on Linux.
  out.seconds = static_cast<uint32_t>(t.sec);
  out.nseconds = t.nsec;
  return out;
}

fs::Time from_nfstime(const nfstime3& t) { return fs::Time{t.seconds, t.nseconds}; }

fattr3 to_fattr(const fs::Attr& a) {
  fattr3 f{};
  f.type = static_cast<ftype3>(a.type);
  f.mode = a.mode;
  f.nlink = a.nlink;
  f.uid = a.uid;
  f.gid = a.gid;
  f.size = a.size;
  f.used = a.used;
  f.rdev.specdata1 = a.rdev_major;
  f.rdev.specdata2 = a.rdev_minor;
  f.fsid = a.fsid;
  f.fileid = a.fileid;
  f.atime = to_nfstime(a.atime);
  f.mtime = to_nfstime(a.mtime);
  f.ctime = to_nfstime(a.ctime);
  return f;
}

post_op_attr to_post_op(const std::optional<fs::Attr>& a) {
  post_op_attr p{};
  p.attributes_follow = a.has_value();
  if (a) p.post_op_attr_u.attributes = to_fattr(*a);
  return p;
}

pre_op_attr to_pre_op(const std::optional<fs::PreAttr>& a) {
  pre_op_attr p{};
  p.attributes_follow = a.has_value();
  if (a) {
    p.pre_op_attr_u.attributes.size = a->size;
    p.pre_op_attr_u.attributes.mtime = to_nfstime(a->mtime);
    p.pre_op_attr_u.attributes.ctime = to_nfstime(a->ctime);
  }
  return p;
}

wcc_data to_wcc(const fs::Wcc& wcc) {
  wcc_data w{};
  w.before = to_pre_op(wcc.before);
  w.after = to_post_op(wcc.after);
  return w;
}

namespace {

bool set_time(uint32_t how, const nfstime3& client, fs::TimeHow* out_how, fs::Time* out) {
  switch (how) {
    case DONT_CHANGE: *out_how = fs::TimeHow::DontChange; return true;
    case SET_TO_SERVER_TIME: *out_how = fs::TimeHow::ServerTime; return true;
    case SET_TO_CLIENT_TIME:
      if (client.nseconds >= 1000000000u) return false;
      *out_how = fs::TimeHow::ClientTime;
      *out = from_nfstime(client);
      return true;
  }
  return false;  // the XDR decoder lets any number through
}

}  // namespace

bool from_sattr(const sattr3& in, fs::SetAttr* out) {
  *out = fs::SetAttr{};
  if (in.mode.set_it) out->mode = in.mode.set_mode3_u.mode & 07777;
  if (in.uid.set_it) out->uid = in.uid.set_uid3_u.uid;
  if (in.gid.set_it) out->gid = in.gid.set_gid3_u.gid;
  if (in.size.set_it) out->size = in.size.set_size3_u.size;
  return set_time(raw_enum(in.atime.set_it), in.atime.set_atime_u.atime, &out->atime_how,
                  &out->atime) &&
         set_time(raw_enum(in.mtime.set_it), in.mtime.set_mtime_u.mtime, &out->mtime_how,
                  &out->mtime);
}

nfs_fh3 to_wire(FileHandle& fh) {
  nfs_fh3 w{};
  w.data.data_len = FileHandle::kSize;
  w.data.data_val = reinterpret_cast<char*>(fh.bytes.data());
  return w;
}

post_op_fh3 to_post_op_fh(FileHandle& fh) {
  post_op_fh3 p{};
  p.handle_follows = TRUE;
  p.post_op_fh3_u.handle = to_wire(fh);
  return p;
}

void put_verifier(uint64_t v, char out[8]) {
  for (int i = 7; i >= 0; i--, v >>= 8) out[i] = static_cast<char>(v & 0xff);
}

uint64_t get_verifier(const char in[8]) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v = (v << 8) | static_cast<uint8_t>(in[i]);
  return v;
}

}  // namespace nasd::nfs::nfs3
