#include "cluster/scaleout/protection_policy.h"

#include <charconv>

namespace nasd::scaleout {
namespace {

// Reads a decimal integer at the front of *s (at most 3 digits: every field is small).
bool take_int(std::string_view* s, int* out) {
  size_t n = 0;
  while (n < s->size() && n < 3 && (*s)[n] >= '0' && (*s)[n] <= '9') ++n;
  if (n == 0 || (n < s->size() && (*s)[n] >= '0' && (*s)[n] <= '9')) return false;
  int v = 0;
  std::from_chars(s->data(), s->data() + n, v);
  *out = v;
  s->remove_prefix(n);
  return true;
}

bool take_char(std::string_view* s, char c) {
  if (s->empty() || (*s)[0] != c) return false;
  s->remove_prefix(1);
  return true;
}

}  // namespace

std::string ProtectionPolicy::to_string() const {
  if (data_width > 0) {
    return std::to_string(data_width) + "+" + std::to_string(parity) + "/" +
           std::to_string(per_node);
  }
  if (per_node == 1) return "+" + std::to_string(parity) + "n";
  return "+" + std::to_string(parity) + "d:" + std::to_string(parity / per_node) + "n";
}

std::string validate(const ProtectionPolicy& p) {
  if (p.parity < 1 || p.parity > kMaxParity) {
    return "parity must be 1.." + std::to_string(kMaxParity);
  }
  if (p.per_node < 1 || p.per_node > p.parity) return "units per node must be 1..parity";
  if (p.parity % p.per_node != 0) return "units per node must divide the parity count";
  if (p.data_width < 0 || p.data_width > kMaxData) {
    return "data width must be 1.." + std::to_string(kMaxData);
  }
  return "";
}

bool parse_protection_policy(std::string_view text, ProtectionPolicy* out, std::string* error) {
  ProtectionPolicy p;
  std::string_view s = text;
  auto fail = [&](const std::string& why) {
    *error = "protection \"" + std::string(text) + "\": " + why;
    return false;
  };
  if (take_char(&s, '+')) {
    int m = 0;
    if (!take_int(&s, &m)) return fail("expected a parity count after '+'");
    p.parity = m;
    if (take_char(&s, 'n')) {
      p.per_node = 1;
    } else if (take_char(&s, 'd')) {
      int k = 0;
      if (!take_char(&s, ':') || !take_int(&s, &k) || !take_char(&s, 'n')) {
        return fail("expected +Md:Kn");
      }
      if (k < 1 || k > m || m % k != 0) return fail("node losses K must divide M");
      p.per_node = m / k;
    } else {
      return fail("expected 'n' or 'd:Kn' after the parity count");
    }
  } else {
    int n = 0, m = 0;
    if (!take_int(&s, &n) || !take_char(&s, '+') || !take_int(&s, &m)) {
      return fail("expected +Md:Kn, +Mn or N+M/b");
    }
    if (n < 1) return fail("data width must be at least 1");
    p.data_width = n;
    p.parity = m;
    p.per_node = 1;
    if (take_char(&s, '/')) {
      int b = 0;
      if (!take_int(&s, &b)) return fail("expected units per node after '/'");
      p.per_node = b;
    }
  }
  if (!s.empty()) return fail("unexpected text after the policy");
  std::string why = validate(p);
  if (!why.empty()) return fail(why);
  *out = p;
  return true;
}

}  // namespace nasd::scaleout
