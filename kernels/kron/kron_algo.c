/* kron_algo.c: the three versions as call sequences on a backend (kron.h), and v3's plan.
 * Derivations of every GEMM's arguments (cuBLAS is column-major; a row-major [r, c] matrix is
 * a column-major [c, r] one with leading dimension c):
 *   Y[R,f] = X[R,f]·A^T          gemm(T, N, m=f, n=R, k=f, A ld f, X ld f, Y ld f)
 *   X'[R,f] = G[R,f]·A           gemm(N, N, m=f, n=R, k=f, A ld f, G ld f, X' ld f)
 *   gA[f,f] = G[R,f]^T·X[R,f]    gemm(N, T, m=f, n=f, k=R, X ld f, G ld f, gA ld f)
 *   per slab [f,Q]: Y = A·X      gemm(N, N, m=Q, n=f, k=f, X ld Q, A ld f (stride 0), Y ld Q)
 *                   X' = A^T·G   gemm(N, T, m=Q, n=f, k=f, G ld Q, A ld f (stride 0), X' ld Q)
 *                   gA_b = G·X^T gemm(T, N, m=f, n=f, k=Q, X ld Q, G ld Q, gA_b ld f)  */
#include "kron.h"

#include "harness.h"
#include "kron_tile.h"

#include <string.h>

#define AT(p, e) ((void *)((char *)(p) + (size_t)(e) * (size_t)es))

size_t kron_group_smem(const kron_group *g, int elem_size) {
  return (size_t)g->slots * (size_t)(g->S * g->W) * (size_t)elem_size;
}

/* smallest divisor of q that is >= want (q itself when none is smaller) */
static long long divisor_at_least(long long q, long long want) {
  for (long long d = want < 1 ? 1 : want; d < q; d++)
    if (q % d == 0) return d;
  return q;
}

/* largest divisor of q that is <= cap (>= 1) */
static long long divisor_at_most(long long q, long long cap) {
  if (cap >= q) return q;
  for (long long d = cap; d > 1; d--)
    if (q % d == 0) return d;
  return 1;
}

/* A tile wider than this many elements buys nothing but fewer blocks. */
#define KRON_TILE_TARGET 8192

int kron_plan_make(const kron_shape *s, int es, kron_pass pass, size_t budget, kron_plan *p,
                   char *why, size_t why_len) {
  memset(p, 0, sizeof *p);
  kron_group rev[KRON_MAX_FACTORS];
  int ng = 0, k1 = s->m;
  while (k1 > 0) {
    long long Q = 1;
    for (int k = k1; k < s->m; k++) Q *= s->f[k];
    long long wmin = divisor_at_least(Q, Q < 32 ? Q : 32); /* coalesced rows */
    {
      /* a wide factor alone: narrower (less coalesced) tiles rather than none */
      size_t one = (size_t)s->f[k1 - 1] * (size_t)(pass == KRON_FWD ? 2 : 3) * (size_t)es;
      if ((size_t)wmin * one > budget) wmin = divisor_at_most(Q, (long long)(budget / one));
    }
    int k0 = k1;
    long long S = 1;
    while (k0 > 0) {
      long long S2 = S * s->f[k0 - 1];
      int slots = pass == KRON_FWD ? 2 : (k1 - (k0 - 1)) + 2;
      if ((size_t)(S2 * wmin) * (size_t)slots * (size_t)es > budget) break;
      S = S2;
      k0--;
    }
    if (k0 == k1) {
      int slots = pass == KRON_FWD ? 2 : 3;
      snprintf(why, why_len,
               "v3 %s: factor %d (%d) needs a tile of %lld x %lld elements, %zu bytes of shared "
               "memory per block; the budget is %zu",
               kron_pass_names[pass], k1, s->f[k1 - 1], (long long)s->f[k1 - 1], wmin,
               (size_t)(s->f[k1 - 1] * wmin) * (size_t)slots * (size_t)es, budget);
      return -1;
    }
    kron_group *g = &rev[ng++];
    memset(g, 0, sizeof *g);
    g->k0 = k0;
    g->k1 = k1;
    g->S = S;
    g->Q = Q;
    g->P = 1;
    for (int k = 0; k < k0; k++) g->P *= s->f[k];
    g->slots = pass == KRON_FWD ? 2 : (k1 - k0) + 2;
    long long cap = (long long)(budget / ((size_t)g->slots * (size_t)es)) / S;
    long long target = KRON_TILE_TARGET / S;
    if (target < wmin) target = wmin;
    g->W = divisor_at_most(Q, cap < target ? cap : target);
    if (g->W < wmin && wmin <= cap) g->W = wmin;
    long long st = g->W;
    for (int l = k1 - k0 - 1; l >= 0; l--) {
      g->st[l] = st;
      st *= s->f[k0 + l];
    }
    long long tile = S * g->W, th = (tile / 8 + 31) / 32 * 32;
    g->threads = (int)(th < 128 ? 128 : th > 1024 ? 1024 : th);
    size_t smem = kron_group_smem(g, es);
    if (smem > p->smem_max) p->smem_max = smem;
    k1 = k0;
  }
  p->ngroups = ng;
  for (int i = 0; i < ng; i++) p->g[i] = rev[ng - 1 - i];
  return 0;
}

void kron_ws_elems(const kron_shape *s, kron_version v, const kron_plan *fwd_plan,
                   const kron_plan *bwd_plan, long long *saved, long long *scratch,
                   long long *part) {
  long long bn = s->batch * s->n;
  (void)fwd_plan;
  *saved = *scratch = *part = 0;
  if (v == KRON_V3) {
    *saved = bwd_plan && bwd_plan->ngroups > 1 ? (bwd_plan->ngroups - 1) * bn : 0;
    *scratch = 2 * bn;
    return;
  }
  *saved = (s->m - 1) * bn;
  *scratch = 2 * bn;
  if (v == KRON_V2)
    for (int k = 0; k < s->m; k++) {
      long long bp = s->batch * kron_prefix(s, k), Q = kron_suffix(s, k), f = s->f[k];
      if (Q > 1 && bp > 1 && bp * f * f > *part) *part = bp * f * f;
    }
}

static void name_of(char *dst, size_t cap, const char *v, const char *what, int k) {
  snprintf(dst, cap, "%s.%s[%d]", v, what, k + 1);
}

void kron_run_fwd(kron_be *be, kron_version v, const kron_shape *s, const kron_plan *plan,
                  const kron_bufs *b) {
  int es = be->es, m = s->m;
  long long bn = s->batch * s->n;
  char nm[64];
  if (v == KRON_V1) {
    const void *cur = b->x;
    for (int st = 0; st < m; st++) {
      int k = m - 1 - st;
      long long f = s->f[k], R = bn / f;
      name_of(nm, sizeof nm, "v1", "gemm", k);
      be->gemm(be, nm, 1, 0, f, R, f, AT(b->A, s->aoff[k]), f, 0, cur, f, 0, b->scratch, f, 0, 1);
      void *dst = st == m - 1 ? b->y : AT(b->saved, st * bn);
      name_of(nm, sizeof nm, "v1", "permute", k);
      be->transpose(be, nm, b->scratch, dst, s->batch, s->n / f, f);
      cur = dst;
    }
  } else if (v == KRON_V2) {
    const void *cur = b->x;
    for (int k = 0; k < m; k++) {
      long long f = s->f[k], bp = s->batch * kron_prefix(s, k), Q = kron_suffix(s, k);
      void *dst = k == m - 1 ? b->y : AT(b->saved, k * bn);
      const void *A = AT(b->A, s->aoff[k]);
      name_of(nm, sizeof nm, "v2", "gemm", k);
      if (Q == 1)
        be->gemm(be, nm, 1, 0, f, bp, f, A, f, 0, cur, f, 0, dst, f, 0, 1);
      else
        be->gemm(be, nm, 0, 0, Q, f, f, cur, Q, f * Q, A, f, 0, dst, Q, f * Q, bp);
      cur = dst;
    }
  } else {
    const void *cur = b->x;
    for (int gi = 0; gi < plan->ngroups; gi++) {
      void *dst = gi == plan->ngroups - 1 ? b->y : AT(b->scratch, (gi % 2) * bn);
      const kron_group *g = &plan->g[gi];
      snprintf(nm, sizeof nm, "v3.fused[%d-%d]", g->k0 + 1, g->k1);
      be->group_fwd(be, nm, s, g, b->A, cur, dst);
      cur = dst;
    }
  }
}

void kron_run_bwd(kron_be *be, kron_version v, const kron_shape *s, const kron_plan *fwd_plan,
                  const kron_plan *bwd_plan, const kron_bufs *b) {
  int es = be->es, m = s->m;
  long long bn = s->batch * s->n;
  char nm[64];
  (void)fwd_plan;
  if (v == KRON_V1) {
    const void *g = b->gy;
    for (int st = m - 1; st >= 0; st--) {
      int k = m - 1 - st;
      long long f = s->f[k], R = bn / f;
      const void *X = st ? AT(b->saved, (st - 1) * bn) : b->x;
      name_of(nm, sizeof nm, "v1", "unpermute", k);
      be->transpose(be, nm, g, b->scratch, s->batch, f, s->n / f);
      name_of(nm, sizeof nm, "v1", "gemm_gA", k);
      be->gemm(be, nm, 0, 1, f, f, R, X, f, 0, b->scratch, f, 0, AT(b->gA, s->aoff[k]), f, 0, 1);
      void *dst = st == 0 ? b->gx : AT(b->scratch, bn);
      name_of(nm, sizeof nm, "v1", "gemm_gx", k);
      be->gemm(be, nm, 0, 0, f, R, f, AT(b->A, s->aoff[k]), f, 0, b->scratch, f, 0, dst, f, 0, 1);
      g = dst;
    }
  } else if (v == KRON_V2) {
    const void *g = b->gy;
    for (int k = m - 1; k >= 0; k--) {
      long long f = s->f[k], bp = s->batch * kron_prefix(s, k), Q = kron_suffix(s, k);
      const void *t = k ? AT(b->saved, (k - 1) * bn) : b->x;
      const void *A = AT(b->A, s->aoff[k]);
      void *ga = AT(b->gA, s->aoff[k]);
      name_of(nm, sizeof nm, "v2", "gemm_gA", k);
      if (Q == 1) {
        be->gemm(be, nm, 0, 1, f, f, bp, t, f, 0, g, f, 0, ga, f, 0, 1);
      } else if (bp == 1) {
        be->gemm(be, nm, 1, 0, f, f, Q, t, Q, 0, g, Q, 0, ga, f, 0, 1);
      } else {
        be->gemm(be, nm, 1, 0, f, f, Q, t, Q, f * Q, g, Q, f * Q, b->part, f, f * f, bp);
        name_of(nm, sizeof nm, "v2", "reduce_gA", k);
        be->reduce(be, nm, b->part, bp, f * f, ga);
      }
      void *dst = k == 0 ? b->gx : AT(b->scratch, (k % 2) * bn);
      name_of(nm, sizeof nm, "v2", "gemm_gx", k);
      if (Q == 1)
        be->gemm(be, nm, 0, 0, f, bp, f, A, f, 0, g, f, 0, dst, f, 0, 1);
      else
        be->gemm(be, nm, 0, 1, Q, f, f, g, Q, f * Q, A, f, 0, dst, Q, f * Q, bp);
      g = dst;
    }
  } else {
    const kron_plan *p = bwd_plan;
    /* the group boundaries of the forward, with the backward's grouping */
    for (int gi = 0; gi + 1 < p->ngroups; gi++) {
      const kron_group *g = &p->g[gi];
      snprintf(nm, sizeof nm, "v3.recompute[%d-%d]", g->k0 + 1, g->k1);
      be->group_fwd(be, nm, s, g, b->A, gi ? AT(b->saved, (gi - 1) * bn) : b->x,
                    AT(b->saved, gi * bn));
    }
    be->zero(be, b->gA, s->aoff[m]);
    const void *gout = b->gy;
    for (int gi = p->ngroups - 1; gi >= 0; gi--) {
      const kron_group *g = &p->g[gi];
      void *dst = gi == 0 ? b->gx : AT(b->scratch, (gi % 2) * bn);
      snprintf(nm, sizeof nm, "v3.fused_bwd[%d-%d]", g->k0 + 1, g->k1);
      be->group_bwd(be, nm, s, g, b->A, gi ? AT(b->saved, (gi - 1) * bn) : b->x, gout, dst, b->gA);
      gout = dst;
    }
  }
}
