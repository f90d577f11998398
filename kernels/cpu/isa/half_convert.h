#pragma once
// widen and narrow: runs of bfloat16 or float16 to float32 and back, vectorised for the ISA
// level this copy is compiled for (Note [Kernels per ISA] in cpu_isa.h), bit for bit what
// core/half.h gives element by element (Note [Vector half conversions]).
//
//   alignas(64) float block[kHalfBlock];
//   widen(in, block, n);   // exact
//   narrow(block, out, n);  // nearest even, NaN stays NaN
//
// Note [Vector half conversions]:
// - bfloat16 -> float32 is a 16-bit shift at every level.
// - float32 -> bfloat16 adds 0x7fff plus the lowest kept bit and shifts (nearest even); a NaN
//   keeps its top bits with the quiet bit set. Integer vectors do it at every level. AVX-512
//   BF16's vcvtneps2bf16 is not used: it flushes float32 subnormals to zero.
// - float16 <-> float32 is F16C's vcvtph2ps / vcvtps2ph (nearest even) on the AVX2 and
//   AVX-512 levels, and core/half.h's scalar code on the baseline, which has no F16C.
//   vcvtph2ps quiets a signalling NaN; widen sets the quiet bit back as it was, so a Cast to
//   float32 keeps every bit.
#include <immintrin.h>

#include <cstdint>

#include "core/half.h"

namespace mt::cpu::MT_ISA_NS {

// Elements per block of the loops that widen into float32 on the stack: a multiple of 64
// (Note [Half loops] in half_loops.cc), 4 KiB of float32.
inline constexpr int64_t kHalfBlock = 1024;

#if defined(__AVX512F__) && defined(__AVX512BW__)

inline __m512i widen_bfloat16_x16(const uint16_t* in) {
  const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in));
  return _mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16);
}

inline __m512i widen_float16_x16(const uint16_t* in) {
  const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in));
  const __m512i magnitude = _mm512_and_si512(_mm512_cvtepu16_epi32(h), _mm512_set1_epi32(0x7fff));
  const __mmask16 signalling = _mm512_cmpgt_epi32_mask(magnitude, _mm512_set1_epi32(0x7c00)) &
                               _mm512_cmplt_epi32_mask(magnitude, _mm512_set1_epi32(0x7e00));
  const __m512i f = _mm512_castps_si512(_mm512_cvtph_ps(h));
  return _mm512_mask_xor_epi32(f, signalling, f, _mm512_set1_epi32(0x00400000));
}

inline void narrow_bfloat16_x16(const float* in, uint16_t* out) {
  const __m512i u = _mm512_loadu_si512(in);
  const __m512i top = _mm512_srli_epi32(u, 16);
  const __m512i bias =
      _mm512_add_epi32(_mm512_set1_epi32(0x7fff), _mm512_and_si512(top, _mm512_set1_epi32(1)));
  const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(u, bias), 16);
  const __mmask16 nan = _mm512_cmpgt_epi32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)),
                                                _mm512_set1_epi32(0x7f800000));
  const __m512i quiet = _mm512_or_si512(top, _mm512_set1_epi32(0x40));
  const __m512i bits = _mm512_mask_mov_epi32(rounded, nan, quiet);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm512_cvtepi32_epi16(bits));
}

inline void narrow_float16_x16(const float* in, uint16_t* out) {
  const __m256i h = _mm512_cvtps_ph(_mm512_loadu_ps(in), _MM_FROUND_TO_NEAREST_INT);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), h);
}

#elif defined(__AVX2__) && defined(__F16C__)

inline __m256i widen_bfloat16_x8(const uint16_t* in) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in));
  return _mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16);
}

inline __m256i widen_float16_x8(const uint16_t* in) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in));
  const __m256i magnitude = _mm256_and_si256(_mm256_cvtepu16_epi32(h), _mm256_set1_epi32(0x7fff));
  const __m256i signalling =
      _mm256_and_si256(_mm256_cmpgt_epi32(magnitude, _mm256_set1_epi32(0x7c00)),
                       _mm256_cmpgt_epi32(_mm256_set1_epi32(0x7e00), magnitude));
  const __m256i f = _mm256_castps_si256(_mm256_cvtph_ps(h));
  return _mm256_xor_si256(f, _mm256_and_si256(signalling, _mm256_set1_epi32(0x00400000)));
}

inline void narrow_bfloat16_x8(const float* in, uint16_t* out) {
  const __m256i u = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in));
  const __m256i top = _mm256_srli_epi32(u, 16);
  const __m256i bias =
      _mm256_add_epi32(_mm256_set1_epi32(0x7fff), _mm256_and_si256(top, _mm256_set1_epi32(1)));
  const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(u, bias), 16);
  const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff)),
                                         _mm256_set1_epi32(0x7f800000));
  const __m256i quiet = _mm256_or_si256(top, _mm256_set1_epi32(0x40));
  const __m256i bits = _mm256_blendv_epi8(rounded, quiet, nan);
  // Each value fits in 16 bits; packus interleaves the 128-bit lanes, the permute joins them.
  const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(bits, bits), 0x08);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm256_castsi256_si128(packed));
}

inline void narrow_float16_x8(const float* in, uint16_t* out) {
  const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in), _MM_FROUND_TO_NEAREST_INT);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), h);
}

#else  // the x86-64 baseline: SSE2

// Returns 4 float32 bits rounded to bfloat16 bits, each in the low 16 bits of its lane.
inline __m128i round_bfloat16_x4(const float* in) {
  const __m128i u = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in));
  const __m128i top = _mm_srli_epi32(u, 16);
  const __m128i bias = _mm_add_epi32(_mm_set1_epi32(0x7fff), _mm_and_si128(top, _mm_set1_epi32(1)));
  const __m128i rounded = _mm_srli_epi32(_mm_add_epi32(u, bias), 16);
  const __m128i nan =
      _mm_cmpgt_epi32(_mm_and_si128(u, _mm_set1_epi32(0x7fffffff)), _mm_set1_epi32(0x7f800000));
  const __m128i quiet = _mm_or_si128(top, _mm_set1_epi32(0x40));
  return _mm_or_si128(_mm_and_si128(nan, quiet), _mm_andnot_si128(nan, rounded));
}

inline void narrow_bfloat16_x8(const float* in, uint16_t* out) {
  // SSE2 packs with signed saturation: sign-extend the 16 bits first so nothing saturates.
  const __m128i lo = _mm_srai_epi32(_mm_slli_epi32(round_bfloat16_x4(in), 16), 16);
  const __m128i hi = _mm_srai_epi32(_mm_slli_epi32(round_bfloat16_x4(in + 4), 16), 16);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm_packs_epi32(lo, hi));
}

#endif

// Widens n bfloat16 values to float32.
inline void widen(const bfloat16* in, float* out, int64_t n) {
  const uint16_t* bits = reinterpret_cast<const uint16_t*>(in);
  int64_t i = 0;
#if defined(__AVX512F__) && defined(__AVX512BW__)
  for (; i + 16 <= n; i += 16) {
    _mm512_storeu_si512(out + i, widen_bfloat16_x16(bits + i));
  }
#elif defined(__AVX2__) && defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), widen_bfloat16_x8(bits + i));
  }
#else
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bits + i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                     _mm_unpacklo_epi16(_mm_setzero_si128(), h));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i + 4),
                     _mm_unpackhi_epi16(_mm_setzero_si128(), h));
  }
#endif
  for (; i < n; ++i) out[i] = static_cast<float>(in[i]);
}

// Widens n float16 values to float32.
inline void widen(const float16* in, float* out, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__) && defined(__AVX512BW__)
  const uint16_t* bits = reinterpret_cast<const uint16_t*>(in);
  for (; i + 16 <= n; i += 16) {
    _mm512_storeu_si512(out + i, widen_float16_x16(bits + i));
  }
#elif defined(__AVX2__) && defined(__F16C__)
  const uint16_t* bits = reinterpret_cast<const uint16_t*>(in);
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), widen_float16_x8(bits + i));
  }
#endif
  for (; i < n; ++i) out[i] = static_cast<float>(in[i]);
}

// Rounds n float32 values to bfloat16.
inline void narrow(const float* in, bfloat16* out, int64_t n) {
  uint16_t* bits = reinterpret_cast<uint16_t*>(out);
  int64_t i = 0;
#if defined(__AVX512F__) && defined(__AVX512BW__)
  for (; i + 16 <= n; i += 16) narrow_bfloat16_x16(in + i, bits + i);
#else
  for (; i + 8 <= n; i += 8) narrow_bfloat16_x8(in + i, bits + i);
#endif
  for (; i < n; ++i) out[i] = bfloat16(in[i]);
}

// Rounds n float32 values to float16.
inline void narrow(const float* in, float16* out, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__) && defined(__AVX512BW__)
  uint16_t* bits = reinterpret_cast<uint16_t*>(out);
  for (; i + 16 <= n; i += 16) narrow_float16_x16(in + i, bits + i);
#elif defined(__AVX2__) && defined(__F16C__)
  uint16_t* bits = reinterpret_cast<uint16_t*>(out);
  for (; i + 8 <= n; i += 8) narrow_float16_x8(in + i, bits + i);
#endif
  for (; i < n; ++i) out[i] = float16(in[i]);
}

}  // namespace mt::cpu::MT_ISA_NS
