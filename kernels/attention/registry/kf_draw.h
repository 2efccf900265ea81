/* kf_draw.h: KeyFormer's noise, both ways it is drawn.
 *
 * attnvar's exp_rand tensor (inputs.def): element e is kf_exp_rand(seed, e) = 1 + |N(0,1)|, on
 * the host (ref/ref.c) and the device (gpuref/gpuref.cu) alike.
 *
 * kf_draw: a draw that a kernel can compute where it reads the noise, instead of reading an
 * exp_rand tensor (llama_e2e's kf: attn_io.exp_rand_draw). The tensor fillers and the CPU
 * reference draw the same values, bit for bit.
 *
 * Element (i, j) of the plane p = b·H + h of a [B, H, Lq, Lkv] noise:
 *   key  = the high 32 bits of rng_bits(seed, stream, p)          (once per plane)
 *   bits = fmix32(key ^ (uint32)(i·Lkv + j))                      (murmur3's 32-bit finaliser)
 *   u    = 2 − float(0x3f800000 | bits >> 9)                     (23 bits: u in (0, 1])
 * One 32-bit mix per element (two multiplies, three shift-xors) and no int-to-float
 * conversion, so a kernel draws it on the integer and FMA pipes, beside the softmax's
 * exponentials; the smallest value, 2^-23, keeps log u finite. i·Lkv + j wraps past 2^32
 * (Lq·Lkv > 2^32), the same way everywhere. */
#ifndef REPRO_KF_DRAW_H
#define REPRO_KF_DRAW_H

#include "rng.h"
#include "workload.h"

#include <stdint.h>
#include <string.h>

/* The exp_rand element: 1 + |N(0,1)| from RNG_STREAM_EXP_RAND, element index = flat index. */
RNG_FN float kf_exp_rand(uint64_t seed, uint64_t index) {
  float z = rng_normal(seed, RNG_STREAM_EXP_RAND, index);
  return RNG_ADD(1.0f, z < 0.0f ? -z : z);
}

/* What a system needs to draw the noise of a cell: the seed and stream of rng_bits. */
typedef struct {
  uint64_t seed;
  uint32_t stream;
} kf_draw;

RNG_FN uint32_t kf_draw_plane_key(kf_draw d, uint64_t plane) {
  return (uint32_t)(rng_bits(d.seed, d.stream, plane) >> 32);
}

RNG_FN uint32_t kf_draw_mix32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x85ebca6bu;
  x ^= x >> 13;
  x *= 0xc2b2ae35u;
  x ^= x >> 16;
  return x;
}

/* The noise at in-plane index idx = i·Lkv + j (uint32 arithmetic) of the plane with key. */
RNG_FN float kf_draw_at(uint32_t key, uint32_t idx) {
  const uint32_t f_bits = 0x3f800000u | (kf_draw_mix32(key ^ idx) >> 9);
#if defined(__CUDA_ARCH__)
  return RNG_SUB(2.0f, __uint_as_float(f_bits));
#else
  float f;
  memcpy(&f, &f_bits, sizeof f);
  return RNG_SUB(2.0f, f);
#endif
}

#endif
