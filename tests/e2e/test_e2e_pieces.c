/* test_e2e_pieces: the CPU reference's pieces (kernels/e2e/ref_model.c) against independently
 * written checks on fresh random inputs (seeded from the clock unless E2E_TEST_SEED is set;
 * the seed is printed so a failure can be replayed):
 *   RMSNorm  output/gain is a positive multiple of x with mean square ms/(ms + eps);
 *   RoPE     equals complex multiplication by e^{i·s·theta^(-2i/D)}, preserves each pair's
 *            norm, and q·k depends only on the distance between positions;
 *   SiLU     equals x/2·(1 + tanh(x/2));
 *   top-k    by repeated arg-max (lowest position on ties), with ties and exclusions;
 *   compact  last `cap` marked positions, ascending, -1 after;
 *   roco     the two-stage rule by repeated arg-max;
 *   select check: identical selections pass, a near-tie swap passes, a far swap fails. */
#include "ref_model.h"
#include "select_check.h"

#include "../check.h"

#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t rng_state;
static double urand(void) { /* xorshift64*: independent of the kit's generator */
  rng_state ^= rng_state >> 12, rng_state ^= rng_state << 25, rng_state ^= rng_state >> 27;
  return (double)((rng_state * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0;
}
static double srand1(void) { return 2.0 * urand() - 1.0; }

static void test_rmsnorm(void) {
  enum { R = 5, N = 96 };
  double x[R * N], w[N], y[R * N], eps = 1e-5;
  for (int i = 0; i < R * N; i++) x[i] = 3.0 * srand1();
  for (int i = 0; i < N; i++) w[i] = 0.5 + urand();
  e2e_ref_rmsnorm(x, w, y, R, N, eps);
  for (int r = 0; r < R; r++) {
    double ms = 0, ms_y = 0, ratio = y[r * N] / w[0] / x[r * N];
    for (int i = 0; i < N; i++) ms += x[r * N + i] * x[r * N + i] / N;
    for (int i = 0; i < N; i++) {
      double u = y[r * N + i] / w[i];
      ms_y += u * u / N;
      CHECKF(fabs(u - ratio * x[r * N + i]) < 1e-12 * (1 + fabs(u)), "row %d col %d", r, i);
    }
    CHECK(ratio > 0);
    CHECKF(fabs(ms_y - ms / (ms + eps)) < 1e-12, "row %d: mean square %g vs %g", r, ms_y,
           ms / (ms + eps));
  }
}

static void test_rope(void) {
  enum { S = 9, H = 3, D = 16 };
  double theta = 10000.0, x[S * H * D], y[S * H * D];
  for (int i = 0; i < S * H * D; i++) x[i] = srand1();
  memcpy(y, x, sizeof x);
  e2e_ref_rope(y, S, H, D, theta);
  for (int s = 0; s < S; s++)
    for (int h = 0; h < H; h++)
      for (int i = 0; i < D / 2; i++) {
        const double *a = x + (s * H + h) * D, *b = y + (s * H + h) * D;
        double complex z = (a[i] + I * a[i + D / 2]) * cexp(I * s * exp(-2.0 * i / D * log(theta)));
        CHECKF(fabs(creal(z) - b[i]) < 1e-12 && fabs(cimag(z) - b[i + D / 2]) < 1e-12,
               "s=%d h=%d i=%d", s, h, i);
        double n0 = hypot(a[i], a[i + D / 2]), n1 = hypot(b[i], b[i + D / 2]);
        CHECK(fabs(n0 - n1) < 1e-12);
      }
  /* relative position: the same q at m and k at n, shifted by t, give the same dot product */
  double q[D], k[D], qs[S * D], ks[S * D];
  for (int i = 0; i < D; i++) q[i] = srand1(), k[i] = srand1();
  for (int s = 0; s < S; s++) memcpy(qs + s * D, q, sizeof q), memcpy(ks + s * D, k, sizeof k);
  e2e_ref_rope(qs, S, 1, D, theta);
  e2e_ref_rope(ks, S, 1, D, theta);
  for (int m = 0; m + 3 < S; m++)
    for (int n = 0; n + 3 < S; n++) {
      double d0 = 0, d1 = 0;
      for (int i = 0; i < D; i++)
        d0 += qs[m * D + i] * ks[n * D + i], d1 += qs[(m + 3) * D + i] * ks[(n + 3) * D + i];
      CHECKF(fabs(d0 - d1) < 1e-12, "m=%d n=%d: %g vs %g", m, n, d0, d1);
    }
}

static void test_silu(void) {
  for (int i = 0; i < 1000; i++) {
    double x = 40.0 * srand1();
    double want = 0.5 * x * (1.0 + tanh(0.5 * x));
    CHECKF(fabs(e2e_ref_silu(x) - want) <= 1e-13 * (1 + fabs(want)), "x=%g", x);
  }
}

/* Independent top-k: k rounds of "largest unmarked key, lowest position on ties", O(n·k). */
static void argmax_topk(const double *key, int n, int k, uint8_t *flags) {
  for (int round = 0; round < k; round++) {
    int best = -1;
    for (int j = 0; j < n; j++)
      if (!flags[j] && (best < 0 || key[j] > key[best])) best = j;
    if (best < 0) return;
    flags[best] = 1;
  }
}

static void test_topk_and_compact(void) {
  enum { N = 300 };
  for (int trial = 0; trial < 50; trial++) {
    double key[N];
    uint8_t a[N], b[N];
    int ties = trial % 2; /* half the trials draw from 7 values: many ties */
    for (int j = 0; j < N; j++) key[j] = ties ? floor(7 * urand()) : srand1();
    for (int j = 0; j < N; j++) a[j] = b[j] = urand() < 0.2; /* excluded positions */
    int k = (int)(urand() * N * 1.1);
    e2e_ref_topk_flags(key, N, k, a);
    argmax_topk(key, N, k, b);
    CHECKF(memcmp(a, b, N) == 0, "trial %d k=%d ties=%d", trial, k, ties);

    int cap = 1 + (int)(urand() * N), total = 0;
    int32_t idx[N];
    for (int j = 0; j < N; j++) total += a[j];
    int kept = e2e_ref_compact(a, N, cap, idx);
    CHECK(kept == (total < cap ? total : cap));
    int want_first = total - kept, seen = 0, i = 0;
    for (int j = 0; j < N; j++) {
      if (!a[j]) continue;
      if (seen++ >= want_first) {
        CHECKF(idx[i] == j, "slot %d: %d vs %d", i, idx[i], j);
        i++;
      }
    }
    for (int s = kept; s < cap; s++) CHECK(idx[s] == -1);
  }
}

static void test_roco_rule(void) {
  e2e_config c;
  e2e_config_default(&c);
  c.workload = WL_ROCO, c.seqlen = 200, c.keep = 30, c.keep_std = 20;
  double score[200], score2[200], std[200];
  for (int j = 0; j < 200; j++) {
    score[j] = 1 + 50 * urand();
    score2[j] = score[j] * score[j] * (0.1 + 0.9 * urand()); /* <= score², a valid sum of squares */
    std[j] = sqrt(fmax(0, score2[j] / 200 - (score[j] / 200) * (score[j] / 200)));
  }
  int32_t idx[50];
  int count = e2e_ref_select_head(&c, score, score2, NULL, idx);
  uint8_t want[200] = {0};
  argmax_topk(std, 200, 20, want);
  argmax_topk(score, 200, 30, want);
  int n = 0;
  for (int j = 0; j < 200; j++)
    if (want[j]) {
      CHECKF(n < count && idx[n] == j, "pos %d", j);
      n++;
    }
  CHECK(count == 50 && n == 50);
}

static void test_select_check(void) {
  e2e_config c;
  e2e_config_default(&c);
  c.workload = WL_H2O, c.layers = 1, c.heads = 1, c.seqlen = 100, c.keep = 10;
  double score[100];
  for (int j = 0; j < 100; j++)
    score[j] = 100.0 - j + 0.1 * urand(); /* descending: top 10 = 0..9 */
  score[10] = score[9] * (1 - 1e-4);      /* a near tie at the boundary */
  int32_t want_idx[10], got_idx[10], count = 10;
  for (int i = 0; i < 10; i++) want_idx[i] = got_idx[i] = i;
  e2e_sel_want w = {want_idx, &count, score, NULL, NULL};
  e2e_sel_check r = e2e_compare_selection(&c, &w, got_idx, &count, 1e-3, 0);
  CHECK(r.ok && r.differing == 0 && r.kept == 10);
  got_idx[9] = 10; /* swap 9 for its near tie */
  r = e2e_compare_selection(&c, &w, got_idx, &count, 1e-3, 0);
  CHECK(r.ok && r.differing == 2 && r.near_tie == 2 && r.hard == 0);
  got_idx[9] = 50; /* a far key instead: hard */
  r = e2e_compare_selection(&c, &w, got_idx, &count, 1e-3, 0);
  CHECK(!r.ok && r.hard >= 1);
  got_idx[8] = 9, got_idx[9] = 9; /* not ascending: malformed */
  r = e2e_compare_selection(&c, &w, got_idx, &count, 1e-3, 0);
  CHECK(!r.ok && r.malformed == 1);
}

int main(void) {
  const char *env = getenv("E2E_TEST_SEED");
  rng_state = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL) * 2654435761u + 1;
  if (!rng_state) rng_state = 1;
  printf("seed %llu (E2E_TEST_SEED to replay)\n", (unsigned long long)rng_state);
  test_rmsnorm();
  test_rope();
  test_silu();
  test_topk_and_compact();
  test_roco_rule();
  test_select_check();
  return check_report();
}
