#include "cluster/membership/etcd_codec.h"

#include <openssl/evp.h>

#include <charconv>
#include <limits>
#include <nlohmann/json.hpp>

namespace nasd::membership::etcd {
namespace {

using nlohmann::json;

// Nesting depth of a JSON text, counted outside strings, before the parser sees it: nothing
// the gateway sends for these calls nests deeper than kMaxDepth, and a deeply nested document
// is refused without building it.
bool depth_within(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > max_depth) return false;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return true;
}

// Parses `body` into an object; false (and *error) otherwise. Never throws.
bool parse_object(std::string_view body, json* out, std::string* error) {
  if (body.size() > kMaxReplyBytes) {
    *error = "reply of " + std::to_string(body.size()) + " bytes is too long";
    return false;
  }
  if (!depth_within(body, kMaxDepth)) {
    *error = "reply nested too deeply";
    return false;
  }
  json j = json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    *error = "reply is not a JSON object";
    return false;
  }
  *out = std::move(j);
  return true;
}

// An int64 field: a decimal string (the gateway's form for 64-bit fields) or an integer.
// Absent means 0 (proto3 leaves zeros out).
bool get_int(const json& obj, const char* name, int64_t* out, std::string* error) {
  auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) {
    *out = 0;
    return true;
  }
  if (it->is_number_integer()) {
    if (it->is_number_unsigned() &&
        it->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      *error = std::string(name) + " out of range";
      return false;
    }
    *out = it->get<int64_t>();
    return true;
  }
  if (it->is_string()) {
    const std::string& s = it->get_ref<const std::string&>();
    int64_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && end == s.data() + s.size() && !s.empty() && s.size() <= 20) {
      *out = v;
      return true;
    }
  }
  *error = std::string(name) + " is not an integer";
  return false;
}

bool get_bool(const json& obj, const char* name, bool* out, std::string* error) {
  auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) {
    *out = false;
    return true;
  }
  if (!it->is_boolean()) {
    *error = std::string(name) + " is not a boolean";
    return false;
  }
  *out = it->get<bool>();
  return true;
}

bool get_bytes(const json& obj, const char* name, size_t max, std::string* out,
               std::string* error) {
  auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) {
    out->clear();
    return true;
  }
  if (!it->is_string() ||
      !base64_decode(it->get_ref<const std::string&>(), max, out)) {
    *error = std::string(name) + " is not base64 of at most " + std::to_string(max) + " bytes";
    return false;
  }
  return true;
}

// The optional object `name` of `obj`; null when absent, false when it is something else.
bool get_object(const json& obj, const char* name, const json** out, std::string* error) {
  auto it = obj.find(name);
  *out = nullptr;
  if (it == obj.end() || it->is_null()) return true;
  if (!it->is_object()) {
    *error = std::string(name) + " is not an object";
    return false;
  }
  *out = &*it;
  return true;
}

bool header_revision(const json& obj, int64_t* out, std::string* error) {
  const json* header = nullptr;
  if (!get_object(obj, "header", &header, error)) return false;
  if (!header) {
    *error = "reply without a header";
    return false;
  }
  if (!get_int(*header, "revision", out, error)) return false;
  if (*out < 0) {
    *error = "negative revision";
    return false;
  }
  return true;
}

bool decode_kv(const json& obj, KeyValue* out, std::string* error) {
  if (!obj.is_object()) {
    *error = "key-value is not an object";
    return false;
  }
  KeyValue kv;
  if (!get_bytes(obj, "key", kMaxKeyBytes, &kv.key, error) ||
      !get_bytes(obj, "value", kMaxValueBytes, &kv.value, error) ||
      !get_int(obj, "create_revision", &kv.create_revision, error) ||
      !get_int(obj, "mod_revision", &kv.mod_revision, error) ||
      !get_int(obj, "version", &kv.version, error) || !get_int(obj, "lease", &kv.lease, error))
    return false;
  if (kv.create_revision <= 0 || kv.mod_revision < kv.create_revision) {
    *error = "key-value with impossible revisions";
    return false;
  }
  *out = std::move(kv);
  return true;
}

// The `kvs` of a range reply: none, or the one key asked for.
bool decode_kvs(const json& obj, std::optional<KeyValue>* out, std::string* error) {
  out->reset();
  auto it = obj.find("kvs");
  if (it == obj.end() || it->is_null()) return true;
  if (!it->is_array() || it->size() > 1) {
    *error = "kvs is not a list of at most one key";
    return false;
  }
  if (it->empty()) return true;
  KeyValue kv;
  if (!decode_kv(it->front(), &kv, error)) return false;
  *out = std::move(kv);
  return true;
}

template <typename F>
bool contained(std::string* error, F&& f) {
  // Nothing here should throw with the checks above; a reply must never end the process if
  // something still does (an allocation, a library surprise).
  try {
    return f();
  } catch (const std::exception& e) {
    *error = std::string("reply not understood: ") + e.what();
  } catch (...) {
    *error = "reply not understood";
  }
  return false;
}

std::string b64(std::string_view s) { return base64_encode(s); }
std::string num(int64_t v) { return std::to_string(v); }

}  // namespace

std::string base64_encode(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()),
                                static_cast<int>(bytes.size()));
  out.resize(n < 0 ? 0 : static_cast<size_t>(n));
  return out;
}

bool base64_decode(std::string_view text, size_t max_bytes, std::string* out) {
  if (text.size() % 4 != 0 || text.size() / 4 * 3 > max_bytes + 2) return false;
  // EVP_DecodeBlock accepts white space and counts padding as zero bytes: neither may pass.
  size_t pad = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool alnum = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (c == '=') {
      if (i + 2 < text.size()) return false;  // padding only in the last two places
      ++pad;
    } else if (pad > 0 || !(alnum || c == '+' || c == '/')) {
      return false;
    }
  }
  std::string bytes(text.size() / 4 * 3, '\0');
  if (!text.empty()) {
    const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(bytes.data()),
                                  reinterpret_cast<const unsigned char*>(text.data()),
                                  static_cast<int>(text.size()));
    if (n < 0 || static_cast<size_t>(n) != bytes.size()) return false;
  }
  bytes.resize(bytes.size() - pad);
  if (bytes.size() > max_bytes) return false;
  // One text per value: unused low bits before the padding must be zero (etcd never sets them).
  if (base64_encode(bytes) != text) return false;
  *out = std::move(bytes);
  return true;
}

std::string range_request(std::string_view key) {
  return json{{"key", b64(key)}}.dump();
}

std::string create_txn(std::string_view key, std::string_view value, int64_t lease) {
  json j;
  j["compare"] = json::array(
      {{{"target", "CREATE"}, {"result", "EQUAL"}, {"key", b64(key)}, {"create_revision", "0"}}});
  j["success"] = json::array(
      {{{"request_put", {{"key", b64(key)}, {"value", b64(value)}, {"lease", num(lease)}}}}});
  j["failure"] = json::array({{{"request_range", {{"key", b64(key)}}}}});
  return j.dump();
}

std::string replace_txn(std::string_view key, std::string_view value, int64_t lease,
                        int64_t mod_revision) {
  json j;
  j["compare"] = json::array({{{"target", "MOD"},
                               {"result", "EQUAL"},
                               {"key", b64(key)},
                               {"mod_revision", num(mod_revision)}}});
  j["success"] = json::array(
      {{{"request_put", {{"key", b64(key)}, {"value", b64(value)}, {"lease", num(lease)}}}}});
  j["failure"] = json::array({{{"request_range", {{"key", b64(key)}}}}});
  return j.dump();
}

std::string replace_if_held_txn(std::string_view key, std::string_view value, int64_t mod_revision,
                                std::string_view held_key, int64_t held_create_revision) {
  json j;
  json first = mod_revision == 0
                   ? json{{"target", "CREATE"}, {"result", "EQUAL"}, {"key", b64(key)},
                          {"create_revision", "0"}}
                   : json{{"target", "MOD"}, {"result", "EQUAL"}, {"key", b64(key)},
                          {"mod_revision", num(mod_revision)}};
  j["compare"] = json::array({first,
                              {{"target", "CREATE"},
                               {"result", "EQUAL"},
                               {"key", b64(held_key)},
                               {"create_revision", num(held_create_revision)}}});
  j["success"] = json::array({{{"request_put", {{"key", b64(key)}, {"value", b64(value)}}}}});
  j["failure"] = json::array({{{"request_range", {{"key", b64(key)}}}}});
  return j.dump();
}

std::string delete_txn(std::string_view key, int64_t mod_revision) {
  json j;
  j["compare"] = json::array({{{"target", "MOD"},
                               {"result", "EQUAL"},
                               {"key", b64(key)},
                               {"mod_revision", num(mod_revision)}}});
  j["success"] = json::array({{{"request_delete_range", {{"key", b64(key)}}}}});
  return j.dump();
}

std::string lease_grant_request(int64_t ttl_s) { return json{{"TTL", num(ttl_s)}}.dump(); }

std::string lease_id_request(int64_t id) { return json{{"ID", num(id)}}.dump(); }

std::string authenticate_request(std::string_view user, std::string_view password) {
  return json{{"name", std::string(user)}, {"password", std::string(password)}}.dump();
}

bool decode_authenticate(std::string_view body, std::string* token, std::string* error) {
  return contained(error, [&] {
    json j;
    if (!parse_object(body, &j, error)) return false;
    auto t = j.find("token");
    if (t == j.end() || !t->is_string()) return *error = "no token in the authenticate reply", false;
    const std::string& text = t->get_ref<const std::string&>();
    // It goes back as a header value: printable, no CR/LF, bounded.
    if (text.empty() || text.size() > kMaxTokenBytes) return *error = "token of a bad length", false;
    for (unsigned char c : text)
      if (c <= ' ' || c >= 0x7f) return *error = "token with a character a header cannot carry", false;
    *token = text;
    return true;
  });
}

bool decode_range(std::string_view body, RangeReply* out, std::string* error) {
  return contained(error, [&] {
    json j;
    RangeReply r;
    if (!parse_object(body, &j, error) || !header_revision(j, &r.revision, error) ||
        !decode_kvs(j, &r.kv, error))
      return false;
    *out = std::move(r);
    return true;
  });
}

bool decode_txn(std::string_view body, TxnReply* out, std::string* error) {
  return contained(error, [&] {
    json j;
    TxnReply r;
    if (!parse_object(body, &j, error) || !header_revision(j, &r.revision, error) ||
        !get_bool(j, "succeeded", &r.succeeded, error))
      return false;
    auto it = j.find("responses");
    if (it != j.end() && !it->is_null()) {
      if (!it->is_array() || it->size() > 4) {
        *error = "responses is not a short list";
        return false;
      }
      for (const json& op : *it) {
        if (!op.is_object()) {
          *error = "a response is not an object";
          return false;
        }
        const json* range = nullptr;
        if (!get_object(op, "response_range", &range, error)) return false;
        if (range) {
          if (r.kv) {
            *error = "more than one range in a transaction reply";
            return false;
          }
          if (!decode_kvs(*range, &r.kv, error)) return false;
        }
      }
    }
    *out = std::move(r);
    return true;
  });
}

namespace {

bool decode_lease_object(const json& j, bool time_to_live, LeaseReply* out, std::string* error) {
  LeaseReply r;
  int64_t revision = 0;
  if (!header_revision(j, &revision, error) || !get_int(j, "ID", &r.id, error) ||
      !get_int(j, "TTL", &r.ttl, error) ||
      (time_to_live && !get_int(j, "grantedTTL", &r.granted_ttl, error)))
    return false;
  // A lease error travels in the body of a grant reply ("error": "...").
  auto e = j.find("error");
  if (e != j.end() && e->is_string() && !e->get_ref<const std::string&>().empty()) {
    *error = "etcd: " + e->get_ref<const std::string&>().substr(0, kMaxMessageBytes);
    return false;
  }
  *out = r;
  return true;
}

}  // namespace

bool decode_lease_grant(std::string_view body, LeaseReply* out, std::string* error) {
  return contained(error, [&] {
    json j;
    if (!parse_object(body, &j, error) || !decode_lease_object(j, false, out, error)) return false;
    if (out->id == 0 || out->ttl <= 0) {
      *error = "lease grant without an ID or a TTL";
      return false;
    }
    return true;
  });
}

bool decode_keepalive(std::string_view body, LeaseReply* out, std::string* error) {
  return contained(error, [&] {
    json j;
    if (!parse_object(body, &j, error)) return false;
    const json* result = nullptr;
    if (!get_object(j, "result", &result, error)) return false;
    if (!result) {
      ErrorReply e;
      *error = decode_error(body, &e) ? "etcd: " + e.message : "keepalive reply without a result";
      return false;
    }
    return decode_lease_object(*result, false, out, error);
  });
}

bool decode_time_to_live(std::string_view body, LeaseReply* out, std::string* error) {
  return contained(error, [&] {
    json j;
    return parse_object(body, &j, error) && decode_lease_object(j, true, out, error);
  });
}

bool decode_error(std::string_view body, ErrorReply* out) {
  std::string ignored;
  return contained(&ignored, [&] {
    json j;
    if (!parse_object(body, &j, &ignored)) return false;
    // The gateway's error body, or the same inside a stream's {"error": {...}}.
    const json* inner = nullptr;
    if (get_object(j, "error", &inner, &ignored) && inner) j = *inner;
    int64_t code = 0;
    if (!get_int(j, "code", &code, &ignored) || code <= 0 || code > 16) return false;
    ErrorReply r;
    r.code = static_cast<int>(code);
    auto m = j.find("message");
    if (m != j.end() && m->is_string())
      r.message = m->get_ref<const std::string&>().substr(0, kMaxMessageBytes);
    *out = std::move(r);
    return true;
  });
}

}  // namespace nasd::membership::etcd
