/* bpanel: a panel of grouped bars (comparison and speedup figures), as its figure
 * (emit_bars.c) and its terminal table (tables.c) both read it. */
#ifndef PLOT_BPANEL_H
#define PLOT_BPANEL_H

#include "figure_impl.h"

/* The cells of device row d of model m: groups = its columns, one bar per system but the
 * baseline. Values: metric k from the logs, or (MET_SPEEDUP) the speedup over the baseline. */
typedef struct {
  const fg_model *m;
  int d;
  pc_metric k;
  int base; /* speedup: index into m->sys of the baseline, which has no bar; else -1 */
  int logy;
  double lo, hi, step; /* step 0: a log axis */
  char title[PC_LABEL * 3];
  /* the figure's group labels: bit i set leaves out word i, which every group label of the
   * panel shares (when they are too wide for their groups); the x label names those words */
  unsigned drop;
  char xlabel[PC_XLABEL + 32];
} fg_bpanel;

/* Its bars per group; the system (index into m->sys) of a group's j-th bar; the value of
 * system s in column x (NAN: no bar); the mark of a bar that has none. */
int fg_bp_nbars(const fg_bpanel *b);
int fg_bp_sys(const fg_bpanel *b, int j);
double fg_bp_value(const fg_bpanel *b, int x, int s);
const char *fg_bp_mark(const fg_bpanel *b, int x, int s);

#endif
