/* kron_cpu.c: the backend of kron.h on the CPU. It emulates what the GPU backend calls:
 * cuBLAS's column-major (strided-batched) GEMM semantics, the batched transpose, the
 * reduction, and v3's stage and gradient kernels block by block and thread by thread with
 * kron_tile.h's index arithmetic, so `--device cpu --impl v1|v2|v3` runs the versions' exact
 * call sequences. Arithmetic is in double; buffers hold the run's dtype (float or double). */
#include "kron.h"

#include "harness.h"
#include "kron_tile.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

typedef struct {
  kron_prof *prof;
  double t0;
} cpu_state;

static double ld(const void *p, int es, long long i) {
  return es == 8 ? ((const double *)p)[i] : (double)((const float *)p)[i];
}
static void st(void *p, int es, long long i, double v) {
  if (es == 8)
    ((double *)p)[i] = v;
  else
    ((float *)p)[i] = (float)v;
}
static const void *adv(const void *p, int es, long long e) {
  return (const char *)p + (size_t)e * (size_t)es;
}

static double step_begin(kron_be *be) {
  cpu_state *cs = be->impl;
  return cs->prof ? hx_wall_ms() : 0;
}
static void step_end(kron_be *be, const char *name, double t_start) {
  cpu_state *cs = be->impl;
  if (!cs->prof) return;
  double t = hx_wall_ms();
  kron_prof_add(cs->prof, name, (t_start - cs->t0) * 1e3, (t - t_start) * 1e3);
}

static void cpu_gemm(kron_be *be, const char *name, int ta, int tb, long long m, long long n,
                     long long k, const void *A, long long lda, long long sA, const void *B,
                     long long ldb, long long sB, void *C, long long ldc, long long sC,
                     long long batch) {
  int es = be->es;
  double t0 = step_begin(be);
  for (long long bt = 0; bt < batch; bt++) {
    const void *a = adv(A, es, bt * sA), *b = adv(B, es, bt * sB);
    void *c = (void *)adv(C, es, bt * sC);
    for (long long j = 0; j < n; j++)
      for (long long i = 0; i < m; i++) {
        double acc = 0;
        for (long long l = 0; l < k; l++) {
          double av = ta ? ld(a, es, l + i * lda) : ld(a, es, i + l * lda);
          double bv = tb ? ld(b, es, j + l * ldb) : ld(b, es, l + j * ldb);
          acc += av * bv;
        }
        st(c, es, i + j * ldc, acc);
      }
  }
  step_end(be, name, t0);
}

static void cpu_reduce(kron_be *be, const char *name, const void *in, long long nb, long long len,
                       void *out) {
  double t0 = step_begin(be);
  for (long long e = 0; e < len; e++) {
    double acc = 0;
    for (long long b = 0; b < nb; b++) acc += ld(in, be->es, b * len + e);
    st(out, be->es, e, acc);
  }
  step_end(be, name, t0);
}

static void cpu_transpose(kron_be *be, const char *name, const void *src, void *dst, long long nb,
                          long long rows, long long cols) {
  double t0 = step_begin(be);
  int es = be->es;
  for (long long b = 0; b < nb; b++)
    for (long long r = 0; r < rows; r++)
      for (long long c = 0; c < cols; c++)
        memcpy((char *)dst + (size_t)((b * cols + c) * rows + r) * (size_t)es,
               (const char *)src + (size_t)((b * rows + r) * cols + c) * (size_t)es, (size_t)es);
  step_end(be, name, t0);
}

static void cpu_zero(kron_be *be, void *p, long long n) {
  memset(p, 0, (size_t)n * (size_t)be->es);
}

/* ---- v3: the GPU's kernels emulated block by block and thread by thread ---------------------
 * Shared memory is a double array of the kernel's layout, NaN wherever the kernel has not
 * written: a formula that reads an element it should not gives NaN outputs and fails the
 * checks. Every contraction also counts its writes: each valid element exactly once, no
 * padding. The launch configuration goes through the same validation as on the GPU. */

static void emu_fail(const char *name, const char *why) {
  hx_die(REPRO_EXIT_ERROR, "error", "%s: internal: %s", name, why);
}

static void fill_nan(double *p, long long n) {
  for (long long i = 0; i < n; i++) p[i] = NAN;
}

/* A_l into its [f][lda] region: row b holds A[.][b] (forward: P = A^T) or A[b][.] (the
 * backward's A^T chain: P = A, and tensor-core stages either way: `rows`); columns >= f are
 * zero */
static void emu_load_a(double *dst, long long lda, const void *A, int es, int f, int rows) {
  for (long long r = 0; r < f; r++)
    for (long long c = 0; c < lda; c++)
      dst[r * lda + c] = c >= f ? 0 : rows ? ld(A, es, r * f + c) : ld(A, es, c * f + r);
}

/* ---- tensor cores: the warps gather their fragments with kron_tile.h's formulas (the
 * kernels'), and this model of mma.sync multiplies them, with the PTX ISA's layouts stated
 * here independently (which lane and register hold element (row, col) of each operand). */
typedef struct {
  int lane, reg;
} emu_slot;

static emu_slot hw_a(int es, int row, int k) {
  emu_slot s = {es == 4 ? row % 8 * 4 + k % 4 : row * 4 + k, es == 4 ? row / 8 + 2 * (k / 4) : 0};
  return s;
}
static emu_slot hw_b(int es, int k, int col) {
  emu_slot s = {col * 4 + k % 4, es == 4 ? k / 4 : 0};
  return s;
}
static emu_slot hw_c(int es, int row, int col) {
  emu_slot s = {es == 4 ? row % 8 * 4 + col / 2 : row * 4 + col / 2,
                es == 4 ? row / 8 * 2 + col % 2 : col % 2};
  return s;
}

/* an fp32 value as the tensor core reads a tf32 operand: the top 19 bits (10 of mantissa) */
static float tf32_trunc(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  u &= 0xffffe000u;
  memcpy(&x, &u, 4);
  return x;
}

/* a x b as the kernels form it: fp32 as 3xTF32 (big = truncated, small = the exact rest, read
 * truncated; small*small dropped), fp64 exactly */
static double tc_product(int es, double a, double b) {
  if (es == 8) return a * b;
  float fa = (float)a, fb = (float)b, ab = tf32_trunc(fa), bb = tf32_trunc(fb);
  float as = tf32_trunc(fa - ab), bs = tf32_trunc(fb - bb);
  return (double)as * bb + (double)ab * bs + (double)ab * bb;
}

#define EMU_TC_MAXW 4 /* the largest warp tile side, in mma tiles */
typedef struct {
  double c[EMU_TC_MAXW][EMU_TC_MAXW][32][4]; /* [mma tile][mma tile][lane][register] */
} emu_acc;

/* acc += Am(m, k) Bm(k, n) over k in [k0, k1) for the warp tile at (m0, n0), mma by mma;
 * Am(m, k) at m·a_sm + k·a_sk, Bm(k, n) at k·b_sk + n·b_sn */
static void emu_tc_gemm(const char *name, int es, int wm, int wn, emu_acc *acc, const double *Am,
                        long long a_sm, long long a_sk, const double *Bm, long long b_sk,
                        long long b_sn, int m0, int n0, int k0, int k1) {
  int mr = kron_tc_mrows(es), ks = kron_tc_kstep(es), ar = kron_tc_aregs(es),
      br = kron_tc_bregs(es);
  if (wm > EMU_TC_MAXW || wn > EMU_TC_MAXW || (k1 - k0) % ks)
    emu_fail(name, "tensor-core warp tile or k range");
  for (int k = k0; k < k1; k += ks) {
    double a[EMU_TC_MAXW][32][4], b[EMU_TC_MAXW][32][2];
    for (int lane = 0; lane < 32; lane++) { /* the kernel's gathers */
      for (int i = 0; i < wm; i++)
        for (int r = 0; r < ar; r++) {
          int row, kk;
          kron_tc_frag_a(es, lane, r, &row, &kk);
          a[i][lane][r] = Am[(m0 + i * mr + row) * a_sm + (k + kk) * a_sk];
        }
      for (int j = 0; j < wn; j++)
        for (int r = 0; r < br; r++) {
          int kk, col;
          kron_tc_frag_b(es, lane, r, &kk, &col);
          b[j][lane][r] = Bm[(k + kk) * b_sk + (n0 + j * KRON_TC_N + col) * b_sn];
        }
    }
    for (int i = 0; i < wm; i++) /* the hardware */
      for (int j = 0; j < wn; j++)
        for (int row = 0; row < mr; row++)
          for (int col = 0; col < KRON_TC_N; col++) {
            emu_slot cs = hw_c(es, row, col);
            double sum = 0;
            for (int kk = 0; kk < ks; kk++) {
              emu_slot as = hw_a(es, row, kk), bs = hw_b(es, kk, col);
              sum += tc_product(es, a[i][as.lane][as.reg], b[j][bs.lane][bs.reg]);
            }
            acc->c[i][j][cs.lane][cs.reg] += sum;
          }
  }
}

/* out(m0 + row, n0 + col) = the warp's accumulators, through the kernel's C fragments:
 * visit(row, col, value) */
static void emu_tc_each(int es, int wm, int wn, const emu_acc *acc,
                        void (*visit)(void *ctx, int row, int col, double v), void *ctx) {
  for (int i = 0; i < wm; i++)
    for (int j = 0; j < wn; j++)
      for (int lane = 0; lane < 32; lane++)
        for (int r = 0; r < kron_tc_cregs(es); r++) {
          int row, col;
          kron_tc_frag_c(es, lane, r, &row, &col);
          visit(ctx, i * kron_tc_mrows(es) + row, j * KRON_TC_N + col, acc->c[i][j][lane][r]);
        }
}

/* tile `tile` between global memory and shared memory, thread by thread as the kernels walk
 * it (by t->tr; transposed tiles are loads only) */
static void emu_tile_copy(const kron_tiling *t, long long tile, int es, double *buf,
                          const void *gin, void *gout) {
  int vw = 16 / es;
  kron_radix r = kron_tile_radix(t, vw);
  long long gb = kron_tile_base(t, tile);
  for (int tid = 0; tid < KRON_THREADS; tid++) {
    kron_walk w = kron_walk_start(&r, tid, KRON_THREADS);
    for (long long e = tid; e < r.units; e += KRON_THREADS, kron_walk_next(&w)) {
      long long sm = kron_tile_sm(t, r.per, w.c, w.s, w.nb);
      long long ga = gb + kron_tile_goff(t, r.per, w.c, w.s, w.nb);
      for (int i = 0; i < r.per; i++) {
        if (gin)
          buf[sm + i] = ld(gin, es, ga + i);
        else
          st(gout, es, ga + i, buf[sm + i]);
      }
    }
  }
}

/* one contraction of the stage's axis l, src -> dst, unit by unit as the threads do */
static void emu_contract(const char *name, const kron_stage *stg, const int *f, int l, int es,
                         const double *P, long long lda, const double *src, double *dst, int *cnt) {
  int g = stg->k1 - stg->k0, mt = stg->mt[l], vw = 16 / es;
  kron_ctr c = kron_ctr_of(&stg->t, f, g, l);
  int tm = kron_mt_tm(mt), tn = kron_mt_tn(mt), rv = vw, cv = kron_mt_colvec(mt) ? vw : 1;
  int ma = kron_groups(c.f, tm), nl = kron_groups(c.nlo, tn), units = (int)c.H * ma * nl;
  for (int u = 0; u < units; u++) {
    int hi, ag, lg;
    kron_unit(u, ma, nl, &hi, &ag, &lg);
    long long base = hi * c.f * c.st;
    for (int rc = 0; rc < tm / rv; rc++) {
      long long a0 = kron_chunk0(rc, ma, ag, rv);
      if (a0 >= c.f) continue;
      if (a0 + rv > lda) emu_fail(name, "a row chunk runs past A's row");
      for (int i = 0; i < rv && a0 + i < c.f; i++) {
        long long a = a0 + i;
        for (int cc = 0; cc < tn / cv; cc++) {
          long long lo0 = kron_chunk0(cc, nl, lg, cv);
          if (lo0 >= c.nlo) continue;
          if (lo0 % c.V + cv > c.V) emu_fail(name, "a column chunk runs past a tile row");
          long long off = kron_lo_off((int)lo0, (int)c.V, (int)c.ld);
          for (int j = 0; j < cv; j++) {
            double acc = 0;
            for (long long b = 0; b < c.f; b++)
              acc += P[b * lda + a] * src[base + b * c.st + off + j];
            dst[base + a * c.st + off + j] = acc;
            cnt[base + a * c.st + off + j]++;
          }
        }
      }
    }
  }
  /* every valid element written once, the padding never */
  for (long long e = 0; e < stg->t.S * stg->t.ld; e++) {
    int want = e % stg->t.ld < stg->t.V;
    if (cnt[e] != want) emu_fail(name, "a contraction does not write each element once");
    cnt[e] = 0;
  }
}

/* A tensor-core stage's tile, warp by warp over the warp tiles (kron_tc_unit), each warp
 * storing its accumulators straight to global memory as the kernel does (row a at a·Q, column
 * v at kron_tile_coff); wcnt counts the writes of every output element (checked per stage). */
typedef struct {
  void *out;
  int *wcnt, es;
  long long base, Q, m0, n0;
  const kron_tiling *t;
} tc_store_ctx;

static void tc_store(void *ctx, int row, int col, double v) {
  tc_store_ctx *c = ctx;
  long long e = c->base + (c->m0 + row) * c->Q + kron_tile_coff(c->t, c->n0 + col);
  st(c->out, c->es, e, v);
  c->wcnt[e]++;
}

/* A stage's M x N x M tensor-core GEMM (A' in shared memory as copied: A[a][b] forward, A[b][a]
 * with trans), warp by warp over the units (kron_tc_unit); each unit's origin is written to
 * *m0, *n0 (fields of ctx) before visit(ctx, row, col, value) sees its accumulators. */
typedef struct {
  int M, N;
  long long b_sk, b_sn;
} emu_tc_shape;

static void emu_tc_warps(const char *name, const kron_stage *stg, int es, int trans,
                         emu_tc_shape sh, const double *As, long long lda, const double *src,
                         void (*visit)(void *, int, int, double), void *ctx, long long *m0,
                         long long *n0) {
  int units = kron_tc_units(es, sh.M, sh.N, stg->wm, stg->wn);
  long long a_sm = trans ? 1 : lda, a_sk = trans ? lda : 1;
  emu_acc *acc = hx_host_alloc(sizeof *acc, "v3 tensor-core accumulators");
  for (int warp = 0; warp < KRON_THREADS / 32; warp++)
    for (int u = warp; u < units; u += KRON_THREADS / 32) {
      int um0, un0;
      kron_tc_unit(u, es, sh.N, stg->wm, stg->wn, &um0, &un0);
      memset(acc, 0, sizeof *acc);
      emu_tc_gemm(name, es, stg->wm, stg->wn, acc, As, a_sm, a_sk, src, sh.b_sk, sh.b_sn, um0, un0,
                  0, sh.M);
      *m0 = um0;
      *n0 = un0;
      emu_tc_each(es, stg->wm, stg->wn, acc, visit, ctx);
    }
  hx_host_free(acc);
}

static void emu_contract_tc(const char *name, const kron_stage *stg, int f, int es, int trans,
                            const double *As, long long lda, const double *src, void *out,
                            long long base, int *wcnt) {
  emu_tc_shape sh = {f, (int)stg->t.V, stg->t.tr ? 1 : stg->t.ld, stg->t.tr ? stg->t.ld : 1};
  tc_store_ctx c = {out, wcnt, es, base, stg->t.Q, 0, 0, &stg->t};
  emu_tc_warps(name, stg, es, trans, sh, As, lda, src, tc_store, &c, &c.m0, &c.n0);
}

/* One contraction of the pair stage's tile (make_tc_pair in kron_algo.c): the slab's
 * element (i, j) (i < rows: the first axis, j < L: the second) at i·ld + j in shared memory,
 * i·L + j from the tile's base in global memory.
 *   rows:   out(a, j) = sum_b A'(a, b) in(b, j): C(a, j), an fa x fb x fa GEMM, B k-major
 *   within: out(i, a) = sum_b A'(a, b) in(i, b): C(a, i), fb x fa x fb, B n-major
 * Stored as the kernel does, to dst in shared memory (counted in cnt) and/or global memory
 * (wcnt; out NULL: not kept). */
typedef struct {
  double *dst;
  int *cnt, *wcnt, es, within;
  void *out;
  long long ld, L, base, m0, n0;
} pair_store_ctx;

static void pair_store(void *ctx, int row, int col, double v) {
  pair_store_ctx *c = ctx;
  long long a = c->m0 + row, n = c->n0 + col, i = c->within ? n : a, j = c->within ? a : n;
  if (c->dst) {
    c->dst[i * c->ld + j] = v;
    c->cnt[i * c->ld + j]++;
  }
  if (c->out) {
    st(c->out, c->es, c->base + i * c->L + j, v);
    c->wcnt[c->base + i * c->L + j]++;
  }
}

static void emu_contract_pair(const char *name, const kron_stage *stg, int es, int trans,
                              int within, const double *As, long long lda, const double *src,
                              double *dst, int *cnt, void *out, long long base, int *wcnt) {
  long long ld = stg->t.ld, rows = kron_tr_rows(&stg->t), L = kron_tr_rowlen(&stg->t);
  emu_tc_shape sh = {(int)(within ? L : rows), (int)(within ? rows : L), within ? 1 : ld,
                     within ? ld : 1};
  pair_store_ctx c = {dst, cnt, wcnt, es, within, out, ld, L, base, 0, 0};
  emu_tc_warps(name, stg, es, trans, sh, As, lda, src, pair_store, &c, &c.m0, &c.n0);
}

/* the pair stage's tile: forward the rows (axis k0) then within them (k0 + 1), backward the
 * other way round; the first result to the work buffer (each slab element once) and the side
 * output, the second to `out` */
static void emu_pair_tile(const char *name, const kron_stage *stg, int es, int trans,
                          const kron_stage_smem *L, double *sm, int *cnt, long long tile,
                          void *side, int *scnt, void *out, int *wcnt) {
  double *src = sm + L->buf[0], *dst = sm + L->buf[2];
  long long base = kron_tile_base(&stg->t, tile), rows = kron_tr_rows(&stg->t);
  long long row_len = kron_tr_rowlen(&stg->t);
  fill_nan(dst, L->buf_elems);
  for (int j = 0; j < 2; j++) {
    int l = trans ? 1 - j : j; /* l = 0: the rows, 1: within them */
    emu_contract_pair(name, stg, es, trans, l, sm + L->a[l], L->lda[l], j ? dst : src,
                      j ? NULL : dst, cnt, j ? out : side, base, j ? wcnt : scnt);
  }
  for (long long e = 0; e < L->buf_elems; e++) {
    int want = e / stg->t.ld < rows && e % stg->t.ld < row_len;
    if (cnt[e] != want)
      emu_fail(name, "a pair stage's contraction does not write each element once");
    cnt[e] = 0;
  }
}

static void cpu_stage(kron_be *be, const char *name, const kron_shape *s, const kron_stage *stg,
                      int trans, const void *const *Ak, const void *in, void *out,
                      void *const *side) {
  double t0 = step_begin(be);
  int es = be->es, g = stg->k1 - stg->k0;
  char why[256];
  if (kron_stage_check(s, stg, es, why, sizeof why)) emu_fail(name, why);
  kron_stage_smem L;
  kron_stage_layout(s, stg, es, trans, &L);
  if ((size_t)L.total * (size_t)es > stg->smem) emu_fail(name, "layout beyond the stage's smem");
  double *sm = hx_host_alloc((size_t)L.total * sizeof *sm, "v3 shared memory");
  int *cnt = hx_host_alloc((size_t)L.buf_elems * sizeof *cnt, "v3 write counts");
  memset(cnt, 0, (size_t)L.buf_elems * sizeof *cnt);
  fill_nan(sm, L.total);
  const int *f = &s->f[stg->k0];
  for (int l = 0; l < g; l++)
    emu_load_a(sm + L.a[l], L.lda[l], Ak[stg->k0 + l], es, f[l], trans || stg->mt[l] == KRON_MT_TC);
  long long nout = s->batch * s->n;
  int *wcnt = NULL, *scnt = NULL, pair = stg->mt[0] == KRON_MT_TC && g == 2;
  if (stg->mt[0] == KRON_MT_TC) {
    wcnt = hx_host_alloc((size_t)nout * sizeof *wcnt, "v3 output write counts");
    memset(wcnt, 0, (size_t)nout * sizeof *wcnt);
  }
  if (pair && side[0]) {
    scnt = hx_host_alloc((size_t)nout * sizeof *scnt, "v3 side output write counts");
    memset(scnt, 0, (size_t)nout * sizeof *scnt);
  }
  for (long long tile = 0; tile < stg->t.tiles; tile++) {
    double *src = sm + L.buf[0], *dst = sm + L.buf[2];
    fill_nan(src, L.buf_elems);
    emu_tile_copy(&stg->t, tile, es, src, in, NULL);
    if (pair) {
      emu_pair_tile(name, stg, es, trans, &L, sm, cnt, tile, side[0], scnt, out, wcnt);
      continue;
    }
    if (wcnt) {
      emu_contract_tc(name, stg, f[0], es, trans, sm + L.a[0], L.lda[0], src, out,
                      kron_tile_base(&stg->t, tile), wcnt);
      continue;
    }
    for (int j = 0; j < g; j++) {
      int l = trans ? g - 1 - j : j;
      fill_nan(dst, L.buf_elems);
      emu_contract(name, stg, f, l, es, sm + L.a[l], L.lda[l], src, dst, cnt);
      double *sw = src;
      src = dst;
      dst = sw;
      if (j + 1 < g && side[j]) emu_tile_copy(&stg->t, tile, es, src, NULL, side[j]);
    }
    emu_tile_copy(&stg->t, tile, es, src, NULL, out);
  }
  for (long long e = 0; wcnt && e < nout; e++)
    if (wcnt[e] != 1 || (scnt && scnt[e] != 1))
      emu_fail(name, "a tensor-core stage does not write each output once");
  hx_host_free(scnt);
  hx_host_free(wcnt);
  hx_host_free(cnt);
  hx_host_free(sm);
  step_end(be, name, t0);
}

/* gA_k on the tensor cores: output block by block, split by split, warp by warp; the kp warps
 * of a unit meet in the block's sums (each output covered kp times), added once per block */
typedef struct {
  double *dst;
  int *cnt;
  long long ld, m0, n0;
} tc_sum_ctx;

static void tc_sum(void *ctx, int row, int col, double v) {
  tc_sum_ctx *c = ctx;
  long long e = (c->m0 + row) * c->ld + c->n0 + col;
  c->dst[e] += v;
  c->cnt[e]++;
}

static void emu_grad_tc(const char *name, const kron_shape *s, int k, const kron_gstep *gs, int es,
                        const void *G, const void *T, void *gA) {
  long long f = s->f[k], slot = kron_gstep_slot_elems(gs), ldp = gs->t.ld, ob = gs->ob;
  int nw = KRON_THREADS / 32, units = nw / gs->kp;
  double *gt = hx_host_alloc(2 * (size_t)slot * sizeof *gt, "v3 gradient tiles"), *tt = gt + slot;
  emu_acc *acc = hx_host_alloc((size_t)nw * sizeof *acc, "v3 tensor-core accumulators");
  double *sum = hx_host_alloc((size_t)(ob * ob) * sizeof *sum, "v3 gradient sums");
  int *cnt = hx_host_alloc((size_t)(ob * ob) * sizeof *cnt, "v3 gradient counts");
  /* transposed tiles: G(v, i) at v·ld + i; else at i·ld + v (T likewise) */
  long long sa = gs->t.tr ? 1 : ldp, sk = gs->t.tr ? ldp : 1;
  for (int blk = 0; blk < gs->nob * gs->nob; blk++) {
    long long i0 = (long long)(blk / gs->nob) * ob, j0 = (long long)(blk % gs->nob) * ob;
    for (int c = 0; c < gs->ksplit; c++) {
      long long ta, tb;
      kron_split_range(gs->t.tiles, c, gs->ksplit, &ta, &tb);
      memset(acc, 0, (size_t)nw * sizeof *acc);
      for (long long tile = ta; tile < tb; tile++) {
        fill_nan(gt, 2 * slot);
        emu_tile_copy(&gs->t, tile, es, gt, G, NULL);
        emu_tile_copy(&gs->t, tile, es, tt, T, NULL);
        for (int warp = 0; warp < nw; warp++) {
          int m0, n0;
          long long v0, v1;
          kron_tc_unit(warp % units, es, (int)ob, gs->wm, gs->wn, &m0, &n0);
          kron_kp_range(gs->t.V, warp / units, gs->kp, &v0, &v1);
          emu_tc_gemm(name, es, gs->wm, gs->wn, &acc[warp], gt, sa, sk, tt, sk, sa, (int)i0 + m0,
                      (int)j0 + n0, (int)v0, (int)v1);
        }
      }
      memset(sum, 0, (size_t)(ob * ob) * sizeof *sum);
      memset(cnt, 0, (size_t)(ob * ob) * sizeof *cnt);
      for (int warp = 0; warp < nw; warp++) {
        int m0, n0;
        kron_tc_unit(warp % units, es, (int)ob, gs->wm, gs->wn, &m0, &n0);
        tc_sum_ctx cx = {sum, cnt, ob, m0, n0};
        emu_tc_each(es, gs->wm, gs->wn, &acc[warp], tc_sum, &cx);
      }
      for (long long e = 0; e < ob * ob; e++) {
        if (cnt[e] != gs->kp) emu_fail(name, "tensor-core gradient warps do not cover the block");
        long long ai = s->aoff[k] + (i0 + e / ob) * f + j0 + e % ob;
        st(gA, es, ai, ld(gA, es, ai) + sum[e]);
      }
    }
  }
  hx_host_free(cnt);
  hx_host_free(sum);
  hx_host_free(acc);
  hx_host_free(gt);
}

/* gA_k of every axis: output block by block, split by split, thread by thread */
static void cpu_grad(kron_be *be, const char *name, const kron_shape *s, const kron_plan *p,
                     const void *const *G, const void *const *T, void *gA) {
  double t0 = step_begin(be);
  int es = be->es, vw = 16 / es;
  char why[256];
  for (int k = 0; k < s->m; k++) {
    const kron_gstep *gs = &p->ga[k];
    if (kron_gstep_check(s, k, gs, es, why, sizeof why)) emu_fail(name, why);
    if (gs->mt == KRON_MT_TC) {
      emu_grad_tc(name, s, k, gs, es, G[k], T[k], gA);
      continue;
    }
    long long f = s->f[k], slot = kron_gstep_slot_elems(gs), ldp = gs->t.ld;
    int tm = kron_mt_tm(gs->mt), tn = kron_mt_tn(gs->mt);
    int ma = kron_groups(gs->ob, tm), nl = kron_groups(gs->ob, tn), units = ma * nl;
    long long nthr = units * gs->kp;
    double *gt = hx_host_alloc(2 * (size_t)slot * sizeof *gt, "v3 gradient tiles"), *tt = gt + slot;
    double *acc = hx_host_alloc((size_t)(nthr * tm * tn) * sizeof *acc, "v3 gradient sums");
    for (int ob = 0; ob < gs->nob * gs->nob; ob++) {
      long long i0 = (long long)(ob / gs->nob) * gs->ob, j0 = (long long)(ob % gs->nob) * gs->ob;
      for (int c = 0; c < gs->ksplit; c++) {
        long long ta, tb;
        kron_split_range(gs->t.tiles, c, gs->ksplit, &ta, &tb);
        memset(acc, 0, (size_t)(nthr * tm * tn) * sizeof *acc);
        for (long long tile = ta; tile < tb; tile++) {
          fill_nan(gt, 2 * slot);
          emu_tile_copy(&gs->t, tile, es, gt, G[k], NULL);
          emu_tile_copy(&gs->t, tile, es, tt, T[k], NULL);
          for (long long th = 0; th < nthr; th++) {
            int hi, ag, lg;
            long long v0, v1;
            kron_unit((int)(th % units), ma, nl, &hi, &ag, &lg);
            kron_kp_range(gs->t.V, (int)(th / units), gs->kp, &v0, &v1);
            for (int rc = 0; rc < tm / vw; rc++) {
              long long r0 = kron_chunk0(rc, ma, ag, vw);
              if (r0 >= gs->ob || i0 + r0 >= f) continue;
              if (i0 + r0 + vw > ldp) emu_fail(name, "a gradient row chunk runs past a row");
              for (int cc = 0; cc < tn / vw; cc++) {
                long long c0 = kron_chunk0(cc, nl, lg, vw);
                if (c0 >= gs->ob || j0 + c0 >= f) continue;
                for (int i = 0; i < vw; i++)
                  for (int j = 0; j < vw; j++) {
                    double a = 0;
                    for (long long v = v0; v < v1; v++)
                      a += gt[v * ldp + i0 + r0 + i] * tt[v * ldp + j0 + c0 + j];
                    acc[(th * tm + rc * vw + i) * tn + cc * vw + j] += a;
                  }
              }
            }
          }
        }
        /* the block's atomics: the valid elements of every thread's micro-tile */
        for (long long th = 0; th < nthr; th++) {
          int hi, ag, lg;
          kron_unit((int)(th % units), ma, nl, &hi, &ag, &lg);
          for (int rc = 0; rc < tm / vw; rc++)
            for (int i = 0; i < vw; i++) {
              long long r = kron_chunk0(rc, ma, ag, vw) + i;
              if (r >= gs->ob || i0 + r >= f) continue;
              for (int cc = 0; cc < tn / vw; cc++)
                for (int j = 0; j < vw; j++) {
                  long long cidx = kron_chunk0(cc, nl, lg, vw) + j;
                  if (cidx >= gs->ob || j0 + cidx >= f) continue;
                  long long ai = s->aoff[k] + (i0 + r) * f + j0 + cidx;
                  st(gA, es, ai, ld(gA, es, ai) + acc[(th * tm + rc * vw + i) * tn + cc * vw + j]);
                }
            }
        }
      }
    }
    hx_host_free(acc);
    hx_host_free(gt);
  }
  step_end(be, name, t0);
}

static cpu_state cpu_states[2];

void kron_cpu_backend(kron_be *be, int es) {
  memset(be, 0, sizeof *be);
  be->es = es;
  be->impl = &cpu_states[es == 8];
  be->gemm = cpu_gemm;
  be->reduce = cpu_reduce;
  be->transpose = cpu_transpose;
  be->zero = cpu_zero;
  be->stage = cpu_stage;
  be->grad = cpu_grad;
}

void kron_cpu_set_prof(kron_be *be, kron_prof *p) {
  cpu_state *cs = be->impl;
  cs->prof = p;
  cs->t0 = hx_wall_ms();
}
