#include "fs/lfs/directory.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "fs/lfs/endian.h"

namespace nasd::fs::lfs {

namespace {
constexpr uint32_t kHeaderMagic = 0x4844464c;  // "LFDH"
constexpr uint32_t kBucketMagic = 0x4244464c;  // "LFDB"
constexpr uint32_t kMaxDepth = 24;
constexpr uint32_t kInlineDepth = 9;            // tables up to 512 entries live in the header
constexpr size_t kHeaderTableOffset = 16;
constexpr uint32_t kTablePerBlock = kBlockSize / 4;
// Buckets come first so a small directory lives in direct blocks; only big directories have
// an external table, far out in the sparse file (past bucket 2^24).
constexpr uint64_t kBucketBase = 1;
constexpr uint64_t kTableBase = 1ull << 26;
constexpr size_t kBucketHeader = 16;
constexpr size_t kEntryFixed = 22;              // hash, idx, ino, gen, type, name length
constexpr uint32_t kMaxCollisions = 1u << 24;

// A bucket block decoded in place.
struct BucketView {
  uint8_t* p;
  uint32_t depth() const { return get16(p + 4); }
  uint32_t count() const { return get16(p + 6); }
  uint32_t used() const { return get16(p + 8); }
  void set(uint32_t depth, uint32_t count, uint32_t used) {
    put32(p, kBucketMagic);
    put16(p + 4, uint16_t(depth));
    put16(p + 6, uint16_t(count));
    put16(p + 8, uint16_t(used));
  }
  bool valid() const { return get32(p) == kBucketMagic && used() <= kBlockSize - kBucketHeader; }
};

struct EntryView {
  const uint8_t* p;
  uint32_t hash() const { return get32(p); }
  uint32_t idx() const { return get32(p + 4); }
  uint64_t ino() const { return get64(p + 8); }
  uint32_t gen() const { return get32(p + 16); }
  FileType type() const { return FileType(p[20]); }
  size_t name_len() const { return p[21]; }
  std::string_view name() const { return {reinterpret_cast<const char*>(p + kEntryFixed), name_len()}; }
  size_t size() const { return kEntryFixed + name_len(); }
};

void encode_entry(uint8_t* p, uint32_t hash, uint32_t idx, uint64_t ino, uint32_t gen,
                  FileType type, std::string_view name) {
  put32(p, hash);
  put32(p + 4, idx);
  put64(p + 8, ino);
  put32(p + 16, gen);
  p[20] = uint8_t(type);
  p[21] = uint8_t(name.size());
  std::memcpy(p + kEntryFixed, name.data(), name.size());
}

uint64_t make_cookie(uint32_t hash, uint32_t idx) {
  return ((uint64_t(hash) + 1) << 24) | idx;
}

// Visits entries of a bucket; stops early when fn returns false. False when malformed.
template <typename Fn>
bool for_entries(const uint8_t* bucket, Fn fn) {
  size_t off = kBucketHeader, end = kBucketHeader + get16(bucket + 8);
  while (off < end) {
    EntryView e{bucket + off};
    if (off + kEntryFixed > end || off + e.size() > end) return false;
    if (!fn(e, off)) return true;
    off += e.size();
  }
  return true;
}

uint64_t table_index(uint32_t hash, uint32_t depth) {
  return depth == 0 ? 0 : uint64_t(hash) >> (32 - depth);
}
}  // namespace

bool is_entry_cookie(uint64_t cookie) {
  uint64_t h = cookie >> 24;
  return h >= 1 && h <= (1ull << 32);
}

uint32_t name_hash(std::string_view name) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a, then a 64-bit finalizer for the top bits
  for (unsigned char ch : name) {
    h ^= ch;
    h *= 0x100000001b3ull;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return uint32_t(h >> 32);
}

Status Directory::read_header(Header* h) {
  const uint8_t* d;
  Status st = store_->read_block(dir_, 0, &d);
  if (st != Status::Ok) return st;
  if (!d || get32(d) != kHeaderMagic) return Status::Io;
  h->depth = get32(d + 4);
  h->nbuckets = get32(d + 8);
  if (h->depth > kMaxDepth || h->nbuckets == 0) return Status::Io;
  return Status::Ok;
}

Status Directory::write_header(const Header& h) {
  uint8_t* d;
  Status st = store_->modify_block(dir_, 0, false, &d);
  if (st != Status::Ok) return st;
  put32(d, kHeaderMagic);
  put32(d + 4, h.depth);
  put32(d + 8, h.nbuckets);
  update_size(h);
  return Status::Ok;
}

void Directory::update_size(const Header& h) {
  uint64_t table_blocks = h.depth <= kInlineDepth ? 0 : (1ull << h.depth) / kTablePerBlock;
  dir_->inode.size = (1 + table_blocks + h.nbuckets) * kBlockSize;
}

Status Directory::table_get(const Header& h, uint64_t index, uint32_t* bucket) {
  const uint8_t* d;
  size_t off;
  Status st;
  if (h.depth <= kInlineDepth) {
    st = store_->read_block(dir_, 0, &d);
    off = kHeaderTableOffset + index * 4;
  } else {
    st = store_->read_block(dir_, kTableBase + index / kTablePerBlock, &d);
    off = (index % kTablePerBlock) * 4;
  }
  if (st != Status::Ok) return st;
  if (!d) return Status::Io;
  *bucket = get32(d + off);
  return *bucket < h.nbuckets ? Status::Ok : Status::Io;
}

Status Directory::table_set(const Header& h, uint64_t index, uint32_t bucket) {
  uint8_t* d;
  size_t off;
  Status st;
  if (h.depth <= kInlineDepth) {
    st = store_->modify_block(dir_, 0, false, &d);
    off = kHeaderTableOffset + index * 4;
  } else {
    st = store_->modify_block(dir_, kTableBase + index / kTablePerBlock, false, &d);
    off = (index % kTablePerBlock) * 4;
  }
  if (st != Status::Ok) return st;
  put32(d + off, bucket);
  return Status::Ok;
}

Status Directory::init() {
  Header h{0, 1};
  uint8_t* d;
  Status st = store_->modify_block(dir_, 0, true, &d);
  if (st != Status::Ok) return st;
  std::memset(d, 0, kBlockSize);
  st = write_header(h);
  if (st != Status::Ok) return st;
  st = table_set(h, 0, 0);
  if (st != Status::Ok) return st;
  st = store_->modify_block(dir_, kBucketBase, true, &d);
  if (st != Status::Ok) return st;
  std::memset(d, 0, kBlockSize);
  BucketView{d}.set(0, 0, 0);
  return Status::Ok;
}

Status Directory::bucket_for(const Header& h, uint32_t hash, uint32_t* bucket) {
  return table_get(h, table_index(hash, h.depth), bucket);
}

Status Directory::lookup(std::string_view name, DirRecord* out, bool* found) {
  *found = false;
  Header h;
  Status st = read_header(&h);
  if (st != Status::Ok) return st;
  uint32_t hash = name_hash(name), bn;
  if ((st = bucket_for(h, hash, &bn)) != Status::Ok) return st;
  const uint8_t* b;
  if ((st = store_->read_block(dir_, kBucketBase + bn, &b)) != Status::Ok) return st;
  if (!b || !BucketView{const_cast<uint8_t*>(b)}.valid()) return Status::Io;
  bool ok = for_entries(b, [&](const EntryView& e, size_t) {
    if (e.hash() != hash || e.name() != name) return true;
    *out = DirRecord{std::string(name), e.ino(), e.gen(), e.type(), make_cookie(hash, e.idx())};
    *found = true;
    return false;
  });
  return ok ? Status::Ok : Status::Io;
}

// Doubles the bucket table: entry i of the new table is entry i/2 of the old one.
Status Directory::double_table(Header* h) {
  uint64_t old_n = 1ull << h->depth;
  std::vector<uint32_t> old(old_n);
  for (uint64_t i = 0; i < old_n; i++) {
    Status st = table_get(*h, i, &old[i]);
    if (st != Status::Ok) return st;
  }
  Header nh{h->depth + 1, h->nbuckets};
  for (uint64_t i = 0; i < 2 * old_n; i++) {
    Status st = table_set(nh, i, old[i / 2]);
    if (st != Status::Ok) return st;
  }
  *h = nh;
  return write_header(*h);
}

// Splits `bucket` (which holds `hash`) by the next hash bit into itself and a new bucket.
Status Directory::split(Header* h, uint32_t bucket, uint32_t hash) {
  const uint8_t* src;
  Status st = store_->read_block(dir_, kBucketBase + bucket, &src);
  if (st != Status::Ok) return st;
  if (!src) return Status::Io;
  uint32_t depth = BucketView{const_cast<uint8_t*>(src)}.depth();
  if (depth >= kMaxDepth) return Status::NoSpc;
  if (depth == h->depth) {
    if ((st = double_table(h)) != Status::Ok) return st;
  }
  std::vector<uint8_t> copy(src, src + kBlockSize);
  uint32_t nb = h->nbuckets;
  h->nbuckets++;
  uint8_t *lo, *hi;
  if ((st = store_->modify_block(dir_, kBucketBase + nb, true, &hi)) != Status::Ok) return st;
  if ((st = store_->modify_block(dir_, kBucketBase + bucket, false, &lo)) != Status::Ok) return st;
  std::memset(lo, 0, kBlockSize);
  std::memset(hi, 0, kBlockSize);
  uint32_t bit = 31 - depth;
  size_t lo_off = kBucketHeader, hi_off = kBucketHeader;
  uint32_t lo_n = 0, hi_n = 0;
  for_entries(copy.data(), [&](const EntryView& e, size_t) {
    bool up = (e.hash() >> bit) & 1;
    uint8_t* dst = up ? hi : lo;
    size_t& off = up ? hi_off : lo_off;
    std::memcpy(dst + off, e.p, e.size());
    off += e.size();
    (up ? hi_n : lo_n)++;
    return true;
  });
  BucketView{lo}.set(depth + 1, lo_n, uint32_t(lo_off - kBucketHeader));
  BucketView{hi}.set(depth + 1, hi_n, uint32_t(hi_off - kBucketHeader));
  // Table slots of the old bucket: the upper half now points at the new one.
  uint64_t prefix = table_index(hash, depth);
  uint64_t span = 1ull << (h->depth - depth);
  uint64_t start = prefix * span;
  for (uint64_t i = start + span / 2; i < start + span; i++)
    if ((st = table_set(*h, i, nb)) != Status::Ok) return st;
  return write_header(*h);
}

Status Directory::insert(std::string_view name, uint64_t ino, uint32_t gen, FileType type) {
  uint32_t hash = name_hash(name);
  size_t esize = kEntryFixed + name.size();
  for (uint32_t attempt = 0; attempt <= kMaxDepth + 1; attempt++) {
    Header h;
    Status st = read_header(&h);
    if (st != Status::Ok) return st;
    uint32_t bn;
    if ((st = bucket_for(h, hash, &bn)) != Status::Ok) return st;
    const uint8_t* b;
    if ((st = store_->read_block(dir_, kBucketBase + bn, &b)) != Status::Ok) return st;
    if (!b || !BucketView{const_cast<uint8_t*>(b)}.valid()) return Status::Io;
    bool exists = false;
    std::set<uint32_t> taken;
    for_entries(b, [&](const EntryView& e, size_t) {
      if (e.hash() == hash) {
        if (e.name() == name) exists = true;
        taken.insert(e.idx());
      }
      return true;
    });
    if (exists) return Status::Exist;
    uint32_t used = get16(b + 8);
    if (kBucketHeader + used + esize <= kBlockSize) {
      uint32_t idx = 0;
      while (taken.count(idx)) idx++;
      if (idx >= kMaxCollisions) return Status::NoSpc;
      uint8_t* w;
      if ((st = store_->modify_block(dir_, kBucketBase + bn, false, &w)) != Status::Ok) return st;
      BucketView v{w};
      encode_entry(w + kBucketHeader + used, hash, idx, ino, gen, type, name);
      v.set(v.depth(), v.count() + 1, used + uint32_t(esize));
      dir_->inode.dir_entries++;
      return Status::Ok;
    }
    if ((st = split(&h, bn, hash)) != Status::Ok) return st;
  }
  return Status::NoSpc;
}

Status Directory::replace(std::string_view name, uint64_t ino, uint32_t gen, FileType type) {
  Header h;
  Status st = read_header(&h);
  if (st != Status::Ok) return st;
  uint32_t hash = name_hash(name), bn;
  if ((st = bucket_for(h, hash, &bn)) != Status::Ok) return st;
  uint8_t* b;
  if ((st = store_->modify_block(dir_, kBucketBase + bn, false, &b)) != Status::Ok) return st;
  bool done = false;
  for_entries(b, [&](const EntryView& e, size_t off) {
    if (e.hash() != hash || e.name() != name) return true;
    put64(b + off + 8, ino);
    put32(b + off + 16, gen);
    b[off + 20] = uint8_t(type);
    done = true;
    return false;
  });
  return done ? Status::Ok : Status::NoEnt;
}

Status Directory::remove(std::string_view name, bool* found) {
  *found = false;
  Header h;
  Status st = read_header(&h);
  if (st != Status::Ok) return st;
  uint32_t hash = name_hash(name), bn;
  if ((st = bucket_for(h, hash, &bn)) != Status::Ok) return st;
  DirRecord rec;
  bool present;
  if ((st = lookup(name, &rec, &present)) != Status::Ok || !present) return st;
  uint8_t* b;
  if ((st = store_->modify_block(dir_, kBucketBase + bn, false, &b)) != Status::Ok) return st;
  BucketView v{b};
  for_entries(b, [&](const EntryView& e, size_t off) {
    if (e.hash() != hash || e.name() != name) return true;
    size_t sz = e.size();
    size_t end = kBucketHeader + v.used();
    std::memmove(b + off, b + off + sz, end - off - sz);
    std::memset(b + end - sz, 0, sz);
    v.set(v.depth(), v.count() - 1, v.used() - uint32_t(sz));
    *found = true;
    return false;
  });
  if (*found && dir_->inode.dir_entries > 0) dir_->inode.dir_entries--;
  return Status::Ok;
}

Status Directory::list(uint64_t after, uint32_t max, std::vector<DirRecord>* out, bool* eof) {
  *eof = false;
  Header h;
  Status st = read_header(&h);
  if (st != Status::Ok) return st;
  uint32_t start_hash = after >= kFirstEntryCookie ? uint32_t((after >> 24) - 1) : 0;
  uint64_t ti = table_index(start_hash, h.depth);
  uint64_t table_size = 1ull << h.depth;
  while (ti < table_size) {
    uint32_t bn;
    if ((st = table_get(h, ti, &bn)) != Status::Ok) return st;
    const uint8_t* b;
    if ((st = store_->read_block(dir_, kBucketBase + bn, &b)) != Status::Ok) return st;
    if (!b || !BucketView{const_cast<uint8_t*>(b)}.valid()) return Status::Io;
    uint32_t depth = get16(b + 4);
    if (depth > h.depth) return Status::Io;
    std::vector<DirRecord> batch;
    for_entries(b, [&](const EntryView& e, size_t) {
      uint64_t c = make_cookie(e.hash(), e.idx());
      if (c > after)
        batch.push_back(DirRecord{std::string(e.name()), e.ino(), e.gen(), e.type(), c});
      return true;
    });
    std::sort(batch.begin(), batch.end(),
              [](const DirRecord& a, const DirRecord& b) { return a.cookie < b.cookie; });
    for (auto& r : batch) {
      if (out->size() >= max) return Status::Ok;  // more entries follow
      out->push_back(std::move(r));
    }
    uint64_t span = 1ull << (h.depth - depth);
    ti = (ti / span + 1) * span;
  }
  *eof = true;
  return Status::Ok;
}

Status Directory::check(std::vector<std::string>* problems) {
  std::string who = "directory " + std::to_string(dir_->inode.ino) + ": ";
  Header h;
  Status st = read_header(&h);
  if (st != Status::Ok) {
    problems->push_back(who + "unreadable header");
    return Status::Ok;
  }
  uint64_t table_size = 1ull << h.depth, entries = 0;
  std::set<std::string> names;
  uint64_t ti = 0;
  while (ti < table_size) {
    uint32_t bn;
    if (table_get(h, ti, &bn) != Status::Ok) {
      problems->push_back(who + "bad bucket table entry " + std::to_string(ti));
      return Status::Ok;
    }
    const uint8_t* b;
    if (store_->read_block(dir_, kBucketBase + bn, &b) != Status::Ok || !b ||
        !BucketView{const_cast<uint8_t*>(b)}.valid()) {
      problems->push_back(who + "bucket " + std::to_string(bn) + " unreadable or malformed");
      return Status::Ok;
    }
    uint32_t depth = get16(b + 4);
    if (depth > h.depth) {
      problems->push_back(who + "bucket " + std::to_string(bn) + " deeper than the table");
      return Status::Ok;
    }
    uint64_t span = 1ull << (h.depth - depth);
    uint64_t start = ti / span * span;
    for (uint64_t i = start; i < start + span; i++) {
      uint32_t other;
      if (table_get(h, i, &other) != Status::Ok || other != bn)
        problems->push_back(who + "table slot " + std::to_string(i) + " does not name bucket " +
                            std::to_string(bn));
    }
    uint32_t count = 0;
    bool ok = for_entries(b, [&](const EntryView& e, size_t) {
      count++;
      std::string name(e.name());
      if (name.empty() || e.hash() != name_hash(name))
        problems->push_back(who + "entry '" + name + "' has a wrong hash");
      else if (table_index(e.hash(), depth) != table_index(uint32_t(start << (32 - h.depth)), depth) &&
               h.depth > 0)
        problems->push_back(who + "entry '" + name + "' is in the wrong bucket");
      if (!names.insert(name).second) problems->push_back(who + "duplicate entry '" + name + "'");
      return true;
    });
    if (!ok) problems->push_back(who + "bucket " + std::to_string(bn) + " has a torn entry");
    if (count != get16(b + 6))
      problems->push_back(who + "bucket " + std::to_string(bn) + " entry count mismatch");
    entries += count;
    ti = start + span;
  }
  if (entries != dir_->inode.dir_entries)
    problems->push_back(who + "holds " + std::to_string(entries) + " entries, inode says " +
                        std::to_string(dir_->inode.dir_entries));
  return Status::Ok;
}

}  // namespace nasd::fs::lfs
