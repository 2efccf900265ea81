/* gemm_check.c: gemmbench's inputs, its two double references and the (sampled) check. */
#include "gemm.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *const gemm_dtype_names[GEMM_NDTYPES] = {"fp16", "bf16", "fp32"};

size_t gemm_elem_bytes(gemm_dtype dt) { return dt == GEMM_FP32 ? 4 : 2; }

double gemm_flops(const gemm_problem *p) { return 2.0 * (double)p->m * (double)p->n * p->k; }

/* ---- inputs --------------------------------------------------------------------------------- */
uint32_t gemm_input_bits(uint64_t seed, uint32_t stream, uint64_t e, gemm_dtype dt) {
  float v = rng_normal(seed, stream, e);
  if (dt == GEMM_FP32) {
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    return u;
  }
  return rng_float_to_elem(v, dt == GEMM_BF16);
}

static double bits_value(uint32_t bits, gemm_dtype dt) {
  if (dt == GEMM_FP32) {
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
  }
  return rng_elem_to_float((uint16_t)bits, dt == GEMM_BF16);
}

double gemm_input(uint64_t seed, uint32_t stream, uint64_t e, gemm_dtype dt) {
  return bits_value(gemm_input_bits(seed, stream, e, dt), dt);
}

void gemm_fill_host(void *dst, uint64_t e0, size_t n, uint64_t seed, uint32_t stream,
                    gemm_dtype dt) {
  for (size_t i = 0; i < n; i++) {
    uint32_t b = gemm_input_bits(seed, stream, e0 + i, dt);
    if (dt == GEMM_FP32)
      ((uint32_t *)dst)[i] = b;
    else
      ((uint16_t *)dst)[i] = (uint16_t)b;
  }
}

double gemm_load(const void *buf, size_t i, gemm_dtype dt) {
  if (dt == GEMM_FP32) return ((const float *)buf)[i];
  return rng_elem_to_float(((const uint16_t *)buf)[i], dt == GEMM_BF16);
}

/* ---- the double references ------------------------------------------------------------------ */
int gemm_ref_fits(const gemm_problem *p, char *why, size_t why_len) {
  double macs = (double)p->m * (double)p->n * (double)p->k;
  double elems = (double)p->m * p->n + (double)p->m * p->k + (double)p->k * p->n;
  if (macs > (double)GEMM_REF_MAX_MACS) {
    snprintf(why, why_len,
             "--system ref computes in double on the CPU only up to M*N*K = 2^30 "
             "multiply-adds (%.3g asked); use a GPU system",
             macs);
    return 0;
  }
  if (elems > (double)GEMM_REF_MAX_ELEMS) {
    snprintf(why, why_len,
             "--system ref holds A, B and C in double only up to M*N + M*K + K*N = 2^27 "
             "elements (%.3g asked); use a GPU system",
             elems);
    return 0;
  }
  return 1;
}

void gemm_ref(const double *A, const double *B, double *C, long M, long N, long K) {
  for (long i = 0; i < M; i++) {
    double *c = C + (size_t)i * N;
    for (long j = 0; j < N; j++) c[j] = 0;
    for (long k = 0; k < K; k++) {
      const double a = A[(size_t)i * K + k], *b = B + (size_t)k * N;
      for (long j = 0; j < N; j++) c[j] += a * b[j];
    }
  }
}

static double dot(const double *a, const double *b, long K) {
  double s = 0;
  for (long k = 0; k < K; k++) s += a[k] * b[k];
  return s;
}

void gemm_ref_dot(const double *A, const double *B, double *C, long M, long N, long K) {
  double *bt = hx_host_alloc((size_t)N * K * sizeof *bt, "B transposed (reference)");
  for (long k = 0; k < K; k++)
    for (long j = 0; j < N; j++) bt[(size_t)j * K + k] = B[(size_t)k * N + j];
  for (long i = 0; i < M; i++)
    for (long j = 0; j < N; j++)
      C[(size_t)i * N + j] = dot(A + (size_t)i * K, bt + (size_t)j * K, K);
  hx_host_free(bt);
}

/* ---- the sample ------------------------------------------------------------------------------ */
/* One index per stratum of [0, len): n strata (n = min(len, side)); the first is 0 and the last
 * len - 1, the others uniform in their stratum. */
static int draw_strata(long *out, long len, uint64_t seed, uint32_t salt) {
  int n = len < GEMM_SAMPLE_SIDE ? (int)len : GEMM_SAMPLE_SIDE;
  for (int s = 0; s < n; s++) {
    long lo = (long)((double)len * s / n), hi = (long)((double)len * (s + 1) / n);
    if (hi <= lo) hi = lo + 1;
    uint64_t r = rng_bits(seed, GEMM_STREAM_SAMPLE, ((uint64_t)salt << 32) | (uint64_t)s);
    out[s] = lo + (long)(r % (uint64_t)(hi - lo));
  }
  out[0] = 0;
  out[n - 1] = len - 1;
  return n;
}

void gemm_sample_draw(gemm_sample *s, long M, long N, uint64_t seed) {
  memset(s, 0, sizeof *s);
  s->nr = draw_strata(s->rows, M, seed, 1);
  s->nc = draw_strata(s->cols, N, seed, 2);
}

void gemm_sample_want(const gemm_problem *p, uint64_t seed, const gemm_sample *s, double *want) {
  long K = p->k;
  double *ar = hx_host_alloc((size_t)s->nr * K * sizeof *ar, "sampled rows of A");
  double *bc = hx_host_alloc((size_t)s->nc * K * sizeof *bc, "sampled columns of B");
  for (int r = 0; r < s->nr; r++)
    for (long k = 0; k < K; k++)
      ar[(size_t)r * K + k] =
          gemm_input(seed, GEMM_STREAM_A, (uint64_t)s->rows[r] * K + k, p->dtype);
  for (int c = 0; c < s->nc; c++)
    for (long k = 0; k < K; k++)
      bc[(size_t)c * K + k] =
          gemm_input(seed, GEMM_STREAM_B, (uint64_t)k * p->n + s->cols[c], p->dtype);
  for (int r = 0; r < s->nr; r++)
    for (int c = 0; c < s->nc; c++)
      want[(size_t)r * s->nc + c] = dot(ar + (size_t)r * K, bc + (size_t)c * K, K);
  hx_host_free(ar);
  hx_host_free(bc);
}

/* ---- tolerances and comparison --------------------------------------------------------------- */
void gemm_tolerance(gemm_dtype dt, long K, double max_want, double *tol_rel_l2,
                    double *tol_max_abs) {
  if (dt == GEMM_FP32) {
    double t = 8 * 5.9604644775390625e-08 * sqrt((double)K);
    *tol_rel_l2 = t > 1e-5 ? t : 1e-5;
    *tol_max_abs = 4 * *tol_rel_l2 * max_want;
    return;
  }
  double u = dt == GEMM_FP16 ? 4.8828125e-04 /* 2^-11 */ : 3.90625e-03 /* 2^-8 */;
  *tol_rel_l2 = 2 * u;
  *tol_max_abs = 2 * u * max_want;
}

hx_check gemm_compare(gemm_dtype dt, const void *got, const double *want, size_t n, long K) {
  double rel, mabs;
  gemm_tolerance(dt, K, hx_max_abs_f64(want, n), &rel, &mabs);
  switch (dt) {
  case GEMM_FP16: return hx_compare_f16(got, want, n, rel, mabs);
  case GEMM_BF16: return hx_compare_bf16(got, want, n, rel, mabs);
  default: return hx_compare_f32(got, want, n, rel, mabs);
  }
}

hx_check gemm_check_sampled(const gemm_problem *p, uint64_t seed, const gemm_sample *s,
                            const void *c_rows) {
  size_t n = (size_t)s->nr * s->nc, es = gemm_elem_bytes(p->dtype);
  double *want = hx_host_alloc(n * sizeof *want, "sampled reference");
  unsigned char *got = hx_host_alloc(n * es, "sampled outputs");
  gemm_sample_want(p, seed, s, want);
  for (int r = 0; r < s->nr; r++)
    for (int c = 0; c < s->nc; c++)
      memcpy(got + ((size_t)r * s->nc + c) * es,
             (const unsigned char *)c_rows + ((size_t)r * p->n + s->cols[c]) * es, es);
  hx_check chk = gemm_compare(p->dtype, got, want, n, p->k);
  chk.sampled = n;
  hx_host_free(want);
  hx_host_free(got);
  return chk;
}
