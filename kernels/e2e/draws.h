/* draws.h: every random value of llama_e2e as a pure function of (seed, stream, index), on
 * top of the harness's counter-based generator (rng.h), so the GPU and the CPU reference
 * draw bit-identical weights, tokens and KeyFormer noise. Streams are fixed per tensor and
 * layer: changing one tensor's shape never shifts another's values. */
#ifndef E2E_DRAWS_H
#define E2E_DRAWS_H

#include "e2e.h"
#include "kf_draw.h"
#include "rng.h"

/* Streams: tokens, embedding, final norm, then 16 per layer, then one per layer for
 * KeyFormer's noise. */
#define DRAW_STREAM_TOKENS     (RNG_STREAM_USER + 0u)
#define DRAW_STREAM_EMBED      (RNG_STREAM_USER + 1u)
#define DRAW_STREAM_FINAL_NORM (RNG_STREAM_USER + 2u)
/* Stream of a weight tensor: layer < 0 for the model-wide ones (embedding, final norm). */
#define DRAW_STREAM_WEIGHT(layer, tensor)                                              \
  ((layer) < 0 ? ((tensor) == DRAW_EMBED ? DRAW_STREAM_EMBED : DRAW_STREAM_FINAL_NORM) \
               : DRAW_STREAM_LAYER(layer, tensor))
#define DRAW_STREAM_LAYER(layer, tensor) (0x1000u + 16u * (uint32_t)(layer) + (uint32_t)(tensor))
#define DRAW_STREAM_EXP_RAND(layer)      (0x100000u + (uint32_t)(layer))

/* Weight element: mean + stddev·N(0,1), rounded once to fp16 (scales: e2e_draw_params). */
RNG_FN uint16_t draw_weight(uint64_t seed, uint32_t stream, uint64_t index, float mean,
                            float stddev) {
  float z = rng_normal(seed, stream, index);
  return rng_float_to_half(RNG_ADD(mean, RNG_MUL(stddev, z)));
}

/* Token id in [0, vocab): 64 random bits reduced mod vocab (bias < vocab/2^64). */
RNG_FN int32_t draw_token(uint64_t seed, uint64_t index, int vocab) {
  return (int32_t)(rng_bits(seed, DRAW_STREAM_TOKENS, index) % (uint64_t)vocab);
}

/* KeyFormer noise of one layer, uniform in (1e-8, 1]: kf_draw.h's draw of this seed and stream,
 * one plane per head (the forward's [1, H, S, S] noise; element (i, j) of head h is
 * kf_draw_at(kf_draw_plane_key(d, h), i·S + j)), so a system that draws it where it reads it
 * (fused on Hopper), the tensor the others read and the CPU reference hold the same values. */
RNG_FN kf_draw draw_kf_noise(uint64_t seed, int layer) {
  kf_draw d = {seed, DRAW_STREAM_EXP_RAND(layer)};
  return d;
}
#endif
