/* gemm.h: gemmbench, one dense GEMM C = A·B per run (the tile-benchmark study, studies/tilebench).
 *
 * A is [M, K] row-major, B [K, N] row-major, C [M, N] row-major; products accumulate in fp32
 * (double for ref) and C is stored in the input dtype (fp32 for fp32). FLOPs: 2·M·N·K.
 *
 *   ref     CPU double reference (i-k-j loops), --device cpu, capped (GEMM_REF_MAX_MACS)
 *   cublas  cublasGemmEx, compute 32F, the library's default algorithm (tensor ops for 16-bit)
 *   wgmma   ours, sm_90a: TMA + mbarrier ring, a producer warpgroup and two wgmma consumer
 *           warpgroups, persistent grid (gemm_wgmma.cu; kernels/gemm/README.md)
 *   mma     ours, sm_80: cp.async multi-stage ring, ldmatrix, mma.sync (gemm_mma.cu)
 *
 * Files: gemm_cli.c (options, the system table, the config line), gemm_check.c (inputs, the
 * double references, the sampled checker, tolerances), gemm_plan.{h,c} (tile plans and their
 * host-side checks), gemmbench.c (main), gemm_gpu.{h,cu} (the device side). */
#ifndef GEMM_H
#define GEMM_H

#include "harness.h"
#include "rng.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { GEMM_FP16 = 0, GEMM_BF16 = 1, GEMM_FP32 = 2, GEMM_NDTYPES = 3 } gemm_dtype;
extern const char *const gemm_dtype_names[GEMM_NDTYPES]; /* "fp16", "bf16", "fp32" */

typedef enum {
  GEMM_SYS_REF = 0,
  GEMM_SYS_CUBLAS = 1,
  GEMM_SYS_WGMMA = 2,
  GEMM_SYS_MMA = 3,
  GEMM_NSYS = 4
} gemm_system_id;

typedef struct {
  const char *name;  /* --system NAME, the log's system= */
  int on_cpu;        /* 1: runs on the CPU (ref) */
  const char *about; /* one line for --list-systems */
} gemm_system_row;
extern const gemm_system_row gemm_systems[GEMM_NSYS];

/* Each of M, N, K is in [1, GEMM_MAX_DIM]. */
#define GEMM_MAX_DIM 65536L

typedef struct {
  long m, n, k;
  gemm_dtype dtype;
} gemm_problem;

size_t gemm_elem_bytes(gemm_dtype dt);
double gemm_flops(const gemm_problem *p); /* 2·M·N·K */

/* ---- options (gemm_cli.c) ------------------------------------------------------------------ */
typedef struct {
  gemm_problem p;
  int system; /* gemm_system_id */
  int warmup, runs;
  uint64_t seed;
  int device_cpu;
  int check;
  int tile_n;  /* wgmma only (--tile-n): 0 automatic, 128 or 256 */
  int cluster; /* wgmma only (--cluster): 0 (= 1) or 2 CTAs per cluster, B multicast */
} gemm_args;

/* 0: run; 1: done (--help or --list-systems printed, exit 0); -1: usage error printed (exit 2). */
int gemm_parse(int argc, char **argv, gemm_args *a);
/* "config workload=gemm system=.. m=.. n=.. k=.. dtype=.. device=.. impl=.. seed=.." */
void gemm_print_config(const gemm_args *a, const char *impl);

/* ---- inputs (gemm_check.c) ----------------------------------------------------------------- */
/* A and B ~ N(0, 1) from the counter-based generator (rng.h): element e of A (e = i·K + k) is
 * rng_normal(seed, GEMM_STREAM_A, e) rounded to the dtype, bit for bit what the device fill
 * writes; likewise B (e = k·N + j). The sample's rows and columns come from GEMM_STREAM_SAMPLE. */
enum {
  GEMM_STREAM_A = RNG_STREAM_USER,
  GEMM_STREAM_B = RNG_STREAM_USER + 1,
  GEMM_STREAM_SAMPLE = RNG_STREAM_USER + 2
};
/* Element e of an input in its storage (16-bit bits, or fp32 bits), and as a double. */
uint32_t gemm_input_bits(uint64_t seed, uint32_t stream, uint64_t e, gemm_dtype dt);
double gemm_input(uint64_t seed, uint32_t stream, uint64_t e, gemm_dtype dt);
/* n elements of an input from element e0 on, into dst in storage form (gemm_elem_bytes each). */
void gemm_fill_host(void *dst, uint64_t e0, size_t n, uint64_t seed, uint32_t stream,
                    gemm_dtype dt);
/* Element i of a buffer in storage form, as a double. */
double gemm_load(const void *buf, size_t i, gemm_dtype dt);

/* ---- the double references (gemm_check.c) -------------------------------------------------- */
/* --system ref runs up to M·N·K = 2^30 multiply-adds and M·N + M·K + K·N = 2^27 elements. */
#define GEMM_REF_MAX_MACS  (1LL << 30)
#define GEMM_REF_MAX_ELEMS (1LL << 27)
/* 1 when ref can run p; 0 with the reason in why. */
int gemm_ref_fits(const gemm_problem *p, char *why, size_t why_len);
/* C = A·B in double, i-k-j loops (a row of C accumulates K scaled rows of B). */
void gemm_ref(const double *A, const double *B, double *C, long M, long N, long K);
/* The second formulation: C[i][j] = dot(A row i, B column j), k ascending (the dot the
 * sampled check uses, over a transposed copy of B). */
void gemm_ref_dot(const double *A, const double *B, double *C, long M, long N, long K);

/* ---- the check (gemm_check.c) -------------------------------------------------------------- */
/* Up to GEMM_FULL_CHECK_MACS multiply-adds the whole output is compared with gemm_ref; above,
 * a GEMM_SAMPLE_SIDE x GEMM_SAMPLE_SIDE grid of entries: one row drawn in each of 64 equal
 * strata of [0, M) (the first stratum's row is 0 and the last one's M-1, the edges) and one
 * column likewise, so every (M/64 x N/64) block of C holds a sampled entry. */
#define GEMM_FULL_CHECK_MACS (1LL << 27)
#define GEMM_SAMPLE_SIDE     64

typedef struct {
  int nr, nc;
  long rows[GEMM_SAMPLE_SIDE], cols[GEMM_SAMPLE_SIDE]; /* ascending */
} gemm_sample;

void gemm_sample_draw(gemm_sample *s, long M, long N, uint64_t seed);
/* The reference at the sample from inputs drawn on the host: want[r·nc + c] = dot(A row
 * rows[r], B column cols[c]) in double. */
void gemm_sample_want(const gemm_problem *p, uint64_t seed, const gemm_sample *s, double *want);

/* Tolerances of an output of dtype dt from reductions of length K, given max |want|:
 *   fp16/bf16  rel_l2 2u, max_abs 2u·max|want| (u = 2^-11, 2^-8: rounding the output to the
 *              dtype costs up to u relative; fp32 accumulation over K adds ~1e-6, far less)
 *   fp32       rel_l2 max(1e-5, 8·2^-24·sqrt(K)), max_abs that times 4·max|want| (the
 *              accumulation error of K fp32 additions grows like sqrt(K)) */
void gemm_tolerance(gemm_dtype dt, long K, double max_want, double *tol_rel_l2,
                    double *tol_max_abs);
/* Compare n outputs (storage form) with want under gemm_tolerance. */
hx_check gemm_compare(gemm_dtype dt, const void *got, const double *want, size_t n, long K);
/* The sampled check: c_rows holds the nr sampled rows of C (nr x N, storage form); the result
 * has sampled = nr·nc. */
hx_check gemm_check_sampled(const gemm_problem *p, uint64_t seed, const gemm_sample *s,
                            const void *c_rows);

#ifdef __cplusplus
}
#endif
#endif
