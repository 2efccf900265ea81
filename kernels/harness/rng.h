/* rng.h: counter-based random numbers that come out bit-identical on the CPU (C11) and the
 * GPU (CUDA), so the CPU reference and the GPU systems can draw the same inputs.
 *
 * A value is a pure function of (seed, stream, index): no state, any order, any thread.
 *   rng_bits(seed, stream, index)  64 random bits (splitmix64 finaliser over the counter)
 *   rng_normal(seed, stream, index) N(0,1), Marsaglia's polar method: attempts are drawn
 *                                  from sub-counters until one lands inside the unit disc.
 * Bit-identical because only IEEE-exact operations are used (+ - * / sqrt, each rounded
 * once to nearest) and the log is our own polynomial: no libm, and on the device explicit
 * __f*_rn intrinsics so nvcc cannot fuse a multiply-add (host C11 does not contract). */
#ifndef REPRO_RNG_H
#define REPRO_RNG_H

#include <stdint.h>

#if defined(__CUDACC__)
#define RNG_FN static inline __host__ __device__
#else
#define RNG_FN static inline
#include <math.h>
#endif

/* Streams: one per tensor, so adding a tensor never shifts another's values. Those below
 * RNG_STREAM_USER are the attention inputs' (workload.h: q, k, v, exp_rand, the block lists),
 * which llama_e2e draws too; a program's own tensors take RNG_STREAM_USER and up. */
enum { RNG_STREAM_USER = 16 };

#if defined(__CUDA_ARCH__)
#define RNG_ADD(a, b) __fadd_rn((a), (b))
#define RNG_SUB(a, b) __fsub_rn((a), (b))
#define RNG_MUL(a, b) __fmul_rn((a), (b))
#define RNG_DIV(a, b) __fdiv_rn((a), (b))
#define RNG_SQRT(a)   __fsqrt_rn(a)
#else
#define RNG_ADD(a, b) ((a) + (b))
#define RNG_SUB(a, b) ((a) - (b))
#define RNG_MUL(a, b) ((a) * (b))
#define RNG_DIV(a, b) ((a) / (b))
#define RNG_SQRT(a)   sqrtf(a)
#endif

RNG_FN uint64_t rng_mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

RNG_FN uint64_t rng_bits(uint64_t seed, uint32_t stream, uint64_t index) {
  uint64_t key = rng_mix64(seed * 0x9e3779b97f4a7c15ULL + stream);
  return rng_mix64(key ^ rng_mix64(index + 0x632be59bd9b4e019ULL));
}

/* 23 random bits k -> uniform in (-1, 1), exact in float: (2k + 1) / 2^23 - 1. */
RNG_FN float rng_signed_unit(uint32_t bits23) {
  return RNG_SUB(RNG_MUL((float)(2u * bits23 + 1u), 1.1920928955078125e-07f), 1.0f);
}

/* Natural log of x in (0, 1], relative error ~1e-7: x = m * 2^e with m in [0.75, 1.5),
 * ln m = 2 atanh(s), s = (m - 1)/(m + 1), |s| < 0.2, series up to s^11. */
RNG_FN float rng_log(float x) {
  union {
    float f;
    uint32_t u;
  } v;
  v.f = x;
  int e = (int)((v.u >> 23) & 0xff) - 127;
  v.u = (v.u & 0x007fffffu) | 0x3f800000u; /* m in [1, 2) */
  float m = v.f;
  if (m >= 1.5f) {
    m = RNG_MUL(m, 0.5f);
    e += 1;
  }
  float s = RNG_DIV(RNG_SUB(m, 1.0f), RNG_ADD(m, 1.0f));
  float s2 = RNG_MUL(s, s);
  float poly = 1.0f / 11.0f;
  poly = RNG_ADD(RNG_MUL(poly, s2), 1.0f / 9.0f);
  poly = RNG_ADD(RNG_MUL(poly, s2), 1.0f / 7.0f);
  poly = RNG_ADD(RNG_MUL(poly, s2), 1.0f / 5.0f);
  poly = RNG_ADD(RNG_MUL(poly, s2), 1.0f / 3.0f);
  poly = RNG_ADD(RNG_MUL(poly, s2), 1.0f);
  float ln_m = RNG_MUL(RNG_MUL(2.0f, s), poly);
  return RNG_ADD(RNG_MUL((float)e, 0.693147180559945309f), ln_m);
}

/* Standard normal. Each attempt uses one 64-bit draw (two 23-bit uniforms); the attempt
 * number is folded into the counter's top bits, so indices up to 2^56 stay distinct. */
RNG_FN float rng_normal(uint64_t seed, uint32_t stream, uint64_t index) {
  for (uint64_t attempt = 0;; attempt++) {
    uint64_t r = rng_bits(seed, stream, index | (attempt << 56));
    float u = rng_signed_unit((uint32_t)(r >> 41));
    float w = rng_signed_unit((uint32_t)(r >> 18) & 0x7fffffu);
    float s = RNG_ADD(RNG_MUL(u, u), RNG_MUL(w, w));
    if (s < 1.0f && s > 0.0f) return RNG_MUL(u, RNG_SQRT(RNG_DIV(RNG_MUL(-2.0f, rng_log(s)), s)));
    /* ~21% of attempts miss the disc; 255 attempts all missing has probability 1e-172 */
    if (attempt == 255) return 0.0f;
  }
}

/* float -> IEEE fp16 bits, round to nearest even (what __float2half_rn does). */
RNG_FN uint16_t rng_float_to_half(float f) {
  union {
    float f;
    uint32_t u;
  } v;
  v.f = f;
  uint32_t sign = (v.u >> 16) & 0x8000u;
  uint32_t absu = v.u & 0x7fffffffu;
  if (absu >= 0x7f800000u) /* inf or nan */
    return (uint16_t)(sign | 0x7c00u | (absu > 0x7f800000u ? 0x200u : 0u));
  if (absu >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds past 65504: inf */
  if (absu < 0x38800000u) { /* result subnormal or zero: scale to units of 2^-24 */
    if (absu < 0x33000000u) return (uint16_t)sign; /* below half of the smallest subnormal */
    uint32_t mant = (absu & 0x007fffffu) | 0x00800000u;
    int shift = 126 - (int)(absu >> 23); /* 14 .. 24 */
    uint32_t q = mant >> shift, rem = mant & ((1u << shift) - 1u), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) q++;
    return (uint16_t)(sign | q);
  }
  uint32_t q = absu - 0x38000000u; /* rebias exponent 127 -> 15, still 23-bit mantissa */
  uint32_t rem = q & 0x1fffu;
  q >>= 13;
  if (rem > 0x1000u || (rem == 0x1000u && (q & 1u))) q++;
  return (uint16_t)(sign | q);
}

/* float -> bfloat16 bits, round to nearest even (what __float2bfloat16_rn does); NaN stays
 * a quiet NaN. */
RNG_FN uint16_t rng_float_to_bf16(float f) {
  union {
    float f;
    uint32_t u;
  } v;
  v.f = f;
  if ((v.u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((v.u >> 16) | 0x40u);
  uint32_t rounding = 0x7fffu + ((v.u >> 16) & 1u);
  return (uint16_t)((v.u + rounding) >> 16);
}

/* bfloat16 bits -> float, exact. */
RNG_FN float rng_bf16_to_float(uint16_t b) {
  union {
    float f;
    uint32_t u;
  } v;
  v.u = (uint32_t)b << 16;
  return v.f;
}

/* IEEE fp16 bits -> float, exact. */
RNG_FN float rng_half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t expo = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  union {
    float f;
    uint32_t u;
  } v;
  if (expo == 0x1fu) {
    v.u = sign | 0x7f800000u | (mant << 13);
  } else if (expo == 0) { /* zero or subnormal: mant * 2^-24 is exact in float */
    v.f = (float)mant * 5.9604644775390625e-08f;
    v.u |= sign;
  } else {
    v.u = sign | ((expo + 112u) << 23) | (mant << 13);
  }
  return v.f;
}

/* A 16-bit element of either type (bf16 != 0: bfloat16, else IEEE fp16), both ways. */
RNG_FN float rng_elem_to_float(uint16_t bits, int bf16) {
  return bf16 ? rng_bf16_to_float(bits) : rng_half_to_float(bits);
}
RNG_FN uint16_t rng_float_to_elem(float f, int bf16) {
  return bf16 ? rng_float_to_bf16(f) : rng_float_to_half(f);
}

#endif
