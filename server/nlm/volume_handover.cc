#include "server/nlm/volume_handover.h"

#include "util/byte_io.h"

namespace nasd::nlm {
namespace {

// "NASDNLM3", little-endian: every lock's and share's owner has the address its client called
// from. "NASDNLM2" (owners without their address: it is taken from the table's client list) and
// "NASDNLM1" (neither a waiter's full callback route nor a client's called address) are still
// read.
constexpr uint64_t kMagic = 0x334d4c4e4453414eull;
constexpr uint64_t kMagicNoOwnerAddress = 0x324d4c4e4453414eull;
constexpr uint64_t kMagicAddressOnly = 0x314d4c4e4453414eull;
constexpr size_t kMaxText = 1024;  // caller_name, owner and file handles, cookies (NLM's limits)

void put_file(util::ByteWriter& w, const FileId& f) {
  w.u32(f.volume);
  w.u64(f.inode);
  w.u32(f.gen);
}

void put_lock(util::ByteWriter& w, const Lock& l) {
  put_file(w, l.file);
  w.string(l.owner.host);
  w.u32(static_cast<uint32_t>(l.owner.svid));
  w.string(l.owner.oh);
  w.boolean(l.exclusive);
  w.u64(l.range.start);
  w.u64(l.range.end);
  w.string(l.owner.address);
}

std::string text(std::string_view v) { return std::string(v); }

bool get_text(util::ByteReader& r, std::string* out) {
  std::string_view v;
  if (!r.string(&v, kMaxText)) return false;
  *out = text(v);
  return true;
}

bool get_file(util::ByteReader& r, FileId* f) {
  return r.u32(&f->volume) && r.u64(&f->inode) && r.u32(&f->gen);
}

bool get_lock(util::ByteReader& r, uint64_t magic, Lock* l) {
  uint32_t svid = 0;
  if (!get_file(r, &l->file) || !get_text(r, &l->owner.host) || !r.u32(&svid) ||
      !get_text(r, &l->owner.oh) || !r.boolean(&l->exclusive) || !r.u64(&l->range.start) ||
      !r.u64(&l->range.end) || (magic == kMagic && !get_text(r, &l->owner.address)))
    return false;
  l->owner.svid = static_cast<int32_t>(svid);
  if (l->owner.host.empty()) return r.fail("a lock without a caller name");
  if (l->range.empty()) return r.fail("an empty lock range");
  return true;
}

// A count, bounded by what is left of the input at `min_size` bytes per entry.
bool get_count(util::ByteReader& r, size_t min_size, uint32_t* n) {
  if (!r.u32(n)) return false;
  if (*n > r.remaining() / min_size) return r.fail("a count larger than the input");
  return true;
}

constexpr size_t kMinLock = 16 + 4 + 4 + 4 + 1 + 16;  // file, host, svid, oh, mode, range (+ address)

}  // namespace

std::vector<uint8_t> encode_handover(const VolumeHandover& h) {
  util::ByteWriter w;
  w.u64(kMagic);
  w.u32(h.volume);
  w.u64(h.table.grace_left_ms);
  w.u32(static_cast<uint32_t>(h.table.locks.size()));
  for (const Lock& l : h.table.locks) put_lock(w, l);
  w.u32(static_cast<uint32_t>(h.table.waiters.size()));
  for (const Waiter& x : h.table.waiters) {
    put_lock(w, x.lock);
    w.string(x.fh);
    w.string(x.cookie);
    w.string(x.callback.host);
    w.string(x.callback.from);
    w.string(x.callback.relay);
  }
  w.u32(static_cast<uint32_t>(h.table.shares.size()));
  for (const Share& s : h.table.shares) {
    put_file(w, s.file);
    w.string(s.host);
    w.string(s.oh);
    w.u32(static_cast<uint32_t>(s.access));
    w.u32(static_cast<uint32_t>(s.deny));
    w.string(s.address);
  }
  w.u32(static_cast<uint32_t>(h.clients.size()));
  for (const MonitoredHost& c : h.clients) {
    w.string(c.name);
    w.string(c.address);
    w.string(c.called);
  }
  return w.take();
}

bool decode_handover(std::span<const uint8_t> bytes, VolumeHandover* out, std::string* error) {
  util::ByteReader r(bytes);
  VolumeHandover h;
  uint64_t magic = 0;
  auto done = [&](bool ok) {
    if (!ok || !r.expect_end()) {
      *error = r.ok() ? "malformed lock table" : r.error();
      return false;
    }
    *out = std::move(h);
    return true;
  };
  if (!r.u64(&magic) ||
      (magic != kMagic && magic != kMagicNoOwnerAddress && magic != kMagicAddressOnly))
    return done(r.fail("not a lock table (magic)"));
  uint32_t n = 0;
  if (!r.u32(&h.volume) || !r.u64(&h.table.grace_left_ms)) return done(false);
  if (!get_count(r, kMinLock, &n)) return done(false);
  for (uint32_t i = 0; i < n; ++i) {
    Lock l;
    if (!get_lock(r, magic, &l)) return done(false);
    h.table.locks.push_back(std::move(l));
  }
  if (!get_count(r, kMinLock + 12, &n)) return done(false);
  for (uint32_t i = 0; i < n; ++i) {
    Waiter x;
    if (!get_lock(r, magic, &x.lock) || !get_text(r, &x.fh) || !get_text(r, &x.cookie) ||
        !get_text(r, &x.callback.host) ||
        (magic != kMagicAddressOnly &&
         (!get_text(r, &x.callback.from) || !get_text(r, &x.callback.relay))))
      return done(false);
    h.table.waiters.push_back(std::move(x));
  }
  if (!get_count(r, 16 + 4 + 4 + 8, &n)) return done(false);
  for (uint32_t i = 0; i < n; ++i) {
    Share s;
    uint32_t access = 0, deny = 0;
    if (!get_file(r, &s.file) || !get_text(r, &s.host) || !get_text(r, &s.oh) ||
        !r.u32(&access) || !r.u32(&deny) || (magic == kMagic && !get_text(r, &s.address)))
      return done(false);
    if (access > 3 || deny > 3) return done(r.fail("a share mode out of range"));
    if (s.host.empty()) return done(r.fail("a share without a caller name"));
    s.access = static_cast<ShareAccess>(access);
    s.deny = static_cast<ShareDeny>(deny);
    h.table.shares.push_back(std::move(s));
  }
  if (!get_count(r, 8, &n)) return done(false);
  for (uint32_t i = 0; i < n; ++i) {
    MonitoredHost c;
    if (!get_text(r, &c.name) || !get_text(r, &c.address) ||
        (magic != kMagicAddressOnly && !get_text(r, &c.called)))
      return done(false);
    h.clients.push_back(std::move(c));
  }
  // An older table's owners: at the address its client list gives their name (one name had
  // one address then).
  if (magic != kMagic) {
    auto address_of = [&](const std::string& name) {
      for (const MonitoredHost& c : h.clients)
        if (c.name == name) return c.address;
      return std::string();
    };
    for (Lock& l : h.table.locks) l.owner.address = address_of(l.owner.host);
    for (Waiter& w : h.table.waiters) w.lock.owner.address = address_of(w.lock.owner.host);
    for (Share& s : h.table.shares) s.address = address_of(s.host);
  }
  return done(true);
}

}  // namespace nasd::nlm
