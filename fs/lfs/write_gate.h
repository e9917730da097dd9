// Admission for writes to a backing store that another node may take over (a shared volume).
// The block device asks enter() before each batch of writes and, when it was admitted, calls
// leave() once the batch has completed. Between the two a gate may hold the storage's fence,
// so whoever takes the volume over waits for a write already admitted instead of racing it:
// a check that ended before the write began could not promise that.
#pragma once

#include <functional>
#include <memory>
#include <utility>

namespace nasd::fs::lfs {

class WriteGate {
 public:
  virtual ~WriteGate() = default;
  // False refuses the batch; the write then fails like an I/O error.
  virtual bool enter() = 0;
  virtual void leave() = 0;
};

// A gate that only asks a predicate (nothing to hold while writing).
class PredicateGate : public WriteGate {
 public:
  explicit PredicateGate(std::function<bool()> admit) : admit_(std::move(admit)) {}
  bool enter() override { return admit_(); }
  void leave() override {}

 private:
  std::function<bool()> admit_;
};

}  // namespace nasd::fs::lfs
