// libFuzzer target: one control line of nasd-sickfs (tests/e2e/sick_faults.h). A line that sets
// faults must print back as a line that sets the very same faults, and the faults it sets must
// decide any write without fault (no division, no overflow, no out-of-range draw).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "tests/e2e/sick_faults.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nasd::e2e;
  const std::string line(reinterpret_cast<const char*>(data), size);
  FaultSettings settings;
  std::string error;
  auto command = parse_sick_command(line, &settings, &error);
  if (!command) {
    if (error.empty()) std::abort();  // a refusal always says why
    return 0;
  }
  if (*command != SickCommand::Faults) return 0;
  FaultSettings again;
  if (!parse_sick_command(settings.text(), &again, &error) || again.text() != settings.text()) std::abort();
  SickFaults faults;
  faults.set(settings);
  for (uint64_t bytes : {uint64_t{0}, uint64_t{4096}, ~uint64_t{0}}) {
    const SickDecision d = faults.decide(line.substr(0, 64), bytes);
    if (d.slow_ms < 0 || d.slow_ms > 60000) std::abort();
    faults.decide("v0.lfs", bytes, /*sync=*/true);
  }
  return 0;
}
