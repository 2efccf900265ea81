/* gemmbench's host pieces on the CPU: the inputs, the two double references against a
 * naive triple loop, the sample, the (sampled) checker on a correct product and on products
 * with one wrong entry (it must catch the ones it samples), the launch order of the tiles, and
 * the tile plans with their launch checks. */
#include "../check.h"
#include "gemm.h"
#include "gemm_plan.h"
#include "hx_ctx.h"
#include "rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const gemm_device h100 = {9, 0, 132, 232448, 1024, 65536};
static const gemm_device a100 = {8, 0, 108, 166912, 1024, 65536};

/* ---- inputs ------------------------------------------------------------------------------- */
static void test_inputs(void) {
  for (int dt = 0; dt < GEMM_NDTYPES; dt++) {
    uint16_t h[64];
    float f[64];
    void *buf = dt == GEMM_FP32 ? (void *)f : (void *)h;
    gemm_fill_host(buf, 1000, 64, 7, GEMM_STREAM_A, (gemm_dtype)dt);
    int same = 1;
    for (int i = 0; i < 64; i++) {
      float v = rng_normal(7, GEMM_STREAM_A, 1000 + (uint64_t)i);
      double want = dt == GEMM_FP32
                        ? v
                        : rng_elem_to_float(rng_float_to_elem(v, dt == GEMM_BF16), dt == GEMM_BF16);
      same &= gemm_load(buf, (size_t)i, (gemm_dtype)dt) == want;
      same &= gemm_input(7, GEMM_STREAM_A, 1000 + (uint64_t)i, (gemm_dtype)dt) == want;
    }
    CHECKF(same, "inputs of %s are rng_normal rounded to the dtype", gemm_dtype_names[dt]);
  }
  CHECKF(gemm_input(7, GEMM_STREAM_A, 5, GEMM_FP16) != gemm_input(7, GEMM_STREAM_B, 5, GEMM_FP16),
         "A and B draw from different streams");
}

/* ---- references ------------------------------------------------------------------------------ */
static double *inputs(uint64_t seed, uint32_t stream, size_t n, gemm_dtype dt) {
  double *x = malloc(n * sizeof *x);
  for (size_t e = 0; e < n; e++) x[e] = gemm_input(seed, stream, e, dt);
  return x;
}

static void test_refs(void) {
  const long M = 37, N = 29, K = 53;
  double *A = inputs(3, GEMM_STREAM_A, M * K, GEMM_BF16),
         *B = inputs(3, GEMM_STREAM_B, K * N, GEMM_BF16);
  double *c1 = malloc(M * N * sizeof *c1), *c2 = malloc(M * N * sizeof *c2);
  gemm_ref(A, B, c1, M, N, K);
  gemm_ref_dot(A, B, c2, M, N, K);
  double worst1 = 0, worst2 = 0;
  for (long i = 0; i < M; i++)
    for (long j = 0; j < N; j++) { /* the textbook triple loop, summed backwards */
      double s = 0;
      for (long k = K - 1; k >= 0; k--) s += A[i * K + k] * B[k * N + j];
      worst1 = fmax(worst1, fabs(c1[i * N + j] - s));
      worst2 = fmax(worst2, fabs(c2[i * N + j] - s));
    }
  CHECKF(worst1 < 1e-10 && worst2 < 1e-10, "ref and ref_dot match the triple loop (%g, %g)", worst1,
         worst2);
  free(A), free(B), free(c1), free(c2);

  gemm_problem ok = {1024, 1024, 1024, GEMM_FP16}, big = {2048, 1024, 1024, GEMM_FP16};
  gemm_problem wide = {16384, 16384, 1, GEMM_FP32};
  char why[256];
  CHECKF(gemm_ref_fits(&ok, why, sizeof why), "ref runs 1024^3 (2^30 multiply-adds)");
  CHECKF(!gemm_ref_fits(&big, why, sizeof why) && strstr(why, "2^30"), "ref refuses 2^31: %s", why);
  CHECKF(!gemm_ref_fits(&wide, why, sizeof why) && strstr(why, "2^27"),
         "ref refuses a C of 2^28 doubles: %s", why);
}

/* ---- the sample ---------------------------------------------------------------------------------- */
static void test_sample(void) {
  gemm_sample s;
  gemm_sample_draw(&s, 8192, 300, 1);
  int strata = 1;
  for (int r = 0; r < s.nr; r++) strata &= s.rows[r] >= r * 128 && s.rows[r] < (r + 1) * 128;
  CHECKF(s.nr == 64 && s.nc == 64 && strata, "64 rows, one per stratum of 128");
  CHECKF(s.rows[0] == 0 && s.rows[63] == 8191 && s.cols[0] == 0 && s.cols[63] == 299,
         "the edges are sampled");
  int inner = 0;
  for (int r = 1; r < 63; r++) inner += s.rows[r] % 128 != 0;
  CHECKF(inner > 40, "inner rows are drawn inside their strata (%d of 62 not at a stratum start)",
         inner);
  gemm_sample t;
  gemm_sample_draw(&t, 8192, 300, 2);
  CHECKF(memcmp(s.rows, t.rows, sizeof s.rows) != 0, "another seed, another sample");
  gemm_sample_draw(&t, 8192, 300, 1);
  CHECKF(memcmp(&s, &t, sizeof s) == 0, "the same seed, the same sample");
  gemm_sample_draw(&s, 5, 70, 1);
  int all = s.nr == 5;
  for (int r = 0; r < s.nr; r++) all &= s.rows[r] == r;
  CHECKF(all && s.nc == 64, "M below 64: every row");
}

/* ---- the checker --------------------------------------------------------------------------------- */
/* C = A·B in double, stored in dt. */
static void *product(const gemm_problem *p, uint64_t seed) {
  double *A = inputs(seed, GEMM_STREAM_A, p->m * p->k, p->dtype);
  double *B = inputs(seed, GEMM_STREAM_B, p->k * p->n, p->dtype);
  double *C = malloc(p->m * p->n * sizeof *C);
  gemm_ref(A, B, C, p->m, p->n, p->k);
  size_t es = gemm_elem_bytes(p->dtype);
  unsigned char *c = malloc(p->m * p->n * es);
  for (long e = 0; e < p->m * p->n; e++) {
    if (p->dtype == GEMM_FP32)
      ((float *)c)[e] = (float)C[e];
    else
      ((uint16_t *)c)[e] = rng_float_to_elem((float)C[e], p->dtype == GEMM_BF16);
  }
  free(A), free(B), free(C);
  return c;
}

static void set(const gemm_problem *p, void *c, size_t e, double v) {
  if (p->dtype == GEMM_FP32)
    ((float *)c)[e] = (float)v;
  else
    ((uint16_t *)c)[e] = rng_float_to_elem((float)v, p->dtype == GEMM_BF16);
}

/* The sampled rows of C (nr x N), as gemmbench downloads them. */
static hx_check sampled_check(const gemm_problem *p, uint64_t seed, const gemm_sample *s,
                              const void *c) {
  size_t es = gemm_elem_bytes(p->dtype);
  unsigned char *rows = malloc((size_t)s->nr * p->n * es);
  for (int r = 0; r < s->nr; r++)
    memcpy(rows + (size_t)r * p->n * es, (const unsigned char *)c + (size_t)s->rows[r] * p->n * es,
           p->n * es);
  hx_check chk = gemm_check_sampled(p, seed, s, rows);
  free(rows);
  return chk;
}

static long not_sampled(const long *idx, int n, long len) {
  for (long v = 0; v < len; v++) {
    int hit = 0;
    for (int i = 0; i < n; i++) hit |= idx[i] == v;
    if (!hit) return v;
  }
  return -1;
}

static void test_checker(gemm_dtype dt) {
  const char *name = gemm_dtype_names[dt];
  gemm_problem p = {300, 200, 512, dt};
  const uint64_t seed = 11;
  gemm_sample s;
  gemm_sample_draw(&s, p.m, p.n, seed);
  unsigned char *c = product(&p, seed);
  hx_check ok = sampled_check(&p, seed, &s, c);
  CHECKF(ok.ok && ok.sampled == 64 * 64 && ok.n == 64 * 64,
         "%s: a correct product passes the sampled check (rel_l2 %.2e, tol %.1e)", name, ok.rel_l2,
         ok.tol_rel_l2);
  double tol_rel, tol_abs;
  gemm_tolerance(dt, p.k, 1, &tol_rel, &tol_abs);
  CHECKF(ok.rel_l2 < tol_rel / 2,
         "%s: the rounding of a correct product uses under half the "
         "tolerance (%.2e of %.1e)",
         name, ok.rel_l2, tol_rel);

  /* one wrong entry the sample sees: off by 3x the elementwise tolerance */
  size_t e = (size_t)s.rows[17] * p.n + s.cols[41];
  double orig = gemm_load(c, e, dt);
  set(&p, c, e, orig + 3 * ok.tol_max_abs);
  hx_check bad = sampled_check(&p, seed, &s, c);
  CHECKF(!bad.ok && bad.max_abs > bad.tol_max_abs,
         "%s: one wrong sampled entry fails the check (max_abs %.3g > %.3g)", name, bad.max_abs,
         bad.tol_max_abs);
  /* the same entry as NaN (an unwritten output) */
  if (dt == GEMM_FP32)
    ((float *)c)[e] = NAN;
  else
    ((uint16_t *)c)[e] = 0xffff;
  bad = sampled_check(&p, seed, &s, c);
  CHECKF(!bad.ok && bad.n_nonfinite == 1, "%s: a NaN at a sampled entry fails the check", name);
  set(&p, c, e, orig);
  CHECKF(sampled_check(&p, seed, &s, c).ok, "%s: restored, it passes again", name);

  /* a wrong entry outside the sample goes unseen by the sampled check (what sampling costs),
   * but the full comparison catches it */
  long r = not_sampled(s.rows, s.nr, p.m), col = not_sampled(s.cols, s.nc, p.n);
  size_t e2 = (size_t)r * p.n + col;
  double orig2 = gemm_load(c, e2, dt);
  set(&p, c, e2, orig2 + 100);
  CHECKF(r >= 0 && col >= 0 && sampled_check(&p, seed, &s, c).ok,
         "%s: an entry outside the sample is not compared", name);
  double *A = inputs(seed, GEMM_STREAM_A, p.m * p.k, dt),
         *B = inputs(seed, GEMM_STREAM_B, p.k * p.n, dt);
  double *want = malloc(p.m * p.n * sizeof *want);
  gemm_ref(A, B, want, p.m, p.n, p.k);
  hx_check full = gemm_compare(dt, c, want, p.m * p.n, p.k);
  CHECKF(!full.ok && full.sampled == 0, "%s: the full comparison catches it", name);
  set(&p, c, e2, orig2);
  full = gemm_compare(dt, c, want, p.m * p.n, p.k);
  CHECKF(full.ok, "%s: the full comparison passes a correct product (rel_l2 %.2e)", name,
         full.rel_l2);

  /* a systematic error: every entry 1 % off (e.g. a lost k-block) fails on rel_l2 */
  for (long i = 0; i < p.m * p.n; i++) set(&p, c, i, gemm_load(c, i, dt) * 1.01);
  bad = sampled_check(&p, seed, &s, c);
  CHECKF(!bad.ok && bad.rel_l2 > bad.tol_rel_l2, "%s: 1%% off everywhere fails (rel_l2 %.2e)", name,
         bad.rel_l2);
  free(A), free(B), free(want), free(c);
}

/* ---- the tiles' launch order ------------------------------------------------------------------ */
static void test_tile_order(void) {
  const int shapes[][3] = {{64, 32, 8}, {8, 4, 8}, {3, 5, 8}, {13, 7, 8}, {1, 1, 8}, {9, 2, 4}};
  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
    int tm = shapes[s][0], tn = shapes[s][1], g = shapes[s][2];
    char *seen = calloc((size_t)tm * tn, 1);
    int ok = 1;
    for (int t = 0; t < tm * tn; t++) {
      int mb, nb;
      gemm_tile_of(t, tm, tn, g, &mb, &nb);
      if (mb < 0 || mb >= tm || nb < 0 || nb >= tn || seen[mb * tn + nb])
        ok = 0;
      else
        seen[mb * tn + nb] = 1;
    }
    CHECKF(ok, "tile order %dx%d (group %d) visits every tile once", tm, tn, g);
    free(seen);
  }
  /* the first 132 tiles of 8192^3 (one wave) touch 8 tile rows and 17 tile columns */
  int rows = 0, cols = 0;
  for (int t = 0; t < 132; t++) {
    int mb, nb;
    gemm_tile_of(t, 64, 32, GW_GROUP_M, &mb, &nb);
    rows = mb + 1 > rows ? mb + 1 : rows;
    cols = nb + 1 > cols ? nb + 1 : cols;
  }
  CHECKF(rows == 8 && cols == 17, "one wave covers 8 x 17 tiles (%d x %d)", rows, cols);
}

/* ---- the plans ----------------------------------------------------------------------------------- */
static void test_plans(void) {
  char why[256];
  gemm_plan pl;
  gemm_problem big = {8192, 8192, 8192, GEMM_FP16};
  CHECKF(gemm_plan_make(GEMM_SYS_WGMMA, &big, 0, 0, &h100, &pl, why, sizeof why) == HX_OK &&
             pl.bn == 256 && pl.stages == 4 && pl.threads == 384 && pl.grid == 132 &&
             pl.tiles_m == 64 && pl.tiles_n == 32 && pl.k_blocks == 128,
         "wgmma 8192^3: 128x256x64, 4 stages, 132 persistent CTAs over 64x32 tiles");
  CHECKF(pl.smem_bytes == 197696 && pl.smem_bytes <= 227 * 1024,
         "wgmma 128x256: %d bytes of shared memory (<= 227 KiB)", pl.smem_bytes);
  CHECKF(!strcmp(pl.impl, "wgmma-128x256x64-s4-ws-persistent"), "impl %s", pl.impl);
  CHECKF(GW_SMEM_BYTES(128) <= 227 * 1024 && GW_STAGES(128) == 6, "wgmma 128x128: 6 stages fit");
  CHECKF(GW_PRODUCER_REGS * 128 + 2 * 128 * GW_CONSUMER_REGS <= 65536 &&
             GW_PRODUCER_REGS + 2 * GW_CONSUMER_REGS == 3 * GW_ENTRY_REGS,
         "setmaxnreg split 40/232 fits the register file and the entry count 168");
  CHECKF(gemm_plan_make(GEMM_SYS_WGMMA, &big, 0, 2, &h100, &pl, why, sizeof why) == HX_OK &&
             pl.cluster == 2 && pl.units == 32 * 32 && pl.grid == 132 &&
             !strcmp(pl.impl, "wgmma-128x256x64-s4-ws-persistent-c2"),
         "wgmma --cluster 2 at 8192^3: 1024 tile pairs over 66 clusters (%s)", pl.impl);
  gemm_problem odd_m = {264, 136, 72, GEMM_FP16};
  CHECKF(gemm_plan_make(GEMM_SYS_WGMMA, &odd_m, 128, 2, &h100, &pl, why, sizeof why) == HX_OK &&
             pl.tiles_m == 3 && pl.units == 4 && pl.grid == 8,
         "wgmma --cluster 2 with 3 tile rows: 2 pairs x 2 columns, 8 CTAs");
  CHECKF(gemm_plan_make(GEMM_SYS_WGMMA, &big, 0, 3, &h100, &pl, why, sizeof why) ==
                 HX_UNSUPPORTED &&
             strstr(why, "1 or 2"),
         "a cluster of 3 is refused: %s", why);
  gemm_problem k1 = {1024, 1024, 1024, GEMM_BF16};
  CHECKF(gemm_plan_make(GEMM_SYS_WGMMA, &k1, 0, 0, &h100, &pl, why, sizeof why) == HX_OK &&
             pl.bn == 128 && pl.grid == 64,
         "wgmma 1024^3: 128-wide tiles (32 of 256 would not fill 132 SMs), grid %d", pl.grid);
  gemm_problem odd = {256, 384, 512, GEMM_FP16};
  CHECKF(gemm_plan_make(GEMM_SYS_WGMMA, &odd, 256, 0, &h100, &pl, why, sizeof why) == HX_OK &&
             pl.bn == 256 && pl.tiles_n == 2,
         "--tile-n 256 on N = 384: an edge tile");
  gemm_problem f32 = {256, 256, 256, GEMM_FP32};
  CHECKF(gemm_plan_make(GEMM_SYS_WGMMA, &f32, 0, 0, &h100, &pl, why, sizeof why) ==
                 HX_UNSUPPORTED &&
             strstr(why, "fp16 or bf16"),
         "wgmma refuses fp32: %s", why);
  CHECKF(gemm_plan_make(GEMM_SYS_MMA, &f32, 0, 0, &h100, &pl, why, sizeof why) == HX_UNSUPPORTED,
         "mma refuses fp32");
  CHECKF(gemm_plan_make(GEMM_SYS_CUBLAS, &f32, 0, 0, &h100, &pl, why, sizeof why) == HX_OK,
         "cublas runs fp32");
  gemm_problem pitch = {256, 256, 100, GEMM_FP16};
  CHECKF(gemm_plan_make(GEMM_SYS_WGMMA, &pitch, 0, 0, &h100, &pl, why, sizeof why) ==
                 HX_UNSUPPORTED &&
             strstr(why, "multiples of 8"),
         "K = 100: refused with the reason: %s", why);
  CHECKF(gemm_plan_make(GEMM_SYS_WGMMA, &big, 0, 0, &a100, &pl, why, sizeof why) ==
                 HX_UNSUPPORTED &&
             strstr(why, "9.0"),
         "wgmma on an A100: %s", why);
  CHECKF(gemm_plan_make(GEMM_SYS_MMA, &big, 0, 0, &a100, &pl, why, sizeof why) == HX_OK &&
             pl.smem_bytes == 147456 && pl.grid == 64 * 32,
         "mma on an A100: 128x256x64, 3 stages, 144 KiB, one CTA per tile");
  gemm_device small = h100;
  small.smem_optin = 100 * 1024;
  CHECKF(gemm_plan_make(GEMM_SYS_WGMMA, &big, 0, 0, &small, &pl, why, sizeof why) ==
                 HX_UNSUPPORTED &&
             strstr(why, "shared memory"),
         "a device with less shared memory: %s", why);
}

int main(void) {
  test_inputs();
  test_refs();
  test_sample();
  for (int dt = 0; dt < GEMM_NDTYPES; dt++) test_checker((gemm_dtype)dt);
  test_tile_order();
  test_plans();
  return check_report();
}
