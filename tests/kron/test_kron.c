/* test_kron: the Kronecker layer's CPU pieces against independent formulations.
 *  - the reference forward against y = x·K^T with the explicit Kronecker matrix K
 *  - the reference backward against finite differences of L = <gy, y> (L is linear in x and
 *    in each A_k, so central differences are exact up to rounding)
 *  - v1, v2, v3 call sequences on the CPU backend (kron_cpu.c) against the reference, fp64
 *    and fp32, v3 under shared-memory budgets that force one, two and more groups
 *  - v3's plan: tiles that cover the row, unsupported factors named
 *  - a wrong formulation (A transposed) is caught: the comparison can fail */
#include "../check.h"
#include "harness.h"
#include "kron.h"
#include "kron_tile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double rel_l2(const double *got, const double *want, long long n) {
  double d = 0, w = 0;
  for (long long i = 0; i < n; i++)
    d += (got[i] - want[i]) * (got[i] - want[i]), w += want[i] * want[i];
  return w > 0 ? sqrt(d / w) : sqrt(d);
}

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
  double e = rel_l2(y, yd, bn);
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
  e = rel_l2(gx, gxd, bn);
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

/* one version on the CPU backend against the reference; returns the worst rel error */
static double run_version(const inputs *in, kron_version v, int es, size_t budget, int *ngroups) {
  const kron_shape *s = &in->s;
  long long bn = s->batch * s->n, na = s->aoff[s->m];
  kron_plan plan[2];
  char why[256];
  for (int p = 0; p < 2; p++)
    if (kron_plan_make(s, es, (kron_pass)p, budget, &plan[p], why, sizeof why) != 0) {
      CHECKF(0, "plan: %s", why);
      return INFINITY;
    }
  if (ngroups) *ngroups = plan[1].ngroups;
  long long sv, sc, pt;
  kron_ws_elems(s, v, &plan[0], &plan[1], &sv, &sc, &pt);
  kron_bufs b;
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
  double worst = rel_l2(y, ry, bn), e2 = rel_l2(gx, rgx, bn);
  worst = e2 > worst || isnan(e2) ? e2 : worst;
  for (int k = 0; k < s->m; k++) {
    long long ff = (long long)s->f[k] * s->f[k];
    e2 = rel_l2(gA + s->aoff[k], rgA + s->aoff[k], ff);
    worst = e2 > worst || isnan(e2) ? e2 : worst;
  }
  void *all[] = {b.x,    b.gy, b.A, b.y, b.gx, b.gA, b.saved, b.scratch,
                 b.part, y,    gx,  gA,  ry,   rgx,  rgA};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) free(all[i]);
  return worst;
}

static void test_versions(long long batch, int m, const int *f) {
  inputs in;
  make_inputs(&in, batch, m, f, 3);
  /* budgets: everything in one group, and small ones that split the axes */
  size_t budgets[] = {227 * 1024, 4096, 1024};
  for (int v = 0; v < KRON_NVER; v++)
    for (int es = 4; es <= 8; es += 4)
      for (int bi = 0; bi < (v == KRON_V3 ? 3 : 1); bi++) {
        int ng = 0;
        kron_plan probe;
        char why[200];
        if (v == KRON_V3 &&
            (kron_plan_make(&in.s, es, KRON_BWD, budgets[bi], &probe, why, sizeof why) ||
             kron_plan_make(&in.s, es, KRON_FWD, budgets[bi], &probe, why, sizeof why)))
          continue; /* a factor too big for this budget: the plan says so (tested below) */
        double e = run_version(&in, (kron_version)v, es, budgets[bi], &ng);
        double tol = es == 8 ? 1e-13 : 2e-6;
        CHECKF(e < tol, "%s dtype=%d m=%d f1=%d budget=%zu groups=%d: rel %.3e",
               kron_version_names[v], es, m, f[0], budgets[bi], ng, e);
      }
  free_inputs(&in);
}

static void test_plan(void) {
  kron_shape s;
  char why[256];
  int f[] = {64, 64, 64};
  CHECK(kron_shape_init(&s, 8, 3, f, why, sizeof why) == 0);
  kron_plan p;
  CHECK(kron_plan_make(&s, 4, KRON_FWD, 227 * 1024, &p, why, sizeof why) == 0);
  /* groups are consecutive, cover every axis, and each tile fits */
  int next = 0;
  for (int g = 0; g < p.ngroups; g++) {
    CHECK(p.g[g].k0 == next);
    next = p.g[g].k1;
    CHECK(p.g[g].Q % p.g[g].W == 0);
    CHECK(kron_group_smem(&p.g[g], 4) <= 227 * 1024);
    CHECK(p.g[g].P * p.g[g].S * p.g[g].Q == s.n);
    /* every element of a row is in exactly one tile of the group */
    long long tile = kron_tile_elems(&p.g[g]), blocks = kron_group_blocks(&p.g[g], 1);
    CHECK(tile * blocks == s.n);
  }
  CHECK(next == 3);
  CHECK(p.ngroups == 2);
  /* coverage, element by element, on a small odd shape with a tiny budget */
  int f2[] = {3, 5, 2, 7};
  CHECK(kron_shape_init(&s, 2, 4, f2, why, sizeof why) == 0);
  CHECK(kron_plan_make(&s, 8, KRON_BWD, 600, &p, why, sizeof why) == 0);
  CHECK(p.ngroups > 1);
  char *seen = calloc((size_t)(s.batch * s.n), 1);
  for (int g = 0; g < p.ngroups; g++) {
    memset(seen, 0, (size_t)(s.batch * s.n));
    long long tile = kron_tile_elems(&p.g[g]), blocks = kron_group_blocks(&p.g[g], s.batch);
    for (long long b = 0; b < blocks; b++)
      for (long long t = 0; t < tile; t++) seen[kron_tile_global(&p.g[g], b, t)]++;
    int all_once = 1;
    for (long long i = 0; i < s.batch * s.n; i++) all_once &= seen[i] == 1;
    CHECKF(all_once, "group %d does not cover each element once", g);
  }
  free(seen);
  /* a factor whose smallest tile does not fit: unsupported, the factor named */
  int big[] = {65536};
  CHECK(kron_shape_init(&s, 1, 1, big, why, sizeof why) == 0);
  CHECK(kron_plan_make(&s, 4, KRON_FWD, 227 * 1024, &p, why, sizeof why) == -1);
  CHECKF(strstr(why, "factor 1 (65536)") != NULL, "%s", why);
  /* bad shapes */
  int zero[] = {4, 0};
  CHECK(kron_shape_init(&s, 2, 2, zero, why, sizeof why) == -1);
  CHECKF(strstr(why, "factor 2 is 0") != NULL, "%s", why);
  int huge[] = {65536, 65536, 65536};
  CHECK(kron_shape_init(&s, 1, 3, huge, why, sizeof why) == -1);
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
  CHECK(rel_l2(yt, y, bn) > 1e-2);
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
  int v1[] = {8, 8}, v2[] = {4, 4, 4, 4}, v3[] = {6, 5, 7}, v4[] = {40}, v5[] = {16, 32};
  test_versions(4, 2, v1);
  test_versions(2, 4, v2);
  test_versions(3, 3, v3);
  test_versions(5, 1, v4);
  test_versions(2, 2, v5);
  test_plan();
  test_can_fail();
  return check_report();
}
