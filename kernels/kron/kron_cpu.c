/* kron_cpu.c: the backend of kron.h on the CPU. It emulates what the GPU backend calls:
 * cuBLAS's column-major (strided-batched) GEMM semantics, the batched transpose, the
 * reduction, and v3's group kernels tile by tile with kron_tile.h's index arithmetic, so
 * `--device cpu --impl v1|v2|v3` runs the versions' exact call sequences. Arithmetic is in
 * double; buffers hold the run's dtype (float or double). */
#include "kron.h"

#include "harness.h"
#include "kron_tile.h"

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

/* out tile = A on tile axis (stride stv, length f) of in tile; transpose: A^T */
static void tile_axis(const double *in, double *out, long long tile, long long stv, int f,
                      const void *A, int es, int transpose) {
  for (long long e = 0; e < tile; e++) {
    int i = kron_axis_index(e, stv, f);
    long long first = kron_fiber_first(e, stv, f);
    double acc = 0;
    for (int j = 0; j < f; j++) {
      double a = transpose ? ld(A, es, (long long)j * f + i) : ld(A, es, (long long)i * f + j);
      acc += a * in[first + j * stv];
    }
    out[e] = acc;
  }
}

static void cpu_group_fwd(kron_be *be, const char *name, const kron_shape *s, const kron_group *g,
                          const void *A, const void *in, void *out) {
  double t0 = step_begin(be);
  int es = be->es, mg = g->k1 - g->k0;
  long long tile = kron_tile_elems(g), blocks = kron_group_blocks(g, s->batch);
  double *buf = hx_host_alloc(2 * (size_t)tile * sizeof *buf, "v3 tile");
  for (long long blk = 0; blk < blocks; blk++) {
    double *cur = buf, *nxt = buf + tile;
    for (long long t = 0; t < tile; t++) cur[t] = ld(in, es, kron_tile_global(g, blk, t));
    for (int l = 0; l < mg; l++) {
      int k = g->k0 + l;
      tile_axis(cur, nxt, tile, g->st[l], s->f[k], adv(A, es, s->aoff[k]), es, 0);
      double *sw = cur;
      cur = nxt;
      nxt = sw;
    }
    for (long long t = 0; t < tile; t++) st(out, es, kron_tile_global(g, blk, t), cur[t]);
  }
  hx_host_free(buf);
  step_end(be, name, t0);
}

static void cpu_group_bwd(kron_be *be, const char *name, const kron_shape *s, const kron_group *g,
                          const void *A, const void *t_in, const void *g_out, void *g_in,
                          void *gA) {
  double t0 = step_begin(be);
  int es = be->es, mg = g->k1 - g->k0;
  long long tile = kron_tile_elems(g), blocks = kron_group_blocks(g, s->batch);
  double *buf = hx_host_alloc((size_t)(mg + 2) * (size_t)tile * sizeof *buf, "v3 tiles");
  for (long long blk = 0; blk < blocks; blk++) {
    double *T = buf, *cur = buf + (size_t)mg * tile, *nxt = cur + tile;
    for (long long t = 0; t < tile; t++) {
      long long ge = kron_tile_global(g, blk, t);
      T[t] = ld(t_in, es, ge);
      cur[t] = ld(g_out, es, ge);
    }
    for (int l = 0; l + 1 < mg; l++) {
      int k = g->k0 + l;
      tile_axis(T + l * tile, T + (l + 1) * tile, tile, g->st[l], s->f[k], adv(A, es, s->aoff[k]),
                es, 0);
    }
    for (int l = mg - 1; l >= 0; l--) {
      int k = g->k0 + l, f = s->f[k];
      long long stv = g->st[l], nfib = tile / f;
      const double *Tl = T + l * tile;
      for (int i = 0; i < f; i++)
        for (int j = 0; j < f; j++) {
          /* as the GPU's tile_grad: fibre (hi, lo) = element hi·st·f + i·st + lo */
          double acc = 0;
          for (long long hi = 0; hi < nfib / stv; hi++)
            for (long long lo = 0; lo < stv; lo++)
              acc += cur[hi * stv * f + i * stv + lo] * Tl[hi * stv * f + j * stv + lo];
          long long ai = s->aoff[k] + (long long)i * f + j;
          st(gA, es, ai, ld(gA, es, ai) + acc);
        }
      tile_axis(cur, nxt, tile, stv, f, adv(A, es, s->aoff[k]), es, 1);
      double *sw = cur;
      cur = nxt;
      nxt = sw;
    }
    for (long long t = 0; t < tile; t++) st(g_in, es, kron_tile_global(g, blk, t), cur[t]);
  }
  hx_host_free(buf);
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
  be->group_fwd = cpu_group_fwd;
  be->group_bwd = cpu_group_bwd;
}

void kron_cpu_set_prof(kron_be *be, kron_prof *p) {
  cpu_state *cs = be->impl;
  cs->prof = p;
  cs->t0 = hx_wall_ms();
}
