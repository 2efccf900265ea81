/* gpuref.h: the fp32 GPU reference (gpuref.cu), used by attnvar's check where the
 * CPU double reference would be too slow. Independent of both systems: no cuBLAS, no tensor
 * cores, no S x S buffer. Also the device generators of inputs.def's FILL_GEN rows. Callable
 * from C. */
#ifndef GPUREF_H
#define GPUREF_H

#include "attn_system.h"
#include "ref/ref.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when the reference implements every feature of the registry row w (workloads.def). */
int gpuref_has_workload(const workload_info *w);
/* 1 when the reference handles the shape (D <= 256, Lq <= Lkv). */
int gpuref_supports(const attn_shape *s);

/* The form of the dense kernels (gpuref.cu): tiled (a tile of rows or keys a block, the other
 * operand staged in shared memory) or naive (a row or key a block: the simplest statement of
 * the math, the one the tiled form is checked against). The selected-block kernel has one form. */
typedef enum { GPUREF_TILED, GPUREF_NAIVE } gpuref_impl;

/* Compute every output of wl from the device inputs in (the fields of inputs.def's rows) and
 * return them on the host as doubles in out (ref_outputs_alloc'ed). Allocates its own device
 * buffers through the tracking allocator and frees them before returning. */
void gpuref_run(const attn_ctx *ctx, workload_id wl, const attn_shape *s, const attn_io *in,
                const ref_outputs *out, gpuref_impl impl);

/* The device generators of inputs.def's FILL_GEN rows: dst's n elements for a cell of shape
 * s, bit-identical to the host's (ref/ref.c). */
typedef void (*gpuref_fill_fn)(void *dst, size_t n, const attn_shape *s, uint64_t seed,
                               cudaStream_t stream);
/* fp32 1 + |N(0,1)| (KeyFormer's exp_rand, kf_exp_rand), element index = flat index. */
void gpuref_fill_exp_rand(void *dst, size_t n, const attn_shape *s, uint64_t seed,
                          cudaStream_t stream);
/* corm_mask[i][j] = 1/(i+1), fp32 [Lq, Lkv] (odd keys' times CORM_VARIED_FACTOR where
 * s->corm_varied). */
void gpuref_fill_corm_mask(void *dst, size_t n, const attn_shape *s, uint64_t seed,
                           cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
