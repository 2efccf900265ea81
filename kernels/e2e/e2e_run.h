/* e2e_run.h: what llama_e2e's main hands to a device path (run_cpu in llama_e2e.c,
 * run_gpu.c), and the check bounds both use. */
#ifndef E2E_RUN_H
#define E2E_RUN_H

#include "e2e.h"

#include <math.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  e2e_config cfg;
  int system; /* index into system_table (attn_system.h) */
  int device_cpu;
  int warmup, runs;
  int check, breakdown, gemm_bench, force_sm80;
  const char *weights; /* comma-separated safetensors files, or NULL: seeded draws */
  const char *dump;    /* write the final hidden states here (fp32 raw), or NULL */
} e2e_options;

/* The final hidden states of two runs agree within rel_l2 <= 7e-3·sqrt(layers): fp16 storage
 * rounds each activation by up to 2^-11 (4.9e-4 relative); a layer stores ~10 of them on its
 * way into the residual stream, so it adds ~1.5e-3 of independent error per layer at most,
 * and independent errors add in quadrature over layers, 1.5e-3·sqrt(L), x4 headroom for the
 * amplification through softmax and SiLU of random weights: 2 layers 9.9e-3, 32 layers 4.0e-2.
 * The same number is the near-tie band of the selection check (select_check.h). */
static inline double e2e_hidden_bound(int layers) { return 7e-3 * sqrt((double)layers); }

/* CPU reference cost (flops) above which the CPU path refuses and the GPU check uses the
 * other GPU system instead of the CPU reference. */
#define E2E_REF_MAX_FLOPS 2e10
static inline double e2e_ref_flops(const e2e_config *c) {
  return e2e_gemm_flops(c) + 3.0 * e2e_attn_flops(c);
}

/* Print the config line of the log. impl: the system's implementation name. */
void e2e_print_config(const e2e_options *o, const char *impl);
/* Write n floats to path (fp32, little-endian raw), whole through a unique temporary beside
 * it (fileio.h); 0, or -1 with why[0..why_cap) saying what failed. */
int e2e_dump_floats(const char *path, const float *v, size_t n, char *why, size_t why_cap);

/* The GPU path (run_gpu.c, or a stub that reports the CUDA-less build). Exits. */
void e2e_run_gpu(const e2e_options *o) __attribute__((noreturn));

#ifdef __cplusplus
}
#endif
#endif
