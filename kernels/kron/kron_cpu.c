/* kron_cpu.c: the backend of kron.h on the CPU. It emulates what the GPU backend calls:
 * cuBLAS's column-major (strided-batched) GEMM semantics, the batched transpose, the
 * reduction, and v3's stage and gradient kernels block by block and thread by thread with
 * kron_tile.h's index arithmetic, so `--device cpu --impl v1|v2|v3` runs the versions' exact
 * call sequences. Arithmetic is in double; buffers hold the run's dtype (float or double). */
#include "kron.h"

#include "harness.h"
#include "kron_tile.h"

#include <math.h>
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
 * backward's A^T chain: P = A); columns >= f are zero */
static void emu_load_a(double *dst, long long lda, const void *A, int es, int f, int trans) {
  for (long long r = 0; r < f; r++)
    for (long long c = 0; c < lda; c++)
      dst[r * lda + c] = c >= f ? 0 : trans ? ld(A, es, r * f + c) : ld(A, es, c * f + r);
}

/* tile `tile` between global memory and shared memory, thread by thread as the kernels walk
 * it (stage tiles, or the gradient's transposed ones: loads only) */
static void emu_tile_copy(const kron_tiling *t, int grad, long long tile, int es, double *buf,
                          const void *gin, void *gout) {
  int vw = 16 / es;
  kron_radix r = grad ? kron_grad_radix(t, vw) : kron_stage_radix(t, vw);
  long long gb = kron_tile_base(t, tile);
  for (int tid = 0; tid < KRON_THREADS; tid++) {
    kron_walk w = kron_walk_start(&r, tid, KRON_THREADS);
    for (long long e = tid; e < r.units; e += KRON_THREADS, kron_walk_next(&w)) {
      long long sm =
          grad ? kron_grad_sm(t, r.per, w.c, w.s, w.nb) : kron_stage_sm(t, r.per, w.c, w.s, w.nb);
      long long ga = gb + (grad ? kron_grad_goff(t, r.per, w.c, w.s, w.nb)
                                : kron_stage_goff(t, r.per, w.c, w.s, w.nb));
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

static void cpu_stage(kron_be *be, const char *name, const kron_shape *s, const kron_stage *stg,
                      int trans, const void *A, const void *in, void *out, void *const *side) {
  double t0 = step_begin(be);
  int es = be->es, g = stg->k1 - stg->k0;
  char why[256];
  if (kron_stage_check(s, stg, es, why, sizeof why)) emu_fail(name, why);
  kron_stage_smem L;
  kron_stage_layout(s, stg, es, &L);
  double *sm = hx_host_alloc((size_t)L.total * sizeof *sm, "v3 shared memory");
  int *cnt = hx_host_alloc((size_t)L.buf_elems * sizeof *cnt, "v3 write counts");
  memset(cnt, 0, (size_t)L.buf_elems * sizeof *cnt);
  fill_nan(sm, L.total);
  const int *f = &s->f[stg->k0];
  for (int l = 0; l < g; l++)
    emu_load_a(sm + L.a[l], L.lda[l], adv(A, es, s->aoff[stg->k0 + l]), es, f[l], trans);
  for (long long tile = 0; tile < stg->t.tiles; tile++) {
    double *src = sm + L.buf[0], *dst = sm + L.buf[2];
    fill_nan(src, L.buf_elems);
    emu_tile_copy(&stg->t, 0, tile, es, src, in, NULL);
    for (int j = 0; j < g; j++) {
      int l = trans ? g - 1 - j : j;
      fill_nan(dst, L.buf_elems);
      emu_contract(name, stg, f, l, es, sm + L.a[l], L.lda[l], src, dst, cnt);
      double *sw = src;
      src = dst;
      dst = sw;
      if (j + 1 < g && side[j]) emu_tile_copy(&stg->t, 0, tile, es, src, NULL, side[j]);
    }
    emu_tile_copy(&stg->t, 0, tile, es, src, NULL, out);
  }
  hx_host_free(cnt);
  hx_host_free(sm);
  step_end(be, name, t0);
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
          emu_tile_copy(&gs->t, 1, tile, es, gt, G[k], NULL);
          emu_tile_copy(&gs->t, 1, tile, es, tt, T[k], NULL);
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
