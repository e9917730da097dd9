// libFuzzer target for the scale-out catalog dump that nasd-fsck --scaleout reads
// (cluster/scaleout/catalog_text.h): any input either is refused with a reason or decodes to
// records within the bounds, which encode back to text that decodes to the same records.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "cluster/scaleout/catalog_text.h"

using namespace nasd::scaleout;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<GroupRecord> records;
  std::string error;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (!decode_catalog(text, &records, &error)) {
    if (error.empty()) std::abort();
    return 0;
  }
  for (const GroupRecord& r : records) {
    if (r.shape.data < 1 || r.shape.data > kMaxData || r.shape.parity > kMaxParity ||
        static_cast<int>(r.places.size()) != r.shape.width() || r.length == 0 ||
        r.length > static_cast<uint64_t>(r.shape.data) * kStripeUnit) {
      std::abort();
    }
  }
  std::vector<GroupRecord> again;
  if (!decode_catalog(encode_catalog(records), &again, &error)) std::abort();
  if (again.size() != records.size()) std::abort();
  for (size_t i = 0; i < records.size(); ++i) {
    if (again[i].places != records[i].places || again[i].version != records[i].version ||
        again[i].length != records[i].length) {
      std::abort();
    }
  }
  return 0;
}
