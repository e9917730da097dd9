#include "server/http/json_writer.h"

#include <gtest/gtest.h>

#include <cmath>

namespace nasd::http {
namespace {

TEST(JsonWriter, NestsAndSeparates) {
  JsonWriter j;
  j.begin_object().field("a", 1).key("b").begin_array().value("x").value(true).null().end_array();
  j.key("c").begin_object().end_object().field("d", uint64_t{18446744073709551615u}).end_object();
  EXPECT_EQ(j.str(), R"({"a":1,"b":["x",true,null],"c":{},"d":18446744073709551615})");
}

TEST(JsonWriter, EscapesWhatCouldBreakTheDocumentOrThePage) {
  EXPECT_EQ(json_quote("q\"b\\n\nt\t\x01"), R"("q\"b\\n\nt\t\u0001")");
  EXPECT_EQ(json_quote("</script>"), R"("\u003c/script>")");
  EXPECT_EQ(json_quote("héllo"), "\"héllo\"");  // UTF-8 passes through
  JsonWriter j;
  j.begin_array().value(std::nan("")).value(1.5).end_array();
  EXPECT_EQ(j.str(), "[null,1.5]");
}

}  // namespace
}  // namespace nasd::http
