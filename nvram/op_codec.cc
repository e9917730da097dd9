#include "nvram/op_codec.h"

#include <cstring>

namespace nasd::nvram {

namespace {

// Little-endian field writer / bounds-checked reader.
class Writer {
 public:
  explicit Writer(std::vector<uint8_t>* out) : out_(out) {}
  void u8(uint8_t v) { out_->push_back(v); }
  void u32(uint32_t v) { raw(&v, 4); }
  void u64(uint64_t v) { raw(&v, 8); }
  void inode(fs::InodeId id) {
    u64(id.ino);
    u32(id.gen);
  }
  void time(fs::Time t) {
    u64(static_cast<uint64_t>(t.sec));
    u32(t.nsec);
  }
  void str(const std::string& s) {
    u32(static_cast<uint32_t>(s.size()));
    raw(s.data(), s.size());
  }

 private:
  void raw(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    out_->insert(out_->end(), b, b + n);
  }
  std::vector<uint8_t>* out_;
};

class Reader {
 public:
  explicit Reader(std::span<const uint8_t> in) : in_(in) {}
  bool ok() const { return ok_; }
  size_t consumed() const { return at_; }
  uint8_t u8() {
    uint8_t v = 0;
    raw(&v, 1);
    return v;
  }
  uint32_t u32() {
    uint32_t v = 0;
    raw(&v, 4);
    return v;
  }
  uint64_t u64() {
    uint64_t v = 0;
    raw(&v, 8);
    return v;
  }
  fs::InodeId inode() {
    fs::InodeId id;
    id.ino = u64();
    id.gen = u32();
    return id;
  }
  fs::Time time() {
    fs::Time t;
    t.sec = static_cast<int64_t>(u64());
    t.nsec = u32();
    return t;
  }
  std::string str(size_t max) {
    uint32_t n = u32();
    if (n > max || n > in_.size() - at_) {
      ok_ = false;
      return {};
    }
    std::string s(reinterpret_cast<const char*>(in_.data() + at_), n);
    at_ += n;
    return s;
  }

 private:
  void raw(void* p, size_t n) {
    if (!ok_ || in_.size() - at_ < n) {
      ok_ = false;
      return;
    }
    std::memcpy(p, in_.data() + at_, n);
    at_ += n;
  }
  std::span<const uint8_t> in_;
  size_t at_ = 0;
  bool ok_ = true;
};

// Set bits of the optional SetAttr fields.
enum : uint8_t { kHasMode = 1, kHasUid = 2, kHasGid = 4, kHasSize = 8 };

constexpr size_t kMaxGroups = 16;
constexpr size_t kMaxName = 4096;  // bounds a path component or symlink target

bool is_operation(RecordType t) { return t >= RecordType::Write && t <= RecordType::Setattr; }

}  // namespace

void encode_op_prefix(const JournalOp& op, std::vector<uint8_t>* out) {
  out->clear();
  Writer w(out);
  // The created inode comes first, at a fixed offset, so patch_created() can fill it in.
  w.u8(op.created ? 1 : 0);
  w.inode(op.created.value_or(fs::InodeId{}));
  w.u32(op.cred.uid);
  w.u32(op.cred.gid);
  w.u32(static_cast<uint32_t>(op.cred.gids.size()));
  for (uint32_t g : op.cred.gids) w.u32(g);
  w.inode(op.object);
  w.inode(op.object2);
  w.str(op.name);
  w.str(op.name2);
  const fs::SetAttr& sa = op.sattr;
  w.u8((sa.mode ? kHasMode : 0) | (sa.uid ? kHasUid : 0) | (sa.gid ? kHasGid : 0) |
       (sa.size ? kHasSize : 0));
  w.u32(sa.mode.value_or(0));
  w.u32(sa.uid.value_or(0));
  w.u32(sa.gid.value_or(0));
  w.u64(sa.size.value_or(0));
  w.u32(static_cast<uint32_t>(sa.atime_how));
  w.time(sa.atime);
  w.u32(static_cast<uint32_t>(sa.mtime_how));
  w.time(sa.mtime);
  w.u64(op.offset);
  w.u64(op.verifier);
  w.u32(static_cast<uint32_t>(op.create_mode));
  w.u32(static_cast<uint32_t>(op.node_type));
  w.u32(op.rdev_major);
  w.u32(op.rdev_minor);
}

void patch_created(std::vector<uint8_t>* prefix, fs::InodeId id) {
  (*prefix)[0] = 1;
  std::memcpy(prefix->data() + 1, &id.ino, 8);
  std::memcpy(prefix->data() + 9, &id.gen, 4);
}

bool decode_op(RecordType type, std::span<const uint8_t> payload, JournalOp* out,
               std::string* error) {
  if (!is_operation(type)) {
    *error = "record type " + std::to_string(static_cast<int>(type)) + " is not an operation";
    return false;
  }
  Reader r(payload);
  JournalOp op;
  op.type = type;
  const bool has_created = r.u8() != 0;
  const fs::InodeId created = r.inode();
  if (has_created) op.created = created;
  op.cred.uid = r.u32();
  op.cred.gid = r.u32();
  const uint32_t ngids = r.u32();
  if (ngids > kMaxGroups) {
    *error = "too many groups";
    return false;
  }
  for (uint32_t i = 0; i < ngids; ++i) op.cred.gids.push_back(r.u32());
  op.object = r.inode();
  op.object2 = r.inode();
  op.name = r.str(kMaxName);
  op.name2 = r.str(kMaxName);
  const uint8_t has = r.u8();
  const uint32_t mode = r.u32(), uid = r.u32(), gid = r.u32();
  const uint64_t size = r.u64();
  if (has & kHasMode) op.sattr.mode = mode;
  if (has & kHasUid) op.sattr.uid = uid;
  if (has & kHasGid) op.sattr.gid = gid;
  if (has & kHasSize) op.sattr.size = size;
  const uint32_t atime_how = r.u32();
  op.sattr.atime = r.time();
  const uint32_t mtime_how = r.u32();
  op.sattr.mtime = r.time();
  if (atime_how > 2 || mtime_how > 2) {
    *error = "bad time_how";
    return false;
  }
  op.sattr.atime_how = static_cast<fs::TimeHow>(atime_how);
  op.sattr.mtime_how = static_cast<fs::TimeHow>(mtime_how);
  op.offset = r.u64();
  op.verifier = r.u64();
  const uint32_t create_mode = r.u32(), node_type = r.u32();
  op.rdev_major = r.u32();
  op.rdev_minor = r.u32();
  if (!r.ok()) {
    *error = "payload truncated";
    return false;
  }
  if (create_mode > 2 || node_type < 1 || node_type > 7) {
    *error = "bad create mode or node type";
    return false;
  }
  op.create_mode = static_cast<fs::CreateMode>(create_mode);
  op.node_type = static_cast<fs::FileType>(node_type);
  if (type == RecordType::Write)
    op.data = payload.subspan(r.consumed());
  else if (r.consumed() != payload.size()) {
    *error = "trailing bytes after the operation";
    return false;
  }
  *out = std::move(op);
  return true;
}

std::string describe_op(const JournalOp& op) {
  auto id = [](fs::InodeId i) { return std::to_string(i.ino) + "/" + std::to_string(i.gen); };
  std::string s = record_type_name(op.type);
  switch (op.type) {
    case RecordType::Write:
      s += " file=" + id(op.object) + " offset=" + std::to_string(op.offset) +
           " len=" + std::to_string(op.data.size());
      break;
    case RecordType::Setattr:
      s += " file=" + id(op.object);
      if (op.sattr.mode) s += " mode=" + std::to_string(*op.sattr.mode);
      if (op.sattr.size) s += " size=" + std::to_string(*op.sattr.size);
      break;
    case RecordType::Rename:
      s += " from=" + id(op.object) + " name=\"" + op.name + "\" to=" + id(op.object2) +
           " name=\"" + op.name2 + "\"";
      break;
    case RecordType::Link:
      s += " file=" + id(op.object) + " dir=" + id(op.object2) + " name=\"" + op.name + "\"";
      break;
    default:
      s += " dir=" + id(op.object) + " name=\"" + op.name + "\"";
      if (op.type == RecordType::Symlink) s += " target=\"" + op.name2 + "\"";
      break;
  }
  if (op.created) s += " -> " + id(*op.created);
  s += " uid=" + std::to_string(op.cred.uid);
  return s;
}

}  // namespace nasd::nvram
