// CRC32C (crc32c.h): the reflected polynomial 0x82F63B78, by the SSE4.2 crc32 instruction
// in three streams (Note [Three CRC streams]) where the CPU has it, else by slicing-by-8
// tables.
#include "runtime/train/crc32c.h"

#include <array>
#include <cstring>

namespace mt::internal {
namespace {

constexpr uint32_t kPolynomial = 0x82F63B78u;

using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables make_tables() {
  Tables t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1) ? kPolynomial : 0);
    t[0][i] = crc;
  }
  for (uint32_t i = 0; i < 256; ++i) {
    for (int k = 1; k < 8; ++k) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xFF];
  }
  return t;
}

constexpr Tables kTables = make_tables();

uint32_t extend_by_tables(uint32_t crc, const unsigned char* p, size_t size) {
  while (size >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);  // little-endian hosts only, as the rest of the runtime
    word ^= crc;
    crc = kTables[7][word & 0xFF] ^ kTables[6][(word >> 8) & 0xFF] ^
          kTables[5][(word >> 16) & 0xFF] ^ kTables[4][(word >> 24) & 0xFF] ^
          kTables[3][(word >> 32) & 0xFF] ^ kTables[2][(word >> 40) & 0xFF] ^
          kTables[1][(word >> 48) & 0xFF] ^ kTables[0][word >> 56];
    p += 8;
    size -= 8;
  }
  while (size-- > 0) crc = (crc >> 8) ^ kTables[0][(crc ^ *p++) & 0xFF];
  return crc;
}

#if defined(__x86_64__)
// Note [Three CRC streams]: the crc32 instruction takes 3 cycles to give its result but can
// start one every cycle, so one chain of it uses a third of the CPU's speed. A block of
// 3 * kStream bytes is checksummed as three chains at once (the first from the running
// value, the others from 0) and joined: CRC registers are linear, so the register after
// A B C is shift(shift(a) ^ b) ^ c, where shift(x) is the register after kStream zero
// bytes from x, a linear map on 32 bits applied by four 256-entry tables.
constexpr size_t kStream = 4096;

__attribute__((target("sse4.2"))) uint64_t chain(uint64_t c, const unsigned char* p, size_t size) {
  for (; size >= 8; p += 8, size -= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    c = __builtin_ia32_crc32di(c, word);
  }
  return c;
}

using ShiftTables = std::array<std::array<uint32_t, 256>, 4>;

// The tables of shift(x) = the register after kStream zero bytes from x.
ShiftTables make_shift_tables() {
  static const unsigned char zeros[kStream] = {};
  uint32_t basis[32];
  for (int bit = 0; bit < 32; ++bit) {
    basis[bit] = static_cast<uint32_t>(chain(uint32_t{1} << bit, zeros, kStream));
  }
  ShiftTables t{};
  for (int k = 0; k < 4; ++k) {
    for (uint32_t b = 0; b < 256; ++b) {
      for (int bit = 0; bit < 8; ++bit) {
        if (b & (1u << bit)) t[k][b] ^= basis[8 * k + bit];
      }
    }
  }
  return t;
}

uint32_t shift(const ShiftTables& t, uint32_t x) {
  return t[0][x & 0xFF] ^ t[1][(x >> 8) & 0xFF] ^ t[2][(x >> 16) & 0xFF] ^ t[3][x >> 24];
}

__attribute__((target("sse4.2"))) uint32_t extend_by_instruction(uint32_t crc,
                                                                 const unsigned char* p,
                                                                 size_t size) {
  static const ShiftTables tables = make_shift_tables();
  uint64_t c = crc;
  for (; size >= 3 * kStream; p += 3 * kStream, size -= 3 * kStream) {
    uint64_t a = c, b = 0, d = 0;
    for (size_t i = 0; i < kStream; i += 8) {
      uint64_t wa, wb, wd;
      std::memcpy(&wa, p + i, 8);
      std::memcpy(&wb, p + kStream + i, 8);
      std::memcpy(&wd, p + 2 * kStream + i, 8);
      a = __builtin_ia32_crc32di(a, wa);
      b = __builtin_ia32_crc32di(b, wb);
      d = __builtin_ia32_crc32di(d, wd);
    }
    c = shift(tables, shift(tables, static_cast<uint32_t>(a)) ^ static_cast<uint32_t>(b)) ^
        static_cast<uint32_t>(d);
  }
  c = chain(c, p, size);
  p += size & ~size_t{7};
  size &= 7;
  uint32_t c32 = static_cast<uint32_t>(c);
  while (size-- > 0) c32 = __builtin_ia32_crc32qi(c32, *p++);
  return c32;
}

bool has_instruction() {
  static const bool has = __builtin_cpu_supports("sse4.2");
  return has;
}
#endif

}  // namespace

uint32_t crc32c_extend(uint32_t crc, const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  crc = ~crc;
#if defined(__x86_64__)
  if (has_instruction()) return ~extend_by_instruction(crc, p, size);
#endif
  return ~extend_by_tables(crc, p, size);
}

// Note [Joining CRCs]: the register after B from x is zeros(x) ^ (the register after B from
// 0), where zeros(x) is the register after |B| zero bytes from x, a linear map on 32 bits.
// The inversions before and after cancel, so crc(A B) = zeros(crc(A)) ^ crc(B). zeros for
// 2^k bytes is kept as 32 columns (the images of each bit), squared from one zero byte.
namespace {

using Operator = std::array<uint32_t, 32>;  // column i: the image of bit i

uint32_t apply(const Operator& op, uint32_t x) {
  uint32_t out = 0;
  for (int bit = 0; x != 0; ++bit, x >>= 1) {
    if (x & 1) out ^= op[bit];
  }
  return out;
}

std::array<Operator, 64> make_zero_operators() {
  std::array<Operator, 64> ops{};
  for (int bit = 0; bit < 32; ++bit) {
    uint32_t x = uint32_t{1} << bit;
    ops[0][bit] = (x >> 8) ^ kTables[0][x & 0xFF];  // one zero byte
  }
  for (int k = 1; k < 64; ++k) {
    for (int bit = 0; bit < 32; ++bit) ops[k][bit] = apply(ops[k - 1], ops[k - 1][bit]);
  }
  return ops;
}

}  // namespace

uint32_t crc32c_combine(uint32_t crc_a, uint32_t crc_b, uint64_t size_b) {
  static const std::array<Operator, 64> zeros = make_zero_operators();
  for (int k = 0; size_b != 0; ++k, size_b >>= 1) {
    if (size_b & 1) crc_a = apply(zeros[k], crc_a);
  }
  return crc_a ^ crc_b;
}

uint32_t crc32c_extend_portable(uint32_t crc, const void* data, size_t size) {
  return ~extend_by_tables(~crc, static_cast<const unsigned char*>(data), size);
}

}  // namespace mt::internal
