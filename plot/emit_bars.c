/* emit_bars: comparison and speedup figures, panels of grouped bars, one file per device (the
 * tilebench seed's {kernel}_comparison_{GPU} and speedup_comparison_{GPU}).
 *
 * A comparison figure has a panel per metric of one model; a speedup figure a panel per
 * comparison (or grid) figure, each system's speedup over that panel's baseline. Each panel
 * has its own range and groups; the group labels turn 45 degrees when wider than their group,
 * and the margins are sized to them. */
#include "emit_parts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bpanel.h"

/* 1 when the bar of system s in column x comes from a stale log: its own, or its baseline's. */
static int bp_stale(const fg_bpanel *b, int x, int s) {
  return fg_at(b->m, b->d, x, s)->stale >= 0 ||
         (b->base >= 0 && fg_at(b->m, b->d, x, b->base)->stale >= 0);
}

static void bp_range(fg_bpanel *b) {
  double mn = INFINITY, mx = 0;
  for (int x = 0; x < b->m->nx; x++)
    for (int j = 0; j < fg_bp_nbars(b); j++) {
      double v = fg_bp_value(b, x, fg_bp_sys(b, j));
      if (isnan(v)) continue;
      mn = fmin(mn, v);
      mx = fmax(mx, v);
    }
  if (b->k == MET_SPEEDUP && b->logy) { /* the line at 1 stays inside */
    mn = fmin(mn, 1);
    mx = fmax(mx, 1);
  }
  ly_axis_range(mn, mx, b->logy, &b->lo, &b->hi);
  b->step = b->logy ? 0 : ly_nice_step(b->hi);
}

/* Widest y tick label: linear steps, or the decades of a log axis written as %g. */
static double bp_ticks_in(const fg_bpanel *b) {
  if (!b->logy) return ly_ticks_linear(b->hi, b->step);
  double w = 0;
  for (double v = b->lo; v <= b->hi * (1 + 1e-9); v *= 10) {
    char buf[32];
    snprintf(buf, sizeof buf, "%g", v);
    w = fmax(w, ly_text_in(buf, TICK_PT, 0));
  }
  return w;
}

#define GROUP_PT  7.0 /* the group (case) labels under each panel (bars.gp: the same) */
#define MAX_WORDS 31  /* words of a group label that can be left out (bits of fg_bpanel.drop) */

/* Splits text at its spaces into at most MAX_WORDS + 1 words (text is changed). */
static int split_words(char *text, char **word) {
  int n = 0;
  for (char *p = text; *p && n <= MAX_WORDS;) {
    while (*p == ' ') *p++ = '\0';
    if (!*p) break;
    word[n++] = p;
    while (*p && *p != ' ') p++;
  }
  return n;
}

/* Group x's label in the figure: the column's label without the words every group of the
 * panel shares (b->drop), which the panel's x label names once. */
static const char *bp_group_label(const fg_bpanel *b, int x) {
  static char buf[PC_XLABEL];
  fg_col_text(b->m, x, buf, sizeof buf);
  if (!b->drop) return buf;
  char text[PC_XLABEL], *word[MAX_WORDS + 1];
  snprintf(text, sizeof text, "%s", buf);
  int n = split_words(text, word);
  size_t len = 0;
  buf[0] = '\0';
  for (int i = 0; i < n; i++)
    if (!(b->drop >> i & 1))
      len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", len ? " " : "", word[i]);
  return buf;
}

/* The words at the same place in every group label of panel b (bit i: word i), when the labels
 * have one number of words and differ in some; else 0. */
static unsigned shared_words(const fg_bpanel *b) {
  if (b->m->nx < 2) return 0;
  char first[PC_XLABEL], text[PC_XLABEL], *w0[MAX_WORDS + 1], *w[MAX_WORDS + 1];
  fg_col_text(b->m, 0, first, sizeof first);
  int n0 = split_words(first, w0);
  if (n0 < 2 || n0 > MAX_WORDS) return 0;
  unsigned bits = (1u << n0) - 1;
  for (int x = 1; x < b->m->nx; x++) {
    fg_col_text(b->m, x, text, sizeof text);
    if (split_words(text, w) != n0) return 0;
    for (int i = 0; i < n0; i++)
      if (strcmp(w[i], w0[i]) != 0) bits &= ~(1u << i);
  }
  return bits == (1u << n0) - 1 ? 0 : bits;
}

/* Panel b's x label: what its groups are, and the words left out of their labels. */
static void bp_xlabel(fg_bpanel *b) {
  const char *what = b->m->fig->x[0] ? "problem size" : "workload";
  if (!b->drop) {
    snprintf(b->xlabel, sizeof b->xlabel, "%s", what);
    return;
  }
  char text[PC_XLABEL], *word[MAX_WORDS + 1], shared[PC_XLABEL] = "";
  fg_col_text(b->m, 0, text, sizeof text);
  int n = split_words(text, word);
  size_t len = 0;
  for (int i = 0; i < n; i++)
    if (b->drop >> i & 1)
      len += (size_t)snprintf(shared + len, sizeof shared - len, "%s%s", len ? " " : "", word[i]);
  snprintf(b->xlabel, sizeof b->xlabel, "%s (every case: %s)", what, shared);
}

/* Room for panel b's groups side by side, in inches. */
static double bp_need_in(const fg_bpanel *b) { return (fg_bp_nbars(b) * 0.075 + 0.12) * b->m->nx; }

static void dat_bars_panel(FILE *f, const fg_bpanel *b, const layout *L) {
  const fg_model *m = b->m;
  int nb = fg_bp_nbars(b), n = m->nx * nb;
  double bw = 0.8 / (nb ? nb : 1);
  static panel p;
  memset(&p, 0, sizeof p);
  p.pw = L->pw;
  p.ph = L->ph;
  p.xlo = -0.5;
  p.xhi = (m->nx ? m->nx : 1) - 0.5;
  p.ylo = b->lo;
  p.yhi = b->hi;
  p.logy = b->logy;
  static double v[MAX_BARS], xpos[MAX_BARS];
  for (int x = 0; x < m->nx; x++)
    for (int j = 0; j < nb; j++) {
      int i = x * nb + j;
      v[i] = fg_bp_value(b, x, fg_bp_sys(b, j));
      xpos[i] = x + (j - (nb - 1) / 2.0) * bw;
      p.has_bar[i] = !isnan(v[i]);
      p.bar[i] = (box){ly_in_x(&p, xpos[i] - bw / 2), ly_in_x(&p, xpos[i] + bw / 2), 0,
                       p.has_bar[i] ? ly_in_y(&p, v[i]) : 0};
    }
  for (int i = 0; i < n; i++)
    if (!p.has_bar[i])
      ly_place_mark(&p, n, (p.bar[i].x0 + p.bar[i].x1) / 2,
                    fg_bp_mark(b, i / nb, fg_bp_sys(b, i % nb)));
  static const char *const kname[MET_COUNT] = {"ms", "tflops", "peak_mib", "speedup"};
  fprintf(f, "# device=%s experiment=%s metric=%s%s%s range=%g:%g\n",
          m->cfg->devices[m->dev[b->d]].name, m->fig->experiment, kname[b->k],
          b->base >= 0 ? " baseline=" : "", b->base >= 0 ? fg_sys_item(m, b->base)->name : "",
          b->lo, b->hi);
  fprintf(f, "# x value color ours box_x0 box_x1 box_y0 box_y1 column system label stale\n");
  for (int i = 0; i < n; i++) {
    int s = fg_bp_sys(b, i % nb);
    fprintf(f, "%.5f %.6g %u %d", xpos[i], v[i], fg_sys_color(m, s), fg_sys_item(m, s)->ours);
    ly_dat_bar_box(f, &p, i, 0);
    char lab[PC_XLABEL]; /* the column's whole label */
    fg_col_text(m, i / nb, lab, sizeof lab);
    fprintf(f, " %d %s \"%s\" %d\n", i / nb, fg_sys_item(m, s)->name, lab, bp_stale(b, i / nb, s));
  }
  fputs("\n\n", f);
  ly_dat_labels(f, &p);
}

/* A text from a log (the GPU's name) made safe inside a gnuplot double-quoted string. */
static void gp_safe(char *dst, size_t cap, const char *src) {
  size_t n = 0;
  for (; *src && n + 1 < cap; src++)
    if ((unsigned char)*src >= 0x20 && !strchr("\"'\\`@&~^{}_", *src)) dst[n++] = *src;
  dst[n] = '\0';
}

/* The GPU model of the device's logs (meta gpu=), or "" (CPU runs, the artifact's logs). */
static void device_gpu(const fg_model *m, int d, char *dst, size_t cap) {
  dst[0] = '\0';
  for (int x = 0; x < m->nx; x++)
    for (int s = 0; s < m->nsys; s++) {
      const pt_row *r = fg_at(m, d, x, s)->row;
      if (r && r->gpu[0] && strcmp(r->gpu, "none") != 0) {
        gp_safe(dst, cap, r->gpu);
        return;
      }
    }
}

/* A bar figure: nrows x ncols panels (row-major), its file name, the experiment file it comes
 * from, its title, row labels and note (CPU logs, no logs); min_pw the least panel width in inches. */
typedef struct {
  const char *name, *cfg_path, *title, *note;
  const char *const *rowlabels;
  fg_bpanel *bp;
  int nrows, ncols;
  double min_pw;
} bars_fig;

/* The legend: every system with a bar in some panel, in plot: systems order. Returns their
 * number; legend[] holds their indices into the plot's systems. */
static int legend_systems(const bars_fig *f, int *legend) {
  const pc_config *c = f->bp[0].m->cfg;
  int np = f->nrows * f->ncols, nleg = 0;
  for (int s = 0; s < c->nsystems; s++) {
    int used = 0;
    for (int i = 0; i < np && !used; i++)
      for (int j = 0; j < fg_bp_nbars(&f->bp[i]) && !used; j++)
        used = f->bp[i].m->sys[fg_bp_sys(&f->bp[i], j)] == s;
    if (used) legend[nleg++] = s;
  }
  return nleg;
}

/* The widest group label of the figure's panels, in inches. */
static double widest_group_label(const bars_fig *f) {
  double w = 0;
  for (int i = 0; i < f->nrows * f->ncols; i++)
    for (int x = 0; x < f->bp[i].m->nx; x++)
      w = fmax(w, ly_text_in(bp_group_label(&f->bp[i], x), GROUP_PT, 0));
  return w;
}

/* Sets every panel's range and sizes the figure: panels wide enough for their groups, margins
 * for the widest tick label and the group labels. Group labels wider than their group lose
 * the words all of their panel's groups share (the panel's x label names them once). Returns
 * the group labels' angle: 45 when the widest is still wider than its group, else 0. */
static int size_bars(const bars_fig *f, int nleg, layout *L) {
  int np = f->nrows * f->ncols, maxg = 1;
  double tickw = 0, pw = f->min_pw;
  for (int i = 0; i < np; i++) {
    fg_bpanel *b = &f->bp[i];
    bp_range(b);
    tickw = fmax(tickw, bp_ticks_in(b));
    pw = fmax(pw, bp_need_in(b));
    maxg = b->m->nx > maxg ? b->m->nx : maxg;
    b->drop = 0;
  }
  double labw = widest_group_label(f);
  if (labw > pw / maxg - 0.05) { /* too wide: leave out the words every group shares */
    for (int i = 0; i < np; i++) f->bp[i].drop = shared_words(&f->bp[i]);
    labw = widest_group_label(f);
  }
  for (int i = 0; i < np; i++) bp_xlabel(&f->bp[i]);
  int xrot = labw > pw / maxg - 0.05 ? 45 : 0;
  double xlab_h = xrot ? (labw + ly_thick_in(GROUP_PT)) * 0.7072 : ly_thick_in(GROUP_PT);
  *L = (layout){0};
  L->note_h = f->note[0] ? 0.2 : 0;
  /* a rotated group label reaches left of its group: the first one must stay on the page */
  double reach = xrot ? fmax(0, (labw + ly_thick_in(GROUP_PT)) * 0.7072 - pw / (2 * maxg)) : 0;
  L->left = fmax(0.3 + tickw + 0.1, reach + 0.1); /* row labels at 0.12 in, then the ticks */
  L->cgap = fmax(0.3 + tickw + 0.1, reach + 0.1);
  L->right = 0.15;
  L->pw = pw;
  L->w = L->left + L->right + f->ncols * L->pw + (f->ncols - 1) * L->cgap;
  ly_legend(L, nleg ? nleg : 1, 2.2);
  L->top = L->note_h + 0.6 + 0.22 * L->lrows; /* title, legend rows, the first panel title */
  L->bottom = 0.12 + xlab_h + 0.25;           /* group labels, then the x label */
  L->rgap = L->bottom + 0.25; /* the row above's labels, then this row's panel title */
  L->ph = 1.8;
  L->h = L->top + L->bottom + L->ph * f->nrows + L->rgap * (f->nrows - 1);
  return xrot;
}

/* The .gp's names, texts, layout and row labels. */
static void gp_bars_header(FILE *gp, const bars_fig *f, const layout *L, int nleg, int xrot) {
  fprintf(gp, "# %s: generated by repro-plot from %s; rerun with `gnuplot %s.gp` in this folder.\n",
          f->name, f->cfg_path, f->name);
  fprintf(gp, "outbase = \"%s\"\ndatafile = \"%s.dat\"\nformats = \"pdf png svg\"\n", f->name,
          f->name);
  fprintf(gp, "title_text = \"%s\"\nnote_text = \"%s\"\nxlabel_text = \"%s\"\n", f->title, f->note,
          f->bp[0].m->fig->x[0] ? "problem size" : "workload");
  fprintf(gp, "nrows = %d\nncols = %d\nnleg = %d\nxrot = %d\n", f->nrows, f->ncols, nleg, xrot);
  fprintf(gp,
          "# layout in inches (computed by repro-plot: margins fit the tick and group labels)\n");
  fprintf(gp, "W = %.3f\nH = %.3f\nleft = %.3f\nright = %.3f\ntop = %.3f\nbottom = %.3f\n", L->w,
          L->h, L->left, L->right, L->top, L->bottom);
  fprintf(gp, "cgap = %.3f\nrgap = %.3f\npw = %.4f\nph = %.4f\nnote_h = %.3f\n", L->cgap, L->rgap,
          L->pw, L->ph, L->note_h);
  fprintf(gp, "legend_cols = %d\nlegend_rows = %d\n", L->lcols, L->lrows);
  fprintf(gp, "array rowlabel[%d] = [", f->nrows);
  for (int r = 0; r < f->nrows; r++) fprintf(gp, "%s\"%s\"", r ? ", " : "", f->rowlabels[r]);
  fputs("]\n", gp);
}

/* The legend's texts, colours and hatching (one empty entry when no system has a bar). */
static void gp_bars_legend(FILE *gp, const pc_config *c, const int *legend, int nleg) {
  fprintf(gp, "array legend_name[%d] = [", nleg ? nleg : 1);
  for (int i = 0; i < nleg; i++) fprintf(gp, "%s\"%s\"", i ? ", " : "", c->systems[legend[i]].name);
  fprintf(gp, "%s]\narray legend_text[%d] = [", nleg ? "" : "\"\"", nleg ? nleg : 1);
  for (int i = 0; i < nleg; i++)
    fprintf(gp, "%s\"%s\"", i ? ", " : "", c->systems[legend[i]].label);
  fprintf(gp, "%s]\narray legend_color[%d] = [", nleg ? "" : "\"\"", nleg ? nleg : 1);
  for (int i = 0; i < nleg; i++)
    fprintf(gp, "%s%u", i ? ", " : "", fg_system_color(&c->systems[legend[i]]));
  fprintf(gp, "%s]\narray legend_ours[%d] = [", nleg ? "" : "0", nleg ? nleg : 1);
  for (int i = 0; i < nleg; i++) fprintf(gp, "%s%d", i ? ", " : "", c->systems[legend[i]].ours);
  fprintf(gp, "%s]\n", nleg ? "" : "0");
}

/* Per panel: range, ticks (0 = log decades), groups (offset into grouplabel), bar width,
 * reference line, title; then every group's label. */
static void gp_bars_panels(FILE *gp, const bars_fig *f) {
  int np = f->nrows * f->ncols, ngroups = 0;
  const fg_bpanel *bp = f->bp;
  for (int i = 0; i < np; i++) ngroups += bp[i].m->nx ? bp[i].m->nx : 1;
  const char *arrays[] = {"panel_lo", "panel_hi", "panel_step", "panel_log",
                          "panel_ng", "panel_g0", "panel_barw", "panel_ref"};
  for (int a = 0, g0 = 0; a < 8; a++, g0 = 0) {
    fprintf(gp, "array %s[%d] = [", arrays[a], np);
    for (int i = 0; i < np; i++) {
      const fg_bpanel *b = &bp[i];
      int nb = fg_bp_nbars(b);
      double vals[] = {
          b->lo, b->hi, b->step, b->logy, b->m->nx, g0, 0.8 / (nb ? nb : 1), b->k == MET_SPEEDUP};
      fprintf(gp, "%s%g", i ? ", " : "", vals[a]);
      g0 += b->m->nx ? b->m->nx : 1;
    }
    fputs("]\n", gp);
  }
  fprintf(gp, "array panel_title[%d] = [", np);
  for (int i = 0; i < np; i++) fprintf(gp, "%s\"%s\"", i ? ", " : "", bp[i].title);
  fprintf(gp, "]\narray panel_xlabel[%d] = [", np);
  for (int i = 0; i < np; i++) fprintf(gp, "%s\"%s\"", i ? ", " : "", bp[i].xlabel);
  fprintf(gp, "]\narray grouplabel[%d] = [", ngroups);
  for (int i = 0, first = 1; i < np; i++) {
    for (int x = 0; x < bp[i].m->nx; x++, first = 0)
      fprintf(gp, "%s\"%s\"", first ? "" : ", ", bp_group_label(&bp[i], x));
    if (!bp[i].m->nx) { /* a panel without columns (no logs): one empty group */
      fprintf(gp, "%s\"no logs\"", first ? "" : ", ");
      first = 0;
    }
  }
  fputs("]\n", gp);
}

/* A bar figure's .dat (every panel) and the variables of its .gp. */
static int emit_bars(const bars_fig *f, FILE *dat, FILE *gp) {
  int legend[PC_MAX_ITEMS];
  int nleg = legend_systems(f, legend);
  layout L;
  int xrot = size_bars(f, nleg, &L);
  for (int i = 0; i < f->nrows * f->ncols; i++) dat_bars_panel(dat, &f->bp[i], &L);
  gp_bars_header(gp, f, &L, nleg, xrot);
  gp_bars_legend(gp, f->bp[0].m->cfg, legend, nleg);
  gp_bars_panels(gp, f);
  return 0;
}

static const char *metric_title(pc_metric k, int logy) {
  switch (k) {
  case MET_MS: return logy ? "Latency (ms, log scale)" : "Latency (ms)";
  case MET_TFLOPS: return logy ? "Throughput (TFLOP/s, log scale)" : "Throughput (TFLOP/s)";
  case MET_MIB: return logy ? "Peak memory (MiB, log scale)" : "Peak memory (MiB)";
  default: return "";
  }
}

/* The figure's title: its own (or its experiment), the device and the GPU of its logs. */
static void bars_title(const fg_model *m, const char *own, char *dst, size_t cap) {
  char gpu[PT_GPU];
  device_gpu(m, 0, gpu, sizeof gpu);
  snprintf(dst, cap, "%s on %s%s%s%s", own[0] ? own : m->fig->experiment,
           m->cfg->devices[m->dev[0]].label, gpu[0] ? " (" : "", gpu, gpu[0] ? ")" : "");
}

int fg_emit_comparison(const fg_model *m, FILE *dat, FILE *gp) {
  fg_bpanel bp[MET_COUNT];
  const pc_figure *f = m->fig;
  for (int i = 0; i < f->nmetrics; i++) {
    bp[i] = (fg_bpanel){
        .m = m, .d = 0, .k = f->metrics[i], .base = -1, .logy = (f->logy >> f->metrics[i]) & 1};
    snprintf(bp[i].title, sizeof bp[i].title, "%s", metric_title(f->metrics[i], bp[i].logy));
  }
  char title[PC_LABEL * 4], note[160];
  bars_title(m, f->title, title, sizeof title);
  fg_note(m, note, sizeof note);
  /* the panels side by side, or one above the other when that would be wider than a page */
  const char *rows[MET_COUNT];
  for (int i = 0; i < f->nmetrics; i++) rows[i] = m->cfg->devices[m->dev[0]].label;
  int stack = f->nmetrics > 1 && f->nmetrics * (fmax(3.2, bp_need_in(&bp[0])) + 0.7) > 11.0;
  bars_fig bf = {.name = m->name,
                 .cfg_path = m->cfg->path,
                 .title = title,
                 .note = note,
                 .rowlabels = rows,
                 .bp = bp,
                 .nrows = stack ? f->nmetrics : 1,
                 .ncols = stack ? 1 : f->nmetrics,
                 .min_pw = stack ? 6.4 : 3.2};
  return emit_bars(&bf, dat, gp);
}

/* A speedup figure on one device: a panel per entry of its panels:, each system's speedup over
 * that panel's baseline. */
int fg_emit_speedup_bars(const fg_model *panels, const pc_figure *f, const char *name, FILE *dat,
                         FILE *gp) {
  fg_bpanel bp[PC_MAX_FIGURES];
  const char *rows[PC_MAX_FIGURES];
  int ncpu = 0, nlogs = 0, nrows = 0, nstale = 0;
  for (int i = 0; i < f->npanels; i++) {
    const fg_model *m = &panels[i];
    int base = fg_bar_of(m, m->cfg->systems[f->panel_base[i]].name);
    bp[i] = (fg_bpanel){
        .m = m, .d = 0, .k = MET_SPEEDUP, .base = base, .logy = (f->logy >> MET_SPEEDUP) & 1};
    snprintf(bp[i].title, sizeof bp[i].title,
             "%s: speedup = %s's time / each system's (> 1: faster)", fg_panel_label(m),
             fg_sys_item(m, base)->label);
    rows[i] = "";
    ncpu += m->ncpu;
    nlogs += m->nlogs;
    nrows += m->nrows;
    nstale += m->nstale;
  }
  fg_model sum = panels[0]; /* the note over all panels (of this figure: no one experiment) */
  sum.fig = f;
  sum.ncpu = ncpu;
  sum.nlogs = nlogs;
  sum.nrows = nrows;
  sum.nstale = nstale;
  char title[PC_LABEL * 4], note[160];
  bars_title(&panels[0], f->title[0] ? f->title : "Speedup", title, sizeof title);
  fg_note(&sum, note, sizeof note);
  bars_fig bf = {.name = name,
                 .cfg_path = panels[0].cfg->path,
                 .title = title,
                 .note = note,
                 .rowlabels = rows,
                 .bp = bp,
                 .nrows = f->npanels,
                 .ncols = 1,
                 .min_pw = 6.4};
  return emit_bars(&bf, dat, gp);
}
