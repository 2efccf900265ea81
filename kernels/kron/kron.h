/* kron.h: the Kronecker-factored layer y = x·(A_1 ⊗ ... ⊗ A_m)^T (kronlayer).
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
 * a batched transpose, v3's stage and gradient kernels); kron_cpu.c runs them on the CPU (so
 * the tests exercise the very call sequences and index arithmetic the GPU runs), kron_gpu.cu
 * on the GPU (v3's kernels in kron_kernels.cu).
 *   v1  rotation: per factor one GEMM [B·N/f, f]·A^T and a batched transpose that brings the
 *       next factor's axis last (the seed's naive version)
 *   v2  per factor one strided-batched GEMM over the B·P slabs [f, Q], no copies
 *   v3  our kernels: a stage applies a range of axes to tiles held in shared memory, each axis
 *       a batched GEMM with A_k in shared memory (kron_tile.h), on the tensor cores where the
 *       sizes fit, else register-tiled FMA; one stage per axis for large shapes, the last two
 *       axes as one tensor-core "pair" stage where their slabs fill the SMs, one fused stage
 *       for the whole row when it fits and the shape is small. The forward keeps every T_k;
 *       the backward runs the stages backwards with A^T (keeping every G_k), then one kernel
 *       computes every gA_k (split over rows, atomics). */
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
/* v3's fusion: auto (the whole row in one stage when it fits and the shape is small), on (the
 * longest trailing range of axes that fits in one stage), off (one stage per axis) */
typedef enum { KRON_FUSE_AUTO = 0, KRON_FUSE_ON = 1, KRON_FUSE_OFF = 2 } kron_fuse;
/* v3's tensor cores: auto (single-axis stages, the pair stage of the last two axes and gradient
 * steps whose sizes fit the mma tiles run on them: 3xTF32 for f, DMMA for d), off (CUDA-core
 * FMA everywhere, and no pair stage) */
typedef enum { KRON_TC_AUTO = 0, KRON_TC_OFF = 1 } kron_tc;
/* v3's route: auto (v2's strided-batched cuBLAS GEMMs where they outrun v3's stages, the
 * shapes kron_gemm_route names; v3's stages elsewhere, and wherever a fuse or tc knob forces a
 * stage plan), stages (v3's kernels always), gemm (v2's calls always) */
typedef enum { KRON_ROUTE_AUTO = 0, KRON_ROUTE_STAGES = 1, KRON_ROUTE_GEMM = 2 } kron_route;

extern const char *const kron_version_names[KRON_NVER]; /* "v1", "v2", "v3" */
extern const char *const kron_pass_names[2];            /* "fwd", "bwd" */
extern const char *const kron_mode_names[3];            /* "check", "profile", "bench" */
extern const char *const kron_fuse_names[3];            /* "auto", "on", "off" */
extern const char *const kron_tc_names[2];              /* "auto", "off" */
extern const char *const kron_route_names[3];           /* "auto", "stages", "gemm" */

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
/* multiply-adds of one forward: B·N·sum f_k (the backward does twice as many) */
double kron_fwd_macs(const kron_shape *s);

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
  int v3_fuse;       /* kron_fuse: whether v3 fuses axes into one stage */
  int v3_tc;         /* kron_tc: whether v3 uses the tensor cores */
  int v3_route;      /* kron_route: v3's stages, or v2's GEMMs where they are faster */
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
#define KRON_THREADS 256 /* every v3 kernel's block */

/* How tiles cover a range of axes (kron_tile.h has the index arithmetic). With the [R, S, Q]
 * view of the rows (R = B·P: the slabs, P/S/Q: products of the axes before/in/after the
 * range), a tile is NB consecutive slabs times a chunk of W of q (NB = 1 or W = Q); tile
 * element (s, v), v = nb·W + w, is row s, column v. */
typedef struct {
  long long P, S, Q;
  long long W, NB, V; /* V = NB·W */
  long long ld;       /* elements between rows in shared memory (rows s, ld >= V; transposed
                         tiles: rows v, ld >= S, or the pair stage's rows, ld >= rowlen) */
  long long tiles;    /* (R / NB)·(Q / W) */
  int vec;            /* global <-> shared memory in 16-byte chunks (else element by element) */
  int tr;             /* stored transposed, element (s, v) at v·ld + s: the gradient's tiles, and
                         tensor-core stages with Q = 1 (a slab's S elements are contiguous in
                         both memories, so their copies are 16-byte chunks, not transposing) */
  long long rowlen;   /* transposed tiles of the two-axis tensor-core stage: each slab's S
                         elements held as S/rowlen rows (the first axis) of rowlen (the second),
                         ld apart; element (s, v) with s = i·rowlen + j at (v·rows + i)·ld + j.
                         0 elsewhere (one row of S per slab) */
} kron_tiling;

/* micro-tiles of the register-tiled GEMM: rows x columns of outputs per thread; S: columns
 * read element by element (else 16-byte chunks); TC: a warp's block of tensor-core mma tiles
 * (kron_tile.h; its size is the stage's or step's wm x wn) */
typedef enum {
  KRON_MT_8x8 = 0,
  KRON_MT_4x8 = 1,
  KRON_MT_4x4 = 2,
  KRON_MT_4x4S = 3,
  KRON_MT_8x1S = 4,
  KRON_MT_TC = 5,
  KRON_NMT = 6
} kron_mt;
extern const char *const kron_mt_names[KRON_NMT];

typedef struct {
  int k0, k1;               /* axes [k0, k1) */
  kron_tiling t;            /* t.S = prod of the stage's factors */
  int mt[KRON_MAX_FACTORS]; /* micro-tile of axis k0 + l (KRON_MT_TC: single-axis and pair
                               stages) */
  int wm, wn;               /* KRON_MT_TC: mma tiles per warp along the rows a and columns v */
  int prefetch;             /* 1: a second input buffer, the next tile loaded during this one;
                               0: one tile per block (grid = tiles), no such buffer */
  int grid;                 /* blocks (persistent: each walks tiles blockIdx.x + i·grid) */
  size_t smem;              /* bytes */
} kron_stage;

/* gA_k of one axis: tiles of G_k and T_{k-1} over the axis (S = f_k), stored transposed */
typedef struct {
  kron_tiling t;
  int mt;     /* micro-tile over the output block */
  int wm, wn; /* KRON_MT_TC: mma tiles per warp (rows i, columns j of gA_k) */
  int ob;     /* output block side (the block covers gA rows and columns [ob·i, ob·i + ob)) */
  int nob;    /* output blocks per side */
  int kp;     /* threads per output micro-tile, splitting each tile's rows */
  int ksplit; /* blocks along the rows (each adds its partial sum with atomics) */
  size_t smem;
} kron_gstep;

typedef struct {
  int gemm; /* 1: the pass runs v2's strided-batched GEMMs (cuBLAS), no stage or gradient step */
  int nstages;
  kron_stage st[KRON_MAX_FACTORS];
  int has_grad;                    /* bwd plans: ga[] filled */
  kron_gstep ga[KRON_MAX_FACTORS]; /* per axis */
  size_t smem_max;                 /* largest kernel's shared memory, bytes */
} kron_plan;

/* What the plan may use: shared memory per block (bytes), per SM, the SM count (the CPU
 * backend plans as for an H100) and the fusion mode. */
typedef struct {
  size_t smem_block, smem_sm;
  int nsm;
  int fuse;     /* kron_fuse */
  int tc;       /* kron_tc */
  int tc_tile;  /* 0: the plan picks tensor-core stages' warp tiles; else wm·8 + wn of every
                  such stage, where it divides the tile (REPRO_KRON_TC_TILE, a measurement
                  switch) */
  int ga_split; /* 0: the gradient's blocks along the rows fill one wave; else this many (at
                   most the tiles; REPRO_KRON_GA_SPLIT, a measurement switch) */
  int route;    /* kron_route (a backend without cuBLAS plans stages) */
} kron_plan_cfg;

/* What the CPU backend plans for: an H100's shared memory per block (opt-in) and per SM, and
 * its SMs, so the CPU runs the GPU's plans. */
#define KRON_CPU_SMEM_BLOCK ((size_t)227 * 1024)
#define KRON_CPU_SMEM_SM    ((size_t)228 * 1024)
#define KRON_CPU_NSM        132

/* 1 where v2's GEMMs outrun v3's stages, the shapes v3's auto route sends to them. */
int kron_gemm_route(const kron_shape *s, int es, kron_pass pass);
/* v3's plan for a pass (the stages are the same for both; bwd adds the gradient steps), or v2's
 * GEMMs (gemm = 1, cfg's route). 0, or -1 with why (a factor whose matrix and smallest tile do
 * not fit). */
int kron_plan_make(const kron_shape *s, int es, kron_pass pass, const kron_plan_cfg *cfg,
                   kron_plan *p, char *why, size_t why_len);
/* One line describing the plan (the log's `plan` record, without its prefix). */
void kron_plan_describe(const kron_shape *s, const kron_plan *p, char *dst, size_t cap);

/* Shared-memory layout of a stage's kernel in one direction (trans as in kron_be.stage), in
 * elements: A_l (f_l rows of lda[l]) at a[l], the tile buffers (buf_elems each) at buf[0..2]:
 * the input, the prefetched next input (the same as buf[0] without prefetch), the work buffer
 * (the same as buf[0] for single-axis tensor-core stages: they store to global memory from
 * registers);
 * total. Tensor-core stages pad A's rows by direction (their fragments read A along
 * rows forward, along columns with trans); the stage's smem is the larger direction's. */
typedef struct {
  long long a[KRON_MAX_FACTORS], lda[KRON_MAX_FACTORS];
  long long buf[3], buf_elems, total;
} kron_stage_smem;
void kron_stage_layout(const kron_shape *s, const kron_stage *st, int es, int trans,
                       kron_stage_smem *L);
/* gradient kernel: two slots, each a G tile then a T tile of slot_elems */
long long kron_gstep_slot_elems(const kron_gstep *g);
/* Launch-config validation shared by both backends: 0, or -1 with why. */
int kron_stage_check(const kron_shape *s, const kron_stage *st, int es, char *why, size_t len);
int kron_gstep_check(const kron_shape *s, int k, const kron_gstep *g, int es, char *why,
                     size_t len);

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
  /* v3: one stage's kernel. trans = 0: the stage's axes k0..k1-1 applied to in (A_k, at
   * Ak[k]); 1: the axes k1-1..k0 with A_k^T. side[j] (NULL: not kept): where the tile after the
   * j-th contraction goes, j < k1-k0-1; out: after the last. */
  void (*stage)(kron_be *be, const char *name, const kron_shape *s, const kron_stage *st, int trans,
                const void *const *Ak, const void *in, void *out, void *const *side);
  /* v3: gA_k += sum over rows of G[k] (at axis k's output) times T[k] (its input), every k */
  void (*grad)(kron_be *be, const char *name, const kron_shape *s, const kron_plan *p,
               const void *const *G, const void *const *T, void *gA);
};

/* Buffers of one version (device or host, of element size es). */
typedef struct {
  void *x, *A, *y, *gy, *gx, *gA;
  /* A_k's own [f_k, f_k] buffer where the factors are not back to back in A (the PyTorch
   * extension's parameters); NULL: A_k is at A + aoff[k] (kron_factor reads both) */
  const void *Ak[KRON_MAX_FACTORS];
  void *saved;   /* forward activations T_1..T_{m-1} kept for the backward */
  void *scratch; /* v1/v2: two [B, N] buffers; v3: G_1..G_{m-1} */
  void *part;    /* v2: gA partials */
} kron_bufs;

/* Where factor k of the buffers b is (Ak[k], else A + aoff[k]), in es-byte elements. */
const void *kron_factor(const kron_bufs *b, const kron_shape *s, int es, int k);

/* Elements each buffer needs for version v (saved, scratch, part). */
void kron_ws_elems(const kron_shape *s, kron_version v, const kron_plan *fwd_plan,
                   const kron_plan *bwd_plan, long long *saved, long long *scratch,
                   long long *part);

/* The versions. plan: v3's (the pass's own; the stages are the same in both). */
void kron_run_fwd(kron_be *be, kron_version v, const kron_shape *s, const kron_plan *plan,
                  const kron_bufs *b);
/* bwd needs the forward to have run on the same buffers (saved activations). */
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
/* Chrome trace JSON ("traceEvents", complete events "ph":"X") written to f (the caller opens
 * and closes it); 0 or -1 when a write failed. */
int kron_prof_write_trace(const kron_prof *p, FILE *f, const char *process);

/* The CPU backend records into this when set (profile mode). */
void kron_cpu_set_prof(kron_be *be, kron_prof *p);

#ifdef __cplusplus
}
#endif
#endif
