/* test_kron: the Kronecker layer's CPU pieces against independent formulations.
 *  - the reference forward against y = x·K^T with the explicit Kronecker matrix K
 *  - the reference backward against finite differences of L = <gy, y> (L is linear in x and
 *    in each A_k, so central differences are exact up to rounding)
 *  - v1, v2, v3 call sequences on the CPU backend (kron_cpu.c) against the reference, fp64
 *    and fp32; v3 fused and per axis, under shared-memory budgets that force other tilings
 *    (the CPU backend emulates v3's kernels thread by thread and checks that every
 *    contraction writes each element once)
 *  - v3's plan: stages that cover the axes, tiles that cover the rows (load and store order
 *    included), the study shapes' plans as the PERF notes predict them, unsupported factors
 *  - a wrong formulation (A transposed) is caught: the comparison can fail */
#include "../check.h"
#include "harness.h"
#include "kron.h"
#include "kron_tile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  kron_shape s;
  double *x, *A, *gy;
} inputs;

static void make_inputs(inputs *in, long long batch, int m, const int *f, uint64_t seed) {
  char why[128];
  int rc = kron_shape_init(&in->s, batch, m, f, why, sizeof why);
  CHECKF(rc == 0, "%s", why);
  long long bn = batch * in->s.n, na = in->s.aoff[m];
  float *xf = malloc((size_t)bn * 4), *gf = malloc((size_t)bn * 4), *af = malloc((size_t)na * 4);
  kron_fill_inputs(&in->s, seed, xf, af, gf);
  in->x = malloc((size_t)bn * 8);
  in->gy = malloc((size_t)bn * 8);
  in->A = malloc((size_t)na * 8);
  for (long long i = 0; i < bn; i++) in->x[i] = xf[i], in->gy[i] = gf[i];
  for (long long i = 0; i < na; i++) in->A[i] = af[i];
  free(xf);
  free(gf);
  free(af);
}

static void free_inputs(inputs *in) {
  free(in->x);
  free(in->A);
  free(in->gy);
}

/* y = x·K^T against the reference forward */
static void test_dense(long long batch, int m, const int *f) {
  inputs in;
  make_inputs(&in, batch, m, f, 7);
  const kron_shape *s = &in.s;
  long long n = s->n, bn = batch * n;
  double *K = malloc((size_t)(n * n) * 8), *yd = malloc((size_t)bn * 8),
         *y = malloc((size_t)bn * 8);
  kron_ref_dense(s, in.A, K);
  for (long long b = 0; b < batch; b++)
    for (long long r = 0; r < n; r++) {
      double acc = 0;
      for (long long c = 0; c < n; c++) acc += K[r * n + c] * in.x[b * n + c];
      yd[b * n + r] = acc;
    }
  kron_ref_fwd(s, in.x, in.A, y);
  double e = check_rel_l2(y, yd, bn);
  CHECKF(e < 1e-13, "dense vs reference forward, m=%d n=%lld: rel %.3e", m, n, e);
  /* and the backward's gx = gy·K */
  double *gx = malloc((size_t)bn * 8), *gxd = malloc((size_t)bn * 8),
         *gA = malloc((size_t)s->aoff[m] * 8);
  kron_ref_bwd(s, in.x, in.A, in.gy, gx, gA);
  for (long long b = 0; b < batch; b++)
    for (long long c = 0; c < n; c++) {
      double acc = 0;
      for (long long r = 0; r < n; r++) acc += in.gy[b * n + r] * K[r * n + c];
      gxd[b * n + c] = acc;
    }
  e = check_rel_l2(gx, gxd, bn);
  CHECKF(e < 1e-13, "dense vs reference gx, m=%d: rel %.3e", m, e);
  free(K), free(yd), free(y), free(gx), free(gxd), free(gA);
  free_inputs(&in);
}

static double loss(const kron_shape *s, const double *x, const double *A, const double *gy,
                   double *y) {
  kron_ref_fwd(s, x, A, y);
  double l = 0;
  for (long long i = 0; i < s->batch * s->n; i++) l += gy[i] * y[i];
  return l;
}

/* gx and every gA_k against central differences, at every element (small shapes) */
static void test_finite_differences(long long batch, int m, const int *f) {
  inputs in;
  make_inputs(&in, batch, m, f, 11);
  const kron_shape *s = &in.s;
  long long bn = batch * s->n, na = s->aoff[m];
  double *gx = malloc((size_t)bn * 8), *gA = malloc((size_t)na * 8), *y = malloc((size_t)bn * 8);
  kron_ref_bwd(s, in.x, in.A, in.gy, gx, gA);
  const double h = 0.5;
  double worst = 0;
  for (long long i = 0; i < bn; i++) {
    double keep = in.x[i];
    in.x[i] = keep + h;
    double lp = loss(s, in.x, in.A, in.gy, y);
    in.x[i] = keep - h;
    double lm = loss(s, in.x, in.A, in.gy, y);
    in.x[i] = keep;
    double fd = (lp - lm) / (2 * h), err = fabs(fd - gx[i]) / (1 + fabs(fd));
    worst = err > worst ? err : worst;
  }
  CHECKF(worst < 1e-12, "finite differences vs gx, m=%d: worst %.3e", m, worst);
  worst = 0;
  for (long long i = 0; i < na; i++) {
    double keep = in.A[i];
    in.A[i] = keep + h;
    double lp = loss(s, in.x, in.A, in.gy, y);
    in.A[i] = keep - h;
    double lm = loss(s, in.x, in.A, in.gy, y);
    in.A[i] = keep;
    double fd = (lp - lm) / (2 * h), err = fabs(fd - gA[i]) / (1 + fabs(fd));
    worst = err > worst ? err : worst;
  }
  CHECKF(worst < 1e-12, "finite differences vs gA, m=%d: worst %.3e", m, worst);
  free(gx), free(gA), free(y);
  free_inputs(&in);
}

static kron_plan_cfg h100_cfg_tc(size_t budget, int fuse, int tc) {
  kron_plan_cfg c = {budget, 228 * 1024, 132, fuse, tc, 0, 0, KRON_ROUTE_STAGES};
  return c;
}
static kron_plan_cfg h100_cfg(size_t budget, int fuse) {
  return h100_cfg_tc(budget, fuse, KRON_TC_AUTO);
}

/* stages and gradient steps of a plan on the tensor cores */
static int tc_steps(const kron_plan *p, int m) {
  int n = 0;
  for (int i = 0; i < p->nstages; i++) n += p->st[i].mt[0] == KRON_MT_TC;
  for (int k = 0; p->has_grad && k < m; k++) n += p->ga[k].mt == KRON_MT_TC;
  return n;
}

/* one version on the CPU backend against the reference; returns the worst rel error */
static double run_version(const inputs *in, kron_version v, int es, const kron_plan_cfg *cfg,
                          int *nstages, int *ntc) {
  const kron_shape *s = &in->s;
  long long bn = s->batch * s->n, na = s->aoff[s->m];
  kron_plan plan[2];
  char why[512];
  for (int p = 0; p < 2; p++)
    if (kron_plan_make(s, es, (kron_pass)p, cfg, &plan[p], why, sizeof why) != 0) {
      CHECKF(0, "plan: %s", why);
      return INFINITY;
    }
  if (nstages) *nstages = plan[1].nstages;
  if (ntc) *ntc = tc_steps(&plan[1], s->m);
  long long sv, sc, pt;
  kron_ws_elems(s, v, &plan[0], &plan[1], &sv, &sc, &pt);
  kron_bufs b;
  memset(&b, 0, sizeof b);
  size_t e = (size_t)es;
  b.x = malloc((size_t)bn * e), b.gy = malloc((size_t)bn * e), b.A = malloc((size_t)na * e);
  b.y = malloc((size_t)bn * e), b.gx = malloc((size_t)bn * e), b.gA = malloc((size_t)na * e);
  b.saved = malloc((size_t)(sv + 1) * e), b.scratch = malloc((size_t)(sc + 1) * e);
  b.part = malloc((size_t)(pt + 1) * e);
  const double *src[3] = {in->x, in->gy, in->A};
  void *dst[3] = {b.x, b.gy, b.A};
  long long cnt[3] = {bn, bn, na};
  for (int t = 0; t < 3; t++)
    for (long long i = 0; i < cnt[t]; i++) {
      if (es == 8)
        ((double *)dst[t])[i] = src[t][i];
      else
        ((float *)dst[t])[i] = (float)src[t][i];
    }
  memset(b.y, 0xff, (size_t)bn * e);
  memset(b.gx, 0xff, (size_t)bn * e);
  memset(b.gA, 0xff, (size_t)na * e);
  kron_be be;
  kron_cpu_backend(&be, es);
  kron_run_fwd(&be, v, s, &plan[0], &b);
  kron_run_bwd(&be, v, s, &plan[0], &plan[1], &b);
  double *y = malloc((size_t)bn * 8), *gx = malloc((size_t)bn * 8), *gA = malloc((size_t)na * 8);
  double *ry = malloc((size_t)bn * 8), *rgx = malloc((size_t)bn * 8), *rgA = malloc((size_t)na * 8);
  for (long long i = 0; i < bn; i++) {
    y[i] = es == 8 ? ((double *)b.y)[i] : ((float *)b.y)[i];
    gx[i] = es == 8 ? ((double *)b.gx)[i] : ((float *)b.gx)[i];
  }
  for (long long i = 0; i < na; i++) gA[i] = es == 8 ? ((double *)b.gA)[i] : ((float *)b.gA)[i];
  kron_ref_fwd(s, in->x, in->A, ry);
  kron_ref_bwd(s, in->x, in->A, in->gy, rgx, rgA);
  double worst = check_rel_l2(y, ry, bn), e2 = check_rel_l2(gx, rgx, bn);
  worst = e2 > worst || isnan(e2) ? e2 : worst;
  for (int k = 0; k < s->m; k++) {
    long long ff = (long long)s->f[k] * s->f[k];
    e2 = check_rel_l2(gA + s->aoff[k], rgA + s->aoff[k], ff);
    worst = e2 > worst || isnan(e2) ? e2 : worst;
  }
  void *all[] = {b.x,    b.gy, b.A, b.y, b.gx, b.gA, b.saved, b.scratch,
                 b.part, y,    gx,  gA,  ry,   rgx,  rgA};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) free(all[i]);
  return worst;
}

/* v3's pair stage (the last two axes in one tensor-core stage, forward and backward) against
 * the reference, on shapes small enough for the CPU emulation: a GPU of few SMs (the plan wants
 * a slab per SM) and 32 KiB per block (the whole row does not fit one stage) */
static void check_plan_cover(const kron_shape *s, const kron_plan *p, int es, const char *what);

static void test_pair(long long batch, int m, const int *f) {
  inputs in;
  make_inputs(&in, batch, m, f, 11);
  for (int es = 4; es <= 8; es += 4) {
    kron_plan_cfg cfg = h100_cfg(32 * 1024, KRON_FUSE_AUTO);
    cfg.nsm = 2;
    kron_plan p;
    char why[512];
    CHECKF(kron_plan_make(&in.s, es, KRON_BWD, &cfg, &p, why, sizeof why) == 0, "%s", why);
    const kron_stage *last = &p.st[p.nstages - 1];
    CHECKF(last->k0 == m - 2 && last->k1 == m && last->mt[0] == KRON_MT_TC &&
               kron_tr_rows(&last->t) == f[m - 2] && last->t.rowlen == f[m - 1] && last->t.tr,
           "dtype=%d m=%d: the last stage is axes %d-%d mt %d rows %lld", es, m, last->k0 + 1,
           last->k1, last->mt[0], kron_tr_rows(&last->t));
    check_plan_cover(&in.s, &p, es, "pair stage");
    double e = run_version(&in, KRON_V3, es, &cfg, NULL, NULL);
    CHECKF(e < (es == 8 ? 1e-13 : 2e-6), "pair stage dtype=%d m=%d f=%dx%d: rel %.3e", es, m,
           f[m - 2], f[m - 1], e);
  }
  free_inputs(&in);
}

/* v3 routed to v2's GEMMs: the reference's outputs in both dtypes, also with the routes mixed
 * (the fp64 forward through the GEMMs, its backward through the stages, which read the
 * intermediates the GEMMs saved); the auto route's shapes; a knob forcing a stage plan wins. */
static void test_gemm_route(void) {
  int f32[] = {32, 32}, f128[] = {128, 128}, f16[] = {16, 16, 16}, f64[] = {64, 64, 64};
  kron_shape s32, s128, s16, s64;
  char why[256];
  CHECK(kron_shape_init(&s32, 4, 2, f32, why, sizeof why) == 0);
  CHECK(kron_shape_init(&s128, 2, 2, f128, why, sizeof why) == 0);
  CHECK(kron_shape_init(&s16, 4, 3, f16, why, sizeof why) == 0);
  CHECK(kron_shape_init(&s64, 2, 3, f64, why, sizeof why) == 0);
  CHECK(kron_gemm_route(&s128, 4, KRON_FWD) && kron_gemm_route(&s128, 4, KRON_BWD));
  CHECK(kron_gemm_route(&s32, 8, KRON_FWD) && !kron_gemm_route(&s32, 8, KRON_BWD));
  CHECK(kron_gemm_route(&s64, 8, KRON_FWD) && !kron_gemm_route(&s64, 4, KRON_FWD));
  CHECK(!kron_gemm_route(&s32, 4, KRON_FWD) && !kron_gemm_route(&s16, 8, KRON_FWD));
  inputs in;
  make_inputs(&in, 4, 2, f32, 5);
  for (int es = 4; es <= 8; es += 4)
    for (int route = KRON_ROUTE_AUTO; route <= KRON_ROUTE_GEMM; route += 2) {
      kron_plan_cfg cfg = h100_cfg(227 * 1024, KRON_FUSE_AUTO);
      cfg.route = route;
      kron_plan fwd, bwd;
      CHECK(kron_plan_make(&in.s, es, KRON_FWD, &cfg, &fwd, why, sizeof why) == 0);
      CHECK(kron_plan_make(&in.s, es, KRON_BWD, &cfg, &bwd, why, sizeof why) == 0);
      int want_fwd = route == KRON_ROUTE_GEMM || es == 8, want_bwd = route == KRON_ROUTE_GEMM;
      CHECKF(fwd.gemm == want_fwd && bwd.gemm == want_bwd && (bwd.gemm || bwd.nstages > 0),
             "route=%s dtype=%d: fwd gemm=%d bwd gemm=%d", kron_route_names[route], es, fwd.gemm,
             bwd.gemm);
      double e = run_version(&in, KRON_V3, es, &cfg, NULL, NULL);
      CHECKF(e < (es == 8 ? 1e-13 : 2e-6), "v3 route=%s dtype=%d: rel %.3e",
             kron_route_names[route], es, e);
    }
  kron_plan_cfg forced = h100_cfg(227 * 1024, KRON_FUSE_OFF);
  forced.route = KRON_ROUTE_AUTO;
  kron_plan p;
  CHECK(kron_plan_make(&in.s, 8, KRON_FWD, &forced, &p, why, sizeof why) == 0 && !p.gemm);
  free_inputs(&in);
}

/* Every version against the reference; returns how many v3 runs used the tensor cores. */
static int test_versions(long long batch, int m, const int *f) {
  inputs in;
  make_inputs(&in, batch, m, f, 3);
  /* v3: fused (auto on these small shapes) and per axis, under budgets that force small tiles,
   * with and without the tensor cores */
  size_t budgets[] = {227 * 1024, 8192, 2048};
  int fuses[] = {KRON_FUSE_AUTO, KRON_FUSE_ON, KRON_FUSE_OFF}, tc_runs = 0;
  for (int v = 0; v < KRON_NVER; v++)
    for (int es = 4; es <= 8; es += 4)
      for (int bi = 0; bi < (v == KRON_V3 ? 3 : 1); bi++)
        for (int fi = 0; fi < (v == KRON_V3 ? 3 : 1); fi++)
          for (int tc = 0; tc < (v == KRON_V3 ? 2 : 1); tc++) {
            int ng = 0, ntc = 0;
            kron_plan probe;
            char why[512];
            kron_plan_cfg cfg = h100_cfg_tc(budgets[bi], fuses[fi], tc);
            if (v == KRON_V3 && kron_plan_make(&in.s, es, KRON_BWD, &cfg, &probe, why, sizeof why))
              continue; /* a factor too big for this budget: the plan says so (tested below) */
            double e = run_version(&in, (kron_version)v, es, &cfg, &ng, &ntc);
            double tol = es == 8 ? 1e-13 : 2e-6;
            CHECKF(e < tol, "%s dtype=%d m=%d f1=%d budget=%zu fuse=%s tc=%s stages=%d: rel %.3e",
                   kron_version_names[v], es, m, f[0], budgets[bi], kron_fuse_names[fuses[fi]],
                   kron_tc_names[tc], ng, e);
            CHECKF(tc == KRON_TC_AUTO || ntc == 0, "tc=off planned %d tensor-core steps", ntc);
            tc_runs += ntc > 0;
          }
  free_inputs(&in);
  return tc_runs;
}

/* every element of the rows in exactly one tile, and the load/store order visits each element
 * of a tile once (a stage's order, or a transposed tile's: the gradient's, tensor-core stages
 * with Q = 1) */
static void check_tiling_cover(const kron_shape *s, const kron_tiling *t, int es,
                               const char *what) {
  long long bn = s->batch * s->n, R = bn / (t->S * t->Q);
  int vw = 16 / es;
  char *seen = calloc((size_t)bn, 1);
  int ok = R * t->Q == t->tiles * t->V;
  for (long long tile = 0; tile < t->tiles && ok; tile++) {
    long long r0, q0;
    kron_tile_origin(t, tile, &r0, &q0);
    for (long long sv = 0; sv < t->S; sv++)
      for (long long v = 0; v < t->V; v++) seen[kron_tile_gaddr(t, r0, q0, sv, v)]++;
  }
  for (long long i = 0; i < bn && ok; i++) ok = seen[i] == 1;
  CHECKF(ok, "%s: tiles do not cover each element once", what);
  /* the walk of one tile: every thread of a block from its first unit, KRON_THREADS apart */
  int tr = t->tr;
  long long rows = kron_tr_rows(t);
  kron_radix rx = kron_tile_radix(t, vw);
  long long n = (tr ? t->V * rows : t->S) * t->ld;
  char *hit = calloc((size_t)n, 1);
  long long r0, q0, last = t->tiles - 1; /* the last tile: a nonzero origin */
  kron_tile_origin(t, last, &r0, &q0);
  long long gb = kron_tile_base(t, last);
  int in_range = 1;
  for (int tid = 0; tid < KRON_THREADS; tid++) {
    kron_walk w = kron_walk_start(&rx, tid, KRON_THREADS);
    for (long long e = tid; e < rx.units; e += KRON_THREADS, kron_walk_next(&w)) {
      long long sm = kron_tile_sm(t, rx.per, w.c, w.s, w.nb);
      long long ga = gb + kron_tile_goff(t, rx.per, w.c, w.s, w.nb);
      for (int i = 0; i < rx.per; i++) {
        /* the walk's global offset is the tile element's (kron_tile_gaddr); a transposed
         * tile's rows: v·rows + i, columns j, s = i·(S/rows) + j */
        long long row = (sm + i) / t->ld, col = (sm + i) % t->ld;
        long long want =
            tr ? kron_tile_gaddr(t, r0, q0, row % rows * (t->S / rows) + col, row / rows)
               : kron_tile_gaddr(t, r0, q0, row, col);
        in_range &= sm + i < n && ga + i == want;
        if (sm + i < n) hit[sm + i]++;
      }
    }
  }
  int once = in_range;
  for (long long i = 0; i < n; i++) /* valid elements once, row padding never */
    once &= hit[i] == ((tr ? i % t->ld < t->S / rows : i % t->ld < t->V) ? 1 : 0);
  CHECKF(once, "%s: the %s walk does not visit each element once", what,
         tr ? "transposed" : "stage");
  free(hit);
  free(seen);
}

static void check_plan_cover(const kron_shape *s, const kron_plan *p, int es, const char *what) {
  int next = 0;
  char why[512];
  for (int i = 0; i < p->nstages; i++) {
    const kron_stage *st = &p->st[i];
    CHECKF(st->k0 == next, "%s: stage %d starts at axis %d", what, i, st->k0);
    next = st->k1;
    CHECKF(kron_stage_check(s, st, es, why, sizeof why) == 0, "%s: %s", what, why);
    CHECK(st->smem <= p->smem_max);
    check_tiling_cover(s, &st->t, es, what);
  }
  CHECKF(next == s->m, "%s: stages end at axis %d", what, next);
  if (p->has_grad)
    for (int k = 0; k < s->m; k++) {
      CHECKF(kron_gstep_check(s, k, &p->ga[k], es, why, sizeof why) == 0, "%s: %s", what, why);
      check_tiling_cover(s, &p->ga[k].t, es, what);
    }
}

static void test_plan(void) {
  kron_shape s;
  char why[512];
  kron_plan p;
  kron_plan_cfg cfg = h100_cfg(227 * 1024, KRON_FUSE_AUTO);
  /* the study shapes, as the PERF notes (studies/kron-layer/README.md) plan them */
  static const int shapes[][5] = {
      {16, 32, 32, 0, 0}, {32, 128, 128, 0, 0}, {16, 16, 16, 16, 0}, {8, 64, 64, 64, 0}};
  for (int i = 0; i < 4; i++) {
    int m = shapes[i][3] ? (shapes[i][4] ? 4 : 3) : 2;
    CHECK(kron_shape_init(&s, shapes[i][0], m, &shapes[i][1], why, sizeof why) == 0);
    for (int es = 4; es <= 8; es += 4)
      for (int pass = 0; pass < 2; pass++) {
        CHECKF(kron_plan_make(&s, es, (kron_pass)pass, &cfg, &p, why, sizeof why) == 0, "%s", why);
        check_plan_cover(&s, &p, es, "study shape");
        CHECK(p.smem_max <= 227 * 1024);
        /* small shapes: tiles of at most 24 KiB, so that their slabs spread over 16 or more
         * blocks per stage: 16x32x32 fp32 one fused stage, fp64 one stage per axis,
         * 16x16x16x16 axis 1 then the pair stage of axes 2-3; 32x128x128: one stage per
         * axis; 8x64x64x64: axis 1, then the pair stage of axes 2-3 in fp32 (fp64's does not
         * fit two blocks per SM: one stage per axis) */
        int want = i == 0 ? (es == 4 ? 1 : 2) : i == 1 || i == 2 || es == 4 ? 2 : 3;
        CHECKF(p.nstages == want, "shape %d es %d: %d stages", i, es, p.nstages);
        for (int k = 0; k < p.nstages && (i == 0 || i == 2); k++)
          CHECKF(p.st[k].smem <= 24 * 1024 && p.st[k].t.tiles >= 16,
                 "small shape %d es %d stage %d: %zu bytes, %lld tiles", i, es, k, p.st[k].smem,
                 p.st[k].t.tiles);
        CHECK(i != 3 || es != 4 ||
              (p.st[1].k0 == 1 && p.st[1].t.rowlen == 64 && p.st[1].t.tiles == 512));
      }
  }
  /* 32x128x128 fp32: 128 tiles of 128 x 32 per axis (one per SM); on the tensor cores, warp
   * tiles of 2x4 mma tiles (32 x 32) for 4 of the 8 warps, rows padded to 8 mod 16 (conflict-free
   * k-major fragments); the last axis (Q = 1) as a transposed tile of 32 slabs, rows padded to
   * 4 mod 8 (n-major fragments), copied in 16-byte chunks; without them 4x4 micro-tiles */
  int f2[] = {128, 128};
  CHECK(kron_shape_init(&s, 32, 2, f2, why, sizeof why) == 0);
  CHECK(kron_plan_make(&s, 4, KRON_BWD, &cfg, &p, why, sizeof why) == 0);
  for (int i = 0; i < 2; i++) {
    CHECKF(p.st[i].t.tiles == 128 && p.st[i].t.V == 32, "stage %d: %lld tiles of V=%lld", i,
           p.st[i].t.tiles, p.st[i].t.V);
    CHECKF(p.st[i].mt[0] == KRON_MT_TC && p.st[i].wm == 2 && p.st[i].wn == 4,
           "stage %d: mt %d %dx%d", i, p.st[i].mt[0], p.st[i].wm, p.st[i].wn);
    CHECKF(p.st[i].t.tr == (i == 1) && p.st[i].t.ld == (i == 1 ? 132 : 40),
           "stage %d: transposed %d ld %lld", i, p.st[i].t.tr, p.st[i].t.ld);
    CHECK(p.st[i].grid == 128);
  }
  /* gA1 (Q = 128) reads untransposed tiles of 64 columns (16-byte copies, rows 4 mod 8), gA2
   * (Q = 1) transposed ones (rows of the factor, 8 mod 16) */
  for (int k = 0; k < 2; k++)
    CHECKF(p.ga[k].mt == KRON_MT_TC && p.ga[k].ob == 128 && p.ga[k].kp == 1 && p.ga[k].t.tr == k &&
               p.ga[k].t.vec && p.ga[k].t.ld == (k ? 136 : 68),
           "gA%d: mt %d ob %d kp %d tr %d ld %lld", k + 1, p.ga[k].mt, p.ga[k].ob, p.ga[k].kp,
           p.ga[k].t.tr, p.ga[k].t.ld);
  /* a warp tile the kernels do not instantiate fails the launch checks (no silent fallback) */
  kron_stage odd = p.st[0];
  odd.wm = 3;
  CHECK(kron_stage_check(&s, &odd, 4, why, sizeof why) == -1 && strstr(why, "warp tile 3x4"));
  kron_gstep oddg = p.ga[0];
  oddg.wn = 3;
  CHECK(kron_gstep_check(&s, 0, &oddg, 4, why, sizeof why) == -1);
  CHECK(p.st[0].t.vec == 1 && p.st[0].t.W == 32);  /* chunks of q, 16-byte copies */
  CHECK(p.st[1].t.NB == 32 && p.st[1].t.vec == 1); /* whole slabs, 16-byte copies */
  kron_plan_cfg fma = h100_cfg_tc(227 * 1024, KRON_FUSE_AUTO, KRON_TC_OFF);
  CHECK(kron_plan_make(&s, 4, KRON_BWD, &fma, &p, why, sizeof why) == 0);
  CHECK(p.st[0].mt[0] == KRON_MT_4x4 && p.st[1].mt[0] == KRON_MT_4x4 && tc_steps(&p, 2) == 0);
  CHECK(p.st[1].t.ld % 32 == 4); /* padded rows for the transposing loads */
  /* fusion on: the longest trailing range that fits; 8x64x64x64 fuses axes 2-3 */
  int f3[] = {64, 64, 64};
  CHECK(kron_shape_init(&s, 8, 3, f3, why, sizeof why) == 0);
  kron_plan_cfg on = h100_cfg(227 * 1024, KRON_FUSE_ON);
  CHECK(kron_plan_make(&s, 4, KRON_BWD, &on, &p, why, sizeof why) == 0);
  CHECKF(p.nstages == 2 && p.st[1].k0 == 1 && p.st[1].k1 == 3, "fuse on: %d stages", p.nstages);
  check_plan_cover(&s, &p, 4, "8x64x64x64 fused");
  /* fusion off: one stage per axis on the tensor cores: 512 tiles of 64 x 64, the last axis
   * transposed;
   * fp32's 2x4 warp tile runs two blocks per SM (its launch bounds), so 264 persistent blocks
   * that prefetch; a forced warp tile (REPRO_KRON_TC_TILE) replaces the plan's where it
   * divides the tile and sets the grid by its own launch bounds (1x2: three blocks per SM),
   * an unknown one is ignored */
  static const int forced[][4] = {/* tc_tile, wm, wn, grid */
                                  {0, 2, 4, 264},
                                  {1 * 8 + 4, 1, 4, 264},
                                  {1 * 8 + 2, 1, 2, 396},
                                  {3 * 8 + 3, 2, 4, 264}};
  for (int i = 0; i < 4; i++) {
    kron_plan_cfg c = h100_cfg(227 * 1024, KRON_FUSE_OFF);
    c.tc_tile = forced[i][0];
    CHECK(kron_plan_make(&s, 4, KRON_FWD, &c, &p, why, sizeof why) == 0 && p.nstages == 3);
    check_plan_cover(&s, &p, 4, "8x64x64x64 tensor cores");
    for (int k = 0; k < 3; k++)
      CHECKF(p.st[k].mt[0] == KRON_MT_TC && p.st[k].wm == forced[i][1] &&
                 p.st[k].wn == forced[i][2] && p.st[k].grid == forced[i][3] && p.st[k].prefetch &&
                 p.st[k].t.tr == (k == 2),
             "tc_tile %d stage %d: %dx%d grid %d prefetch %d tr %d", forced[i][0], k, p.st[k].wm,
             p.st[k].wn, p.st[k].grid, p.st[k].prefetch, p.st[k].t.tr);
  }
  /* small budgets and odd shapes: element-wise copies, padded rows, several stages */
  int f4[] = {3, 5, 2, 7};
  CHECK(kron_shape_init(&s, 2, 4, f4, why, sizeof why) == 0);
  for (int es = 4; es <= 8; es += 4)
    for (int fuse = 0; fuse < 3; fuse++) {
      kron_plan_cfg c = h100_cfg(1500, fuse);
      CHECKF(kron_plan_make(&s, es, KRON_BWD, &c, &p, why, sizeof why) == 0, "%s", why);
      check_plan_cover(&s, &p, es, "3x5x2x7");
    }
  /* a factor whose matrix does not fit: unsupported, the factor named */
  int big[] = {65536};
  CHECK(kron_shape_init(&s, 1, 1, big, why, sizeof why) == 0);
  CHECK(kron_plan_make(&s, 4, KRON_FWD, &cfg, &p, why, sizeof why) == -1);
  CHECKF(strstr(why, "factor 1 (65536)") != NULL, "%s", why);
  /* bad shapes */
  int zero[] = {4, 0};
  CHECK(kron_shape_init(&s, 2, 2, zero, why, sizeof why) == -1);
  CHECKF(strstr(why, "factor 2 is 0") != NULL, "%s", why);
  int huge[] = {65536, 65536, 65536};
  CHECK(kron_shape_init(&s, 1, 3, huge, why, sizeof why) == -1);
}

/* the tensor-core fragments: A, B and C of one mma tile each covered once by the 32 lanes'
 * registers, and C's registers 2i, 2i+1 neighbours in a row (the kernels store them as one) */
static void test_tc_frags(void) {
  for (int es = 4; es <= 8; es += 4) {
    int mr = kron_tc_mrows(es), ks = kron_tc_kstep(es), ok = 1;
    int a[16][8] = {{0}}, b[8][8] = {{0}}, c[16][8] = {{0}};
    for (int lane = 0; lane < 32; lane++) {
      int row, col;
      for (int i = 0; i < kron_tc_aregs(es); i++) {
        kron_tc_frag_a(es, lane, i, &row, &col);
        ok &= row >= 0 && row < mr && col >= 0 && col < ks && ++a[row][col] == 1;
      }
      for (int i = 0; i < kron_tc_bregs(es); i++) {
        kron_tc_frag_b(es, lane, i, &row, &col);
        ok &= row >= 0 && row < ks && col >= 0 && col < KRON_TC_N && ++b[row][col] == 1;
      }
      for (int i = 0; i < kron_tc_cregs(es); i++) {
        kron_tc_frag_c(es, lane, i, &row, &col);
        ok &= row >= 0 && row < mr && col >= 0 && col < KRON_TC_N && ++c[row][col] == 1;
        int r1, c1;
        kron_tc_frag_c(es, lane, i | 1, &r1, &c1);
        ok &= i % 2 || (r1 == row && c1 == col + 1);
      }
    }
    CHECKF(ok && 32 * kron_tc_aregs(es) == mr * ks && 32 * kron_tc_cregs(es) == mr * KRON_TC_N,
           "tensor-core fragments of dtype size %d", es);
  }
}

/* the division-free walk (kron_walk) against plain division, for radices and steps the kernels
 * use (A's f x f copy, tiles) and odd ones */
static void test_walk(void) {
  long long radices[][2] = {{1, 1}, {1, 7}, {4, 3}, {16, 128}, {128, 128}, {200, 200}, {3, 1000}};
  long long steps[] = {1, 7, 256};
  int ok = 1;
  for (size_t r = 0; r < sizeof radices / sizeof *radices; r++)
    for (size_t k = 0; k < sizeof steps / sizeof *steps; k++) {
      kron_radix rx = {radices[r][0], radices[r][1], radices[r][0] * radices[r][1] * 3, 1};
      for (long long first = 0; first < steps[k]; first++) {
        kron_walk w = kron_walk_start(&rx, first, steps[k]);
        for (long long e = first; e < rx.units; e += steps[k], kron_walk_next(&w))
          ok &= w.c == e % rx.cpr && w.s == e / rx.cpr % rx.S && w.nb == e / rx.cpr / rx.S;
      }
    }
  CHECKF(ok, "kron_walk disagrees with division");
}

/* the comparison can fail: A_k^T in place of A_k gives a different y */
static void test_can_fail(void) {
  inputs in;
  int f[] = {3, 4};
  make_inputs(&in, 2, 2, f, 5);
  long long bn = in.s.batch * in.s.n;
  double *y = malloc((size_t)bn * 8), *yt = malloc((size_t)bn * 8),
         *At = malloc((size_t)in.s.aoff[2] * 8);
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < f[k]; i++)
      for (int j = 0; j < f[k]; j++)
        At[in.s.aoff[k] + i * f[k] + j] = in.A[in.s.aoff[k] + j * f[k] + i];
  kron_ref_fwd(&in.s, in.x, in.A, y);
  kron_ref_fwd(&in.s, in.x, At, yt);
  CHECK(check_rel_l2(yt, y, bn) > 1e-2);
  free(y), free(yt), free(At);
  free_inputs(&in);
}

int main(void) {
  int s1[] = {5}, s2[] = {3, 4}, s3[] = {2, 3, 2}, s4[] = {2, 2, 3, 2};
  test_dense(3, 1, s1);
  test_dense(2, 2, s2);
  test_dense(2, 3, s3);
  test_dense(2, 4, s4);
  test_finite_differences(2, 2, s2);
  test_finite_differences(2, 3, s3);
  test_finite_differences(1, 4, s4);
  int v1[] = {8, 8}, v2[] = {4, 4, 4, 4}, v3[] = {6, 5, 7}, v4[] = {40}, v5[] = {16, 32},
      v6[] = {3, 5, 2, 7}, v7[] = {8, 12, 4};
  int v8[] = {32, 64}, v9[] = {48, 16}, tc_runs = 0;
  tc_runs += test_versions(4, 2, v1);
  tc_runs += test_versions(2, 4, v2);
  tc_runs += test_versions(3, 3, v3);
  tc_runs += test_versions(5, 1, v4);
  tc_runs += test_versions(2, 2, v5);
  tc_runs += test_versions(2, 4, v6);
  tc_runs += test_versions(16, 3, v7);
  tc_runs += test_versions(2, 2, v8);
  tc_runs += test_versions(3, 2, v9);
  CHECKF(tc_runs >= 8, "only %d v3 runs used the tensor cores", tc_runs);
  int p1[] = {8, 16, 32}, p2[] = {8, 32, 16}, p3[] = {3, 4, 16, 32};
  test_gemm_route();
  test_pair(2, 3, p1);
  test_pair(1, 3, p2);
  test_pair(1, 4, p3);
  test_plan();
  test_tc_frags();
  test_walk();
  test_can_fail();
  return check_report();
}
