// A MemTarget whose durable_seq the test sets by hand, for exercising the journal alone.
#pragma once

#include <atomic>

#include "tests/nvram/mem_target.h"

namespace nasd::nvram::testing {

class SeqTarget : public MemTarget {
 public:
  using MemTarget::MemTarget;
  std::atomic<uint64_t> durable{0};
  uint64_t durable_seq() const override { return durable.load(); }
  fs::Status flush(uint64_t* d) override {
    *d = durable.load();
    return fs::Status::Ok;
  }
};

}  // namespace nasd::nvram::testing
