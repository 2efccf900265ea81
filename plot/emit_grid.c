/* emit_grid: grid figures (Fig 12, Fig 14): rows devices, columns workloads (or x: cases), a
 * bar per system, ours' speedup over the best other system as a red label over its bar. A
 * fixed y range (ymax:) cuts taller bars and writes their value inside. */
#include "emit_parts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Per-panel y maximum: the figure's fixed range, or rounded up from the tallest bar. */
static double grid_ymax(const fg_model *m, int d, int x) {
  if (m->fig->ymax > 0) return m->fig->ymax;
  double top = 0;
  for (int s = 0; s < m->nsys; s++) {
    double v = fg_cell_value(fg_at(m, d, x, s), MET_MS);
    if (!isnan(v) && v > top) top = v;
  }
  return ly_nice_ceiling(top * 1.15);
}

/* The .dat block of panel (d, x): its bars, then its labels. */
static void dat_grid_panel(FILE *f, const fg_model *m, int d, int x, double ymax, const layout *L) {
  const pc_config *c = m->cfg;
  int ns = m->nsys;
  static panel p;
  memset(&p, 0, sizeof p);
  p.pw = L->pw;
  p.ph = L->ph;
  p.xlo = -0.6;
  p.xhi = ns - 0.4;
  p.ylo = 0;
  p.yhi = ymax;
  double v[PC_MAX_ITEMS];
  for (int s = 0; s < ns; s++) {
    v[s] = fg_cell_value(fg_at(m, d, x, s), MET_MS);
    p.has_bar[s] = !isnan(v[s]);
    p.bar[s] =
        (box){ly_in_x(&p, s - 0.4), ly_in_x(&p, s + 0.4), 0, p.has_bar[s] ? ly_in_y(&p, v[s]) : 0};
  }
  for (int s = 0; s < ns; s++)
    if (p.has_bar[s] && v[s] > ymax) {
      char cut[32]; /* the clipped bar's own value: 8.46, 33.4 */
      snprintf(cut, sizeof cut, v[s] < 10 ? "%.2f" : "%.1f", v[s]);
      ly_place_cut(&p, s, cut, fg_sys_color(m, s), s == m->ours);
    }
  for (int s = 0; s < ns; s++)
    if (!p.has_bar[s])
      ly_place_mark(&p, ns, (p.bar[s].x0 + p.bar[s].x1) / 2, fg_cell_mark(fg_at(m, d, x, s), v[s]));
  double spd = fg_speedup(m, d, x);
  if (m->ours >= 0 && !isnan(spd)) {
    char sp[32];
    snprintf(sp, sizeof sp, "%.2f×", spd); /* two decimals: 0.96x is never 1.0x */
    ly_place_speedup(&p, ns, m->ours, sp, ly_in_x(&p, 1) - ly_in_x(&p, 0));
  }
  fprintf(f, "# device=%s workload=%s ymax=%g\n", c->devices[m->dev[d]].name,
          m->fig->x[0] ? m->xlab[x] : c->workloads[m->xw[x]].name, ymax);
  fprintf(f, "# idx letter value_ms bar_h color ours box_x0 box_x1 box_y0 box_y1 stale\n");
  for (int s = 0; s < ns; s++) {
    fprintf(f, "%d %c %.6g %.6g %u %d", s, 'A' + s, v[s], isnan(v[s]) ? NAN : fmin(v[s], ymax),
            fg_sys_color(m, s), s == m->ours);
    ly_dat_bar_box(f, &p, s, 0);
    fprintf(f, " %d\n", fg_at(m, d, x, s)->stale >= 0);
  }
  fputs("\n\n", f);
  ly_dat_labels(f, &p);
}

/* Sizes the figure to its widest tick label, writes every panel and the .gp variables. */
int fg_emit_grid(const fg_model *m, FILE *dat, FILE *gp) {
  int n = m->ndev * m->nx;
  double *ymax = malloc(sizeof *ymax * (size_t)(n ? n : 1));
  double *step = malloc(sizeof *step * (size_t)(n ? n : 1));
  if (!ymax || !step) {
    free(ymax);
    free(step);
    return -1;
  }
  /* room for the y tick labels: the widest label of any panel */
  double tickw = 0;
  for (int d = 0; d < m->ndev; d++)
    for (int x = 0; x < m->nx; x++) {
      int i = d * m->nx + x;
      ymax[i] = grid_ymax(m, d, x);
      step[i] = m->fig->ytics > 0 ? m->fig->ytics : ly_nice_step(ymax[i]);
      tickw = fmax(tickw, ly_ticks_linear(ymax[i], step[i]));
    }
  layout L = {0};
  char note[160];
  fg_note(m, note, sizeof note);
  L.note_h = note[0] ? 0.2 : 0;
  /* the y label and the row labels stand left of the tick labels (template: at 0.1 and 0.3 in) */
  L.left = 0.43 + tickw + 0.1;
  L.cgap = 0.12 + tickw + 0.08;
  L.right = 0.3;
  L.pw = m->nx >= 4 ? 1.45 : 6.5 / m->nx; /* few columns: wider panels */
  L.w = L.left + L.right + L.pw * m->nx + L.cgap * (m->nx - 1);
  ly_legend(&L, m->nsys, 2.2);
  char ratio[PC_LABEL * 3] = ""; /* what the red labels are, under the legend */
  if (m->ours >= 0)
    snprintf(ratio, sizeof ratio,
             "red: speedup of %s = the fastest other logged system's time / its time (> 1: it is "
             "faster)",
             fg_sys_item(m, m->ours)->label);
  L.top = L.note_h + 0.45 + 0.22 * L.lrows + (ratio[0] ? 0.16 : 0);
  L.bottom = 0.32;
  L.rgap = 0.42;
  L.ph = 1.2;
  L.h = L.top + L.bottom + L.ph * m->ndev + L.rgap * (m->ndev - 1);
  for (int d = 0; d < m->ndev; d++)
    for (int x = 0; x < m->nx; x++) dat_grid_panel(dat, m, d, x, ymax[d * m->nx + x], &L);
  fg_gp_header(gp, m, m->nx, &L);
  fprintf(gp, "ratio_text = \"%s\"\n", ratio);
  fg_gp_strings(gp, "collabel", m->nx, fg_col_label, m);
  fprintf(gp, "array panel_ymax[%d] = [", n);
  for (int i = 0; i < n; i++) fprintf(gp, "%s%g", i ? ", " : "", ymax[i]);
  fprintf(gp, "]\narray panel_step[%d] = [", n);
  for (int i = 0; i < n; i++) fprintf(gp, "%s%g", i ? ", " : "", step[i]);
  fputs("]\n", gp);
  free(ymax);
  free(step);
  return 0;
}
