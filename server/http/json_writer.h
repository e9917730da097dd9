// A small streaming JSON writer for the management page's status endpoint. It only writes:
// the page never parses JSON on the server. Keys and strings are escaped (control characters,
// quotes, backslashes; bytes >= 0x80 pass through, so UTF-8 stays UTF-8), and non-finite numbers
// become null, so whatever a room reports cannot break the document.
//
// Invariant: calls nest like the document (begin_object/end_object, key before each value in an
// object); the writer inserts the commas.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nasd::http {

class JsonWriter {
 public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view k);
  JsonWriter& value(std::string_view s);
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(const std::string& s) { return value(std::string_view(s)); }
  JsonWriter& value(bool b);
  JsonWriter& value(double d);
  JsonWriter& value(uint64_t n);
  JsonWriter& value(int64_t n);
  JsonWriter& value(uint32_t n) { return value(uint64_t{n}); }
  JsonWriter& value(int n) { return value(int64_t{n}); }
  JsonWriter& null();
  // key(k).value(v) in one call.
  template <typename T>
  JsonWriter& field(std::string_view k, const T& v) {
    key(k);
    return value(v);
  }

  const std::string& str() const { return out_; }

 private:
  void before_value();
  std::string out_;
  std::vector<bool> first_;  // per open container: nothing written in it yet
  bool after_key_ = false;
};

// The string as a JSON string literal, quotes included.
std::string json_quote(std::string_view s);

}  // namespace nasd::http
