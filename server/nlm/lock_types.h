// What the lock manager's tables hold: the file a lock is on, its owner, its byte range.
// lock_manager.h says what the rules are.
#pragma once

#include <compare>
#include <cstdint>
#include <string>

namespace nasd::nlm {

// What a lock is on: a file of a volume, as the file handle names it.
struct FileId {
  uint32_t volume = 0;
  uint64_t inode = 0;
  uint32_t gen = 0;  // a reused inode number is another file
  auto operator<=>(const FileId&) const = default;
};

struct LockOwner {
  std::string host;  // caller_name
  int32_t svid = 0;  // usually the process id on the client
  std::string oh;    // the client's opaque owner handle
  std::string address;  // the numeric address the client called from (not from the wire)
  auto operator<=>(const LockOwner&) const = default;
};

// A client as the lock manager knows it: the address it calls from and the caller_name it
// gives. What FREE_ALL and SM_NOTIFY release, and what the quotas count.
struct ClientKey {
  std::string address;
  std::string host;
  auto operator<=>(const ClientKey&) const = default;
};

// A byte range; `end` is exclusive and kToEof means "to the end of the file".
struct ByteRange {
  static constexpr uint64_t kToEof = UINT64_MAX;
  uint64_t start = 0;
  uint64_t end = kToEof;

  // NLM's (offset, len): len 0, or an end past 2^64 - 1, reaches the end of the file.
  static ByteRange from_nlm(uint64_t offset, uint64_t len);
  uint64_t nlm_len() const { return end == kToEof ? 0 : end - start; }
  bool overlaps(const ByteRange& o) const { return start < o.end && o.start < end; }
  bool empty() const { return start >= end; }
  bool operator==(const ByteRange&) const = default;
};

struct Lock {
  FileId file;
  LockOwner owner;
  bool exclusive = false;
  ByteRange range;
};

}  // namespace nasd::nlm
