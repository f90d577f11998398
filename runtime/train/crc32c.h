#pragma once
// CRC32C (Castagnoli), the checksum TensorFlow's TensorBundle and many storage systems keep
// per block: the checkpoint manifest stores one per tensor (docs/checkpoints.md).
//
//   uint32_t crc = mt::internal::crc32c("123456789", 9);   // 0xE3069283
//   crc = mt::internal::crc32c_extend(crc, more, n);         // of the concatenation
//   crc = mt::internal::crc32c_combine(crc_a, crc_b, size_b); // of A then B, from theirs
//
// Uses the SSE4.2 instruction when the CPU has it, else tables (eight bytes per step).
// Thread-safe; both take any length, including 0.

#include <cstddef>
#include <cstdint>

namespace mt::internal {

// Returns the CRC32C of `crc`'s data followed by the `size` bytes at `data`.
uint32_t crc32c_extend(uint32_t crc, const void* data, size_t size);

// As crc32c_extend, always by the tables (the path of CPUs without SSE4.2), for tests.
uint32_t crc32c_extend_portable(uint32_t crc, const void* data, size_t size);

// Returns the CRC32C of A followed by B from `crc_a` and `crc_b`, theirs, and B's length, so
// that pieces checksummed apart (by several threads) give the checksum of the whole.
uint32_t crc32c_combine(uint32_t crc_a, uint32_t crc_b, uint64_t size_b);

// Returns the CRC32C of the `size` bytes at `data`.
inline uint32_t crc32c(const void* data, size_t size) { return crc32c_extend(0, data, size); }

}  // namespace mt::internal
