/* select_check.h: compare the KV-cache selection of a run against a reference selection.
 * Two selections made from slightly different scores (fp16 vs double, fused vs unfused) may
 * differ where keys tie: a position kept by one and not the other is a near tie when the
 * reference's key is within tie_rel (relative) of the reference's threshold for that stage
 * (top-k by score, roco's top-k by std), or for corm when the reference's margin
 * max_i (P - mask)/mask is within tie_rel of 0. Any other difference is hard and fails the
 * check. corm without margins (a GPU reference) cannot judge: its differences are `unjudged`
 * and must stay under a fraction of the kept keys. */
#ifndef E2E_SELECT_CHECK_H
#define E2E_SELECT_CHECK_H

#include "e2e.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  const int32_t *idx, *count;   /* [layers, heads, cap], [layers, heads] */
  const double *score, *score2; /* [layers, heads, S], the reference's keys */
  const double *corm_margin;    /* [layers, heads, S] or NULL */
} e2e_sel_want;

typedef struct {
  size_t heads, kept, differing, near_tie, unjudged, hard, malformed;
  double tie_rel;
  int ok;
} e2e_sel_check;

e2e_sel_check e2e_compare_selection(const e2e_config *c, const e2e_sel_want *want,
                                    const int32_t *got_idx, const int32_t *got_count,
                                    double tie_rel, double corm_unjudged_frac);
/* "check output=NAME reference=REF heads=.. kept=.. differing=.. near_tie=.. hard=.. ok=" */
void e2e_print_selection_check(const char *output, const char *reference, const e2e_sel_check *r);

#ifdef __cplusplus
}
#endif
#endif
