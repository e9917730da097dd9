#include "bench/op_type.h"

#include <cctype>

namespace nasd::bench {

namespace {
constexpr std::array<std::string_view, kOpTypeCount> kNames = {
    "GETATTR", "SETATTR", "LOOKUP",  "ACCESS",      "READLINK", "READ",   "WRITE",
    "CREATE",  "REMOVE",  "READDIR", "READDIRPLUS", "FSSTAT",   "FSINFO", "COMMIT",
};
}  // namespace

std::string_view op_name(OpType op) { return kNames[index_of(op)]; }

std::optional<OpType> op_from_name(std::string_view name) {
  for (OpType op : kAllOpTypes) {
    std::string_view candidate = op_name(op);
    if (candidate.size() != name.size()) continue;
    bool same = true;
    for (size_t i = 0; i < name.size() && same; ++i) {
      same = std::toupper(static_cast<unsigned char>(name[i])) == candidate[i];
    }
    if (same) return op;
  }
  return std::nullopt;
}

}  // namespace nasd::bench
