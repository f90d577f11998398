#pragma once
// A tiny JSON parser for tests: enough to check the trace and snapshots the runtime writes
// without a JSON library. parse_json returns nullopt on malformed input.

#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mt::testing {

struct Json {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject } type = Type::kNull;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Json> array;
  std::map<std::string, Json> object;

  // Returns the member `key`, or a null value when there is none.
  const Json& operator[](const std::string& key) const {
    static const Json kNull;
    auto it = object.find(key);
    return it == object.end() ? kNull : it->second;
  }
  bool has(const std::string& key) const { return object.count(key) != 0; }
};

class JsonParser {
 public:
  explicit JsonParser(std::string_view text) : s_(text) {}

  std::optional<Json> parse() {
    Json v;
    if (!value(&v)) return std::nullopt;
    skip();
    if (i_ != s_.size()) return std::nullopt;
    return v;
  }

 private:
  void skip() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r'))
      ++i_;
  }
  bool literal(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }
  bool string(std::string* out) {
    if (s_[i_++] != '"') return false;
    while (i_ < s_.size() && s_[i_] != '"') {
      char c = s_[i_++];
      if (c == '\\') {
        if (i_ >= s_.size()) return false;
        char e = s_[i_++];
        if (e == 'n')
          c = '\n';
        else if (e == 'u') {
          c = static_cast<char>(std::strtol(std::string(s_.substr(i_, 4)).c_str(), nullptr, 16));
          i_ += 4;
        } else
          c = e;  // \" \\ \/
      }
      out->push_back(c);
    }
    return i_++ < s_.size();
  }
  bool value(Json* v) {
    skip();
    if (i_ >= s_.size()) return false;
    char c = s_[i_];
    if (c == '{') return object(v);
    if (c == '[') return array(v);
    if (c == '"') {
      v->type = Json::Type::kString;
      return string(&v->string);
    }
    if (literal("true")) {
      v->type = Json::Type::kBool;
      v->boolean = true;
      return true;
    }
    if (literal("false")) {
      v->type = Json::Type::kBool;
      return true;
    }
    if (literal("null")) return true;
    const char* begin = s_.data() + i_;
    char* end = nullptr;
    v->number = std::strtod(begin, &end);
    if (end == begin) return false;
    i_ += end - begin;
    v->type = Json::Type::kNumber;
    return true;
  }
  bool array(Json* v) {
    v->type = Json::Type::kArray;
    ++i_;
    skip();
    if (i_ < s_.size() && s_[i_] == ']') return ++i_, true;
    while (true) {
      if (!value(&v->array.emplace_back())) return false;
      skip();
      if (i_ >= s_.size()) return false;
      if (s_[i_] == ']') return ++i_, true;
      if (s_[i_++] != ',') return false;
    }
  }
  bool object(Json* v) {
    v->type = Json::Type::kObject;
    ++i_;
    skip();
    if (i_ < s_.size() && s_[i_] == '}') return ++i_, true;
    while (true) {
      skip();
      std::string key;
      if (i_ >= s_.size() || !string(&key)) return false;
      skip();
      if (i_ >= s_.size() || s_[i_++] != ':') return false;
      if (!value(&v->object[key])) return false;
      skip();
      if (i_ >= s_.size()) return false;
      if (s_[i_] == '}') return ++i_, true;
      if (s_[i_++] != ',') return false;
    }
  }

  std::string_view s_;
  size_t i_ = 0;
};

inline std::optional<Json> parse_json(std::string_view text) { return JsonParser(text).parse(); }

}  // namespace mt::testing
