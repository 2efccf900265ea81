/* bpanel: a panel of grouped bars (see bpanel.h): its bars per group, each bar's system,
 * value (metric k, or the speedup over the panel's baseline) and mark. */
#include "bpanel.h"

#include <math.h>

int fg_bp_nbars(const fg_bpanel *b) { return b->m->nsys - (b->base >= 0); }
int fg_bp_sys(const fg_bpanel *b, int j) { return b->base >= 0 && j >= b->base ? j + 1 : j; }

double fg_bp_value(const fg_bpanel *b, int x, int s) {
  const fg_cell *c = fg_at(b->m, b->d, x, s);
  if (b->k != MET_SPEEDUP) return fg_cell_value(c, b->k);
  double own = fg_cell_ms(c), base = fg_cell_ms(fg_at(b->m, b->d, x, b->base));
  return isnan(own) || isnan(base) ? NAN : base / own;
}

/* No bar: the system's own mark, or n/a when it ran but its baseline did not. */
const char *fg_bp_mark(const fg_bpanel *b, int x, int s) {
  const fg_cell *c = fg_at(b->m, b->d, x, s);
  if (b->k == MET_SPEEDUP && !isnan(fg_cell_ms(c))) return "n/a";
  return fg_cell_mark(c, NAN);
}
