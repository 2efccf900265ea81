/* figure: the figure model (see figure.h): the table's rows into cells (device x column x
 * system), and what every emitter and table reads of them (a bar's system and colour, a
 * cell's value, mark and ratio, the columns' labels, the note), so that they say the same. */
#include "figure.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "figure_impl.h"

/* ---- systems: the bars ---- */

/* A system's colour: its row in common/registry.yaml, which config_systems.c looked up (the same in every
 * figure and study). */
unsigned fg_system_color(const pc_item *s) { return s->color; }

/* The s-th bar's system and its colour. */
const pc_item *fg_sys_item(const fg_model *m, int s) { return &m->cfg->systems[m->sys[s]]; }
unsigned fg_sys_color(const fg_model *m, int s) { return fg_system_color(fg_sys_item(m, s)); }

/* ---- the model: devices, columns, cells ---- */

fg_cell *fg_at(const fg_model *m, int d, int x, int s) {
  return &m->cells[((size_t)d * (size_t)m->nx + (size_t)x) * (size_t)m->nsys + (size_t)s];
}

int fg_per_device(const pc_figure *fig) {
  return fig->kind == FIG_COMPARISON || fig->kind == FIG_SPEEDUP;
}

static int fig_has_row(const pc_config *c, const pc_figure *f, const pt_row *r) {
  if (f->kind == FIG_SPEEDUP) {
    for (int p = 0; p < f->npanels; p++)
      if (fig_has_row(c, &c->figures[f->panel_fig[p]], r)) return 1;
    return 0;
  }
  return !f->experiment[0] || strcmp(r->experiment, f->experiment) == 0;
}

static int row_in_figure(const fg_model *m, const pt_row *r) {
  return fig_has_row(m->cfg, m->fig, r);
}

/* Does row r belong in column x? Grid columns are workloads, sweep columns the values of its
 * key (x: columns are found by label in fg_build). */
static int row_in_column(const fg_model *m, const pt_row *r, int x) {
  if (m->fig->kind == FIG_SWEEP) {
    const char *v = pt_key_value(r, m->fig->sweep_key);
    return strcmp(r->workload, m->fig->workload) == 0 && v && strcmp(v, m->fig->sweep[x]) == 0;
  }
  return strcmp(r->workload, m->cfg->workloads[m->xw[x]].name) == 0;
}

/* Row r has every default cell key of the plot at its default value (seqlen 4096). */
static int at_defaults(const pc_config *c, const pt_row *r) {
  for (int k = 0; k < c->ndefault_keys; k++) {
    const char *v = pt_key_value(r, c->default_keys[k].key);
    if (!v || strcmp(v, c->default_keys[k].val) != 0) return 0;
  }
  return 1;
}

/* A cell may have logs at several lengths (a CPU smoke run, say): in a grid figure, the one at
 * the plot's defaults wins. */
static int better_row(const fg_model *m, const pt_row *old, const pt_row *cand) {
  const pc_config *c = m->cfg;
  if (!old) return 1;
  if (m->fig->kind == FIG_GRID && c->ndefault_keys && at_defaults(c, old) && !at_defaults(c, cand))
    return 0;
  return 1; /* otherwise the later file (sorted by name) wins */
}

int fg_devices(const pc_config *c, const pc_figure *fig, const pt_table *t, int *dev) {
  int n = 0;
  for (int d = 0; d < c->ndevices; d++) {
    int present = 0;
    for (size_t i = 0; i < t->n && !present; i++)
      present =
          fig_has_row(c, fig, &t->rows[i]) && strcmp(t->rows[i].device, c->devices[d].name) == 0;
    if (present) dev[n++] = d;
  }
  if (n == 0) /* no logs at all: show every device, all NS, so the layout stays readable */
    for (int d = 0; d < c->ndevices; d++) dev[n++] = d;
  return n;
}

/* The index into m->sys of the plot system named name (or aliased so), or -1. */
int fg_bar_of(const fg_model *m, const char *name) {
  int s = pc_find(m->cfg->systems, m->cfg->nsystems, name);
  for (int i = 0; s >= 0 && i < m->nsys; i++)
    if (m->sys[i] == s) return i;
  return -1;
}

/* x: columns are ordered by the template's keys, numbers as numbers (1024 before 4096). */
static const fg_model *sort_m;
static int cmp_columns(const void *pa, const void *pb) {
  const pt_row *a = *(const pt_row *const *)pa, *b = *(const pt_row *const *)pb;
  for (const char *t = sort_m->fig->x; (t = strchr(t, '{'));) {
    const char *close = strchr(t, '}');
    char key[PT_KEY];
    snprintf(key, sizeof key, "%.*s", (int)(close - t - 1), t + 1);
    const char *va = pt_key_value(a, key), *vb = pt_key_value(b, key);
    int c = pt_cmp_value(va ? va : "", vb ? vb : "");
    if (c) return c;
    t = close + 1;
  }
  return 0;
}

/* The x: columns: every distinct label of the figure's logs (of its systems, on a plot
 * device): of all devices in a figure of every device (each row has the same columns), of its
 * one device in a per-device file (device: a config index; -1 for all), so that one GPU's
 * figure has no column of cases only another GPU ran. */
static int find_columns(fg_model *m, const pt_table *t, int device) {
  m->xrow = calloc(t->n ? t->n : 1, sizeof *m->xrow);
  m->xlab = calloc(t->n ? t->n : 1, sizeof *m->xlab);
  if (!m->xrow || !m->xlab) return -1;
  for (size_t i = 0; i < t->n; i++) {
    const pt_row *r = &t->rows[i];
    char lab[PC_XLABEL];
    int d = pc_find(m->cfg->devices, m->cfg->ndevices, r->device);
    if (!row_in_figure(m, r) || fg_bar_of(m, r->system) < 0 || d < 0 ||
        (device >= 0 && d != device) || pc_render_x(m->fig->x, r, lab, sizeof lab))
      continue;
    int x = 0;
    while (x < m->nx && cmp_columns(&m->xrow[x], &r) != 0) x++;
    if (x == m->nx) m->xrow[m->nx++] = r;
  }
  sort_m = m;
  if (m->nx > 1) qsort(m->xrow, (size_t)m->nx, sizeof *m->xrow, cmp_columns);
  if (m->nx > FG_MAX_COLUMNS) { /* a panel holds MAX_BARS bars: cases x systems */
    fprintf(stderr, "repro-plot: %s: %d cases, drawing the first %d (narrow x: or the logs)\n",
            m->fig->name, m->nx, FG_MAX_COLUMNS);
    m->nx = FG_MAX_COLUMNS;
  }
  for (int x = 0; x < m->nx; x++) pc_render_x(m->fig->x, m->xrow[x], m->xlab[x], PC_XLABEL);
  if (m->nx == 0) { /* no logs: one empty column keeps the figure drawable (xrow NULL) */
    m->nx = 1;
    snprintf(m->xlab[0], PC_XLABEL, "no logs");
  }
  return 0;
}

/* The column of row r among the x: columns, or -1. */
static int x_column(const fg_model *m, const pt_row *r) {
  for (int x = 0; x < m->nx; x++)
    if (m->xrow[x] && cmp_columns(&m->xrow[x], &r) == 0) return x;
  return -1;
}

/* A log from a CPU-mode run (the kernels' CPU reference at small sizes): our format's
 * `config ... device=cpu` or `meta gpu=none` among its first lines. */
int fg_log_is_cpu(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  char line[1024];
  int cpu = 0;
  for (int n = 0; n < 16 && !cpu && fgets(line, sizeof line, f); n++) {
    int meta = strncmp(line, "meta ", 5) == 0, config = strncmp(line, "config ", 7) == 0;
    if (!meta && !config) continue;
    const char *want = meta ? "gpu=none" : "device=cpu";
    size_t wl = strlen(want);
    for (const char *p = strstr(line, want); p && !cpu; p = strstr(p + 1, want))
      cpu = p[-1] == ' ' && (p[wl] == ' ' || p[wl] == '\n' || p[wl] == '\r' || p[wl] == '\0');
  }
  fclose(f);
  return cpu;
}

/* The logs of our format the model places, and of them the CPU runs' (a row read from a table:
 * its gpu "none", the meta line's; its log is not reopened). */
static void count_cpu_logs(fg_model *m) {
  size_t n = (size_t)m->ndev * (size_t)m->nx * (size_t)m->nsys;
  for (size_t i = 0; i < n; i++) {
    const pt_row *r = m->cells[i].row;
    if (r) m->nrows++;
    if (!r || strcmp(r->format, "ours") != 0) continue;
    m->nlogs++;
    m->ncpu += r->from_table ? !strcmp(r->gpu, "none") : fg_log_is_cpu(r->source);
  }
}

/* The model's figure, bars (ours among them), devices (dev >= 0: that one) and name. */
static void init_model(fg_model *m, const pc_config *cfg, const pc_figure *fig, const pt_table *t,
                       int dev) {
  memset(m, 0, sizeof *m);
  m->cfg = cfg;
  m->fig = fig;
  m->sys = fig->sys;
  m->nsys = fig->nsys;
  m->ours = -1;
  for (int s = 0; s < m->nsys; s++)
    if (fg_sys_item(m, s)->ours) m->ours = s;
  if (dev >= 0) {
    m->dev[m->ndev++] = dev;
    snprintf(m->name, sizeof m->name, "%s_%s", fig->name, cfg->devices[dev].name);
  } else {
    m->ndev = fg_devices(cfg, fig, t, m->dev);
    snprintf(m->name, sizeof m->name, "%s", fig->name);
  }
}

/* The time of a row of a system the figure has no bar for, in each (device, column) it belongs
 * to: the speedup of ours is over every system with a log there, drawn or not. */
static void place_unlisted(fg_model *m, const pt_row *r) {
  if (r->status != ST_OK || !(r->avg_ms > 0) || !isfinite(r->avg_ms)) return;
  if (pc_stale_index(m->cfg, r->source) >= 0) return;
  int col = m->fig->x[0] ? x_column(m, r) : -1;
  for (int d = 0; d < m->ndev; d++) {
    if (strcmp(r->device, m->cfg->devices[m->dev[d]].name) != 0) continue;
    for (int x = 0; x < m->nx; x++) {
      if (m->fig->x[0] ? x != col : !row_in_column(m, r, x)) continue;
      double *best = &m->unlisted_ms[(size_t)d * (size_t)m->nx + (size_t)x];
      if (isnan(*best) || r->avg_ms < *best) *best = r->avg_ms;
    }
  }
}

/* Places row r in every cell it belongs to: its device's row, its column, its system's bar. */
static void place_row(fg_model *m, const pt_row *r) {
  if (!row_in_figure(m, r)) return;
  int s = fg_bar_of(m, r->system);
  if (s < 0) {
    place_unlisted(m, r);
    return;
  }
  int col = m->fig->x[0] ? x_column(m, r) : -1;
  for (int d = 0; d < m->ndev; d++) {
    if (strcmp(r->device, m->cfg->devices[m->dev[d]].name) != 0) continue;
    for (int x = 0; x < m->nx; x++) {
      if (m->fig->x[0] ? x != col : !row_in_column(m, r, x)) continue;
      fg_cell *c = fg_at(m, d, x, s);
      if (!better_row(m, c->row, r)) continue;
      c->row = r;
      c->status = r->status;
      c->stale = pc_stale_index(m->cfg, r->source);
    }
  }
}

/* Ours: the last bar marked `ours: true` that has a log in the model, else the last marked one.
 * fig12-14 mark ours (CUDA C) and, before it, FlashTensor (artifact): the artifact's own logs
 * alone (its `our` system) then get the speedup labels the paper drew for them, and wherever
 * our logs are, theirs are one more system ours is compared with. */
static void choose_ours(fg_model *m) {
  for (int s = m->nsys - 1; s >= 0; s--) {
    if (!fg_sys_item(m, s)->ours) continue;
    for (int d = 0; d < m->ndev; d++)
      for (int x = 0; x < m->nx; x++)
        if (fg_at(m, d, x, s)->row) {
          m->ours = s;
          return;
        }
  }
}

static int build(fg_model *m, const pc_config *cfg, const pc_figure *fig, const pt_table *t,
                 int dev) {
  init_model(m, cfg, fig, t, dev);
  sort_m = m; /* cmp_columns reads the template from it */
  if (fig->x[0]) {
    if (find_columns(m, t, dev)) return -1;
  } else if (fig->kind == FIG_SWEEP) {
    m->nx = fig->nsweep;
  } else if (fig->workload
                 [0]) { /* its one workload (config_load.c checked it is a plot workload) */
    m->xw[m->nx++] = pc_find(cfg->workloads, cfg->nworkloads, fig->workload);
  } else {
    for (; m->nx < cfg->nworkloads; m->nx++) m->xw[m->nx] = m->nx;
  }
  size_t n = (size_t)m->ndev * (size_t)(m->nx ? m->nx : 1) * (size_t)m->nsys;
  m->cells = calloc(n ? n : 1, sizeof *m->cells);
  if (!m->cells) return -1;
  for (size_t i = 0; i < n; i++) m->cells[i] = (fg_cell){.status = ST_MISSING, .stale = -1};
  size_t ncells = (size_t)m->ndev * (size_t)(m->nx ? m->nx : 1);
  m->unlisted_ms = malloc(ncells * sizeof *m->unlisted_ms);
  if (!m->unlisted_ms) return -1;
  for (size_t i = 0; i < ncells; i++) m->unlisted_ms[i] = NAN;
  for (size_t i = 0; i < t->n; i++) place_row(m, &t->rows[i]);
  choose_ours(m);
  count_cpu_logs(m);
  m->nstale = fg_stale_cells(m, -1);
  return 0;
}

int fg_build(fg_model *m, const pc_config *cfg, const pc_figure *fig, const pt_table *t) {
  return build(m, cfg, fig, t, -1);
}

int fg_build_device(fg_model *m, const pc_config *cfg, const pc_figure *fig, const pt_table *t,
                    int dev) {
  return build(m, cfg, fig, t, dev);
}

void fg_free(fg_model *m) {
  free(m->cells);
  free(m->unlisted_ms);
  m->unlisted_ms = NULL;
  free(m->xrow);
  free(m->xlab);
  m->cells = NULL;
  m->xrow = NULL;
  m->xlab = NULL;
}

/* ---- why a log is not drawn ---- */

void fg_why_not_drawn(const pc_config *cfg, const pt_row *r, char *why, size_t cap) {
  int in_fig = 0, col = 0, in_bars = 0, sys = pc_find(cfg->systems, cfg->nsystems, r->system);
  for (int f = 0; f < cfg->nfigures; f++) {
    const pc_figure *fig = &cfg->figures[f];
    if (fig->kind == FIG_SPEEDUP || (fig->experiment[0] && strcmp(fig->experiment, r->experiment)))
      continue;
    in_fig = 1;
    for (int i = 0; i < fig->nsys; i++) in_bars |= fig->sys[i] == sys;
    char lab[PC_XLABEL];
    if (fig->x[0])
      col |= pc_render_x(fig->x, r, lab, sizeof lab) == 0;
    else if (fig->kind != FIG_SWEEP)
      col |= pc_find(cfg->workloads, cfg->nworkloads, r->workload) >= 0 &&
             (!fig->workload[0] || pc_find(cfg->workloads, cfg->nworkloads, r->workload) ==
                                       pc_find(cfg->workloads, cfg->nworkloads, fig->workload));
    const char *sv = fig->kind == FIG_SWEEP ? pt_key_value(r, fig->sweep_key) : NULL;
    for (int k = 0; sv && k < fig->nsweep; k++)
      col |= !strcmp(fig->workload, r->workload) && !strcmp(fig->sweep[k], sv);
  }
  if (!in_fig)
    snprintf(why, cap, "experiment %s is drawn by none of %s's plot: figures", r->experiment,
             cfg->figure);
  else if (sys < 0)
    snprintf(why, cap, "system %s is not in %s's plot: systems", r->system, cfg->figure);
  else if (!in_bars)
    snprintf(why, cap, "system %s is in no systems: list of %s's figures of experiment %s",
             r->system, cfg->figure, r->experiment);
  else if (pc_find(cfg->devices, cfg->ndevices, r->device) < 0)
    snprintf(why, cap, "device %s is not in %s's plot: devices", r->device, cfg->figure);
  else if (!col)
    snprintf(why, cap, "workload %s at %s %s is in no column of %s's figures", r->workload,
             PT_LENGTH_KEY, pt_length(r), cfg->figure);
  else
    snprintf(why, cap, "another log of the same cell is drawn (%s %s here)", PT_LENGTH_KEY,
             pt_length(r));
}

/* ---- a cell's values and marks ---- */

/* The cell's time when it has a usable one, else NAN. */
double fg_cell_ms(const fg_cell *c) {
  return c->status == ST_OK && c->row && isfinite(c->row->avg_ms) && c->row->avg_ms > 0
             ? c->row->avg_ms
             : NAN;
}

double fg_fresh_value(const fg_model *m, int d, int x, int s, pc_metric k) {
  const fg_cell *c = fg_at(m, d, x, s);
  return c->stale >= 0 ? NAN : fg_cell_value(c, k);
}

double fg_best_other(const fg_model *m, int d, int x, pc_metric k, int skip_ours_marked) {
  double best = NAN;
  if (k == MET_MS && m->unlisted_ms) best = m->unlisted_ms[(size_t)d * (size_t)m->nx + (size_t)x];
  for (int s = 0; s < m->nsys; s++) {
    if (s == m->ours || (skip_ours_marked && fg_sys_item(m, s)->ours)) continue;
    double v = fg_fresh_value(m, d, x, s, k);
    if (!isnan(v) && (isnan(best) || (k == MET_TFLOPS ? v > best : v < best))) best = v;
  }
  return best;
}

double fg_ratio_to(pc_metric k, double v, double best) {
  if (isnan(v) || isnan(best)) return NAN;
  return k == MET_TFLOPS ? v / best : best / v;
}

double fg_ours_ratio(const fg_model *m, int d, int x, pc_metric k) {
  if (m->ours < 0) return NAN;
  return fg_ratio_to(k, fg_fresh_value(m, d, x, m->ours, k), fg_best_other(m, d, x, k, 0));
}

double fg_speedup(const fg_model *m, int d, int x) { return fg_ours_ratio(m, d, x, MET_MS); }

int fg_column_stale(const fg_model *m, int d, int x) {
  for (int s = 0; s < m->nsys; s++)
    if (fg_at(m, d, x, s)->stale >= 0) return 1;
  return 0;
}

int fg_stale_cells(const fg_model *m, int d) {
  int n = 0;
  for (int r = d < 0 ? 0 : d; r < (d < 0 ? m->ndev : d + 1); r++)
    for (int x = 0; x < m->nx; x++)
      for (int s = 0; s < m->nsys; s++) n += fg_at(m, r, x, s)->stale >= 0;
  return n;
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

/* The cell's value of metric k (time, TFLOP/s, peak MiB), or NAN: a cell never becomes a zero
 * bar. */
double fg_cell_value(const fg_cell *c, pc_metric k) {
  if (c->status != ST_OK || !c->row) return NAN;
  double v = k == MET_MS       ? c->row->avg_ms
             : k == MET_TFLOPS ? c->row->gflops_s / 1000.0
                               : c->row->peak_mib;
  return isfinite(v) && v > 0 ? v : NAN;
}

/* Mark for a cell without a bar: its status, or n/a when the run is fine but lacks the metric. */
const char *fg_cell_mark(const fg_cell *c, double v) {
  if (!isnan(v)) return "-";
  return c->status == ST_OK ? "n/a" : status_mark(c->status);
}

/* The note on figures drawn from CPU-mode logs (see fg_build), without any log, or with stale
 * logs (plot: stale:, hatched). */
void fg_note(const fg_model *m, char *out, size_t cap) {
  out[0] = '\0';
  if (m->nrows == 0) {
    snprintf(out, cap, "no logs%s%s yet: every cell is NS",
             m->fig->experiment[0] ? " of experiment " : "", m->fig->experiment);
    return;
  }
  int nstale = m->nstale;
  if (m->ncpu == 0 && nstale) {
    snprintf(out, cap, "white-hatched: %d stale log%s (plot: stale:), in no speedup or mean",
             nstale, nstale == 1 ? "" : "s");
    return;
  }
  if (m->ncpu == 0) return;
  if (m->ncpu == m->nlogs)
    snprintf(out, cap, "CPU reference logs (device=cpu): these timings measure nothing");
  else
    snprintf(out, cap,
             "%d of %d logs are CPU reference runs (device=cpu): their timings measure "
             "nothing",
             m->ncpu, m->nlogs);
}

/* ---- columns: their labels in the figure and in the tables ---- */

/* Column i's label in the figure: its x: label, else its workload's. */
const char *fg_col_label(const fg_model *m, int i) {
  return m->fig->x[0] ? m->xlab[i] : m->cfg->workloads[m->xw[i]].label;
}
/* The name of the figure's columns, and each column's label in the tables. */
const char *fg_cols_name(const fg_model *m) {
  return m->fig->x[0] ? "cases" : m->fig->kind == FIG_SWEEP ? "lengths" : "workloads";
}
void fg_col_text(const fg_model *m, int x, char *buf, size_t cap) {
  if (m->fig->kind == FIG_SWEEP)
    snprintf(buf, cap, "%s", m->fig->sweep[x]);
  else
    snprintf(buf, cap, "%s", fg_col_label(m, x));
}
/* Width of the first column: 12, or the longest x: label. */
int fg_col_width(const fg_model *m) {
  int w = 12;
  for (int x = 0; m->fig->x[0] && x < m->nx; x++)
    if ((int)strlen(m->xlab[x]) > w) w = (int)strlen(m->xlab[x]);
  return w;
}

/* The label of a speedup panel's figure: its title, else its experiment. */
const char *fg_panel_label(const fg_model *m) {
  return m->fig->title[0] ? m->fig->title : m->fig->experiment;
}
