#include "cluster/scaleout/ifs_state.h"

#include <cstring>

namespace nasd::scaleout {
namespace {

constexpr uint64_t kStateMagic = 0x3153464953414e31ull;  // "1NASIFS1"
constexpr uint64_t kMaxCount = 1ull << 32;
constexpr uint32_t kMaxString = 4096;
// The directory policies follow the inodes as a section of their own, so an image written
// before they existed (no section) still opens, with no directory policy.
constexpr uint64_t kPolicyMagic = 0x3159434c4f504431ull;  // "1DPOLCY1"

class Writer {
 public:
  void u8(uint8_t v) { out_.push_back(v); }
  void u32(uint32_t v) { for (int i = 0; i < 4; i++) out_.push_back(uint8_t(v >> (8 * i))); }
  void u64(uint64_t v) { for (int i = 0; i < 8; i++) out_.push_back(uint8_t(v >> (8 * i))); }
  void i64(int64_t v) { u64(static_cast<uint64_t>(v)); }
  void str(const std::string& s) {
    u32(static_cast<uint32_t>(s.size()));
    out_.insert(out_.end(), s.begin(), s.end());
  }
  std::vector<uint8_t> take() { return std::move(out_); }

 private:
  std::vector<uint8_t> out_;
};

class Reader {
 public:
  Reader(const uint8_t* p, size_t n) : p_(p), n_(n) {}
  bool ok() const { return ok_; }
  size_t remaining() const { return n_ - at_; }
  uint8_t u8() { return uint8_t(take(1)); }
  uint32_t u32() { return uint32_t(take(4)); }
  uint64_t u64() { return take(8); }
  int64_t i64() { return static_cast<int64_t>(take(8)); }
  std::string str() {
    uint32_t len = u32();
    if (!ok_ || len > kMaxString || len > n_ - at_) { ok_ = false; return {}; }
    std::string s(reinterpret_cast<const char*>(p_ + at_), len);
    at_ += len;
    return s;
  }
  uint64_t count(uint64_t max) {
    uint64_t c = u64();
    if (c > max || c > n_ - at_) ok_ = false;  // every element takes at least one byte
    return ok_ ? c : 0;
  }

 private:
  uint64_t take(int bytes) {
    if (!ok_ || n_ - at_ < size_t(bytes)) { ok_ = false; return 0; }
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++) v |= uint64_t(p_[at_ + i]) << (8 * i);
    at_ += bytes;
    return v;
  }
  const uint8_t* p_;
  size_t n_;
  size_t at_ = 0;
  bool ok_ = true;
};

void put_time(Writer& w, const fs::Time& t) { w.i64(t.sec); w.u32(t.nsec); }
fs::Time get_time(Reader& r) { fs::Time t; t.sec = r.i64(); t.nsec = r.u32(); return t; }

void put_record(Writer& w, const GroupRecord& g) {
  w.u64(g.file); w.u64(g.group); w.u64(g.version); w.u64(g.offset); w.u64(g.length);
  w.u32(uint32_t(g.shape.data)); w.u32(uint32_t(g.shape.parity)); w.u32(uint32_t(g.shape.per_node));
  w.u8(g.shape.under_protected ? 1 : 0);
  w.u64(g.places.size());
  for (const UnitPlace& p : g.places) { w.u32(p.node); w.u32(p.drive); }
}

bool get_record(Reader& r, GroupRecord* g) {
  g->file = r.u64(); g->group = r.u64(); g->version = r.u64(); g->offset = r.u64();
  g->length = r.u64();
  g->shape.data = int(r.u32()); g->shape.parity = int(r.u32()); g->shape.per_node = int(r.u32());
  g->shape.under_protected = r.u8() != 0;
  uint64_t n = r.count(kMaxData + kMaxParity);
  if (!r.ok() || g->shape.data < 1 || g->shape.data > kMaxData || g->shape.parity < 0 ||
      g->shape.parity > kMaxParity || n != uint64_t(g->shape.width()) || g->length == 0 ||
      g->length > uint64_t(g->shape.data) * kStripeUnit)
    return false;
  g->places.resize(n);
  for (UnitPlace& p : g->places) { p.node = r.u32(); p.drive = r.u32(); }
  return r.ok();
}

}  // namespace

std::vector<uint8_t> encode_state(const IfsState& s) {
  Writer w;
  w.u64(kStateMagic);
  w.u64(s.next_ino); w.u64(s.applied_seq); w.u32(s.epoch); w.u64(s.next_version);
  w.u32(s.job_epoch); w.u64(s.generation);
  w.u64(s.inodes.size());
  for (const auto& [ino, n] : s.inodes) {
    const fs::Attr& a = n.attr;
    w.u64(ino); w.u32(n.gen); w.u64(n.parent); w.str(n.target); w.u64(n.create_verf);
    w.u32(uint32_t(a.type)); w.u32(a.mode); w.u32(a.nlink); w.u32(a.uid); w.u32(a.gid);
    w.u64(a.size); w.u64(a.used); w.u32(a.rdev_major); w.u32(a.rdev_minor);
    put_time(w, a.atime); put_time(w, a.mtime); put_time(w, a.ctime);
    w.u64(n.next_cookie);
    w.u64(n.entries.size());
    for (const auto& [cookie, e] : n.entries) { w.u64(cookie); w.str(e.first); w.u64(e.second); }
    w.u64(n.extents.size());
    for (const auto& [off, g] : n.extents) put_record(w, g);
  }
  uint64_t policies = 0;
  for (const auto& [ino, n] : s.inodes) policies += n.policy ? 1 : 0;
  w.u64(kPolicyMagic);
  w.u64(policies);
  for (const auto& [ino, n] : s.inodes) {
    if (!n.policy) continue;
    w.u64(ino);
    w.u32(uint32_t(n.policy->parity)); w.u32(uint32_t(n.policy->per_node));
    w.u32(uint32_t(n.policy->data_width));
  }
  return w.take();
}

bool decode_state(const uint8_t* p, size_t size, IfsState* out, std::string* why) {
  Reader r(p, size);
  IfsState s;
  if (r.u64() != kStateMagic) { *why = "not a scale-out metadata image"; return false; }
  s.next_ino = r.u64(); s.applied_seq = r.u64(); s.epoch = r.u32(); s.next_version = r.u64();
  s.job_epoch = r.u32(); s.generation = r.u64();
  uint64_t inodes = r.count(kMaxCount);
  for (uint64_t i = 0; i < inodes && r.ok(); i++) {
    uint64_t ino = r.u64();
    // An inode twice (or a cookie twice, below) would merge two records into one that encodes
    // differently: refused, as a damaged image.
    if (!r.ok() || s.inodes.count(ino)) { *why = "inode recorded twice"; return false; }
    IfsInode& n = s.inodes[ino];
    fs::Attr& a = n.attr;
    n.gen = r.u32(); n.parent = r.u64(); n.target = r.str(); n.create_verf = r.u64();
    uint32_t type = r.u32();
    if (type < 1 || type > 7) { *why = "bad file type"; return false; }
    a.type = fs::FileType(type);
    a.mode = r.u32(); a.nlink = r.u32(); a.uid = r.u32(); a.gid = r.u32();
    a.size = r.u64(); a.used = r.u64(); a.rdev_major = r.u32(); a.rdev_minor = r.u32();
    a.atime = get_time(r); a.mtime = get_time(r); a.ctime = get_time(r);
    a.fileid = ino;
    n.next_cookie = r.u64();
    uint64_t entries = r.count(kMaxCount);
    for (uint64_t e = 0; e < entries && r.ok(); e++) {
      uint64_t cookie = r.u64();
      std::string name = r.str();
      uint64_t child = r.u64();
      if (!r.ok() || cookie >= n.next_cookie || n.names.count(name) ||
          n.entries.count(cookie)) { *why = "bad directory entry"; return false; }
      n.names[name] = cookie;
      n.entries[cookie] = {std::move(name), child};
    }
    uint64_t extents = r.count(kMaxCount);
    for (uint64_t e = 0; e < extents && r.ok(); e++) {
      GroupRecord g;
      if (!get_record(r, &g) || g.file != ino) { *why = "bad group record"; return false; }
      n.extents[g.offset] = std::move(g);
    }
  }
  if (r.ok() && r.remaining() > 0) {
    if (r.u64() != kPolicyMagic) { *why = "bad directory policy section"; return false; }
    uint64_t policies = r.count(s.inodes.size());
    for (uint64_t i = 0; i < policies && r.ok(); i++) {
      const uint64_t ino = r.u64();
      ProtectionPolicy p;
      p.parity = int(r.u32()); p.per_node = int(r.u32()); p.data_width = int(r.u32());
      auto n = s.inodes.find(ino);
      if (!r.ok() || n == s.inodes.end() || n->second.attr.type != fs::FileType::Dir ||
          n->second.policy || !validate(p).empty()) {
        *why = "bad directory policy";
        return false;
      }
      n->second.policy = p;
    }
  }
  if (!r.ok() || r.remaining() != 0) { *why = "metadata image truncated or oversized"; return false; }
  if (!s.inodes.count(kIfsRootIno)) { *why = "metadata image without a root"; return false; }
  *out = std::move(s);
  return true;
}

}  // namespace nasd::scaleout
