#pragma once
// Helpers shared by the fuzz targets: FUZZ_CHECK, reading a tensor's bytes, and building a
// tensor of any dtype from host values.

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/minitensor.h"

// Aborts, so that libFuzzer records the input, when `cond` is false.
#define FUZZ_CHECK(cond)                                                                 \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                      \
    }                                                                                    \
  } while (0)

// As FUZZ_CHECK, and prints `what` (a std::string) too.
#define FUZZ_CHECK_MSG(cond, what)                                                            \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK failed: %s\n  %s\n", __FILE__, __LINE__, #cond, \
                   std::string(what).c_str());                                                \
      std::abort();                                                                           \
    }                                                                                         \
  } while (0)

namespace mt::fuzz {

inline bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

// Returns the tensor's elements as raw bytes (one byte per bool), through to_vector<T>.
inline std::string contents(const Tensor& t) {
  return visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<T> values = t.to_vector<T>();
    if constexpr (std::is_same_v<T, bool>) {
      return std::string(values.begin(), values.end());
    } else {
      return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
    }
  });
}

// Returns `bytes` read as `count` elements of `dtype` (bools as 0 or 1).
inline Tensor make_tensor(DType dtype, const std::string& bytes,
                          const std::vector<int64_t>& shape) {
  return visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<T> values(bytes.size() / sizeof(T));
    for (size_t i = 0; i < values.size(); ++i) {
      if constexpr (std::is_same_v<T, bool>) {
        values[i] = (bytes[i] & 1) != 0;
      } else {
        std::memcpy(&values[i], bytes.data() + i * sizeof(T), sizeof(T));
      }
    }
    return constant(values, shape);
  });
}

}  // namespace mt::fuzz
