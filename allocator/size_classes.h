#pragma once
// Size classes of the pool's fast path (mt::internal; Note [Fast path] in thread_cache.h).
// Requests up to 1 MiB are rounded up to one of 80 classes so that a block freed by one
// caller can serve the next request of its class from a thread cache:
//
//   int c = internal::size_class(5000);   // 17
//   size_t n = internal::class_bytes(c);  // 5120
//
// Classes: 256 B to 4 KiB in steps of 256 B (16 classes), then 8 classes per power of two
// up to 1 MiB (64 classes), so a block wastes less than 1/8 of its request.

#include <array>
#include <cstddef>
#include <cstdint>

namespace mt::internal {

inline constexpr int kNumSizeClasses = 80;
inline constexpr size_t kMaxClassBytes = size_t{1} << 20;

// Returns the class of a request of `bytes` (1 <= bytes <= kMaxClassBytes).
inline int size_class(size_t bytes) {
  const size_t r = (bytes + 255) & ~size_t{255};
  if (r <= 4096) return static_cast<int>(r >> 8) - 1;
  const int k = 63 - __builtin_clzll(r - 1);  // 2^k < r <= 2^(k+1)
  const size_t step_bits = k - 3;
  const size_t j = (r - (size_t{1} << k) + (size_t{1} << step_bits) - 1) >> step_bits;
  return 16 + (k - 12) * 8 + static_cast<int>(j) - 1;
}

namespace class_tables {
constexpr std::array<int64_t, kNumSizeClasses> bytes() {
  std::array<int64_t, kNumSizeClasses> t{};
  for (int c = 0; c < 16; ++c) t[c] = int64_t{256} * (c + 1);
  for (int g = 0; g < 8; ++g) {
    for (int j = 1; j <= 8; ++j) t[16 + g * 8 + j - 1] = (int64_t{1} << (12 + g)) * (8 + j) / 8;
  }
  return t;
}
inline constexpr std::array<int64_t, kNumSizeClasses> kBytes = bytes();

// A thread cache holds up to ~1 MiB of one class, at least 2 and at most 64 blocks.
constexpr std::array<int, kNumSizeClasses> capacity() {
  std::array<int, kNumSizeClasses> t{};
  for (int c = 0; c < kNumSizeClasses; ++c) {
    const int64_t n = (int64_t{1} << 20) / kBytes[c];
    t[c] = static_cast<int>(n < 2 ? 2 : n > 64 ? 64 : n);
  }
  return t;
}
inline constexpr std::array<int, kNumSizeClasses> kCapacity = capacity();

constexpr std::array<int, kNumSizeClasses + 1> offsets() {
  std::array<int, kNumSizeClasses + 1> t{};
  for (int c = 0; c < kNumSizeClasses; ++c) t[c + 1] = t[c] + kCapacity[c];
  return t;
}
inline constexpr std::array<int, kNumSizeClasses + 1> kOffset = offsets();
}  // namespace class_tables

// Returns the block size of class `c`, a multiple of 256.
inline int64_t class_bytes(int c) { return class_tables::kBytes[c]; }

// Returns how many blocks of class `c` one thread cache holds at most.
inline int class_capacity(int c) { return class_tables::kCapacity[c]; }

}  // namespace mt::internal
