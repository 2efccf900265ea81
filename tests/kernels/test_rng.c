/* The counter-based generator and the fp16 conversions of kernels/harness/rng.h: exact fp16
 * rounding, the log's accuracy, the normal's moments and tails, determinism; and kf_draw.h's
 * KeyFormer noise draw: its formula, range, moments and independence. */
#include "../check.h"
#include "kf_draw.h"
#include "rng.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static float bits_to_float(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* Every finite fp16 survives half -> float -> half, and the float is the exact value. */
static void test_half_roundtrip(void) {
  int bad = 0;
  for (uint32_t h = 0; h < 65536; h++) {
    if (((h >> 10) & 0x1f) == 0x1f) continue;
    float f = rng_half_to_float((uint16_t)h);
    int expo = (h >> 10) & 0x1f, mant = h & 0x3ff;
    double exact = expo ? ldexp(mant | 0x400, expo - 25) : ldexp(mant, -24);
    if (h & 0x8000) exact = -exact;
    if (rng_float_to_half(f) != h || (double)f != exact) bad++;
  }
  CHECKF(bad == 0, "%d fp16 values do not round-trip", bad);
}

/* float -> half picks the nearest fp16, ties to even, against a brute-force search. */
static void test_half_rounding(void) {
  int bad = 0;
  for (uint64_t i = 0; i < 200000; i++) {
    uint64_t r = rng_bits(7, 99, i);
    /* exponents spanning subnormal fp16 .. overflow */
    float f = bits_to_float((uint32_t)(0x32000000u + (r % (0x47800000u - 0x32000000u))));
    if (r >> 63) f = -f;
    uint16_t h = rng_float_to_half(f);
    if ((h & 0x7fff) == 0x7c00) {
      bad += fabs(f) < 65520.0f;
      continue;
    } /* overflow to inf */
    double got = rng_half_to_float(h), x = f;
    /* neighbours of h in the fp16 line (same sign) */
    uint16_t up = (uint16_t)(h + 1), down = (uint16_t)(h - 1);
    double dgot = fabs(got - x);
    if (((up >> 10) & 0x1f) != 0x1f && (h & 0x7fff) != 0x7fff) {
      double d = fabs(rng_half_to_float(up) - x);
      if (d < dgot || (d == dgot && (h & 1))) bad++;
    }
    if ((h & 0x7fff) != 0) {
      double d = fabs(rng_half_to_float(down) - x);
      if (d < dgot || (d == dgot && (h & 1))) bad++;
    }
  }
  CHECKF(bad == 0, "%d floats rounded to a non-nearest fp16", bad);
  CHECK(rng_float_to_half(65504.0f) == 0x7bff);
  CHECK(rng_float_to_half(65519.99f) == 0x7bff);
  CHECK(rng_float_to_half(65520.0f) == 0x7c00);
  CHECK(rng_float_to_half(-1e9f) == 0xfc00);
  CHECK(rng_float_to_half(ldexpf(1.0f, -25)) == 0x0000);        /* tie to even: 0 */
  CHECK(rng_float_to_half(ldexpf(1.5f, -24)) == 0x0002);        /* tie to even: 2 units */
  CHECK(rng_float_to_half(ldexpf(1.0f, -14)) == 0x0400);        /* smallest normal */
  CHECK(rng_float_to_half(1.0f + ldexpf(1.0f, -11)) == 0x3c00); /* tie to even: 1.0 */
  CHECK(rng_float_to_half(NAN) != 0x7c00 && (rng_float_to_half(NAN) & 0x7c00) == 0x7c00);
  CHECK(isnan(rng_half_to_float(0x7e00)) && isinf(rng_half_to_float(0x7c00)));
}

static void test_log(void) {
  double worst = 0;
  for (int i = 1; i <= 100000; i++) {
    float x = (float)i / 100000.0f;
    double rel = fabs(rng_log(x) - log((double)x)) / fmax(fabs(log((double)x)), 1e-30);
    if (x != 1.0f && rel > worst) worst = rel;
  }
  CHECKF(worst < 2e-6, "rng_log worst relative error %.3e", worst);
  CHECK(rng_log(1.0f) == 0.0f);
  CHECKF(fabs(rng_log(1e-12f) - log(1e-12)) < 1e-5, "%g", rng_log(1e-12f));
}

static void test_normal(void) {
  const int n = 1000000;
  double s1 = 0, s2 = 0, s3 = 0, s4 = 0;
  int tail3 = 0;
  for (int i = 0; i < n; i++) {
    double z = rng_normal(1, RNG_STREAM_Q, (uint64_t)i);
    s1 += z;
    s2 += z * z;
    s3 += z * z * z;
    s4 += z * z * z * z;
    tail3 += fabs(z) > 3;
  }
  double mean = s1 / n, var = s2 / n - mean * mean;
  CHECKF(fabs(mean) < 5e-3, "mean %g", mean);
  CHECKF(fabs(var - 1) < 1e-2, "variance %g", var);
  CHECKF(fabs(s3 / n) < 2e-2, "third moment %g", s3 / n);
  CHECKF(fabs(s4 / n - 3) < 5e-2, "fourth moment %g", s4 / n);
  /* P(|z| > 3) = 0.0027: 2700 expected, sd ~52 */
  CHECKF(tail3 > 2450 && tail3 < 2950, "tail count %d", tail3);
}

static void test_determinism(void) {
  CHECK(rng_normal(5, RNG_STREAM_K, 123) == rng_normal(5, RNG_STREAM_K, 123));
  CHECK(rng_normal(5, RNG_STREAM_K, 123) != rng_normal(5, RNG_STREAM_V, 123));
  CHECK(rng_normal(5, RNG_STREAM_K, 123) != rng_normal(6, RNG_STREAM_K, 123));
  CHECK(rng_normal(5, RNG_STREAM_K, 123) != rng_normal(5, RNG_STREAM_K, 124));
  int below_one = 0;
  double mean = 0;
  for (int i = 0; i < 100000; i++) {
    float e = kf_exp_rand(3, (uint64_t)i);
    below_one += e < 1.0f;
    mean += e;
  }
  CHECK(below_one == 0);
  mean /= 100000; /* E[1 + |z|] = 1 + sqrt(2/pi) = 1.7979 */
  CHECKF(fabs(mean - 1.7979) < 1e-2, "exp_rand mean %g", mean);
}

/* kf_draw.h's noise, spelled out here from its comment: key = high half of rng_bits, murmur3's
 * fmix32 of key ^ idx, u = 2 - (1 + mantissa / 2^23). */
static double kf_draw_spelled(uint64_t seed, uint32_t stream, uint64_t plane, uint32_t idx) {
  uint32_t x = (uint32_t)(rng_bits(seed, stream, plane) >> 32) ^ idx;
  x ^= x >> 16;
  x = (uint32_t)((uint64_t)x * 0x85ebca6bu);
  x ^= x >> 13;
  x = (uint32_t)((uint64_t)x * 0xc2b2ae35u);
  x ^= x >> 16;
  return 2.0 - (1.0 + (double)(x >> 9) / 8388608.0);
}

/* The draw is the formula, in (0, 1] with 2^-23 the smallest value, uniform (moments and 64
 * bins), and neither neighbouring keys, rows nor planes move together. */
static void test_kf_draw(void) {
  const kf_draw d = {12345, 77};
  int bad_formula = 0, bad_range = 0;
  const int n = 1 << 20, S = 1024;
  double sum = 0, sum2 = 0, c_next = 0, c_row = 0, c_plane = 0;
  long bins[64] = {0};
  const uint32_t key0 = kf_draw_plane_key(d, 3), key1 = kf_draw_plane_key(d, 4);
  for (int k = 0; k < n; k++) {
    const uint32_t idx = (uint32_t)k;
    const float u = kf_draw_at(key0, idx);
    if ((double)u != kf_draw_spelled(d.seed, d.stream, 3, idx)) bad_formula++;
    if (!(u >= 1.1920928955078125e-07f && u <= 1.0f)) bad_range++;
    sum += u;
    sum2 += (double)u * u;
    bins[(int)((1.0 - u) * 64.0)]++;
    c_next += (u - 0.5) * (kf_draw_at(key0, idx + 1u) - 0.5);
    c_row += (u - 0.5) * (kf_draw_at(key0, idx + (uint32_t)S) - 0.5);
    c_plane += (u - 0.5) * (kf_draw_at(key1, idx) - 0.5);
  }
  CHECKF(bad_formula == 0, "%d draws differ from the spelled-out formula", bad_formula);
  CHECKF(bad_range == 0, "%d draws outside [2^-23, 1]", bad_range);
  const double mean = sum / n, var = sum2 / n - mean * mean;
  CHECKF(fabs(mean - 0.5) < 2e-3, "mean %.5f, expected 0.5", mean);
  CHECKF(fabs(var - 1.0 / 12) < 1e-3, "variance %.5f, expected 1/12", var);
  double chi2 = 0, expect = n / 64.0;
  for (int b = 0; b < 64; b++) chi2 += (bins[b] - expect) * (bins[b] - expect) / expect;
  CHECKF(chi2 < 120, "chi-square %.1f over 64 bins (63 degrees of freedom)", chi2);
  /* correlation coefficients: the covariances over the variance 1/12 */
  const double r_next = c_next / n * 12, r_row = c_row / n * 12, r_plane = c_plane / n * 12;
  CHECKF(fabs(r_next) < 5e-3 && fabs(r_row) < 5e-3 && fabs(r_plane) < 5e-3,
         "correlations: next key %.4f, next row %.4f, next plane %.4f", r_next, r_row, r_plane);
  CHECK(kf_draw_at(key0, 0) == kf_draw_at(kf_draw_plane_key(d, 3), 0));
  CHECK(key0 != key1);
}

int main(void) {
  test_half_roundtrip();
  test_half_rounding();
  test_log();
  test_normal();
  test_determinism();
  test_kf_draw();
  return check_report();
}
