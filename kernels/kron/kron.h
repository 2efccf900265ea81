/* kron.h: the Kronecker-factored layer y = x·(A_1 ⊗ ... ⊗ A_m)^T (kronlayer, issue 14).
 *
 * Shapes: x, y, gy, gx are [B, N] row-major, N = f_1·...·f_m; A_k is [f_k, f_k] row-major;
 * the factors are stored back to back (kron_shape.aoff[k] is A_k's first element). With the
 * multi-index (i_1, ..., i_m) of a row (i_1 slowest), applying A_k "on axis k" is
 *     Y[b, p, i, q] = sum_j A_k[i, j] X[b, p, j, q]      (p: axes before k, q: axes after)
 * and y is every axis's application in turn (they commute). Backward, given gy:
 *     T_0 = x, T_k = A_k on axis k of T_{k-1};  G_m = gy, G_{k-1} = A_k^T on axis k of G_k;
 *     gA_k[i, j] = sum_{b,p,q} G_k[b,p,i,q] T_{k-1}[b,p,j,q];  gx = G_0.
 *
 * The versions (kron_algo.c) are written once against a backend (kron_be: cuBLAS-shaped GEMMs,
 * a batched transpose, the v3 group kernels); kron_cpu.c runs them on the CPU (so the tests
 * exercise the very call sequences the GPU runs), kron_gpu.cu on the GPU.
 *   v1  rotation: per factor one GEMM [B·N/f, f]·A^T and a batched transpose that brings the
 *       next factor's axis last (the seed's naive version)
 *   v2  per factor one strided-batched GEMM over the B·P slabs [f, Q], no copies
 *   v3  fused: consecutive axes grouped so one tile (all indices of the group's axes times a
 *       chunk of the trailing index) fits in shared memory; one kernel per group applies the
 *       group's factors from shared memory. When the whole row fits, that is one kernel for
 *       the whole chain. Backward: one kernel per group (A^T chain and gA_k in the same pass,
 *       gA_k by atomics), after recomputing the group boundaries of the forward. */
#ifndef KRON_H
#define KRON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KRON_MAX_FACTORS 8
#define KRON_MAX_FACTOR  65536
#define KRON_MAX_BATCH   (1L << 20)

typedef enum { KRON_V1 = 0, KRON_V2 = 1, KRON_V3 = 2, KRON_NVER = 3 } kron_version;
typedef enum { KRON_FWD = 0, KRON_BWD = 1 } kron_pass;
typedef enum { KRON_CHECK = 0, KRON_PROFILE = 1, KRON_BENCH = 2 } kron_mode;

extern const char *const kron_version_names[KRON_NVER]; /* "v1", "v2", "v3" */
extern const char *const kron_pass_names[2];            /* "fwd", "bwd" */
extern const char *const kron_mode_names[3];            /* "check", "profile", "bench" */

typedef struct {
  int m;                                /* number of factors */
  int f[KRON_MAX_FACTORS];              /* factor sizes */
  long long batch;                      /* B */
  long long n;                          /* N = prod f */
  long long aoff[KRON_MAX_FACTORS + 1]; /* A_k at aoff[k]; aoff[m] = all factors' elements */
} kron_shape;

/* Fills n and aoff from batch, m, f; 0, or -1 with why (zero factor, N overflow). */
int kron_shape_init(kron_shape *s, long long batch, int m, const int *f, char *why, size_t why_len);
/* "16x32x32" (batch x factors) */
void kron_shape_name(const kron_shape *s, char *dst, size_t cap);
/* prod f[0..k) and prod f[k+1..m) */
long long kron_prefix(const kron_shape *s, int k);
long long kron_suffix(const kron_shape *s, int k);

/* ---- options (kron_cli.c) -------------------------------------------------------------- */
typedef struct {
  kron_shape shape;
  int dtype_size; /* 4 (f) or 8 (d) */
  int impl;       /* -1: all, else kron_version */
  int pass;       /* kron_pass: what the result line times */
  kron_mode mode;
  int warmup, runs; /* -1 until the mode's defaults are set */
  uint64_t seed;
  int device_cpu;
  int check;         /* bench: also check (off by default; check mode always checks) */
  const char *trace; /* profile: Chrome trace JSON path (NULL: none) */
  long v3_smem_kib;  /* v3 shared-memory budget per block (0: the device's opt-in max) */
} kron_args;

/* 0 ok, 1 help printed (exit 0), -1 usage error printed (exit 2). */
int kron_parse(int argc, char **argv, kron_args *a);
void kron_print_config(const kron_args *a, const char *device);

/* ---- the double reference (kron_ref.c) --------------------------------------------------- */
/* Axis passes in double: y from x (fwd), gx and gA from x and gy (bwd). All arrays double. */
void kron_ref_fwd(const kron_shape *s, const double *x, const double *A, double *y);
void kron_ref_bwd(const kron_shape *s, const double *x, const double *A, const double *gy,
                  double *gx, double *gA);
/* The explicit Kronecker matrix K [N, N] (tests: y = x·K^T for small N). */
void kron_ref_dense(const kron_shape *s, const double *A, double *K);

/* Inputs from the seeded generator (rng.h), as floats (exact in double): x ~ N(0,1),
 * A_k ~ N(0,1)/sqrt(f_k) (keeps |y| ~ |x|), gy ~ N(0,1). */
void kron_fill_inputs(const kron_shape *s, uint64_t seed, float *x, float *A, float *gy);

/* ---- the v3 plan (kron_algo.c) ------------------------------------------------------------- */
typedef struct {
  int k0, k1;        /* axes [k0, k1) */
  long long P, S, Q; /* prod of the axes before, in, after the group */
  long long W;       /* tile = S x W elements: all of the group's indices x a chunk of q */
  long long st[KRON_MAX_FACTORS]; /* stride of axis k0+l inside the tile */
  int slots;                      /* tiles of shared memory the kernel holds */
  int threads;                    /* block size */
} kron_group;

typedef struct {
  int ngroups;
  kron_group g[KRON_MAX_FACTORS];
  size_t smem_max; /* largest group's shared memory, bytes */
} kron_plan;

/* Group the axes for v3 under a shared-memory budget per block (bytes). 0, or -1 with why
 * (a factor whose smallest tile does not fit). */
int kron_plan_make(const kron_shape *s, int elem_size, kron_pass pass, size_t smem_budget,
                   kron_plan *p, char *why, size_t why_len);
size_t kron_group_smem(const kron_group *g, int elem_size);

/* ---- the backend the versions are written against --------------------------------------- */
typedef struct kron_be kron_be;
struct kron_be {
  int es; /* element size: 4 or 8 */
  void *impl;
  /* cuBLAS column-major semantics: C_b = op(A_b)·op(B_b) (+ C_b when accumulate), b < batch,
   * pointers advanced by the strides (elements) each batch. */
  void (*gemm)(kron_be *be, const char *name, int transa, int transb, long long m, long long n,
               long long k, const void *A, long long lda, long long sA, const void *B,
               long long ldb, long long sB, void *C, long long ldc, long long sC, long long batch);
  /* out[e] = sum_b in[b·len + e], e < len (v2's gA partials) */
  void (*reduce)(kron_be *be, const char *name, const void *in, long long nb, long long len,
                 void *out);
  /* dst[b][c][r] = src[b][r][c] for r < rows, c < cols */
  void (*transpose)(kron_be *be, const char *name, const void *src, void *dst, long long nb,
                    long long rows, long long cols);
  void (*zero)(kron_be *be, void *p, long long n);
  /* v3: one group's kernel. fwd: out = group's factors applied to in. bwd: t_in is the
   * group's input activation, g_out the gradient at its output; writes g_in and adds every
   * gA_k of the group into gA. */
  void (*group_fwd)(kron_be *be, const char *name, const kron_shape *s, const kron_group *g,
                    const void *A, const void *in, void *out);
  void (*group_bwd)(kron_be *be, const char *name, const kron_shape *s, const kron_group *g,
                    const void *A, const void *t_in, const void *g_out, void *g_in, void *gA);
};

/* Buffers of one version (device or host, of element size es). */
typedef struct {
  void *x, *A, *y, *gy, *gx, *gA;
  void *saved;   /* v1/v2: forward activations kept for the backward; v3: group boundaries */
  void *scratch; /* two [B, N] buffers */
  void *part;    /* v2: gA partials */
} kron_bufs;

/* Elements each buffer needs for version v (saved, scratch, part). */
void kron_ws_elems(const kron_shape *s, kron_version v, const kron_plan *fwd_plan,
                   const kron_plan *bwd_plan, long long *saved, long long *scratch,
                   long long *part);

/* The versions. plan: v3's (the pass's own). */
void kron_run_fwd(kron_be *be, kron_version v, const kron_shape *s, const kron_plan *plan,
                  const kron_bufs *b);
/* bwd needs v1/v2's forward to have run on the same buffers (saved activations). v3 needs
 * the fwd plan for its recomputed boundaries. */
void kron_run_bwd(kron_be *be, kron_version v, const kron_shape *s, const kron_plan *fwd_plan,
                  const kron_plan *bwd_plan, const kron_bufs *b);

/* ---- the CPU backend (kron_cpu.c) ------------------------------------------------------------- */
void kron_cpu_backend(kron_be *be, int es);

/* ---- profile steps: named intervals (µs), filled by a backend when profiling --------------- */
typedef struct {
  char name[64];
  double start_us, dur_us;
} kron_step;

typedef struct {
  kron_step *steps;
  int n, cap;
} kron_prof;

void kron_prof_add(kron_prof *p, const char *name, double start_us, double dur_us);
void kron_prof_free(kron_prof *p);
/* Chrome trace JSON ("traceEvents", complete events "ph":"X"); 0 or -1 (errno). */
int kron_prof_write_trace(const kron_prof *p, const char *path, const char *process);

/* The CPU backend records into this when set (profile mode). */
void kron_cpu_set_prof(kron_be *be, kron_prof *p);

#ifdef __cplusplus
}
#endif
#endif
