// The records of a journal that are reserved but not yet completely copied into the region,
// by their log position. The journal's complete prefix ends at the first of them: no commit
// and no mirror feed may pass a record still being copied.
//
// Positions are reserved in increasing order (the log only grows), so this is a queue in
// reservation order whose entries are marked copied in any order; a copied entry leaves once
// every entry before it has left too. It keeps its storage (util::ReusingFifo): reserving a
// record allocates nothing in the steady state, where a std::set took a tree node per record
// (issue 12: no per-call allocation on the hot path).
//
// Not thread-safe: the journal holds its mutex around every call.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <iterator>
#include <optional>

#include "util/reusing_fifo.h"

namespace nasd::nvram {

class RecordsInCopy {
 public:
  bool empty() const { return queue_.empty(); }

  // Precondition: `pos` is above every position added before.
  void add(uint64_t pos) {
    assert(queue_.empty() || pos > std::prev(queue_.end())->pos);
    queue_.push_back(Entry{pos, false});
  }

  // The lowest position still being copied; nullopt when none is.
  std::optional<uint64_t> first() const {
    if (queue_.empty()) return std::nullopt;
    return queue_.front().pos;
  }

  // Marks the record at `pos` (added, not yet copied) copied. True when it was the first: the
  // complete prefix grew.
  bool copied(uint64_t pos) {
    auto it = std::lower_bound(queue_.begin(), queue_.end(), pos,
                               [](const Entry& e, uint64_t p) { return e.pos < p; });
    assert(it != queue_.end() && it->pos == pos && !it->copied);
    if (it == queue_.end() || it->pos != pos) return false;
    it->copied = true;
    if (queue_.front().pos != pos) return false;
    while (!queue_.empty() && queue_.front().copied) queue_.pop_front();
    return true;
  }

 private:
  struct Entry {
    uint64_t pos = 0;
    bool copied = false;
  };
  util::ReusingFifo<Entry> queue_;
};

}  // namespace nasd::nvram
