#include "cluster/scaleout/catalog_text.h"

#include <sstream>

namespace nasd::scaleout {
namespace {

constexpr std::string_view kMagic = "nasd-scaleout-catalog 1";

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ') ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

bool number(std::string_view w, uint64_t max, uint64_t* out) {
  if (w.empty() || w.size() > 20) return false;
  uint64_t v = 0;
  for (char c : w) {
    if (c < '0' || c > '9') return false;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  if (v > max) return false;
  *out = v;
  return true;
}

bool parse_group(std::string_view line, GroupRecord* r, std::string* why) {
  const std::vector<std::string_view> w = words(line);
  if (w.size() < 11 || w[0] != "group") {
    *why = "expected 'group FILE GROUP VERSION OFFSET LENGTH N M B UNDER PLACES...'";
    return false;
  }
  uint64_t n = 0, m = 0, b = 0, under = 0;
  if (!number(w[1], UINT64_MAX, &r->file) || !number(w[2], UINT64_MAX, &r->group) ||
      !number(w[3], UINT64_MAX, &r->version) || !number(w[4], UINT64_MAX, &r->offset) ||
      !number(w[5], UINT64_MAX, &r->length)) {
    *why = "a file, group, version, offset or length that is not a 64-bit number";
    return false;
  }
  if (!number(w[6], kMaxData, &n) || n == 0 || !number(w[7], kMaxParity, &m) ||
      !number(w[8], kMaxData, &b) || b == 0 || !number(w[9], 1, &under)) {
    *why = "a shape out of range (1 <= N <= 16, M <= 4, 1 <= B <= 16, UNDER 0|1)";
    return false;
  }
  if (r->length == 0 || r->length > n * kStripeUnit) {
    *why = "a length outside 1 .. N stripe units";
    return false;
  }
  if (r->offset > UINT64_MAX - r->length) {
    *why = "offset + length overflows";
    return false;
  }
  if (w.size() != 10 + n + m) {
    *why = "expected " + std::to_string(n + m) + " places";
    return false;
  }
  r->shape.data = static_cast<int>(n);
  r->shape.parity = static_cast<int>(m);
  r->shape.per_node = static_cast<int>(b);
  r->shape.under_protected = under == 1;
  r->places.clear();
  for (size_t i = 10; i < w.size(); ++i) {
    const size_t colon = w[i].find(':');
    uint64_t node = 0, drive = 0;
    if (colon == std::string_view::npos || !number(w[i].substr(0, colon), UINT32_MAX, &node) ||
        !number(w[i].substr(colon + 1), 63, &drive)) {
      *why = "a place that is not NODE:DRIVE (drive < 64)";
      return false;
    }
    r->places.push_back(UnitPlace{static_cast<uint32_t>(node), static_cast<uint32_t>(drive)});
  }
  return true;
}

}  // namespace

std::string encode_catalog(const std::vector<GroupRecord>& records) {
  std::ostringstream o;
  o << kMagic << "\n";
  for (const GroupRecord& r : records) {
    o << "group " << r.file << " " << r.group << " " << r.version << " " << r.offset << " "
      << r.length << " " << r.shape.data << " " << r.shape.parity << " " << r.shape.per_node
      << " " << (r.shape.under_protected ? 1 : 0);
    for (const UnitPlace& p : r.places) o << " " << p.node << ":" << p.drive;
    o << "\n";
  }
  return o.str();
}

bool decode_catalog(std::string_view text, std::vector<GroupRecord>* out, std::string* error) {
  out->clear();
  size_t at = 0, line_no = 0;
  bool magic = false;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) {
      *error = "line " + std::to_string(line_no + 1) + ": no newline at the end";
      return false;
    }
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    ++line_no;
    const std::string where = "line " + std::to_string(line_no) + ": ";
    if (line.size() > kMaxCatalogLine) {
      *error = where + "longer than " + std::to_string(kMaxCatalogLine) + " bytes";
      return false;
    }
    if (!magic) {
      if (line != kMagic) {
        *error = where + "not a nasd scale-out catalog (expected '" + std::string(kMagic) + "')";
        return false;
      }
      magic = true;
      continue;
    }
    if (out->size() >= kMaxCatalogGroups) {
      *error = where + "more than " + std::to_string(kMaxCatalogGroups) + " groups";
      return false;
    }
    GroupRecord r;
    std::string why;
    if (!parse_group(line, &r, &why)) {
      *error = where + why;
      return false;
    }
    out->push_back(std::move(r));
  }
  if (!magic) {
    *error = "empty: not a nasd scale-out catalog";
    return false;
  }
  return true;
}

}  // namespace nasd::scaleout
