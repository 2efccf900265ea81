/* attn_check.h: the check lines of one attnvar run: every output of the workload compared
 * with a reference (ref.h outputs, double), one `check output=...` line each.
 *
 * Tolerances (why these numbers):
 *  GPU systems vs the CPU double reference or the fp32 GPU reference (the numbers are each
 *  workload's tol_rel_l2 and tol_max_abs in workloads.def; today all alike). Inputs are fp16
 *  (exact in both), accumulation fp32, and the eager path rounds S to fp16 before the
 *  softmax (|S| up to ~6 after scaling: up to ~2e-3 absolute error in a logit, ~4e-4 rms)
 *  and P to fp16 before P.V, then out to fp16 (2^-12 relative rms). Expected relative L2
 *  errors are a few 1e-4; we allow
 *     rel_l2  <= 5e-3   and   max_abs <= 1e-2 * max(1, max |reference|)
 *  for out and every score. A wrong mask diagonal, a skipped tile or a lost row moves
 *  rel_l2 by 1e-2 .. 1 at the sizes we test; poison (NaN) fails outright.
 *  corm's flags are compared exactly, except columns whose relative margin
 *  max_i (P[i,j] - mask[i,j]) / mask[i,j] lies within +-5e-3 of zero (a P error of 5e-3
 *  relative is ~2x the worst the eager fp16 scores give); those are counted as ambiguous.
 *  CPU: ref vs the independent online formulation, both double: 1e-9 everywhere. */
#ifndef ATTN_CHECK_H
#define ATTN_CHECK_H

#include "attn_system.h"
#include "ref/ref.h"

#include <stdint.h>

typedef struct {
  double rel_l2, max_abs_scale; /* max_abs limit = max_abs_scale * max(1, max|ref|) */
  double corm_margin;
} attn_tolerance;

/* GPU systems: the workload's tolerances from the registry (workloads.def), times
 * ATTN_BF16_TOL_SCALE for bf16 cells: bf16 rounds P and out with 2^-9 relative steps where fp16
 * has 2^-12, so the same kernel's rounding error is up to 8x larger; 4x keeps the fp16 margin
 * over the expected ~1e-3 while a wrong mask or tile still fails by orders of magnitude. */
attn_tolerance attn_tol_gpu(workload_id wl, attn_dtype dtype);
#define ATTN_BF16_TOL_SCALE 4.0
/* CPU: ref against ref_online, both double. */
extern const attn_tolerance ATTN_TOL_CPU;
/* The GPU reference's tiled form against its naive one (attnvar --gpuref both): both fp32 with
 * bit-identical logits, their sums in other orders (~1e-6 relative over 4096 terms): 1e-5. */
extern const attn_tolerance ATTN_TOL_GPUREF;
/* Relative margin within which a flag is too close to call (see above). */
#define ATTN_FLAG_MARGIN_GPU 5e-3

/* System outputs on the host, in the system's own types. */
typedef struct {
  const uint16_t *out; /* fp16 bits */
  const float *score, *score2;
  const uint8_t *flags;
} attn_host_outputs;

/* Print one check line per output of wl; returns 1 when all pass. */
int attn_check_outputs(workload_id wl, const attn_shape *s, const ref_outputs *want,
                       const attn_host_outputs *got, const attn_tolerance *tol);
/* The same for a double-precision candidate (the CPU path: ref_online vs ref). */
int attn_check_ref_outputs(workload_id wl, const attn_shape *s, const ref_outputs *want,
                           const ref_outputs *got, const attn_tolerance *tol);
/* The same with prefix before each output's name (one reference form against another). */
int attn_check_ref_pair(workload_id wl, const attn_shape *s, const ref_outputs *want,
                        const ref_outputs *got, const attn_tolerance *tol, const char *prefix);

#endif
