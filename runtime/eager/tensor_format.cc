#include "runtime/eager/tensor_format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/check.h"

namespace mt::internal {
namespace {

// NumPy's default print options.
constexpr int kPrecision = 8;
constexpr int64_t kThreshold = 1000;
constexpr int64_t kEdgeItems = 3;
constexpr int kLineWidth = 75;

// Note [NumPy float layout]
// NumPy's FloatingFormat (numpy/_core/arrayprint.py) looks at the finite printed values.
// If the largest nonzero magnitude is >= 10^min(8, digits10) (1e6 for float32, 1e8 for
// float64), the smallest is < 1e-4, or their ratio is > 1000, all values print in
// scientific form, else positional; the tests compare in the array's own type. Each value
// keeps its shortest round-trip digits, cut to 8 digits after the point with correct
// rounding (ties to even). Positional values are space-padded on both sides so the points
// align. Scientific mantissas all get as many fraction digits as the longest one needs,
// taken from the exact binary value (not zero-padded), and exponents are zero-padded to
// the longest (at least two digits). nan and inf are right-aligned to the common width.
// A 0-d array prints like NumPy's scalar str instead: shortest digits, positional for
// 1e-4 <= |x| < 1e16 (1e6 for float32, 1e3 for float16).
// float16 prints as NumPy prints it (digits10 3, shortest digits in float16), its values held
// exactly in a float; template parameter E of the functions below is the element type whose
// shortest digits count. bfloat16 is not a NumPy type: TensorFlow prints it through
// ml_dtypes, each value as printf's %g (bfloat16_str) and no padding.

// A finite value as sign, significant digits and decimal exponent: -1.25e3 is
// {true, "125", 3}; zero is {sign, "0", 0}.
struct Decimal {
  bool negative = false;
  std::string digits;
  int exp = 0;
};

// Parses std::to_chars scientific output such as "-1.250e+03"; drops trailing zeros.
Decimal parse_scientific(std::string_view text) {
  Decimal d;
  d.negative = text.front() == '-';
  if (d.negative) text.remove_prefix(1);
  const size_t e = text.find('e');
  for (char c : text.substr(0, e)) {
    if (c != '.') d.digits += c;
  }
  while (d.digits.size() > 1 && d.digits.back() == '0') d.digits.pop_back();
  const size_t exp_start = e + (text[e + 1] == '+' ? 2 : 1);
  std::from_chars(text.data() + exp_start, text.data() + text.size(), d.exp);
  return d;
}

// Returns `x` correctly rounded (ties to even) to `digits` significant digits, trailing
// zeros dropped.
template <typename T>
Decimal rounded_decimal(T x, int digits) {
  char buf[64];
  const auto end =
      std::to_chars(buf, buf + sizeof(buf), x, std::chars_format::scientific, digits - 1).ptr;
  return parse_scientific({buf, static_cast<size_t>(end - buf)});
}

// Returns the shortest digits of `x` that read back as `x` in T, or, when those are more
// than `max_digits`, `x` rounded to `max_digits` digits (Dragon4 in NumPy's unique mode).
template <typename T, typename E = T>
Decimal to_decimal(T x, int max_digits) {
  char buf[64];
  if constexpr (std::is_same_v<E, float16>) {
    // x is a float16 held in a float: find the fewest digits that read back as that float16.
    for (int digits = 1; digits < std::min(max_digits, 9); ++digits) {
      const auto end =
          std::to_chars(buf, buf + sizeof(buf), x, std::chars_format::scientific, digits - 1).ptr;
      float back = 0;
      std::from_chars(buf, end, back, std::chars_format::scientific);
      if (float16(back).bits == float16(x).bits) {
        return parse_scientific({buf, static_cast<size_t>(end - buf)});
      }
    }
    return rounded_decimal(x, max_digits);
  }
  const auto end = std::to_chars(buf, buf + sizeof(buf), x, std::chars_format::scientific).ptr;
  Decimal d = parse_scientific({buf, static_cast<size_t>(end - buf)});
  return static_cast<int>(d.digits.size()) <= max_digits ? d : rounded_decimal(x, max_digits);
}

// Returns `x` cut to kPrecision digits after the decimal point.
template <typename T, typename E = T>
Decimal positional_decimal(T x) {
  const int exp = to_decimal<T, E>(x, std::numeric_limits<int>::max()).exp;
  // max(1, ...) never binds in positional mode, where every nonzero |x| >= 1e-4.
  return to_decimal<T, E>(x, std::max(1, exp + 1 + kPrecision));
}

// Returns `x` cut to kPrecision digits after the mantissa's decimal point.
template <typename T, typename E = T>
Decimal scientific_decimal(T x) {
  return to_decimal<T, E>(x, kPrecision + 1);
}

// Splits `d` into positional integer and fraction digits: {"-12", "5"} for -12.5.
std::pair<std::string, std::string> positional_parts(const Decimal& d) {
  std::string whole = d.negative ? "-" : "";
  const int n = static_cast<int>(d.digits.size());
  if (d.exp < 0) return {whole + "0", std::string(-d.exp - 1, '0') + d.digits};
  if (d.exp + 1 >= n) return {whole + d.digits + std::string(d.exp + 1 - n, '0'), ""};
  return {whole + d.digits.substr(0, d.exp + 1), d.digits.substr(d.exp + 1)};
}

// Returns "e+05" for exp 5 and width 2.
std::string exponent_text(int exp, int width) {
  std::string digits = std::to_string(exp < 0 ? -exp : exp);
  if (static_cast<int>(digits.size()) < width) digits.insert(0, width - digits.size(), '0');
  return std::string(exp < 0 ? "e-" : "e+") + digits;
}

std::string pad_left(const std::string& s, int width) {
  const int fill = width - static_cast<int>(s.size());
  return fill > 0 ? std::string(fill, ' ') + s : s;
}

std::string nonfinite_text(double x) {
  if (std::isnan(x)) return "nan";
  return x < 0 ? "-inf" : "inf";
}

// Returns NumPy's str of a float scalar: "22.0", "0.1", "1e-05", "1.5e+20", "nan".
template <typename T, typename E = T>
std::string float_scalar_str(T x) {
  if (!std::isfinite(x)) return nonfinite_text(x);
  const long double max_positional = std::is_same_v<E, float16> ? 1e3L
                                     : std::is_same_v<E, float> ? 1e6L
                                                                : 1e16L;
  const long double mag = std::fabs(static_cast<long double>(x));
  const Decimal d = to_decimal<T, E>(x, std::numeric_limits<int>::max());
  if (mag == 0 || (mag < max_positional && mag >= 1e-4L)) {
    auto [whole, frac] = positional_parts(d);
    return whole + "." + (frac.empty() ? "0" : frac);
  }
  // Appends rather than `"-" + std::string`, which GCC 12 flags with a false -Wrestrict.
  std::string text = d.negative ? "-" : "";
  text.append(d.digits, 0, 1);
  if (d.digits.size() > 1) text.append(".").append(d.digits, 1);
  return text + exponent_text(d.exp, 2);
}

// Decides scientific form for the finite values, as in Note [NumPy float layout].
template <typename T, typename E = T>
bool use_scientific(const std::vector<T>& finite) {
  T max_val = 0;
  T min_val = std::numeric_limits<T>::infinity();
  for (T x : finite) {
    if (x == 0) continue;
    max_val = std::max(max_val, std::fabs(x));
    min_val = std::min(min_val, std::fabs(x));
  }
  if (max_val == 0) return false;
  const int digits10 = std::is_same_v<E, float16> ? 3 : std::numeric_limits<T>::digits10;
  const T cutoff = static_cast<T>(std::pow(10.0, std::min(8, digits10)));
  return max_val >= cutoff || min_val < static_cast<T>(1e-4) ||
         max_val / min_val > static_cast<T>(1000);
}

// Formats the floats of one array with a common layout (NumPy's FloatingFormat).
template <typename T, typename E = T>
class FloatFormat {
 public:
  explicit FloatFormat(const std::vector<T>& values) {
    std::vector<T> finite;
    for (T x : values) {
      if (std::isfinite(x)) finite.push_back(x);
    }
    scientific_ = use_scientific<T, E>(finite);
    for (T x : finite) {
      if (scientific_) {
        measure_scientific(x);
      } else {
        measure_positional(x);
      }
    }
    if (scientific_) pad_right_ = exp_width_ + 2 + precision_;
    if (finite.size() == values.size()) return;
    const bool neg_inf =
        std::any_of(values.begin(), values.end(), [](T x) { return std::isinf(x) && x < 0; });
    pad_left_ = std::max(pad_left_, 3 + static_cast<int>(neg_inf) - (pad_right_ + 1));
  }

  std::string operator()(T x) const {
    if (!std::isfinite(x)) return pad_left(nonfinite_text(x), pad_left_ + pad_right_ + 1);
    if (scientific_) {
      // NumPy asks Dragon4 for exactly precision_ digits here, so a short value shows more
      // of its exact binary value (float32 1e-5 prints 9.9999997e-06 beside 1.2345678).
      const Decimal d = rounded_decimal(x, precision_ + 1);
      std::string frac = d.digits.substr(1);
      frac.append(precision_ - frac.size(), '0');
      std::string whole = d.negative ? "-" : "";  // appends: see float_scalar_str
      whole.append(d.digits, 0, 1);
      return pad_left(whole, pad_left_) + "." + frac + exponent_text(d.exp, exp_width_);
    }
    auto [whole, frac] = positional_parts(positional_decimal<T, E>(x));
    frac.append(pad_right_ - frac.size(), ' ');
    return pad_left(whole, pad_left_) + "." + frac;
  }

 private:
  void measure_positional(T x) {
    auto [whole, frac] = positional_parts(positional_decimal<T, E>(x));
    pad_left_ = std::max(pad_left_, static_cast<int>(whole.size()));
    pad_right_ = std::max(pad_right_, static_cast<int>(frac.size()));
  }

  void measure_scientific(T x) {
    const Decimal d = scientific_decimal<T, E>(x);
    const int exp_digits = static_cast<int>(std::to_string(std::abs(d.exp)).size());
    pad_left_ = std::max(pad_left_, d.negative ? 2 : 1);
    precision_ = std::max(precision_, static_cast<int>(d.digits.size()) - 1);
    exp_width_ = std::max({exp_width_, 2, exp_digits});
  }

  bool scientific_ = false;
  int pad_left_ = 0;   // characters before the decimal point
  int pad_right_ = 0;  // characters after it
  int precision_ = 0;  // mantissa fraction digits (scientific form)
  int exp_width_ = 0;  // exponent digits (scientific form)
};

// Returns the text of one bfloat16 as TensorFlow prints it (ml_dtypes' str, printf's %g):
// six significant digits, no padding: "0.100098", "1.00136e-05", "3", "-0", "nan".
std::string bfloat16_str(bfloat16 x) {
  const float f = static_cast<float>(x);
  if (std::isnan(f)) return "nan";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", f);
  return buf;
}

// Formats each value as one word of NumPy's array text.
template <typename T>
std::vector<std::string> format_words(const std::vector<T>& values) {
  std::vector<std::string> words;
  words.reserve(values.size());
  if constexpr (std::is_same_v<T, bool>) {
    for (bool x : values) words.push_back(x ? " True" : "False");
  } else if constexpr (std::is_same_v<T, bfloat16>) {
    for (bfloat16 x : values) words.push_back(bfloat16_str(x));
  } else if constexpr (std::is_same_v<T, float16>) {
    std::vector<float> wide;
    for (float16 x : values) wide.push_back(static_cast<float>(x));
    const FloatFormat<float, float16> format(wide);
    for (float x : wide) words.push_back(format(x));
  } else if constexpr (std::is_floating_point_v<T>) {
    const FloatFormat<T> format(values);
    for (T x : values) words.push_back(format(x));
  } else {
    const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
    const int width =
        static_cast<int>(std::max(std::to_string(*lo).size(), std::to_string(*hi).size()));
    for (T x : values) words.push_back(pad_left(std::to_string(x), width));
  }
  return words;
}

template <typename T>
std::string scalar_str(T x) {
  if constexpr (std::is_same_v<T, bool>) {
    return x ? "True" : "False";
  } else if constexpr (std::is_same_v<T, bfloat16>) {
    return bfloat16_str(x);
  } else if constexpr (std::is_same_v<T, float16>) {
    return float_scalar_str<float, float16>(static_cast<float>(x));
  } else if constexpr (std::is_floating_point_v<T>) {
    return float_scalar_str(x);
  } else {
    return std::to_string(x);
  }
}

// Returns whether `axis` of `shape` is summarised to its first and last kEdgeItems.
bool is_cut(const Shape& shape, int axis, bool summarize) {
  return summarize && shape.dim(axis) > 2 * kEdgeItems;
}

int64_t shown_count(const Shape& shape, int axis, bool summarize) {
  return is_cut(shape, axis, summarize) ? 2 * kEdgeItems : shape.dim(axis);
}

// Returns the row-major offsets of the printed elements, in printing order.
std::vector<int64_t> shown_offsets(const Shape& shape, bool summarize) {
  std::vector<int64_t> offsets = {0};
  for (int axis = 0; axis < shape.rank(); ++axis) {
    const int64_t n = shape.dim(axis);
    const int64_t count = shown_count(shape, axis, summarize);
    std::vector<int64_t> next;
    next.reserve(offsets.size() * count);
    for (int64_t base : offsets) {
      for (int64_t i = 0; i < count; ++i) {
        const bool tail = is_cut(shape, axis, summarize) && i >= kEdgeItems;
        next.push_back(base * n + (tail ? n - 2 * kEdgeItems + i : i));
      }
    }
    offsets = std::move(next);
  }
  return offsets;
}

// Appends `word` to `line`, first moving `line` into `text` when the word would pass
// `width` (NumPy's _extendLine; a line holding only `prefix` is never wrapped).
void extend_line(std::string& text, std::string& line, const std::string& word, int width,
                 const std::string& prefix) {
  if (line.size() + word.size() > static_cast<size_t>(width) && line.size() > prefix.size()) {
    line.erase(line.find_last_not_of(' ') + 1);
    text += line + "\n";
    line = prefix;
  }
  line += word;
}

// Lays out formatted words with NumPy's brackets, wrapping and blank lines (the
// recurser of numpy's _formatArray, with separator ' ' and legacy printing off).
class Layout {
 public:
  Layout(const Shape& shape, bool summarize, std::vector<std::string> words)
      : shape_(shape), summarize_(summarize), words_(std::move(words)) {}

  std::string text() { return block(0, " ", kLineWidth); }

 private:
  // Returns the bracketed text of the sub-array at `axis`; `indent` starts its lines.
  std::string block(int axis, const std::string& indent, int width) {
    const std::string body =
        axis == shape_.rank() - 1 ? row(axis, indent, width) : rows(axis, indent, width);
    std::string out = "[";  // appends: see float_scalar_str
    out.append(body, indent.size()).append("]");
    return out;
  }

  // Returns the words of the last axis, wrapped to `width` minus the closing bracket.
  std::string row(int axis, const std::string& indent, int width) {
    const int64_t count = shown_count(shape_, axis, summarize_);
    std::string text;
    std::string line = indent;
    for (int64_t i = 0; i < count; ++i) {
      if (is_cut(shape_, axis, summarize_) && i == kEdgeItems) {
        extend_line(text, line, "...", width - 1, indent);
        line += ' ';
      }
      extend_line(text, line, words_[next_++], width - 1, indent);
      if (i + 1 < count) line += ' ';
    }
    return text + line;
  }

  // Returns the sub-blocks of `axis`, separated by one newline per remaining axis.
  std::string rows(int axis, const std::string& indent, int width) {
    const int64_t count = shown_count(shape_, axis, summarize_);
    const std::string separator(shape_.rank() - axis - 1, '\n');
    std::string text;
    for (int64_t i = 0; i < count; ++i) {
      if (is_cut(shape_, axis, summarize_) && i == kEdgeItems) {
        text += indent + "..." + separator;
      }
      text += indent + block(axis + 1, indent + " ", width - 1);
      if (i + 1 < count) text += separator;
    }
    return text;
  }

  const Shape& shape_;
  const bool summarize_;
  const std::vector<std::string> words_;
  size_t next_ = 0;
};

template <typename T>
T load(const void* data, int64_t index) {
  T value;
  if constexpr (std::is_same_v<T, bool>) {
    value = static_cast<const uint8_t*>(data)[index] != 0;
  } else {
    std::memcpy(&value, static_cast<const char*>(data) + index * sizeof(T), sizeof(T));
  }
  return value;
}

}  // namespace

std::string format_values(const void* data, DType dtype, const Shape& shape) {
  MT_CHECK(data != nullptr || shape.num_elements() == 0);
  return visit_dtype(dtype, [&](auto tag) -> std::string {
    using T = typename decltype(tag)::type;
    if (shape.rank() == 0) return scalar_str(load<T>(data, 0));
    if (shape.num_elements() == 0) return "[]";
    const bool summarize = shape.num_elements() > kThreshold;
    std::vector<T> values;
    for (int64_t offset : shown_offsets(shape, summarize)) values.push_back(load<T>(data, offset));
    return Layout(shape, summarize, format_words(values)).text();
  });
}

}  // namespace mt::internal
