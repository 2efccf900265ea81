/* select_check.c: compare two KV-cache selections (e2e_check.h). */
#include "select_check.h"

#include "harness.h"
#include "kvline.h"
#include "ref_model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The reference's own thresholds for one head: the smallest key that made each top-k stage.
 * Recomputed with the reference rule (ref_model.c) from the reference's scores. */
typedef struct {
  double t_score, t_std; /* NAN when the stage kept everything or does not exist */
  double *std;           /* roco: per-key std, else NULL */
} thresholds;

static double min_marked(const double *key, const uint8_t *flags, const uint8_t *before, int n) {
  double t = NAN;
  for (int j = 0; j < n; j++)
    if (flags[j] && !(before && before[j]) && (isnan(t) || key[j] < t)) t = key[j];
  return t;
}

static void head_thresholds(const e2e_config *c, const double *score, const double *score2,
                            thresholds *th, uint8_t *flags, uint8_t *stage1) {
  const int S = c->seqlen;
  th->t_score = th->t_std = NAN;
  memset(flags, 0, (size_t)S);
  if (workload_table[c->workload].select == SEL_TOPK_STD) {
    for (int j = 0; j < S; j++) th->std[j] = e2e_ref_roco_std(score[j], score2[j], S);
    if (c->keep_std < S) {
      e2e_ref_topk_flags(th->std, S, c->keep_std, flags);
      th->t_std = min_marked(th->std, flags, NULL, S);
    } else {
      e2e_ref_topk_flags(th->std, S, c->keep_std, flags);
    }
    memcpy(stage1, flags, (size_t)S);
    int left = 0;
    for (int j = 0; j < S; j++) left += !flags[j];
    e2e_ref_topk_flags(score, S, c->keep, flags);
    if (c->keep < left) th->t_score = min_marked(score, flags, stage1, S);
  } else {
    e2e_ref_topk_flags(score, S, c->keep, flags);
    if (c->keep < S) th->t_score = min_marked(score, flags, NULL, S);
  }
}

static int near(double key, double t, double tie_rel) {
  return !isnan(t) && fabs(key - t) <= tie_rel * fabs(t) + 1e-12;
}

e2e_sel_check e2e_compare_selection(const e2e_config *c, const e2e_sel_want *want,
                                    const int32_t *got_idx, const int32_t *got_count,
                                    double tie_rel, double corm_unjudged_frac) {
  const int S = c->seqlen, H = c->heads, cap = e2e_cache_cap(c);
  e2e_sel_check r;
  memset(&r, 0, sizeof r);
  r.tie_rel = tie_rel;
  if (cap == 0) {
    r.ok = 1;
    return r;
  }
  uint8_t *mark = hx_host_alloc((size_t)S, "selection marks");
  uint8_t *flags = hx_host_alloc((size_t)S, "selection flags");
  uint8_t *stage1 = hx_host_alloc((size_t)S, "selection stage");
  thresholds th = {NAN, NAN, NULL};
  const select_kind sel = workload_table[c->workload].select;
  if (sel == SEL_TOPK_STD) th.std = hx_host_alloc((size_t)S * sizeof(double), "selection std");
  for (int lh = 0; lh < c->layers * H; lh++) {
    const int32_t *wi = want->idx + (size_t)lh * cap, *gi = got_idx + (size_t)lh * cap;
    int wc = want->count[lh], gc = got_count[lh];
    if (wc < 0 || wc > cap || gc < 0 || gc > cap) {
      r.malformed++;
      continue;
    }
    r.heads++;
    r.kept += (size_t)wc;
    memset(mark, 0, (size_t)S);
    for (int i = 0; i < wc; i++) mark[wi[i]] |= 1;
    for (int i = 0; i < gc; i++) {
      if (gi[i] < 0 || gi[i] >= S || (i && gi[i] <= gi[i - 1])) {
        r.malformed++;
        break;
      }
      mark[gi[i]] |= 2;
    }
    size_t at = (size_t)lh * S;
    if (sel != SEL_FLAGS)
      head_thresholds(c, want->score + at, want->score2 ? want->score2 + at : NULL, &th, flags,
                      stage1);
    for (int j = 0; j < S; j++) {
      if (mark[j] == 0 || mark[j] == 3) continue;
      r.differing++;
      int tie;
      if (sel == SEL_FLAGS) {
        if (!want->corm_margin) {
          r.unjudged++;
          continue;
        }
        tie = fabs(want->corm_margin[at + j]) <= tie_rel;
      } else {
        tie = near(want->score[at + j], th.t_score, tie_rel) ||
              (th.std && near(th.std[j], th.t_std, tie_rel));
      }
      if (tie)
        r.near_tie++;
      else
        r.hard++;
    }
  }
  r.ok = r.malformed == 0 && r.hard == 0 &&
         (double)r.unjudged <= corm_unjudged_frac * (double)(r.kept ? r.kept : 1);
  hx_host_free(th.std);
  hx_host_free(stage1);
  hx_host_free(flags);
  hx_host_free(mark);
  return r;
}

void e2e_print_selection_check(const char *output, const char *reference, const e2e_sel_check *r) {
  FILE *out = hx_log();
  fputs("check", out);
  kv_put(out, "output", output);
  kv_put(out, "reference", reference);
  kv_putf(out, "heads", "%zu", r->heads);
  kv_putf(out, "kept", "%zu", r->kept);
  kv_putf(out, "differing", "%zu", r->differing);
  kv_putf(out, "near_tie", "%zu", r->near_tie);
  kv_putf(out, "unjudged", "%zu", r->unjudged);
  kv_putf(out, "hard", "%zu", r->hard);
  kv_putf(out, "malformed", "%zu", r->malformed);
  kv_putf(out, "tie_rel", "%.1e", r->tie_rel);
  kv_putf(out, "ok", "%d", r->ok);
  fputc('\n', out);
  hx_log_flush();
}
