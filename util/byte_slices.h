// Bytes that stay where they are: a list of pieces of someone else's memory plus the one
// reference that keeps that memory alive and unchanged until the last copy of the list is gone.
//
// Why: a READ of cached file data used to be copied from the block cache into a reply buffer
// and then again by the kernel into the socket. With ByteSlices the volume hands the transport
// references to its cache blocks (pinned: the cache copies a pinned block before changing it
// and frees its memory only when the pin is dropped), and the transport gives them to
// sendmsg() as an iovec, so the only copy left is the kernel's.
//
// Invariant: while `owner` (or any copy of it) lives, every part points at memory that nobody
// writes. Adjacent parts that touch are merged, so a run of blocks that lie next to each other in
// memory costs one iovec entry.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include <boost/container/small_vector.hpp>

namespace nasd::util {

struct ByteSlices {
  // Up to kInlineParts pieces (a READ of up to 32 KiB of scattered blocks) are kept in place:
  // a READ answered from the cache then allocates no list.
  static constexpr size_t kInlineParts = 8;
  boost::container::small_vector<std::span<const uint8_t>, kInlineParts> parts;
  std::shared_ptr<const void> owner;  // keeps what `parts` point at valid and unchanged

  bool empty() const { return bytes_ == 0; }
  size_t size() const { return bytes_; }

  void append(const uint8_t* p, size_t n) {
    if (n == 0) return;
    if (!parts.empty() && parts.back().data() + parts.back().size() == p)
      parts.back() = {parts.back().data(), parts.back().size() + n};
    else
      parts.emplace_back(p, n);
    bytes_ += n;
  }
  // Keeps the first `n` bytes.
  void truncate(size_t n) {
    if (n >= bytes_) return;
    size_t kept = 0, i = 0;
    for (; i < parts.size() && kept < n; i++) {
      if (kept + parts[i].size() > n) parts[i] = parts[i].first(n - kept);
      kept += parts[i].size();
    }
    parts.resize(i);
    bytes_ = n;
  }
  void clear() {
    parts.clear();
    owner.reset();
    bytes_ = 0;
  }
  // The bytes themselves, appended to `out` (tests, and transports that must copy).
  void copy_to(std::vector<uint8_t>* out) const {
    for (auto p : parts) out->insert(out->end(), p.begin(), p.end());
  }

  // Up to 4 KiB of zero bytes that live forever (XDR padding, holes); nullptr above that.
  static const uint8_t* zeros(size_t n) {
    static const uint8_t kZeros[4096] = {};
    return n <= sizeof kZeros ? kZeros : nullptr;
  }

 private:
  size_t bytes_ = 0;
};

}  // namespace nasd::util
