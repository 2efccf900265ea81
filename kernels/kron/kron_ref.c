/* kron_ref.c: the CPU double reference, straight from the definitions in kron.h: axis passes
 * over [B·P, f, Q] slabs with plain loops (no GEMM, no transposes), and the explicit
 * Kronecker matrix for the tests. */
#include "kron.h"

#include "harness.h"

#include <string.h>

/* out = A_k on axis k of in (transpose: A_k^T) */
static void axis_pass(const kron_shape *s, int k, const double *A, int transpose, const double *in,
                      double *out) {
  long long f = s->f[k], Q = kron_suffix(s, k), slabs = s->batch * kron_prefix(s, k);
  for (long long r = 0; r < slabs; r++) {
    const double *x = in + r * f * Q;
    double *y = out + r * f * Q;
    for (long long i = 0; i < f; i++) {
      double *yi = y + i * Q;
      for (long long q = 0; q < Q; q++) yi[q] = 0;
      for (long long j = 0; j < f; j++) {
        double a = transpose ? A[j * f + i] : A[i * f + j];
        const double *xj = x + j * Q;
        for (long long q = 0; q < Q; q++) yi[q] += a * xj[q];
      }
    }
  }
}

void kron_ref_fwd(const kron_shape *s, const double *x, const double *A, double *y) {
  long long bn = s->batch * s->n;
  double *tmp = hx_host_alloc((size_t)bn * sizeof *tmp, "reference scratch");
  /* ping-pong so the last pass lands in y */
  const double *cur = x;
  for (int k = 0; k < s->m; k++) {
    double *dst = ((s->m - 1 - k) % 2 == 0) ? y : tmp;
    axis_pass(s, k, A + s->aoff[k], 0, cur, dst);
    cur = dst;
  }
  hx_host_free(tmp);
}

void kron_ref_bwd(const kron_shape *s, const double *x, const double *A, const double *gy,
                  double *gx, double *gA) {
  long long bn = s->batch * s->n;
  int m = s->m;
  /* T_0 = x, T_1 .. T_{m-1} kept */
  double *T = hx_host_alloc((size_t)(m > 1 ? m - 1 : 1) * (size_t)bn * sizeof *T, "reference T");
  double *G = hx_host_alloc(2 * (size_t)bn * sizeof *G, "reference G");
  for (int k = 0; k + 1 < m; k++)
    axis_pass(s, k, A + s->aoff[k], 0, k ? T + (size_t)(k - 1) * bn : x, T + (size_t)k * bn);
  const double *g = gy;
  for (int k = m - 1; k >= 0; k--) {
    const double *t = k ? T + (size_t)(k - 1) * bn : x;
    long long f = s->f[k], Q = kron_suffix(s, k), slabs = s->batch * kron_prefix(s, k);
    double *ga = gA + s->aoff[k];
    memset(ga, 0, (size_t)(f * f) * sizeof *ga);
    for (long long r = 0; r < slabs; r++)
      for (long long i = 0; i < f; i++)
        for (long long j = 0; j < f; j++) {
          const double *gi = g + (r * f + i) * Q, *tj = t + (r * f + j) * Q;
          double acc = 0;
          for (long long q = 0; q < Q; q++) acc += gi[q] * tj[q];
          ga[i * f + j] += acc;
        }
    double *dst = k == 0 ? gx : G + (size_t)(k % 2) * bn;
    axis_pass(s, k, A + s->aoff[k], 1, g, dst);
    g = dst;
  }
  hx_host_free(G);
  hx_host_free(T);
}

void kron_ref_dense(const kron_shape *s, const double *A, double *K) {
  long long n = s->n;
  for (long long r = 0; r < n; r++)
    for (long long c = 0; c < n; c++) {
      double v = 1;
      long long rr = r, cc = c;
      for (int k = s->m - 1; k >= 0; k--) { /* last axis fastest */
        long long f = s->f[k];
        v *= A[s->aoff[k] + (rr % f) * f + (cc % f)];
        rr /= f;
        cc /= f;
      }
      K[r * n + c] = v;
    }
}
