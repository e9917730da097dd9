// A page-aligned, reference-counted buffer that a large call record is received into, and
// whose pages a volume may keep as its cache blocks instead of copying them: a WRITE's payload
// is received once (by the kernel), journalled (copied into NVRAM, which is the point of a
// journal) and then becomes the cached blocks without another copy.
//
// Who holds references: the record that owns the run (one), and every cache block that adopted
// one of its pages (one each, taken with ref()). The run goes back to a process-wide pool when
// the last reference goes, on whichever thread drops it (a cache evicting on its flusher
// thread, a network thread freeing a record), and the pool hands the warmest run out first: a
// fresh run's pages cost a page fault each on their first touch, which on a virtual machine is
// dearer than the copy this saves.
//
// Lending: a record that lives in a run lends it to the thread running its call for the
// duration of the call (LentPageRun). A volume that finds a whole, page-aligned block of the
// data it is asked to write inside the lent run (holds_page) may adopt that page. Whoever
// lends promises that nothing reads the adopted pages through the record in a way that a later
// change of the cache block would disturb: the record's owner only reads its header after the
// call, and the journal copies the payload under the same lock that applied it.
//
// Invariants: capacity() is a multiple of kPageSize and data() is page aligned; refs > 0 while
// anyone holds the run, and a run in the pool has refs == 0 and is never handed to two owners.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace nasd::util {

class PageRun {
 public:
  static constexpr size_t kPageSize = 4096;
  // Runs are sized in whole pages: a 64 KiB WRITE's run wastes at most the page before its
  // payload and the one after. Records of nearby sizes still share runs (see the pool).
  static constexpr size_t kGranule = kPageSize;
  // The pool keeps at most this many bytes of free runs; more are freed.
  static constexpr size_t kMaxPooledBytes = 64u << 20;

  // A run of at least `bytes` bytes holding one reference. Throws std::bad_alloc.
  static PageRun* acquire(size_t bytes);

  uint8_t* data() const { return data_; }
  size_t capacity() const { return capacity_; }
  // True when [p, p + kPageSize) is one whole page of this run.
  bool holds_page(const uint8_t* p) const {
    return p >= data_ && p + kPageSize <= data_ + capacity_ &&
           (static_cast<size_t>(p - data_) % kPageSize) == 0;
  }

  void ref() { refs_.fetch_add(1, std::memory_order_relaxed); }
  // A reference held by a cache block that adopted one of the run's pages, and its release
  // (which also drops the reference). Counted apart, for the bound below.
  void ref_adopted();
  void unref_adopted();

  // The memory bound of adoption. A run stays whole while any of its pages is cached, so a
  // cache that kept one page of each run could hold far more memory than its budget counts.
  // Adopting is therefore allowed only while the runs that hold adopted pages exceed those pages
  // by at most kAdoptionOverheadPercent plus kAdoptionSlack; past that, volumes copy (as
  // before) until evictions free whole runs. Memory held by adopted runs thus never exceeds
  // the adopted bytes at the last adoption by more than that: beyond the caches' budgets, at
  // most half of them plus the slack. (A run fresh from a WRITE of 64 KiB or more is within
  // 13% of its pages: the page before the payload and the one after.)
  static constexpr size_t kAdoptionOverheadPercent = 50;
  static constexpr size_t kAdoptionSlack = 64u << 20;
  static bool may_adopt();
  static size_t adopted_pages();     // pages held by cache blocks now
  static size_t adopting_bytes();    // capacity of the runs that hold them
  // Drops one reference; the last one gives the run back to the pool (its bytes are garbage
  // from then on).
  void unref();
  uint32_t refs() const { return refs_.load(std::memory_order_acquire); }

  // For tests and statistics: bytes of free runs in the pool, and runs ever allocated.
  static size_t pooled_bytes();
  static uint64_t runs_allocated();

 private:
  PageRun(uint8_t* data, size_t capacity) : data_(data), capacity_(capacity) {}
  ~PageRun();
  friend struct PageRunPool;

  uint8_t* data_;
  size_t capacity_;
  std::atomic<uint32_t> refs_{0};
  std::atomic<uint32_t> adopted_{0};  // of refs_, those held by cache blocks
};

// Owns one reference to a run (or none); movable, not copyable.
class PageRunRef {
 public:
  PageRunRef() = default;
  explicit PageRunRef(PageRun* adopted) : run_(adopted) {}
  PageRunRef(PageRunRef&& o) noexcept : run_(std::exchange(o.run_, nullptr)) {}
  PageRunRef& operator=(PageRunRef&& o) noexcept {
    if (this != &o) {
      reset();
      run_ = std::exchange(o.run_, nullptr);
    }
    return *this;
  }
  PageRunRef(const PageRunRef&) = delete;
  PageRunRef& operator=(const PageRunRef&) = delete;
  ~PageRunRef() { reset(); }

  void reset() {
    if (run_) std::exchange(run_, nullptr)->unref();
  }
  PageRun* get() const { return run_; }
  explicit operator bool() const { return run_ != nullptr; }

 private:
  PageRun* run_ = nullptr;
};

// Lends `run` (may be null: nothing lent) to the code this thread runs until the scope ends;
// scopes nest, the innermost wins.
class LentPageRun {
 public:
  explicit LentPageRun(PageRun* run);
  ~LentPageRun();
  LentPageRun(const LentPageRun&) = delete;
  LentPageRun& operator=(const LentPageRun&) = delete;

  // The run lent to this thread now, or nullptr.
  static PageRun* current();

 private:
  PageRun* previous_;
};

}  // namespace nasd::util
