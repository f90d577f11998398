#pragma once
// JsonValue: a parsed JSON document, for the few small JSON texts the checkpoints read (a
// safetensors header, a checkpoint manifest). Strict RFC 8259 (no comments, no trailing
// commas), nesting at most 64 deep, object members kept in file order.
//
//   absl::StatusOr<JsonValue> v = parse_json(R"({"shape": [2, 3]})");
//   const JsonValue* shape = v->find("shape");          // nullptr when absent
//   std::optional<uint64_t> rows = shape->items[0].as_uint64();
//
// parse_json fails with InvalidArgument naming the byte offset of the fault.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace mt::internal {

struct JsonValue {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  std::string text;                // a string's value, or a number as written
  std::vector<JsonValue> items;    // an array's items, or an object's member values
  std::vector<std::string> names;  // an object's member names, one per item

  // Returns the first member named `key` of an object, or nullptr.
  const JsonValue* find(absl::string_view key) const;
  // Returns a number written as a non-negative integer that fits 64 bits, else nullopt.
  std::optional<uint64_t> as_uint64() const;
};

// Parses `text`, which must hold exactly one JSON value (whitespace around it allowed).
absl::StatusOr<JsonValue> parse_json(absl::string_view text);

// Appends `value` to `out` as a JSON string literal, quotes included.
void append_json_quoted(std::string& out, absl::string_view value);

}  // namespace mt::internal
