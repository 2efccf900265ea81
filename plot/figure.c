/* figure: where a number becomes a bar (see figure.h). */
#include "figure.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Default bar colours when a system gives none (colour-blind friendly, Okabe-Ito + greys). */
static const unsigned palette[] = {0x0072B2, 0xE69F00, 0x009E73, 0xCC79A7, 0x56B4E9,
                                   0xF0E442, 0x999999, 0x8C564B, 0x6A3D9A, 0xD55E00};

static unsigned system_color(const pc_item *s, int i) {
  if (s->has_color) return s->color;
  return palette[(unsigned)i % (sizeof palette / sizeof *palette)];
}

fg_cell *fg_at(const fg_model *m, int d, int x, int s) {
  return &m->cells[((size_t)d * (size_t)m->nx + (size_t)x) * (size_t)m->cfg->nsystems + (size_t)s];
}

static int row_in_figure(const fg_model *m, const pt_row *r) {
  return !m->fig->experiment[0] || strcmp(r->experiment, m->fig->experiment) == 0;
}

/* Does row r belong in column x? Grid columns are workloads, sweep columns seqlens. */
static int row_in_column(const fg_model *m, const pt_row *r, int x) {
  if (m->fig->kind == FIG_SWEEP)
    return strcmp(r->workload, m->fig->workload) == 0 && r->seqlen == m->fig->seqlens[x];
  return strcmp(r->workload, m->cfg->workloads[x].name) == 0;
}

/* A cell may have logs at several lengths (a CPU smoke run, say): the figure's default wins. */
static int better_row(const fg_model *m, const pt_row *old, const pt_row *cand) {
  int want = m->cfg->default_seqlen;
  if (!old) return 1;
  if (m->fig->kind == FIG_GRID && want && old->seqlen == want && cand->seqlen != want) return 0;
  return 1; /* otherwise the later file (sorted by name) wins */
}

static void choose_devices(fg_model *m, const pt_table *t) {
  const pc_config *c = m->cfg;
  m->ndev = 0;
  for (int d = 0; d < c->ndevices; d++) {
    int present = 0;
    for (size_t i = 0; i < t->n && !present; i++)
      present = row_in_figure(m, &t->rows[i]) && strcmp(t->rows[i].device, c->devices[d].name) == 0;
    if (present) m->dev[m->ndev++] = d;
  }
  if (m->ndev == 0) /* no logs at all: show every device, all NS, so the layout stays readable */
    for (int d = 0; d < c->ndevices; d++) m->dev[m->ndev++] = d;
}

int fg_build(fg_model *m, const pc_config *cfg, const pc_figure *fig, const pt_table *t) {
  memset(m, 0, sizeof *m);
  m->cfg = cfg;
  m->fig = fig;
  m->nx = fig->kind == FIG_SWEEP ? fig->nseqlens : cfg->nworkloads;
  m->ours = -1;
  for (int s = 0; s < cfg->nsystems; s++)
    if (cfg->systems[s].ours) m->ours = s;
  choose_devices(m, t);
  size_t n = (size_t)m->ndev * (size_t)(m->nx ? m->nx : 1) * (size_t)cfg->nsystems;
  m->cells = calloc(n ? n : 1, sizeof *m->cells);
  if (!m->cells) return -1;
  for (size_t i = 0; i < n; i++) m->cells[i].status = ST_MISSING;
  for (size_t i = 0; i < t->n; i++) {
    const pt_row *r = &t->rows[i];
    if (!row_in_figure(m, r)) continue;
    int s = pc_find(cfg->systems, cfg->nsystems, r->system);
    if (s < 0) continue;
    for (int d = 0; d < m->ndev; d++) {
      if (strcmp(r->device, cfg->devices[m->dev[d]].name) != 0) continue;
      for (int x = 0; x < m->nx; x++) {
        if (!row_in_column(m, r, x)) continue;
        fg_cell *c = fg_at(m, d, x, s);
        if (!better_row(m, c->row, r)) continue;
        c->row = r;
        c->status = r->status;
      }
    }
  }
  return 0;
}

void fg_free(fg_model *m) {
  free(m->cells);
  m->cells = NULL;
}

static double cell_ms(const fg_cell *c) {
  return c->status == ST_OK && c->row && isfinite(c->row->avg_ms) && c->row->avg_ms > 0
             ? c->row->avg_ms
             : NAN;
}

double fg_speedup(const fg_model *m, int d, int x) {
  if (m->ours < 0) return NAN;
  double ours = cell_ms(fg_at(m, d, x, m->ours)), best = NAN;
  for (int s = 0; s < m->cfg->nsystems; s++) {
    if (s == m->ours) continue;
    double v = cell_ms(fg_at(m, d, x, s));
    if (!isnan(v) && (isnan(best) || v < best)) best = v;
  }
  return (isnan(ours) || isnan(best)) ? NAN : best / ours;
}

/* Text shown instead of a bar. Errors show as ERR: a failed run is not "not supported". */
static const char *status_mark(pt_status s) {
  switch (s) {
  case ST_OOM: return "OOM";
  case ST_TIMEOUT: return "TLE";
  case ST_ERROR: return "ERR";
  case ST_UNSUPPORTED:
  case ST_MISSING: return "NS";
  case ST_OK: break;
  }
  return "-";
}

/* ---- values per panel kind ---- */

typedef enum { MET_MS, MET_TFLOPS, MET_MIB } metric;

static double cell_value(const fg_cell *c, metric k) {
  if (c->status != ST_OK || !c->row) return NAN;
  double v = k == MET_MS       ? c->row->avg_ms
             : k == MET_TFLOPS ? c->row->gflops_s / 1000.0
                               : c->row->peak_mib;
  return isfinite(v) && v > 0 ? v : NAN;
}

/* Mark for a cell without a bar: its status, or n/a when the run is fine but lacks the metric. */
static const char *cell_mark(const fg_cell *c, double v) {
  if (!isnan(v)) return "-";
  return c->status == ST_OK ? "n/a" : status_mark(c->status);
}

static double nice_ceiling(double v) {
  if (!(v > 0)) return 1;
  double p = pow(10, floor(log10(v)));
  const double steps[] = {1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10};
  for (size_t i = 0; i < sizeof steps / sizeof *steps; i++)
    if (steps[i] * p >= v) return steps[i] * p;
  return 10 * p;
}

/* ---- .dat ---- */

static void dat_grid_panel(FILE *f, const fg_model *m, int d, int x, double ymax) {
  const pc_config *c = m->cfg;
  double spd = fg_speedup(m, d, x);
  fprintf(f, "# device=%s workload=%s ymax=%g\n", c->devices[m->dev[d]].name, c->workloads[x].name,
          ymax);
  fprintf(f, "# idx letter value_ms bar_h color ours mark mark_y cut cut_y speedup speedup_y\n");
  for (int s = 0; s < c->nsystems; s++) {
    const fg_cell *cell = fg_at(m, d, x, s);
    double v = cell_value(cell, MET_MS);
    double h = isnan(v) ? NAN : fmin(v, ymax);
    char cut[32] = "-", sp[32] = "-";
    if (!isnan(v) && v > ymax) snprintf(cut, sizeof cut, "%.1f", v);
    double spy = NAN;
    if (s == m->ours && !isnan(spd)) {
      snprintf(sp, sizeof sp, "%.1f×", spd);
      spy = fmin(fmax(h, ymax * 0.2), ymax * 0.85) + ymax * 0.02;
    }
    fprintf(f, "%d %c %.6g %.6g %u %d \"%s\" %.6g \"%s\" %.6g \"%s\" %.6g\n", s, 'A' + s, v, h,
            system_color(&c->systems[s], s), s == m->ours, cell_mark(cell, v), ymax * 0.04, cut,
            ymax * 0.96, sp, spy);
  }
  fputs("\n\n", f);
}

/* Per-panel y maximum: the figure's fixed range, or rounded up from the tallest bar. */
static double grid_ymax(const fg_model *m, int d, int x) {
  if (m->fig->ymax > 0) return m->fig->ymax;
  double top = 0;
  for (int s = 0; s < m->cfg->nsystems; s++) {
    double v = cell_value(fg_at(m, d, x, s), MET_MS);
    if (!isnan(v) && v > top) top = v;
  }
  return nice_ceiling(top * 1.15);
}

static void sweep_range(const fg_model *m, int d, metric k, double *lo, double *hi) {
  double mn = INFINITY, mx = 0;
  for (int x = 0; x < m->nx; x++)
    for (int s = 0; s < m->cfg->nsystems; s++) {
      double v = cell_value(fg_at(m, d, x, s), k);
      if (isnan(v)) continue;
      mn = fmin(mn, v);
      mx = fmax(mx, v);
    }
  if (k == MET_MIB) { /* log axis: whole decades around the data */
    *lo =
        isfinite(mn) ? pow(10, floor(log10(mn)) - (mn < 3 * pow(10, floor(log10(mn))) ? 1 : 0)) : 1;
    *hi = mx > 0 ? pow(10, ceil(log10(mx * 2))) : 1e5;
    if (*hi <= *lo) *hi = *lo * 100;
  } else {
    *lo = 0;
    *hi = nice_ceiling((mx > 0 ? mx : 1) * 1.2);
  }
}

static void dat_sweep_panel(FILE *f, const fg_model *m, int d, metric k, double lo, double hi) {
  const pc_config *c = m->cfg;
  int ns = c->nsystems;
  double bw = 0.8 / ns;
  fprintf(f, "# device=%s metric=%s range=%g:%g\n", c->devices[m->dev[d]].name,
          k == MET_TFLOPS ? "tflops" : "peak_mib", lo, hi);
  fprintf(f, "# x value color ours mark mark_y seqlen system\n");
  for (int x = 0; x < m->nx; x++)
    for (int s = 0; s < ns; s++) {
      const fg_cell *cell = fg_at(m, d, x, s);
      double v = cell_value(cell, k);
      double xpos = x + (s - (ns - 1) / 2.0) * bw;
      double mark_y = k == MET_MIB ? lo * 1.4 : hi * 0.03;
      fprintf(f, "%.5f %.6g %u %d \"%s\" %.6g %d %s\n", xpos, v, system_color(&c->systems[s], s),
              s == m->ours, cell_mark(cell, v), mark_y, m->fig->seqlens[x], c->systems[s].name);
    }
  fputs("\n\n", f);
}

/* ---- .gp ---- */

static void gp_array_str(FILE *f, const char *name, int n,
                         const char *(*get)(const fg_model *, int), const fg_model *m) {
  fprintf(f, "array %s[%d] = [", name, n);
  for (int i = 0; i < n; i++) fprintf(f, "%s\"%s\"", i ? ", " : "", get(m, i));
  fputs("]\n", f);
}

static const char *get_row(const fg_model *m, int i) { return m->cfg->devices[m->dev[i]].label; }
static const char *get_col(const fg_model *m, int i) { return m->cfg->workloads[i].label; }
static const char *get_sys(const fg_model *m, int i) { return m->cfg->systems[i].label; }
static const char *get_seq(const fg_model *m, int i) {
  static char buf[PC_MAX_SEQLENS][16];
  int s = m->fig->seqlens[i];
  if (s % 1024 == 0)
    snprintf(buf[i], sizeof buf[i], "%dK", s / 1024);
  else
    snprintf(buf[i], sizeof buf[i], "%d", s);
  return buf[i];
}

static void gp_header(FILE *f, const fg_model *m, int ncols, double w_in, double h_in) {
  const pc_config *c = m->cfg;
  fprintf(f, "# %s: generated by repro-plot from %s; rerun with `gnuplot %s.gp` in this folder.\n",
          m->fig->name, c->path, m->fig->name);
  fprintf(f, "outbase = \"%s\"\ndatafile = \"%s.dat\"\n", m->fig->name, m->fig->name);
  fprintf(f, "formats = \"pdf png svg\"\n");
  fprintf(f, "title_text = \"%s\"\nylabel_text = \"%s\"\n", m->fig->title, m->fig->ylabel);
  fprintf(f, "nrows = %d\nncols = %d\nnsys = %d\nours = %d\n", m->ndev, ncols, c->nsystems,
          m->ours);
  fprintf(f, "W = %.3f\nH = %.3f\n", w_in, h_in);
  gp_array_str(f, "rowlabel", m->ndev, get_row, m);
  gp_array_str(f, "syslabel", c->nsystems, get_sys, m);
  fprintf(f, "array syscolor[%d] = [", c->nsystems);
  for (int s = 0; s < c->nsystems; s++)
    fprintf(f, "%s%u", s ? ", " : "", system_color(&c->systems[s], s));
  fputs("]\n", f);
  /* legend texts; labels hold no quotes (config.c rejects them) */
  int cols = (int)((w_in - 0.85) / 2.2); /* about 2.2 in per legend entry */
  if (cols < 1) cols = 1;
  if (cols > c->nsystems) cols = c->nsystems;
  fprintf(f, "legend_cols = %d\nlegend_rows = %d\n", cols, (c->nsystems + cols - 1) / cols);
  fprintf(f, "array legend_text[%d] = [", c->nsystems);
  for (int s = 0; s < c->nsystems; s++) {
    if (m->fig->kind == FIG_GRID)
      fprintf(f, "%s\"(%c) %s\"", s ? ", " : "", 'A' + s, c->systems[s].label);
    else
      fprintf(f, "%s\"%s\"", s ? ", " : "", c->systems[s].label);
  }
  fputs("]\n", f);
}

static int copy_template(FILE *f, const char *template_dir, const char *kind) {
  char path[PT_PATH];
  snprintf(path, sizeof path, "%s/%s.gp", template_dir, kind);
  FILE *in = fopen(path, "r");
  if (!in) {
    fprintf(stderr, "%s: cannot open the gnuplot template: %s\n", path, strerror(errno));
    return -1;
  }
  fprintf(f, "# ---- template %s.gp ----\n", kind);
  char buf[8192];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, n, f);
  fclose(in);
  return 0;
}

static FILE *open_out(const char *dir, const char *name, const char *ext) {
  char path[PT_PATH];
  snprintf(path, sizeof path, "%s/%s.%s", dir, name, ext);
  FILE *f = fopen(path, "w");
  if (!f) fprintf(stderr, "%s: cannot write: %s\n", path, strerror(errno));
  return f;
}

static int emit_grid(const fg_model *m, FILE *dat, FILE *gp) {
  int n = m->ndev * m->nx;
  double *ymax = malloc(sizeof *ymax * (size_t)(n ? n : 1));
  if (!ymax) return -1;
  for (int d = 0; d < m->ndev; d++)
    for (int x = 0; x < m->nx; x++) {
      ymax[d * m->nx + x] = grid_ymax(m, d, x);
      dat_grid_panel(dat, m, d, x, ymax[d * m->nx + x]);
    }
  /* room for the y tick labels: the widest is about the widest panel maximum */
  int ychars = 1;
  for (int i = 0; i < n; i++) {
    char buf[32];
    int l = snprintf(buf, sizeof buf, "%g", ymax[i]);
    if (l > ychars) ychars = l;
  }
  double left = 0.78 + 0.075 * ychars, cgap = 0.2 + 0.075 * ychars;
  double pw = m->nx >= 4 ? 1.45 : 6.5 / m->nx; /* few columns: wider panels */
  int lrows = (m->cfg->nsystems + 4) / 5;
  double w = left + 0.3 + pw * m->nx + cgap * (m->nx - 1), h = 0.75 + 0.22 * lrows + 1.45 * m->ndev;
  gp_header(gp, m, m->nx, w, h);
  fprintf(gp, "left = %.3f\ncgap = %.3f\n", left, cgap);
  gp_array_str(gp, "collabel", m->nx, get_col, m);
  fprintf(gp, "array panel_ymax[%d] = [", n);
  for (int i = 0; i < n; i++) fprintf(gp, "%s%g", i ? ", " : "", ymax[i]);
  fprintf(gp, "]\nytics_step = %g\n", m->fig->ytics);
  free(ymax);
  return 0;
}

static int emit_sweep(const fg_model *m, FILE *dat, FILE *gp) {
  double lo[2 * PC_MAX_ITEMS], hi[2 * PC_MAX_ITEMS];
  for (int d = 0; d < m->ndev; d++) {
    sweep_range(m, d, MET_TFLOPS, &lo[2 * d], &hi[2 * d]);
    dat_sweep_panel(dat, m, d, MET_TFLOPS, lo[2 * d], hi[2 * d]);
    sweep_range(m, d, MET_MIB, &lo[2 * d + 1], &hi[2 * d + 1]);
    dat_sweep_panel(dat, m, d, MET_MIB, lo[2 * d + 1], hi[2 * d + 1]);
  }
  double w = 1.4 + 3.2 * 2, h = 0.85 + 0.22 * ((m->cfg->nsystems + 3) / 4) + 1.9 * m->ndev;
  gp_header(gp, m, 2, w, h);
  gp_array_str(gp, "grouplabel", m->nx, get_seq, m);
  fprintf(gp, "ngroups = %d\nbarw = %g\n", m->nx, 0.8 / m->cfg->nsystems);
  fprintf(gp, "array panel_lo[%d] = [", 2 * m->ndev);
  for (int i = 0; i < 2 * m->ndev; i++) fprintf(gp, "%s%g", i ? ", " : "", lo[i]);
  fprintf(gp, "]\narray panel_hi[%d] = [", 2 * m->ndev);
  for (int i = 0; i < 2 * m->ndev; i++) fprintf(gp, "%s%g", i ? ", " : "", hi[i]);
  fputs("]\n", gp);
  return 0;
}

int fg_emit(const fg_model *m, const char *dir, const char *template_dir) {
  FILE *dat = open_out(dir, m->fig->name, "dat");
  if (!dat) return -1;
  FILE *gp = open_out(dir, m->fig->name, "gp");
  if (!gp) {
    fclose(dat);
    return -1;
  }
  fprintf(dat, "# %s: gnuplot data written by repro-plot from the logs; NaN = no bar.\n",
          m->fig->name);
  int rc = m->fig->kind == FIG_GRID ? emit_grid(m, dat, gp) : emit_sweep(m, dat, gp);
  if (rc == 0) rc = copy_template(gp, template_dir, m->fig->kind == FIG_GRID ? "grid" : "sweep");
  if (ferror(dat) || ferror(gp)) rc = -1;
  if (fclose(dat) != 0) rc = -1;
  if (fclose(gp) != 0) rc = -1;
  if (rc) fprintf(stderr, "%s/%s: writing the figure files failed\n", dir, m->fig->name);
  return rc;
}

/* ---- terminal output ---- */

static void print_cell(FILE *out, const fg_cell *c, int w) {
  double v = cell_ms(c);
  if (!isnan(v))
    fprintf(out, " %*.3f", w, v);
  else
    fprintf(out, " %*s", w, c->status == ST_OK ? "n/a" : status_mark(c->status));
}

static const char *column_label(const fg_model *m, int x, char *buf, size_t cap) {
  if (m->fig->kind == FIG_GRID) return m->cfg->workloads[x].label;
  snprintf(buf, cap, "S=%d", m->fig->seqlens[x]);
  return buf;
}

void fg_print_table(const fg_model *m, FILE *out) {
  const pc_config *c = m->cfg;
  int w[PC_MAX_ITEMS];
  for (int s = 0; s < c->nsystems; s++) {
    int l = (int)strlen(c->systems[s].name);
    w[s] = l > 8 ? l : 8;
  }
  fprintf(out,
          "\n== %s: %s%s%s, execution time in ms (NS = no log or not supported, "
          "OOM, TLE = timeout, ERR = failed)\n",
          m->fig->name, m->fig->experiment[0] ? m->fig->experiment : "all",
          m->fig->kind == FIG_SWEEP ? " " : "", m->fig->kind == FIG_SWEEP ? m->fig->workload : "");
  for (int d = 0; d < m->ndev; d++) {
    fprintf(out, "[%s]\n%-12s", c->devices[m->dev[d]].label,
            m->fig->kind == FIG_GRID ? "workload" : "seqlen");
    for (int s = 0; s < c->nsystems; s++) fprintf(out, " %*s", w[s], c->systems[s].name);
    fprintf(out, " %9s\n", "speedup");
    double logsum = 0;
    int nsp = 0;
    for (int x = 0; x < m->nx; x++) {
      char buf[32];
      fprintf(out, "%-12s", column_label(m, x, buf, sizeof buf));
      for (int s = 0; s < c->nsystems; s++) print_cell(out, fg_at(m, d, x, s), w[s]);
      double sp = fg_speedup(m, d, x);
      if (isnan(sp))
        fprintf(out, " %9s\n", "-");
      else {
        fprintf(out, " %8.2fx\n", sp);
        logsum += log(sp);
        nsp++;
      }
    }
    if (m->ours < 0) continue;
    if (nsp)
      fprintf(out, "geometric mean speedup of %s over the best other system: %.2fx (%d of %d %s)\n",
              c->systems[m->ours].label, exp(logsum / nsp), nsp, m->nx,
              m->fig->kind == FIG_GRID ? "workloads" : "lengths");
    else
      fprintf(out, "geometric mean speedup of %s: - (no column has both ours and another system)\n",
              c->systems[m->ours].label);
  }
}

/* The file name a cell's log would have: the template with its placeholders filled. */
static void cell_file_name(const fg_model *m, int d, int x, int s, char *out, size_t cap) {
  const pc_config *c = m->cfg;
  const char *t = c->log_name;
  size_t n = 0;
  while (*t && n + 1 < cap) {
    if (*t != '{') {
      out[n++] = *t++;
      continue;
    }
    const char *close = strchr(t, '}');
    if (!close) break;
    char key[32] = "", val[PT_NAME] = "";
    snprintf(key, sizeof key, "%.*s", (int)(close - t - 1), t + 1);
    if (!strcmp(key, "experiment"))
      snprintf(val, sizeof val, "%s", m->fig->experiment);
    else if (!strcmp(key, "device"))
      snprintf(val, sizeof val, "%s", c->devices[m->dev[d]].name);
    else if (!strcmp(key, "workload"))
      snprintf(val, sizeof val, "%s",
               m->fig->kind == FIG_GRID ? c->workloads[x].name : m->fig->workload);
    else if (!strcmp(key, "system"))
      snprintf(val, sizeof val, "%s", c->systems[s].name);
    else if (!strcmp(key, "seqlen"))
      snprintf(val, sizeof val, "%d",
               m->fig->kind == FIG_SWEEP ? m->fig->seqlens[x] : c->default_seqlen);
    n += (size_t)snprintf(out + n, cap - n, "%s", val);
    if (n >= cap) n = cap - 1;
    t = close + 1;
  }
  out[n] = '\0';
}

int fg_print_missing(const fg_model *m, FILE *out, int limit) {
  int missing = 0;
  for (int d = 0; d < m->ndev; d++)
    for (int x = 0; x < m->nx; x++)
      for (int s = 0; s < m->cfg->nsystems; s++) {
        if (fg_at(m, d, x, s)->status != ST_MISSING || !m->cfg->systems[s].expected) continue;
        if (limit == 0 || missing < limit) {
          char name[PT_PATH];
          cell_file_name(m, d, x, s, name, sizeof name);
          fprintf(out, "  missing  %s\n", name);
        }
        missing++;
      }
  if (limit && missing > limit)
    fprintf(out, "  ... and %d more missing logs of %s (--verbose lists all)\n", missing - limit,
            m->fig->name);
  return missing;
}
