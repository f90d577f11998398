#pragma once
// MT_CHECK: aborts with file, line and the failed condition when an internal invariant is
// broken. Only for programmer bugs; errors a caller can handle are absl::Status values.

#include <cstdio>
#include <cstdlib>

namespace mt::internal {
[[noreturn]] inline void check_failed(const char* file, int line, const char* cond) {
  std::fprintf(stderr, "%s:%d: MT_CHECK failed: %s\n", file, line, cond);
  std::abort();
}
}  // namespace mt::internal

#define MT_CHECK(cond)                                                                         \
  do {                                                                                         \
    if (__builtin_expect(!(cond), 0)) ::mt::internal::check_failed(__FILE__, __LINE__, #cond); \
  } while (0)
