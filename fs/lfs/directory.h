// Directories as extendible hash tables stored in the directory's own (sparse) file blocks:
// block 0 is a header with the global depth and, while small, the bucket table; bucket n lives
// in block 1 + n; larger tables live far out in the sparse file (block 2^26 onwards). Lookup, insert and remove touch
// O(1) blocks whatever the size. Entries are ordered by (name hash, collision index), which is
// also their readdir cookie, so a cookie stays valid across inserts and removes: resuming means
// "the next key after this one".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fs/lfs/store.h"

namespace nasd::fs::lfs {

struct DirRecord {
  std::string name;
  uint64_t ino = 0;
  uint32_t gen = 0;
  FileType type = FileType::Reg;
  uint64_t cookie = 0;
};

// Cookies 1 and 2 are "." and ".."; entry cookies are all >= kFirstEntryCookie.
constexpr uint64_t kFirstEntryCookie = 1ull << 24;
bool is_entry_cookie(uint64_t cookie);
uint32_t name_hash(std::string_view name);

class Directory {
 public:
  Directory(Store* store, CachedInode* dir) : store_(store), dir_(dir) {}

  // Lays out an empty directory in a fresh inode.
  Status init();
  Status lookup(std::string_view name, DirRecord* out, bool* found);
  // Exist when the name is present. NoSpc when a bucket cannot split any further.
  Status insert(std::string_view name, uint64_t ino, uint32_t gen, FileType type);
  // Points an existing entry at another inode (rename over a target).
  Status replace(std::string_view name, uint64_t ino, uint32_t gen, FileType type);
  Status remove(std::string_view name, bool* found);
  // Up to `max` entries with cookie > `after`, in cookie order.
  Status list(uint64_t after, uint32_t max, std::vector<DirRecord>* out, bool* eof);
  // fsck: verifies the hash structure (table, bucket depths, every entry in the bucket its hash
  // selects, no duplicates, the entry count) and appends a line per problem.
  Status check(std::vector<std::string>* problems);

 private:
  struct Header {
    uint32_t depth = 0;
    uint32_t nbuckets = 0;
  };
  Status read_header(Header* h);
  Status write_header(const Header& h);
  Status table_get(const Header& h, uint64_t index, uint32_t* bucket);
  Status table_set(const Header& h, uint64_t index, uint32_t bucket);
  Status double_table(Header* h);
  Status split(Header* h, uint32_t bucket, uint32_t hash);
  Status bucket_for(const Header& h, uint32_t hash, uint32_t* bucket);
  void update_size(const Header& h);

  Store* store_;
  CachedInode* dir_;
};

}  // namespace nasd::fs::lfs
