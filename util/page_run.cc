#include "util/page_run.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

#include "util/page_prep.h"

namespace nasd::util {

// Free runs, the most recently freed last: its pages are the likeliest to be still mapped and
// cached. A request takes the most recent run that fits it with at most a quarter to spare.
// When the pool is full the oldest runs are freed to make room, so that runs of a size nobody
// asks for any more cannot keep the warm ones out (they did: the pool filled with them and
// every WRITE then got a fresh run). Only records of 64 KiB or more get runs, so the pool holds
// at most about a thousand and the scans are short. A fresh run is prepared for stores at once
// (util/page_prep.h): otherwise the socket's receive faults its pages in one by one inside the
// kernel's copy. Leaked on purpose: runs are given back from threads that may outlive static
// destruction order.
struct PageRunPool {
  std::mutex mu;
  std::vector<PageRun*> free;
  size_t pooled_bytes = 0;
  uint64_t allocated = 0;

  static PageRunPool& get() {
    static auto* pool = new PageRunPool;
    return *pool;
  }

  PageRun* take(size_t capacity) {
    {
      std::lock_guard lock(mu);
      for (size_t i = free.size(); i-- > 0;) {
        PageRun* run = free[i];
        if (run->capacity() < capacity || run->capacity() > capacity + capacity / 4) continue;
        free.erase(free.begin() + static_cast<std::ptrdiff_t>(i));
        pooled_bytes -= run->capacity();
        return run;
      }
      allocated++;
    }
    auto* data = static_cast<uint8_t*>(std::aligned_alloc(PageRun::kPageSize, capacity));
    if (data == nullptr) throw std::bad_alloc();
    prepare_for_stores(data, capacity);
    return new PageRun(data, capacity);
  }

  void give(PageRun* run) {
    std::vector<PageRun*> dropped;
    {
      std::lock_guard lock(mu);
      size_t n = 0;
      while (n < free.size() && pooled_bytes + run->capacity() > PageRun::kMaxPooledBytes)
        pooled_bytes -= free[n++]->capacity();
      dropped.assign(free.begin(), free.begin() + static_cast<std::ptrdiff_t>(n));
      free.erase(free.begin(), free.begin() + static_cast<std::ptrdiff_t>(n));
      if (pooled_bytes + run->capacity() <= PageRun::kMaxPooledBytes) {
        free.push_back(run);
        pooled_bytes += run->capacity();
      } else {
        dropped.push_back(run);  // larger than the whole pool
      }
    }
    for (PageRun* old : dropped) delete old;  // outside the lock
  }
};

namespace {
thread_local PageRun* t_lent = nullptr;
std::atomic<size_t> g_adopted_pages{0};
std::atomic<size_t> g_adopting_bytes{0};
}  // namespace

void PageRun::ref_adopted() {
  if (adopted_.fetch_add(1, std::memory_order_relaxed) == 0)
    g_adopting_bytes.fetch_add(capacity_, std::memory_order_relaxed);
  g_adopted_pages.fetch_add(1, std::memory_order_relaxed);
  ref();
}

void PageRun::unref_adopted() {
  g_adopted_pages.fetch_sub(1, std::memory_order_relaxed);
  if (adopted_.fetch_sub(1, std::memory_order_relaxed) == 1)
    g_adopting_bytes.fetch_sub(capacity_, std::memory_order_relaxed);
  unref();
}

bool PageRun::may_adopt() {
  const size_t adopted = g_adopted_pages.load(std::memory_order_relaxed) * kPageSize;
  return g_adopting_bytes.load(std::memory_order_relaxed) <=
         adopted + adopted / 100 * kAdoptionOverheadPercent + kAdoptionSlack;
}

size_t PageRun::adopted_pages() { return g_adopted_pages.load(std::memory_order_relaxed); }

size_t PageRun::adopting_bytes() { return g_adopting_bytes.load(std::memory_order_relaxed); }

PageRun::~PageRun() { std::free(data_); }

PageRun* PageRun::acquire(size_t bytes) {
  const size_t capacity = (std::max<size_t>(bytes, 1) + kGranule - 1) / kGranule * kGranule;
  PageRun* run = PageRunPool::get().take(capacity);
  run->refs_.store(1, std::memory_order_relaxed);
  return run;
}

void PageRun::unref() {
  // acq_rel: whoever drops the last reference sees every write made through the others.
  const uint32_t before = refs_.fetch_sub(1, std::memory_order_acq_rel);
  assert(before > 0);
  if (before == 1) PageRunPool::get().give(this);
}

size_t PageRun::pooled_bytes() {
  PageRunPool& pool = PageRunPool::get();
  std::lock_guard lock(pool.mu);
  return pool.pooled_bytes;
}

uint64_t PageRun::runs_allocated() {
  PageRunPool& pool = PageRunPool::get();
  std::lock_guard lock(pool.mu);
  return pool.allocated;
}

LentPageRun::LentPageRun(PageRun* run) : previous_(t_lent) { t_lent = run; }

LentPageRun::~LentPageRun() { t_lent = previous_; }

PageRun* LentPageRun::current() { return t_lent; }

}  // namespace nasd::util
