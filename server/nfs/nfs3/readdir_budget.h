// How many directory entries fit a READDIR / READDIRPLUS reply. The client bounds the reply
// in bytes (READDIR: count; READDIRPLUS: dircount for the names, maxcount for everything), the
// volume returns entries, and the server keeps the longest prefix whose encoding fits.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

namespace nasd::nfs::nfs3 {

// Encoded sizes (RFC 1813 XDR): fattr3 is 84 bytes, a present post_op_attr 88, a 32-byte
// handle as post_op_fh3 40.
inline constexpr uint32_t kPostOpAttrBytes = 4 + 84;
inline constexpr uint32_t kAbsentAttrBytes = 4;
inline constexpr uint32_t kPostOpHandleBytes = 4 + 4 + 32;
// status + dir_attributes + cookieverf + end-of-list marker + eof.
inline constexpr uint32_t kReaddirFixedBytes = 4 + kPostOpAttrBytes + 8 + 4 + 4;
// The most entries asked of the volume for one reply, whatever the client's byte budget.
inline constexpr uint32_t kMaxEntriesPerReply = 16384;

inline uint32_t xdr_padded(size_t n) { return static_cast<uint32_t>((n + 3) & ~size_t{3}); }

// entry3: value_follows + fileid + name + cookie. Also what READDIRPLUS counts against dircount.
inline uint32_t entry3_bytes(const std::string& name) { return 4 + 8 + 4 + xdr_padded(name.size()) + 8; }

inline uint32_t entryplus3_bytes(const std::string& name, bool has_attr) {
  return entry3_bytes(name) + (has_attr ? kPostOpAttrBytes : kAbsentAttrBytes) + kPostOpHandleBytes;
}

class ReaddirBudget {
 public:
  // `max_bytes`: the whole reply; `max_dir_bytes`: the entry3-sized part (READDIRPLUS dircount;
  // pass max_bytes for READDIR).
  ReaddirBudget(uint32_t max_bytes, uint32_t max_dir_bytes)
      : left_(max_bytes > kReaddirFixedBytes ? max_bytes - kReaddirFixedBytes : 0),
        dir_left_(max_dir_bytes) {}

  // Entries worth asking the volume for when the smallest entry takes `min_entry_bytes`; at
  // least one, so that "nothing fits" (TOOSMALL) can be told from "nothing left" (eof).
  uint32_t entries_to_ask(uint32_t min_entry_bytes) const {
    uint32_t n = std::min(left_ / min_entry_bytes, dir_left_ / 28u) + 1;
    return std::min(n, kMaxEntriesPerReply);
  }

  // Takes room for one more entry; false (and nothing taken) when it does not fit. The first
  // entry only has to fit the total, so a tiny dircount cannot starve the reply.
  bool take(uint32_t entry_bytes, uint32_t dir_bytes) {
    if (entry_bytes > left_) return false;
    if (taken_ > 0 && dir_bytes > dir_left_) return false;
    left_ -= entry_bytes;
    dir_left_ = dir_bytes > dir_left_ ? 0 : dir_left_ - dir_bytes;
    taken_++;
    return true;
  }
  uint32_t taken() const { return taken_; }

 private:
  uint32_t left_;
  uint32_t dir_left_;
  uint32_t taken_ = 0;
};

}  // namespace nasd::nfs::nfs3
