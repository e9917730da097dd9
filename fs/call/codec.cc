#include "fs/call/codec.h"

#include <cstdlib>
#include <cstring>
#include <tuple>
#include <type_traits>


namespace nasd::fs::call {

using WireWriter = util::ByteWriter;
using WireReader = util::ByteReader;
namespace {

template <class S>
concept HasFields = requires(S& s) { S::fields(s); };

// ---- encoding ----

void put(WireWriter& w, bool v) { w.boolean(v); }
void put(WireWriter& w, uint32_t v) { w.u32(v); }
void put(WireWriter& w, uint64_t v) { w.u64(v); }
void put(WireWriter& w, std::string_view v) { w.string(v); }
void put(WireWriter& w, std::span<const uint8_t> v) { w.bytes(v); }
void put(WireWriter& w, const std::vector<uint8_t>& v) { w.bytes(v); }
void put(WireWriter& w, const fs::Time& t);
void put(WireWriter& w, const fs::InodeId& id);
void put(WireWriter& w, const fs::Attr& a);
void put(WireWriter& w, const fs::PreAttr& a);
void put(WireWriter& w, const fs::Wcc& wcc);
void put(WireWriter& w, const fs::SetAttr& sa);
void put(WireWriter& w, const fs::Cred& c);
void put(WireWriter& w, const fs::DirEntry& e);
void put(WireWriter& w, const fs::ReaddirResult& r);
void put(WireWriter& w, const fs::FsStat& s);
void put(WireWriter& w, const fs::VolumeLimits& l);

template <class E>
  requires std::is_enum_v<E>
void put(WireWriter& w, E e) {
  w.u32(static_cast<uint32_t>(e));
}

template <class T>
void put(WireWriter& w, const std::optional<T>& v) {
  w.boolean(v.has_value());
  if (v) put(w, *v);
}

template <HasFields S>
void put(WireWriter& w, const S& s) {
  std::apply([&](const auto&... f) { (put(w, f), ...); }, S::fields(s));
}

void put(WireWriter& w, const fs::Time& t) {
  w.i64(t.sec);
  w.u32(t.nsec);
}
void put(WireWriter& w, const fs::InodeId& id) {
  w.u64(id.ino);
  w.u32(id.gen);
}
void put(WireWriter& w, const fs::Attr& a) {
  put(w, a.type);
  w.u32(a.mode);
  w.u32(a.nlink);
  w.u32(a.uid);
  w.u32(a.gid);
  w.u64(a.size);
  w.u64(a.used);
  w.u32(a.rdev_major);
  w.u32(a.rdev_minor);
  w.u64(a.fsid);
  w.u64(a.fileid);
  put(w, a.atime);
  put(w, a.mtime);
  put(w, a.ctime);
}
void put(WireWriter& w, const fs::PreAttr& a) {
  w.u64(a.size);
  put(w, a.mtime);
  put(w, a.ctime);
}
void put(WireWriter& w, const fs::Wcc& wcc) {
  put(w, wcc.before);
  put(w, wcc.after);
}
void put(WireWriter& w, const fs::SetAttr& sa) {
  put(w, sa.mode);
  put(w, sa.uid);
  put(w, sa.gid);
  put(w, sa.size);
  put(w, sa.atime_how);
  put(w, sa.atime);
  put(w, sa.mtime_how);
  put(w, sa.mtime);
}
void put(WireWriter& w, const fs::Cred& c) {
  w.u32(c.uid);
  w.u32(c.gid);
  w.u32(static_cast<uint32_t>(c.gids.size()));
  for (uint32_t g : c.gids) w.u32(g);
}
void put(WireWriter& w, const fs::DirEntry& e) {
  w.string(e.name);
  w.u64(e.fileid);
  w.u64(e.cookie);
  put(w, e.id);
  put(w, e.attr);
}
void put(WireWriter& w, const fs::ReaddirResult& r) {
  w.u32(static_cast<uint32_t>(r.entries.size()));
  for (const auto& e : r.entries) put(w, e);
  w.u64(r.cookieverf);
  w.boolean(r.eof);
  put(w, r.dir_attr);
}
void put(WireWriter& w, const fs::FsStat& s) {
  w.u64(s.total_bytes);
  w.u64(s.free_bytes);
  w.u64(s.avail_bytes);
  w.u64(s.total_files);
  w.u64(s.free_files);
  w.u64(s.avail_files);
  w.u32(s.invarsec);
}
void put(WireWriter& w, const fs::VolumeLimits& l) {
  w.u64(l.max_file_size);
  w.u32(l.block_size);
  w.u32(l.link_max);
  w.u32(l.name_max);
  put(w, l.time_delta);
}

// The credential is all of OpContext that travels (see the header).
void put_context(WireWriter& w, const fs::OpContext& ctx) { put(w, ctx.cred); }

void put(WireWriter& w, const fs::CallIdentity& id) {
  w.raw(id.address);
  w.u16(id.family);
  w.u16(id.port);
  w.u32(id.xid);
  w.u32(id.prog);
  w.u32(id.vers);
  w.u32(id.proc);
  w.u64(id.args_hash);
  w.u32(id.export_id);
}

// ---- decoding ----

bool valid(fs::FileType t) {
  return static_cast<uint32_t>(t) >= 1 && static_cast<uint32_t>(t) <= 7;
}
bool valid(fs::TimeHow h) { return static_cast<uint32_t>(h) <= 2; }
bool valid(fs::Stability s) { return static_cast<uint32_t>(s) <= 2; }
bool valid(fs::CreateMode m) { return static_cast<uint32_t>(m) <= 2; }
bool valid(fs::Status s) { return std::strcmp(fs::status_name(s), "NFS3ERR_UNKNOWN") != 0; }

bool get(WireReader& r, bool& v) { return r.boolean(&v); }
bool get(WireReader& r, uint32_t& v) { return r.u32(&v); }
bool get(WireReader& r, uint64_t& v) { return r.u64(&v); }
bool get(WireReader& r, std::string_view& v) { return r.string(&v, kMaxNameBytes); }
bool get(WireReader& r, std::string& v) {
  std::string_view s;
  if (!r.string(&s, kMaxNameBytes)) return false;
  v.assign(s);
  return true;
}
bool get(WireReader& r, std::span<const uint8_t>& v) { return r.bytes(&v, kMaxDataBytes); }
bool get(WireReader& r, std::vector<uint8_t>& v) {
  std::span<const uint8_t> b;
  if (!r.bytes(&b, kMaxDataBytes)) return false;
  v.assign(b.begin(), b.end());
  return true;
}
bool get(WireReader& r, fs::Time& t);
bool get(WireReader& r, fs::InodeId& id);
bool get(WireReader& r, fs::Attr& a);
bool get(WireReader& r, fs::PreAttr& a);
bool get(WireReader& r, fs::Wcc& wcc);
bool get(WireReader& r, fs::SetAttr& sa);
bool get(WireReader& r, fs::Cred& c);
bool get(WireReader& r, fs::DirEntry& e);
bool get(WireReader& r, fs::ReaddirResult& res);
bool get(WireReader& r, fs::FsStat& s);
bool get(WireReader& r, fs::VolumeLimits& l);

template <class E>
  requires std::is_enum_v<E>
bool get(WireReader& r, E& e) {
  uint32_t v;
  if (!r.u32(&v)) return false;
  if (!valid(static_cast<E>(v))) return r.fail("enum value out of range: " + std::to_string(v));
  e = static_cast<E>(v);
  return true;
}

template <class T>
bool get(WireReader& r, std::optional<T>& v) {
  bool present;
  if (!r.boolean(&present)) return false;
  if (!present) {
    v.reset();
    return true;
  }
  T t{};
  if (!get(r, t)) return false;
  v = std::move(t);
  return true;
}

template <HasFields S>
bool get(WireReader& r, S& s) {
  return std::apply([&](auto&... f) { return (get(r, f) && ...); }, S::fields(s));
}

bool get(WireReader& r, fs::Time& t) {
  if (!r.i64(&t.sec) || !r.u32(&t.nsec)) return false;
  if (t.nsec >= 1000000000u) return r.fail("nanoseconds out of range");
  return true;
}
bool get(WireReader& r, fs::InodeId& id) { return r.u64(&id.ino) && r.u32(&id.gen); }
bool get(WireReader& r, fs::Attr& a) {
  return get(r, a.type) && r.u32(&a.mode) && r.u32(&a.nlink) && r.u32(&a.uid) &&
         r.u32(&a.gid) && r.u64(&a.size) && r.u64(&a.used) && r.u32(&a.rdev_major) &&
         r.u32(&a.rdev_minor) && r.u64(&a.fsid) && r.u64(&a.fileid) && get(r, a.atime) &&
         get(r, a.mtime) && get(r, a.ctime);
}
bool get(WireReader& r, fs::PreAttr& a) {
  return r.u64(&a.size) && get(r, a.mtime) && get(r, a.ctime);
}
bool get(WireReader& r, fs::Wcc& wcc) { return get(r, wcc.before) && get(r, wcc.after); }
bool get(WireReader& r, fs::SetAttr& sa) {
  return get(r, sa.mode) && get(r, sa.uid) && get(r, sa.gid) && get(r, sa.size) &&
         get(r, sa.atime_how) && get(r, sa.atime) && get(r, sa.mtime_how) && get(r, sa.mtime);
}
bool get(WireReader& r, fs::Cred& c) {
  uint32_t n;
  if (!r.u32(&c.uid) || !r.u32(&c.gid) || !r.u32(&n)) return false;
  if (n > kMaxSupplementaryGids) return r.fail("too many supplementary groups: " + std::to_string(n));
  c.gids.resize(n);
  for (auto& g : c.gids) {
    if (!r.u32(&g)) return false;
  }
  return true;
}
bool get(WireReader& r, fs::DirEntry& e) {
  return get(r, e.name) && r.u64(&e.fileid) && r.u64(&e.cookie) && get(r, e.id) &&
         get(r, e.attr);
}
bool get(WireReader& r, fs::ReaddirResult& res) {
  uint32_t n;
  if (!r.u32(&n)) return false;
  // An entry takes at least 4 + 8 + 8 + 12 + 1 bytes, so a count the remaining bytes cannot
  // hold is rejected before anything is reserved for it.
  constexpr size_t kMinEntryBytes = 33;
  if (n > r.remaining() / kMinEntryBytes) return r.fail("directory entry count too large");
  res.entries.resize(n);
  for (auto& e : res.entries) {
    if (!get(r, e)) return false;
  }
  return r.u64(&res.cookieverf) && r.boolean(&res.eof) && get(r, res.dir_attr);
}
bool get(WireReader& r, fs::FsStat& s) {
  return r.u64(&s.total_bytes) && r.u64(&s.free_bytes) && r.u64(&s.avail_bytes) &&
         r.u64(&s.total_files) && r.u64(&s.free_files) && r.u64(&s.avail_files) &&
         r.u32(&s.invarsec);
}
bool get(WireReader& r, fs::VolumeLimits& l) {
  return r.u64(&l.max_file_size) && r.u32(&l.block_size) && r.u32(&l.link_max) &&
         r.u32(&l.name_max) && get(r, l.time_delta);
}

bool get_context(WireReader& r, fs::OpContext& ctx) { return get(r, ctx.cred); }

bool get_identity(WireReader& r, std::optional<fs::CallIdentity>& out) {
  bool present;
  if (!r.boolean(&present)) return false;
  out.reset();
  if (!present) return true;
  fs::CallIdentity id;
  std::span<const uint8_t> address;
  if (!r.raw(id.address.size(), &address)) return false;
  std::copy(address.begin(), address.end(), id.address.begin());
  if (!(r.u16(&id.family) && r.u16(&id.port) && r.u32(&id.xid) && r.u32(&id.prog) &&
        r.u32(&id.vers) && r.u32(&id.proc) && r.u64(&id.args_hash) && r.u32(&id.export_id)))
    return false;
  out = id;
  return true;
}

// Decodes the argument struct whose kOp is `op` into *out.
template <size_t I = 0>
bool get_args(WireReader& r, VolumeOp op, CallArgs* out) {
  if constexpr (I == std::variant_size_v<CallArgs>) {
    return r.fail("unknown volume op " + std::to_string(static_cast<int>(op)));
  } else {
    using Args = std::variant_alternative_t<I, CallArgs>;
    if (Args::kOp != op) return get_args<I + 1>(r, op, out);
    Args args;
    if (!get(r, args)) return false;
    *out = args;
    return true;
  }
}

// Decodes the result struct that answers `op` into *out.
template <size_t I = 0>
bool get_result(WireReader& r, VolumeOp op, CallResult* out) {
  if constexpr (I == std::variant_size_v<CallArgs>) {
    return r.fail("unknown volume op " + std::to_string(static_cast<int>(op)));
  } else {
    using Args = std::variant_alternative_t<I, CallArgs>;
    if (Args::kOp != op) return get_result<I + 1>(r, op, out);
    typename Args::Result result;
    if (!get(r, result)) return false;
    *out = std::move(result);
    return true;
  }
}

bool get_header(WireReader& r, VolumeOp* op) {
  uint8_t version, op_byte;
  if (!r.u8(&version) || !r.u8(&op_byte)) return false;
  if (version != kVolumeCodecVersion) {
    return r.fail("volume codec version " + std::to_string(version) + " not supported (want " +
                  std::to_string(kVolumeCodecVersion) + ")");
  }
  *op = static_cast<VolumeOp>(op_byte);
  return true;
}

bool finish(WireReader& r, std::string* error) {
  if (r.expect_end()) return true;
  if (error) *error = r.error();
  return false;
}

}  // namespace

void write_request(WireWriter& w, const VolumeRequest& req, bool omit_write_data) {
  w.u8(kVolumeCodecVersion);
  w.u8(static_cast<uint8_t>(req.op()));
  w.u32(req.volume_id);
  put_context(w, req.ctx);
  w.boolean(req.identity.has_value());
  if (req.identity) put(w, *req.identity);
  const auto* write = std::get_if<WriteArgs>(&req.args);
  if (write && omit_write_data) {
    // WriteArgs::fields ends with `data`: everything before it, then its length only.
    put(w, write->id);
    w.u64(write->offset);
    put(w, write->stable);
    w.u32(static_cast<uint32_t>(write->data.size()));
    return;
  }
  std::visit([&](const auto& args) { put(w, args); }, req.args);
}

std::span<const uint8_t> write_data(const VolumeRequest& req) {
  const auto* write = std::get_if<WriteArgs>(&req.args);
  return write ? write->data : std::span<const uint8_t>{};
}

bool read_request(WireReader& r, VolumeRequest* out) {
  VolumeOp op{};
  return get_header(r, &op) && r.u32(&out->volume_id) && get_context(r, out->ctx) &&
         get_identity(r, out->identity) && get_args(r, op, &out->args);
}

void write_reply(WireWriter& w, const VolumeReply& reply) {
  w.u8(kVolumeCodecVersion);
  w.u8(static_cast<uint8_t>(reply.op));
  w.u32(static_cast<uint32_t>(reply.status));
  w.u64(reply.write_verifier);
  bool has_result = !std::holds_alternative<std::monostate>(reply.result);
  w.boolean(has_result);
  std::visit(
      [&](const auto& result) {
        if constexpr (!std::is_same_v<std::decay_t<decltype(result)>, std::monostate>) {
          put(w, result);
        }
      },
      reply.result);
}

bool read_reply(WireReader& r, VolumeOp expected, VolumeReply* out) {
  VolumeOp op{};
  bool has_result = false;
  if (!get_header(r, &op)) return false;
  if (op != expected) {
    return r.fail(std::string("reply is for ") + volume_op_name(op) + ", expected " +
                  volume_op_name(expected));
  }
  out->op = op;
  if (!get(r, out->status) || !r.u64(&out->write_verifier) || !r.boolean(&has_result))
    return false;
  if (!has_result) {
    out->result = std::monostate{};
    return true;
  }
  return get_result(r, op, &out->result);
}

std::vector<uint8_t> encode_request(const VolumeRequest& req) {
  WireWriter w;
  write_request(w, req);
  return w.take();
}

bool decode_request(std::span<const uint8_t> in, VolumeRequest* out, std::string* error) {
  WireReader r(in);
  read_request(r, out);
  return finish(r, error);
}

std::vector<uint8_t> encode_reply(const VolumeReply& reply) {
  WireWriter w;
  write_reply(w, reply);
  return w.take();
}

bool decode_reply(std::span<const uint8_t> in, VolumeOp expected, VolumeReply* out,
                  std::string* error) {
  WireReader r(in);
  read_reply(r, expected, out);
  return finish(r, error);
}

namespace {

std::string id_text(const fs::InodeId& id) {
  return std::to_string(id.ino) + "/" + std::to_string(id.gen);
}
std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

// The fields that identify what a mutation touched; reads show their object only.
struct Describer {
  std::string& out;
  void operator()(const WriteArgs& a) {
    out += " file=" + id_text(a.id) + " offset=" + std::to_string(a.offset) +
           " len=" + std::to_string(a.data.size());
  }
  void operator()(const SetattrArgs& a) {
    out += " file=" + id_text(a.id);
    if (a.sa.size) out += " size=" + std::to_string(*a.sa.size);
    if (a.sa.mode) out += " mode=" + std::to_string(*a.sa.mode);
  }
  void operator()(const CreateArgs& a) {
    out += " dir=" + id_text(a.dir) + " name=" + quoted(a.name) +
           " mode=" + std::to_string(static_cast<uint32_t>(a.mode));
  }
  void operator()(const MkdirArgs& a) { out += " dir=" + id_text(a.dir) + " name=" + quoted(a.name); }
  void operator()(const SymlinkArgs& a) {
    out += " dir=" + id_text(a.dir) + " name=" + quoted(a.name) + " target=" + quoted(a.target);
  }
  void operator()(const MknodArgs& a) {
    out += " dir=" + id_text(a.dir) + " name=" + quoted(a.name) +
           " type=" + std::to_string(static_cast<uint32_t>(a.type));
  }
  void operator()(const RemoveArgs& a) { out += " dir=" + id_text(a.dir) + " name=" + quoted(a.name); }
  void operator()(const RmdirArgs& a) { out += " dir=" + id_text(a.dir) + " name=" + quoted(a.name); }
  void operator()(const RenameArgs& a) {
    out += " from=" + id_text(a.from_dir) + ":" + quoted(a.from_name) + " to=" +
           id_text(a.to_dir) + ":" + quoted(a.to_name);
  }
  void operator()(const LinkArgs& a) {
    out += " file=" + id_text(a.file) + " dir=" + id_text(a.dir) + " name=" + quoted(a.name);
  }
  template <class A>
  void operator()(const A&) {}
};

}  // namespace

std::string describe_request(const VolumeRequest& req) {
  std::string out = volume_op_name(req.op());
  std::visit(Describer{out}, req.args);
  out += " uid=" + std::to_string(req.ctx.cred.uid);
  if (req.identity) out += " xid=" + std::to_string(req.identity->xid);
  return out;
}

bool is_mutation(VolumeOp op) {
  switch (op) {
    case VolumeOp::Write:
    case VolumeOp::Setattr:
    case VolumeOp::Create:
    case VolumeOp::Mkdir:
    case VolumeOp::Symlink:
    case VolumeOp::Mknod:
    case VolumeOp::Remove:
    case VolumeOp::Rmdir:
    case VolumeOp::Rename:
    case VolumeOp::Link:
      return true;
    default:
      return false;
  }
}

const char* volume_op_name(VolumeOp op) {
  switch (op) {
    case VolumeOp::Getattr: return "GETATTR";
    case VolumeOp::Setattr: return "SETATTR";
    case VolumeOp::Lookup: return "LOOKUP";
    case VolumeOp::Access: return "ACCESS";
    case VolumeOp::Readlink: return "READLINK";
    case VolumeOp::Read: return "READ";
    case VolumeOp::Write: return "WRITE";
    case VolumeOp::Create: return "CREATE";
    case VolumeOp::Mkdir: return "MKDIR";
    case VolumeOp::Symlink: return "SYMLINK";
    case VolumeOp::Mknod: return "MKNOD";
    case VolumeOp::Remove: return "REMOVE";
    case VolumeOp::Rmdir: return "RMDIR";
    case VolumeOp::Rename: return "RENAME";
    case VolumeOp::Link: return "LINK";
    case VolumeOp::Readdir: return "READDIR";
    case VolumeOp::Fsstat: return "FSSTAT";
    case VolumeOp::Commit: return "COMMIT";
    case VolumeOp::Describe: return "DESCRIBE";
  }
  return "UNKNOWN-OP";
}

int fuzz_volume_codec(const uint8_t* data, size_t size) {
  std::span<const uint8_t> in(data, size);
  VolumeRequest req;
  if (decode_request(in, &req)) {
    std::vector<uint8_t> again = encode_request(req);
    VolumeRequest req2;
    if (!decode_request(again, &req2) || encode_request(req2) != again) std::abort();
  }
  for (int op = 1; op <= static_cast<int>(VolumeOp::Describe); ++op) {
    VolumeReply reply;
    if (decode_reply(in, static_cast<VolumeOp>(op), &reply)) {
      std::vector<uint8_t> again = encode_reply(reply);
      VolumeReply reply2;
      if (!decode_reply(again, reply.op, &reply2) || encode_reply(reply2) != again) std::abort();
    }
  }
  return 0;
}

}  // namespace nasd::fs::call
