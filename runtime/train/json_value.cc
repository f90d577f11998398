// A strict recursive-descent JSON parser (json_value.h).
#include "runtime/train/json_value.h"

#include <cstdio>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace mt::internal {
namespace {

constexpr int kMaxDepth = 64;

class Parser {
 public:
  explicit Parser(absl::string_view text) : text_(text) {}

  absl::StatusOr<JsonValue> parse_document() {
    JsonValue value;
    absl::Status status = parse_value(value, 0);
    if (!status.ok()) return status;
    skip_space();
    if (pos_ != text_.size()) return fail("text after the value");
    return value;
  }

 private:
  absl::Status fail(absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat("[json] ", what, " at byte ", pos_));
  }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\r' || text_[pos_] == '\t'))
      ++pos_;
  }
  bool eat(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool eat_word(absl::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  absl::Status parse_value(JsonValue& out, int depth) {
    if (depth > kMaxDepth) return fail("nesting deeper than 64");
    skip_space();
    if (pos_ >= text_.size()) return fail("unexpected end");
    char c = text_[pos_];
    if (c == '{') return parse_object(out, depth);
    if (c == '[') return parse_array(out, depth);
    if (c == '"') {
      out.kind = JsonValue::Kind::kString;
      return parse_string(out.text);
    }
    if (eat_word("true") || eat_word("false")) {
      out.kind = JsonValue::Kind::kBool;
      out.boolean = c == 't';
      return absl::OkStatus();
    }
    if (eat_word("null")) return absl::OkStatus();
    return parse_number(out);
  }

  absl::Status parse_object(JsonValue& out, int depth) {
    out.kind = JsonValue::Kind::kObject;
    ++pos_;
    if (eat('}')) return absl::OkStatus();
    do {
      skip_space();
      if (pos_ >= text_.size() || text_[pos_] != '"') return fail("expected a member name");
      std::string key;
      if (absl::Status s = parse_string(key); !s.ok()) return s;
      if (!eat(':')) return fail("expected ':'");
      out.names.push_back(std::move(key));
      out.items.emplace_back();
      if (absl::Status s = parse_value(out.items.back(), depth + 1); !s.ok()) return s;
    } while (eat(','));
    return eat('}') ? absl::OkStatus() : fail("expected ',' or '}'");
  }

  absl::Status parse_array(JsonValue& out, int depth) {
    out.kind = JsonValue::Kind::kArray;
    ++pos_;
    if (eat(']')) return absl::OkStatus();
    do {
      out.items.emplace_back();
      if (absl::Status s = parse_value(out.items.back(), depth + 1); !s.ok()) return s;
    } while (eat(','));
    return eat(']') ? absl::OkStatus() : fail("expected ',' or ']'");
  }

  absl::Status parse_number(JsonValue& out) {
    size_t start = pos_;
    if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
    size_t digits = pos_;
    while (pos_ < text_.size() && absl::ascii_isdigit(text_[pos_])) ++pos_;
    if (pos_ == digits) return fail("unexpected character");
    if (text_[digits] == '0' && pos_ - digits > 1) return fail("a number with a leading zero");
    if (pos_ < text_.size() && text_[pos_] == '.') {
      size_t frac = ++pos_;
      while (pos_ < text_.size() && absl::ascii_isdigit(text_[pos_])) ++pos_;
      if (pos_ == frac) return fail("a number without digits after '.'");
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      size_t exp = pos_;
      while (pos_ < text_.size() && absl::ascii_isdigit(text_[pos_])) ++pos_;
      if (pos_ == exp) return fail("a number without exponent digits");
    }
    out.kind = JsonValue::Kind::kNumber;
    out.text = std::string(text_.substr(start, pos_ - start));
    return absl::OkStatus();
  }

  absl::Status parse_hex4(uint32_t& code) {
    if (pos_ + 4 > text_.size()) return fail("a short \\u escape");
    code = 0;
    for (int i = 0; i < 4; ++i) {
      char h = text_[pos_++];
      int digit = absl::ascii_isdigit(h)   ? h - '0'
                  : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                  : (h >= 'A' && h <= 'F') ? h - 'A' + 10
                                           : -1;
      if (digit < 0) return fail("a bad \\u escape");
      code = code * 16 + static_cast<uint32_t>(digit);
    }
    return absl::OkStatus();
  }

  static void append_utf8(std::string& out, uint32_t code) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  absl::Status parse_escape(std::string& out) {
    if (pos_ >= text_.size()) return fail("unterminated string");
    char e = text_[pos_++];
    switch (e) {
      case '"':
      case '\\':
      case '/':
        out += e;
        return absl::OkStatus();
      case 'b':
        out += '\b';
        return absl::OkStatus();
      case 'f':
        out += '\f';
        return absl::OkStatus();
      case 'n':
        out += '\n';
        return absl::OkStatus();
      case 'r':
        out += '\r';
        return absl::OkStatus();
      case 't':
        out += '\t';
        return absl::OkStatus();
      case 'u':
        break;
      default:
        return fail("a bad escape");
    }
    uint32_t code = 0;
    if (absl::Status s = parse_hex4(code); !s.ok()) return s;
    if (code >= 0xD800 && code < 0xDC00) {  // a surrogate pair
      uint32_t low = 0;
      if (!eat_word("\\u")) return fail("a lone surrogate");
      if (absl::Status s = parse_hex4(low); !s.ok()) return s;
      if (low < 0xDC00 || low >= 0xE000) return fail("a lone surrogate");
      code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
    } else if (code >= 0xDC00 && code < 0xE000) {
      return fail("a lone surrogate");
    }
    append_utf8(out, code);
    return absl::OkStatus();
  }

  absl::Status parse_string(std::string& out) {
    ++pos_;  // the opening quote
    while (pos_ < text_.size()) {
      char c = text_[pos_++];
      if (c == '"') return absl::OkStatus();
      if (static_cast<unsigned char>(c) < 0x20) return fail("a control character in a string");
      if (c != '\\') {
        out += c;
      } else if (absl::Status s = parse_escape(out); !s.ok()) {
        return s;
      }
    }
    return fail("unterminated string");
  }

  absl::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

const JsonValue* JsonValue::find(absl::string_view key) const {
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == key) return &items[i];
  }
  return nullptr;
}

std::optional<uint64_t> JsonValue::as_uint64() const {
  uint64_t value;
  if (kind != Kind::kNumber || text.empty() || !absl::ascii_isdigit(text[0]) ||
      text.find_first_of(".eE") != std::string::npos || !absl::SimpleAtoi(text, &value)) {
    return std::nullopt;
  }
  return value;
}

absl::StatusOr<JsonValue> parse_json(absl::string_view text) {
  return Parser(text).parse_document();
}

void append_json_quoted(std::string& out, absl::string_view value) {
  out += '"';
  for (char c : value) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  out += '"';
}

}  // namespace mt::internal
