// One complete RPC record (call header and arguments), in one of two kinds of memory:
// - a byte vector: most records (recycled per thread, record_marking.h);
// - a util::PageRun: a large call whose bulk payload the service located (a WRITE's data),
//   placed so that the payload starts on a page boundary. The call's dispatcher lends the run
//   to the thread running the call (util::LentPageRun), and a volume may keep whole pages of
//   the payload as its cache blocks instead of copying them.
// Either way the bytes are contiguous, so decoders see no difference.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "util/page_run.h"

namespace nasd::rpc {

// std::allocator whose value-initialisation of a byte does nothing: sizing a record for its
// announced fragment does not zero memory that the socket is about to overwrite.
template <typename T>
struct NoInitAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = NoInitAllocator<U>;
  };
  NoInitAllocator() = default;
  template <typename U>
  NoInitAllocator(const NoInitAllocator<U>&) noexcept {}
  template <typename U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

class Record {
 public:
  using Bytes = std::vector<uint8_t, NoInitAllocator<uint8_t>>;

  Record() = default;
  explicit Record(Bytes bytes) : bytes_(std::move(bytes)) {}
  template <typename It>
  Record(It first, It last) : bytes_(first, last) {}
  // `size` bytes at `offset` in `run`, whose reference the record takes.
  Record(util::PageRunRef run, size_t offset, size_t size)
      : run_(std::move(run)), offset_(offset), size_(size) {
    assert(offset_ + size_ <= run_.get()->capacity());
  }

  uint8_t* data() { return run_ ? run_.get()->data() + offset_ : bytes_.data(); }
  const uint8_t* data() const { return run_ ? run_.get()->data() + offset_ : bytes_.data(); }
  size_t size() const { return run_ ? size_ : bytes_.size(); }
  bool empty() const { return size() == 0; }
  uint8_t* begin() { return data(); }
  uint8_t* end() { return data() + size(); }
  const uint8_t* begin() const { return data(); }
  const uint8_t* end() const { return data() + size(); }

  // A vector record grows or shrinks (new bytes uninitialised); a run record only within its
  // run.
  void resize(size_t n) {
    if (!run_) return bytes_.resize(n);
    assert(offset_ + n <= run_.get()->capacity());
    size_ = n;
  }
  // The bytes the record can hold without growing.
  size_t capacity() const { return run_ ? run_.get()->capacity() - offset_ : bytes_.capacity(); }

  // The run the bytes live in, or nullptr for a vector record.
  util::PageRun* pages() const { return run_.get(); }
  // A vector record's storage, for reuse (the record is left empty).
  Bytes take_bytes() { return std::move(bytes_); }

 private:
  Bytes bytes_;
  util::PageRunRef run_;
  size_t offset_ = 0, size_ = 0;
};

}  // namespace nasd::rpc
