/* emit_sweep: sweep figures (Fig 13): rows devices, a panel of TFLOP/s (linear) and one of
 * peak MiB (log) each, groups the sequence lengths, a bar per system. */
#include "emit_parts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Group i's label: its value, a multiple of 1024 as nK (4096 as 4K). */
static const char *get_seq(const fg_model *m, int i) {
  static char buf[PC_MAX_SWEEP][PT_NAME + 1];
  const char *v = m->fig->sweep[i];
  char *end;
  long n = strtol(v, &end, 10);
  if (*v && !*end && n % 1024 == 0)
    snprintf(buf[i], sizeof buf[i], "%ldK", n / 1024);
  else
    snprintf(buf[i], sizeof buf[i], "%s", v);
  return buf[i];
}

/* The y range of device row d's panel of metric k. */
static void sweep_range(const fg_model *m, int d, pc_metric k, double *lo, double *hi) {
  double mn = INFINITY, mx = 0;
  for (int x = 0; x < m->nx; x++)
    for (int s = 0; s < m->nsys; s++) {
      double v = fg_cell_value(fg_at(m, d, x, s), k);
      if (isnan(v)) continue;
      mn = fmin(mn, v);
      mx = fmax(mx, v);
    }
  ly_axis_range(mn, mx, k == MET_MIB, lo, hi);
}

/* The .dat block of device row d's panel of metric k: its bars, then its labels. */
static void dat_sweep_panel(FILE *f, const fg_model *m, int d, pc_metric k, double lo, double hi,
                            const layout *L) {
  const pc_config *c = m->cfg;
  int ns = m->nsys;
  double bw = 0.8 / ns;
  static panel p;
  memset(&p, 0, sizeof p);
  p.pw = L->pw;
  p.ph = L->ph;
  p.xlo = -0.5;
  p.xhi = m->nx - 0.5;
  p.ylo = lo;
  p.yhi = hi;
  p.logy = k == MET_MIB;
  int nb = m->nx * ns;
  double v[MAX_BARS], xpos[MAX_BARS];
  for (int x = 0; x < m->nx; x++)
    for (int s = 0; s < ns; s++) {
      int i = x * ns + s;
      v[i] = fg_cell_value(fg_at(m, d, x, s), k);
      xpos[i] = x + (s - (ns - 1) / 2.0) * bw;
      p.has_bar[i] = !isnan(v[i]);
      p.bar[i] = (box){ly_in_x(&p, xpos[i] - bw / 2), ly_in_x(&p, xpos[i] + bw / 2), 0,
                       p.has_bar[i] ? ly_in_y(&p, v[i]) : 0};
    }
  for (int i = 0; i < nb; i++)
    if (p.has_bar[i] && v[i] > hi) {
      char cut[32];
      snprintf(cut, sizeof cut, "%.3g", v[i]);
      ly_place_cut(&p, i, cut, fg_sys_color(m, i % ns), i % ns == m->ours);
    }
  for (int i = 0; i < nb; i++)
    if (!p.has_bar[i])
      ly_place_mark(&p, nb, (p.bar[i].x0 + p.bar[i].x1) / 2,
                    fg_cell_mark(fg_at(m, d, i / ns, i % ns), v[i]));
  fprintf(f, "# device=%s metric=%s range=%g:%g\n", c->devices[m->dev[d]].name,
          k == MET_TFLOPS ? "tflops" : "peak_mib", lo, hi);
  fprintf(f, "# x value color ours box_x0 box_x1 box_y0 box_y1 %s system\n", m->fig->sweep_key);
  for (int i = 0; i < nb; i++) {
    int s = i % ns;
    fprintf(f, "%.5f %.6g %u %d", xpos[i], v[i], fg_sys_color(m, s), s == m->ours);
    ly_dat_bar_box(f, &p, i, 0);
    fprintf(f, " %s %s\n", m->fig->sweep[i / ns], fg_sys_item(m, s)->name);
  }
  fputs("\n\n", f);
  ly_dat_labels(f, &p);
}

/* Sizes the figure to its widest tick labels, writes every panel and the .gp variables. */
int fg_emit_sweep(const fg_model *m, FILE *dat, FILE *gp) {
  double lo[2 * PC_MAX_ITEMS], hi[2 * PC_MAX_ITEMS], step[2 * PC_MAX_ITEMS];
  double tickw = 0;
  for (int d = 0; d < m->ndev; d++) {
    sweep_range(m, d, MET_TFLOPS, &lo[2 * d], &hi[2 * d]);
    sweep_range(m, d, MET_MIB, &lo[2 * d + 1], &hi[2 * d + 1]);
    step[2 * d] = ly_nice_step(hi[2 * d]);
    step[2 * d + 1] = 0; /* log axis: decades */
    tickw = fmax(tickw, ly_ticks_linear(hi[2 * d], step[2 * d]));
  }
  layout L = {0};
  char note[160];
  fg_note(m, note, sizeof note);
  L.note_h = note[0] ? 0.2 : 0;
  L.left = 0.3 + tickw + 0.1; /* row labels at 0.12 in (template), then the tick labels */
  L.cgap = 0.3 + ly_ticks_log() + 0.1;
  L.right = 0.15;
  L.pw = 3.2;
  L.w = L.left + L.right + L.cgap + 2 * L.pw;
  ly_legend(&L, m->nsys, 2.2);
  L.top = L.note_h + 0.45 + 0.22 * L.lrows;
  L.bottom = 0.45;
  L.rgap = 0.5;
  L.ph = 1.8;
  L.h = L.top + L.bottom + L.ph * m->ndev + L.rgap * (m->ndev - 1);
  for (int d = 0; d < m->ndev; d++) {
    dat_sweep_panel(dat, m, d, MET_TFLOPS, lo[2 * d], hi[2 * d], &L);
    dat_sweep_panel(dat, m, d, MET_MIB, lo[2 * d + 1], hi[2 * d + 1], &L);
  }
  fg_gp_header(gp, m, 2, &L);
  fg_gp_strings(gp, "grouplabel", m->nx, get_seq, m);
  fprintf(gp, "ngroups = %d\nbarw = %g\n", m->nx, 0.8 / m->nsys);
  fprintf(gp, "array panel_lo[%d] = [", 2 * m->ndev);
  for (int i = 0; i < 2 * m->ndev; i++) fprintf(gp, "%s%g", i ? ", " : "", lo[i]);
  fprintf(gp, "]\narray panel_hi[%d] = [", 2 * m->ndev);
  for (int i = 0; i < 2 * m->ndev; i++) fprintf(gp, "%s%g", i ? ", " : "", hi[i]);
  fprintf(gp, "]\narray panel_step[%d] = [", 2 * m->ndev);
  for (int i = 0; i < 2 * m->ndev; i++) fprintf(gp, "%s%g", i ? ", " : "", step[i]);
  fputs("]\n", gp);
  return 0;
}
