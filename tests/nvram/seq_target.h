// A MemoryFs whose durable_seq the test sets by hand, for exercising the journal alone.
#pragma once

#include <atomic>

#include "tests/nvram/test_util.h"
#include "tests/support/memory_fs.h"

namespace nasd::nvram::testing {

class SeqTarget : public test_support::MemoryFs {
 public:
  explicit SeqTarget(uint32_t id) : MemoryFs(id, mem_target_options()) {}
  std::atomic<uint64_t> durable{0};
  uint64_t durable_seq() const override { return durable.load(); }
  fs::Status flush(uint64_t* d) override {
    *d = durable.load();
    return fs::Status::Ok;
  }
};

}  // namespace nasd::nvram::testing
