// The checkpoints' JSON reader: values, escapes, and every malformed text an error naming
// its byte offset.
#include "runtime/train/json_value.h"

#include "gmock/gmock.h"

namespace mt::internal {
namespace {

using ::testing::HasSubstr;

TEST(JsonValueTest, ParsesValuesInOrder) {
  absl::StatusOr<JsonValue> v =
      parse_json(R"( {"b": [1, -2.5e3, true, false, null], "a": "x\"\\\/\n\u00e9\ud83d\ude00"} )");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->names, (std::vector<std::string>{"b", "a"}));
  const JsonValue* b = v->find("b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->items[0].as_uint64(), 1u);
  EXPECT_EQ(b->items[1].text, "-2.5e3");
  EXPECT_EQ(b->items[1].as_uint64(), std::nullopt);
  EXPECT_TRUE(b->items[2].boolean);
  EXPECT_EQ(b->items[4].kind, JsonValue::Kind::kNull);
  EXPECT_EQ(v->find("a")->text, "x\"\\/\n\xC3\xA9\xF0\x9F\x98\x80");
  EXPECT_EQ(v->find("c"), nullptr);
  EXPECT_EQ(parse_json("18446744073709551615")->as_uint64(), UINT64_MAX);
  EXPECT_EQ(parse_json("18446744073709551616")->as_uint64(), std::nullopt);
}

TEST(JsonValueTest, QuotesWhatItParsesBack) {
  std::string quoted;
  append_json_quoted(quoted, std::string("a\"b\\c\n\x01", 7));
  EXPECT_EQ(quoted, R"("a\"b\\c\u000a\u0001")");
  EXPECT_EQ(parse_json(quoted)->text, std::string("a\"b\\c\n\x01", 7));
}

void expect_invalid(const std::string& text, const std::string& message) {
  absl::StatusOr<JsonValue> v = parse_json(text);
  ASSERT_FALSE(v.ok()) << text;
  EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(v.status().message()), HasSubstr("[json] " + message)) << text;
}

TEST(JsonValueTest, RejectsMalformedText) {
  expect_invalid("", "unexpected end at byte 0");
  expect_invalid("[1, 2", "expected ',' or ']' at byte 5");
  expect_invalid("{\"a\" 1}", "expected ':' at byte 5");
  expect_invalid("{1: 2}", "expected a member name at byte 1");
  expect_invalid("{\"a\": 1,}", "expected a member name at byte 8");
  expect_invalid("{\"a\": 1 \"b\"}", "expected ',' or '}'");
  expect_invalid("1 2", "text after the value at byte 2");
  expect_invalid("01", "a number with a leading zero");
  expect_invalid("1.", "a number without digits after '.'");
  expect_invalid("1e+", "a number without exponent digits");
  expect_invalid("-", "unexpected character");
  expect_invalid("tru", "unexpected character");
  expect_invalid("\"abc", "unterminated string");
  expect_invalid("\"a\\", "unterminated string");
  expect_invalid("\"a\tb\"", "a control character in a string");
  expect_invalid("\"\\x\"", "a bad escape");
  expect_invalid("\"\\u12zz\"", "a bad \\u escape");
  expect_invalid("\"\\u1", "a short \\u escape");
  expect_invalid("\"\\ud800\"", "a lone surrogate");
  expect_invalid("\"\\ud800\\u0041\"", "a lone surrogate");
  expect_invalid("\"\\udc00\"", "a lone surrogate");
  expect_invalid(std::string(66, '[') + std::string(66, ']'), "nesting deeper than 64");
}

}  // namespace
}  // namespace mt::internal
