/* test_kron_api: the library kron_api.h as the PyTorch extension builds it (kron_embed: the CPU
 * backend, kron_api_harness.c in place of the harness).
 *  - forward and backward on caller-owned buffers against the double reference, fp64 and fp32,
 *    one to four factors, each factor in a block of its own (not back to back), the workspace
 *    sizes the plan reports
 *  - refused arguments return -1 and name what was expected (element size, factors, batch, a
 *    CUDA device in a build without CUDA, a missing buffer)
 *  - a failure inside the kernels' code (a launch configuration the backend refuses) returns
 *    -1 with the reason and the process goes on: the next call on a good plan works */
#include "../check.h"
#include "kron.h"
#include "kron_api.h"

#include <stdlib.h>
#include <string.h>

/* every array of one run, in double (ref: the reference's outputs) */
typedef struct {
  kron_shape s;
  long long bn, na;
  double *x, *A, *gy, *y, *gx, *gA;
} ref_run;

static void ref_make(ref_run *r, long long batch, int m, const int *f) {
  char why[128];
  CHECKF(kron_shape_init(&r->s, batch, m, f, why, sizeof why) == 0, "%s", why);
  r->bn = batch * r->s.n;
  r->na = r->s.aoff[m];
  float *xf = malloc((size_t)r->bn * 4), *gf = malloc((size_t)r->bn * 4),
        *af = malloc((size_t)r->na * 4);
  kron_fill_inputs(&r->s, 7, xf, af, gf);
  r->x = malloc((size_t)r->bn * 8), r->gy = malloc((size_t)r->bn * 8);
  r->A = malloc((size_t)r->na * 8);
  for (long long i = 0; i < r->bn; i++) r->x[i] = xf[i], r->gy[i] = gf[i];
  for (long long i = 0; i < r->na; i++) r->A[i] = af[i];
  r->y = malloc((size_t)r->bn * 8), r->gx = malloc((size_t)r->bn * 8);
  r->gA = malloc((size_t)r->na * 8);
  kron_ref_fwd(&r->s, r->x, r->A, r->y);
  kron_ref_bwd(&r->s, r->x, r->A, r->gy, r->gx, r->gA);
  free(xf), free(gf), free(af);
}

static void ref_free(ref_run *r) {
  free(r->x), free(r->A), free(r->gy), free(r->y), free(r->gx), free(r->gA);
}

/* n doubles as es-byte elements (a new block) and back */
static void *to_es(const double *src, long long n, int es) {
  void *dst = malloc((size_t)(n ? n : 1) * (size_t)es);
  for (long long i = 0; i < n; i++) {
    if (es == 8)
      ((double *)dst)[i] = src[i];
    else
      ((float *)dst)[i] = (float)src[i];
  }
  return dst;
}
static double *from_es(const void *src, long long n, int es) {
  double *dst = malloc((size_t)(n ? n : 1) * 8);
  for (long long i = 0; i < n; i++)
    dst[i] = es == 8 ? ((const double *)src)[i] : (double)((const float *)src)[i];
  return dst;
}

/* worst relative L2 error of y, gx and gA through the API against the reference, each factor
 * in a block of its own */
static double api_error(const ref_run *r, const kron_api_plan *p, int es) {
  void *x = to_es(r->x, r->bn, es), *gy = to_es(r->gy, r->bn, es);
  void *A[KRON_MAX_FACTORS];
  for (int k = 0; k < r->s.m; k++)
    A[k] = to_es(r->A + r->s.aoff[k], (long long)r->s.f[k] * r->s.f[k], es);
  long long nsv = kron_api_saved_elems(p), nsc = kron_api_scratch_elems(p);
  void *y = malloc((size_t)r->bn * (size_t)es), *gx = malloc((size_t)r->bn * (size_t)es);
  void *gA = malloc((size_t)r->na * (size_t)es);
  void *saved = nsv ? malloc((size_t)nsv * (size_t)es) : NULL;
  void *scratch = nsc ? malloc((size_t)nsc * (size_t)es) : NULL;
  memset(y, 0xff, (size_t)r->bn * (size_t)es); /* NaN: an unwritten element fails */
  memset(gx, 0xff, (size_t)r->bn * (size_t)es);
  memset(gA, 0xff, (size_t)r->na * (size_t)es);
  char why[512] = "";
  double worst = INFINITY;
  int rc = kron_api_fwd(p, NULL, x, (const void *const *)A, y, saved, why, sizeof why);
  CHECKF(rc == 0, "fwd: %s", why);
  rc |=
      kron_api_bwd(p, NULL, x, (const void *const *)A, saved, gy, gx, gA, scratch, why, sizeof why);
  CHECKF(rc == 0, "bwd: %s", why);
  if (rc == 0) {
    double *outs[3] = {from_es(y, r->bn, es), from_es(gx, r->bn, es), from_es(gA, r->na, es)};
    const double *want[3] = {r->y, r->gx, r->gA};
    long long n[3] = {r->bn, r->bn, r->na};
    worst = 0;
    for (int i = 0; i < 3; i++) {
      double e = check_rel_l2(outs[i], want[i], (size_t)n[i]);
      worst = e > worst || isnan(e) ? e : worst;
      free(outs[i]);
    }
  }
  for (int k = 0; k < r->s.m; k++) free(A[k]);
  free(x), free(gy), free(y), free(gx), free(gA), free(saved), free(scratch);
  return worst;
}

static void test_shapes(void) {
  static const int shapes[][5] = {{3, 4, 5, 0, 0}, {2, 3, 4, 2, 0}, {5, 40, 0, 0, 0},
                                  {4, 8, 8, 0, 0}, {2, 4, 4, 4, 4}, {2, 32, 64, 0, 0}};
  for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
    int m = 0;
    while (m < 4 && shapes[i][1 + m]) m++;
    ref_run r;
    ref_make(&r, shapes[i][0], m, &shapes[i][1]);
    for (int es = 4; es <= 8; es += 4) {
      kron_api_plan p;
      char why[512];
      int rc =
          kron_api_plan_make(&p, shapes[i][0], m, &shapes[i][1], es, KRON_API_CPU, why, sizeof why);
      CHECKF(rc == 0, "plan of shape %zu: %s", i, why);
      if (rc) continue;
      CHECK(kron_api_saved_elems(&p) == (m - 1) * r.bn);
      CHECK(kron_api_scratch_elems(&p) == (m - 1) * r.bn);
      double err = api_error(&r, &p, es), tol = es == 8 ? 1e-12 : 1e-5;
      CHECKF(err < tol, "shape %zu es %d: rel error %.3e (tolerance %.0e)", i, es, err, tol);
    }
    ref_free(&r);
  }
}

static void test_refusals(void) {
  kron_api_plan p;
  char why[256];
  int f[] = {4, 5}, zero[] = {4, 0};
  CHECK(kron_api_has_cuda() == 0);
  CHECK(kron_api_plan_make(&p, 3, 2, f, 2, KRON_API_CPU, why, sizeof why) == -1 &&
        strstr(why, "4 (fp32) or 8 (fp64)"));
  CHECK(kron_api_plan_make(&p, 3, 0, f, 4, KRON_API_CPU, why, sizeof why) == -1 &&
        strstr(why, "expected 1 to 8 factors"));
  CHECK(kron_api_plan_make(&p, 0, 2, f, 4, KRON_API_CPU, why, sizeof why) == -1 &&
        strstr(why, "batch must be in"));
  CHECK(kron_api_plan_make(&p, 3, 2, zero, 4, KRON_API_CPU, why, sizeof why) == -1 &&
        strstr(why, "factor 2 is 0"));
  CHECK(kron_api_plan_make(&p, 3, 2, f, 4, 0, why, sizeof why) == -1 && strstr(why, "no CUDA"));
  CHECK(kron_api_plan_make(&p, 3, 2, f, 4, KRON_API_CPU, why, sizeof why) == 0);
  float x[60] = {0}, A4[16] = {0}, A5[25] = {0}, y[60], saved[60], gx[60], gA[41], scratch[60];
  const void *A[2] = {A4, A5}, *A_hole[2] = {A4, NULL};
  CHECK(kron_api_fwd(&p, NULL, x, A_hole, y, saved, why, sizeof why) == -1 &&
        strstr(why, "buffer A[1] (factor 2) is NULL"));
  CHECK(kron_api_fwd(&p, NULL, x, NULL, y, saved, why, sizeof why) == -1 &&
        strstr(why, "buffer A[0] (factor 1) is NULL"));
  CHECK(kron_api_fwd(&p, NULL, x, A, NULL, saved, why, sizeof why) == -1 &&
        strstr(why, "buffer y is NULL"));
  CHECK(kron_api_fwd(&p, NULL, x, A, y, NULL, why, sizeof why) == -1 &&
        strstr(why, "buffer saved is NULL"));
  CHECK(kron_api_bwd(&p, NULL, x, A, saved, x, gx, gA, NULL, why, sizeof why) == -1 &&
        strstr(why, "buffer scratch is NULL"));
  CHECK(kron_api_bwd(&p, NULL, x, A, saved, NULL, gx, gA, scratch, why, sizeof why) == -1 &&
        strstr(why, "buffer gy is NULL"));
  /* one factor: nothing saved, no scratch */
  int one[] = {6};
  CHECK(kron_api_plan_make(&p, 2, 1, one, 8, KRON_API_CPU, why, sizeof why) == 0);
  CHECK(kron_api_saved_elems(&p) == 0 && kron_api_scratch_elems(&p) == 0);
  double xd[12] = {1}, Ad[36] = {1}, yd[12];
  const void *Aone[1] = {Ad};
  CHECKF(kron_api_fwd(&p, NULL, xd, Aone, yd, NULL, why, sizeof why) == 0, "%s", why);
  CHECK(yd[0] == 1 && yd[6] == 0);
}

/* a failure inside the backend returns -1 with its reason; the next good call works */
static void test_failure_returns(void) {
  int f[] = {8, 8};
  ref_run r;
  ref_make(&r, 4, 2, f);
  kron_api_plan good, bad;
  char why[512] = "";
  CHECK(kron_api_plan_make(&good, 4, 2, f, 8, KRON_API_CPU, why, sizeof why) == 0);
  bad = good;
  bad.plan[0].st[0].t.ld = 0; /* a row stride no tile fits: the backend's launch check refuses */
  double y[256], saved[256];
  const void *A[2] = {r.A, r.A + r.s.aoff[1]};
  CHECK(kron_api_fwd(&bad, NULL, r.x, A, y, saved, why, sizeof why) == -1);
  CHECKF(strstr(why, "v3.stage") && strstr(why, "internal"), "why: %s", why);
  double err = api_error(&r, &good, 8);
  CHECKF(err < 1e-12, "after a failure: rel error %.3e", err);
  ref_free(&r);
}

int main(void) {
  test_shapes();
  test_refusals();
  test_failure_returns();
  return check_report();
}
