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

/* The s-th bar's system and its colour (the palette by the system's place in plot: systems,
 * so a system has one colour in every figure). */
static const pc_item *sys_item(const fg_model *m, int s) { return &m->cfg->systems[m->sys[s]]; }
static unsigned sys_color(const fg_model *m, int s) {
  return system_color(sys_item(m, s), m->sys[s]);
}

#define FG_MAX_COLUMNS 64 /* x: columns of one figure */

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

/* Does row r belong in column x? Grid columns are workloads, sweep columns seqlens (x: columns
 * are found by label in fg_build). */
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
static int bar_of(const fg_model *m, const char *name) {
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
    char key[PT_KEY], ba[16], bb[16];
    snprintf(key, sizeof key, "%.*s", (int)(close - t - 1), t + 1);
    const char *va = pt_key_value(a, key, ba, sizeof ba), *vb = pt_key_value(b, key, bb, sizeof bb);
    int c = pt_cmp_value(va ? va : "", vb ? vb : "");
    if (c) return c;
    t = close + 1;
  }
  return 0;
}

/* The x: columns: every distinct label of the figure's logs (of its systems, on a plot
 * device; all devices, so every device's file has the same columns). */
static int find_columns(fg_model *m, const pt_table *t) {
  m->xrow = calloc(t->n ? t->n : 1, sizeof *m->xrow);
  m->xlab = calloc(t->n ? t->n : 1, sizeof *m->xlab);
  if (!m->xrow || !m->xlab) return -1;
  for (size_t i = 0; i < t->n; i++) {
    const pt_row *r = &t->rows[i];
    char lab[PC_XLABEL];
    if (!row_in_figure(m, r) || bar_of(m, r->system) < 0 ||
        pc_find(m->cfg->devices, m->cfg->ndevices, r->device) < 0 ||
        pc_render_x(m->fig->x, r, lab, sizeof lab))
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

static void count_cpu_logs(fg_model *m);

static int build(fg_model *m, const pc_config *cfg, const pc_figure *fig, const pt_table *t,
                 int dev) {
  memset(m, 0, sizeof *m);
  m->cfg = cfg;
  m->fig = fig;
  m->sys = fig->sys;
  m->nsys = fig->nsys;
  m->ours = -1;
  for (int s = 0; s < m->nsys; s++)
    if (sys_item(m, s)->ours) m->ours = s;
  if (dev >= 0) {
    m->dev[m->ndev++] = dev;
    snprintf(m->name, sizeof m->name, "%s_%s", fig->name, cfg->devices[dev].name);
  } else {
    m->ndev = fg_devices(cfg, fig, t, m->dev);
    snprintf(m->name, sizeof m->name, "%s", fig->name);
  }
  sort_m = m; /* cmp_columns reads the template from it */
  if (fig->x[0]) {
    if (find_columns(m, t)) return -1;
  } else {
    m->nx = fig->kind == FIG_SWEEP ? fig->nseqlens : cfg->nworkloads;
  }
  size_t n = (size_t)m->ndev * (size_t)(m->nx ? m->nx : 1) * (size_t)m->nsys;
  m->cells = calloc(n ? n : 1, sizeof *m->cells);
  if (!m->cells) return -1;
  for (size_t i = 0; i < n; i++) m->cells[i].status = ST_MISSING;
  for (size_t i = 0; i < t->n; i++) {
    const pt_row *r = &t->rows[i];
    if (!row_in_figure(m, r)) continue;
    int s = bar_of(m, r->system);
    if (s < 0) continue;
    int col = fig->x[0] ? x_column(m, r) : -1;
    for (int d = 0; d < m->ndev; d++) {
      if (strcmp(r->device, cfg->devices[m->dev[d]].name) != 0) continue;
      for (int x = 0; x < m->nx; x++) {
        if (fig->x[0] ? x != col : !row_in_column(m, r, x)) continue;
        fg_cell *c = fg_at(m, d, x, s);
        if (!better_row(m, c->row, r)) continue;
        c->row = r;
        c->status = r->status;
      }
    }
  }
  count_cpu_logs(m);
  return 0;
}

int fg_build(fg_model *m, const pc_config *cfg, const pc_figure *fig, const pt_table *t) {
  return build(m, cfg, fig, t, -1);
}

int fg_build_device(fg_model *m, const pc_config *cfg, const pc_figure *fig, const pt_table *t,
                    int dev) {
  return build(m, cfg, fig, t, dev);
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

static void count_cpu_logs(fg_model *m) {
  size_t n = (size_t)m->ndev * (size_t)m->nx * (size_t)m->nsys;
  for (size_t i = 0; i < n; i++) {
    const pt_row *r = m->cells[i].row;
    if (!r || strcmp(r->format, "ours") != 0) continue;
    m->nlogs++;
    m->ncpu += fg_log_is_cpu(r->source);
  }
}

void fg_free(fg_model *m) {
  free(m->cells);
  free(m->xrow);
  free(m->xlab);
  m->cells = NULL;
  m->xrow = NULL;
  m->xlab = NULL;
}

static double cell_ms(const fg_cell *c) {
  return c->status == ST_OK && c->row && isfinite(c->row->avg_ms) && c->row->avg_ms > 0
             ? c->row->avg_ms
             : NAN;
}

double fg_speedup(const fg_model *m, int d, int x) {
  if (m->ours < 0) return NAN;
  double ours = cell_ms(fg_at(m, d, x, m->ours)), best = NAN;
  for (int s = 0; s < m->nsys; s++) {
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

typedef pc_metric metric; /* MET_SPEEDUP values are computed by the speedup figure */

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

/* A tick step of 1, 2, 2.5 or 5 times a power of ten giving at most 6 intervals up to hi. */
static double nice_step(double hi) {
  if (!(hi > 0)) return 1;
  double p = pow(10, floor(log10(hi / 6)));
  const double steps[] = {1, 2, 2.5, 5, 10};
  for (size_t i = 0; i < sizeof steps / sizeof *steps; i++)
    if (hi / (steps[i] * p) <= 6 + 1e-9) return steps[i] * p;
  return 10 * p;
}

/* ---- text metrics (DejaVu Sans, the templates' font) and the label layout ---- */

#define TICK_PT    7.0  /* y tick labels */
#define MARK_PT    6.0  /* NS/OOM/TLE/ERR and cut values */
#define SPEEDUP_PT 6.5  /* ours' speedup, bold */
#define THICK_EM   0.95 /* a line of caps and digits across, with some air */
#define PAD_IN     0.02 /* least room between two labels, and between a label and a bar */
/* gnuplot's cairo terminals (pdfcairo at fontscale 1, pngcairo at dpi/72) lay text out with
 * pango at 96 dpi: a "6" pt font is drawn 4/3 as large (measured: ten 6 pt digits are 0.69 in
 * wide, not 0.53). The svg terminal gets fontscale 4/3 so that all three formats agree. */
#define FONT_SCALE (96.0 / 72.0)

/* Advance widths in em of the characters labels use; others count as wide. */
static double char_em(unsigned c) {
  if (c >= '0' && c <= '9') return 0.636;
  switch (c) {
  case '.': return 0.318;
  case '-': return 0.361;
  case '/': return 0.337;
  case 'k': return 0.579;
  case 'n':
  case 'a': return 0.634;
  case 'N': return 0.748;
  case 'S': return 0.635;
  case 'O': return 0.787;
  case 'M': return 0.863;
  case 'T': return 0.611;
  case 'L': return 0.557;
  case 'E': return 0.632;
  case 'R': return 0.695;
  case 0xD7: return 0.838; /* × */
  }
  return 0.8;
}

/* Length of a one-line text in inches (UTF-8: only U+00D7 × matters beyond ASCII). */
static double text_in(const char *s, double pt, int bold) {
  double em = 0;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    unsigned c = *p;
    if (c == 0xC3 && p[1])
      c = 0xC0 | (*++p & 0x3F);
    else if (c >= 0x80)
      continue;
    em += char_em(c);
  }
  return em * pt * FONT_SCALE / 72.0 * (bold ? 1.08 : 1.0);
}

static double thick_in(double pt) { return THICK_EM * pt * FONT_SCALE / 72.0; }

typedef struct {
  double x0, x1, y0, y1; /* inches from the panel's lower left corner */
} box;

typedef enum { L_MARK, L_CUT, L_SPEEDUP } lkind;

typedef struct {
  lkind kind;
  char text[32];
  int rot;     /* 0 horizontal (anchored at its centre), 90 upward (anchored at its start) */
  int bold;    /* the speedup */
  int boxed;   /* on an opaque white box (a value over a hatched bar) */
  unsigned fg; /* text colour */
  unsigned bg; /* what is behind it: a bar's colour, or white */
  box b;
} label;

#define MAX_BARS (FG_MAX_COLUMNS * PC_MAX_ITEMS) /* bars of one panel: cases x systems */

/* One panel's geometry: data ranges mapped onto its size in inches, its bars and labels. */
typedef struct {
  double pw, ph, xlo, xhi, ylo, yhi;
  int logy;
  box bar[MAX_BARS];
  int has_bar[MAX_BARS];
  label lab[2 * MAX_BARS];
  int nlab;
} panel;

static double in_x(const panel *p, double x) { return (x - p->xlo) / (p->xhi - p->xlo) * p->pw; }
static double in_y(const panel *p, double v) {
  double t = p->logy ? log(v / p->ylo) / log(p->yhi / p->ylo) : (v - p->ylo) / (p->yhi - p->ylo);
  return fmin(fmax(t, 0), 1) * p->ph;
}
static double data_x(const panel *p, double in) { return p->xlo + in / p->pw * (p->xhi - p->xlo); }
static double data_y(const panel *p, double in) {
  double t = in / p->ph;
  return p->logy ? p->ylo * pow(p->yhi / p->ylo, t) : p->ylo + t * (p->yhi - p->ylo);
}

static int boxes_meet(box a, box b, double pad) {
  return a.x0 < b.x1 + pad && b.x0 < a.x1 + pad && a.y0 < b.y1 + pad && b.y0 < a.y1 + pad;
}

/* The lowest y >= y0 where a box [x0,x1] x [y,y+h] clears every label placed so far and,
 * with avoid_bars, every bar. */
static double lift(const panel *p, int nbars, double x0, double x1, double y0, double h,
                   int avoid_bars) {
  double y = y0;
  for (int moved = 1, guard = 0; moved && guard < 4 * MAX_BARS; guard++) {
    moved = 0;
    box b = {x0, x1, y, y + h};
    for (int i = 0; i < p->nlab; i++)
      if (boxes_meet(b, p->lab[i].b, PAD_IN)) {
        y = p->lab[i].b.y1 + PAD_IN;
        moved = 1;
        b.y0 = y;
        b.y1 = y + h;
      }
    for (int i = 0; avoid_bars && i < nbars; i++)
      if (p->has_bar[i] && boxes_meet(b, p->bar[i], PAD_IN)) {
        y = p->bar[i].y1 + PAD_IN;
        moved = 1;
        b.y0 = y;
        b.y1 = y + h;
      }
  }
  return y;
}

static label *add_label(panel *p, lkind kind, const char *text, int rot, unsigned fg, unsigned bg) {
  label *l = &p->lab[p->nlab++];
  memset(l, 0, sizeof *l);
  l->kind = kind;
  snprintf(l->text, sizeof l->text, "%s", text);
  l->rot = rot;
  l->fg = fg;
  l->bg = bg;
  return l;
}

/* WCAG relative luminance and contrast ratio of two 0xRRGGBB colours. */
static double luminance(unsigned rgb) {
  double c[3];
  for (int i = 0; i < 3; i++) {
    double v = ((rgb >> (16 - 8 * i)) & 0xFF) / 255.0;
    c[i] = v <= 0.03928 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4);
  }
  return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
}
static double contrast(unsigned a, unsigned b) {
  double la = luminance(a), lb = luminance(b);
  return (fmax(la, lb) + 0.05) / (fmin(la, lb) + 0.05);
}
/* Black or white, whichever reads better on bg. */
static unsigned text_on(unsigned bg) {
  return contrast(0x000000, bg) >= contrast(0xFFFFFF, bg) ? 0x000000 : 0xFFFFFF;
}

/* The value of a bar cut at the top of the axis: written inside the bar's top, upward, in
 * black or white by contrast; on a hatched bar (ours) on a white box. */
static void place_cut(panel *p, int i, const char *text, unsigned color, int hatched) {
  double len = text_in(text, MARK_PT, 0), th = thick_in(MARK_PT);
  double xc = (p->bar[i].x0 + p->bar[i].x1) / 2;
  label *l = add_label(p, L_CUT, text, 90, hatched ? 0x000000 : text_on(color),
                       hatched ? 0xFFFFFF : color);
  l->boxed = hatched;
  double y1 = p->ph - 0.04;
  l->b = (box){xc - th / 2, xc + th / 2, y1 - len, y1};
}

/* A mark where there is no bar: upward from just above the axis, lifted over earlier marks
 * that would touch it (adjacent NS marks in a dense panel stack instead of running together). */
static void place_mark(panel *p, int nbars, double xc, const char *text) {
  double len = text_in(text, MARK_PT, 0), th = thick_in(MARK_PT);
  double y = lift(p, nbars, xc - th / 2, xc + th / 2, 0.05, len, 0);
  if (y + len > p->ph) y = fmax(0, p->ph - len);
  label *l = add_label(p, L_MARK, text, 90, 0x000000, 0xFFFFFF);
  l->b = (box){xc - th / 2, xc + th / 2, y, y + len};
}

/* Ours' speedup, in order of preference: level and just above its own bar, when it is no
 * wider than the bar's slot (pitch) and clear of every bar and label; else upward just above its own bar (a label as narrow as
 * the bar, so it stays on its own bar); else level, lifted over its neighbours; else inside its
 * bar's top on a white box. Never over a neighbour's bar, never outside the axis. */
static void place_speedup(panel *p, int nbars, int own, const char *text, double pitch) {
  double len = text_in(text, SPEEDUP_PT, 1), th = thick_in(SPEEDUP_PT);
  double xc = (p->bar[own].x0 + p->bar[own].x1) / 2, top = p->bar[own].y1, base = top + PAD_IN;
  double x0 = fmin(fmax(xc - len / 2, 0), p->pw - len);
  double yh = lift(p, nbars, x0, x0 + len, base, th, 1);
  double yv = lift(p, nbars, xc - th / 2, xc + th / 2, base, len, 1);
  label *l = add_label(p, L_SPEEDUP, text, 0, 0xB00000, 0xFFFFFF);
  l->bold = 1;
  if (len <= pitch && yh <= base + 1e-9 && yh + th <= p->ph) {
    l->b = (box){x0, x0 + len, yh, yh + th};
  } else if (yv + len <= p->ph) {
    l->rot = 90;
    l->b = (box){xc - th / 2, xc + th / 2, yv, yv + len};
  } else if (yh + th <= p->ph) {
    l->b = (box){x0, x0 + len, yh, yh + th};
  } else {
    double y1 = top - 0.04;
    for (int i = 0; i < p->nlab - 1; i++) /* below the cut value, if the bar has one */
      if (p->lab[i].kind == L_CUT && p->lab[i].b.x0 < xc && xc < p->lab[i].b.x1)
        y1 = fmin(y1, p->lab[i].b.y0 - PAD_IN);
    l->rot = 90;
    l->boxed = 1;
    l->b = (box){xc - th / 2, xc + th / 2, fmax(0, y1 - len), fmax(0, y1 - len) + len};
  }
}

static void dat_bar_box(FILE *f, const panel *p, int i, int eol) {
  if (p->has_bar[i])
    fprintf(f, " %.4f %.4f %.4f %.4f", p->bar[i].x0, p->bar[i].x1, p->bar[i].y0, p->bar[i].y1);
  else
    fputs(" nan nan nan nan", f);
  if (eol) fputc('\n', f);
}

/* The labels block: gnuplot's anchor in data coordinates, then the box in inches (tests). */
static void dat_labels(FILE *f, const panel *p) {
  fprintf(f,
          "# labels: x y text rot bold boxed fg bg kind box_x0 box_x1 box_y0 box_y1 "
          "(box in inches from the panel's lower left; panel %.4f x %.4f in)\n",
          p->pw, p->ph);
  for (int i = 0; i < p->nlab; i++) {
    const label *l = &p->lab[i];
    double ax = data_x(p, (l->b.x0 + l->b.x1) / 2);
    double ay = data_y(p, l->rot ? l->b.y0 : (l->b.y0 + l->b.y1) / 2);
    static const char *kinds[] = {"mark", "cut", "speedup"};
    fprintf(f, "%.6g %.6g \"%s\" %d %d %d %u %u %s %.4f %.4f %.4f %.4f\n", ax, ay, l->text, l->rot,
            l->bold, l->boxed, l->fg, l->bg, kinds[l->kind], l->b.x0, l->b.x1, l->b.y0, l->b.y1);
  }
  /* a block gnuplot can address even when the panel has no label */
  fputs("nan nan \"\" 0 0 0 0 16777215 none nan nan nan nan\n\n\n", f);
}

/* ---- layout of the whole figure, in inches ---- */

typedef struct {
  double w, h, left, right, top, bottom, cgap, rgap, pw, ph, note_h;
  int lcols, lrows;
} layout;

/* Width of the widest y tick label of a linear axis 0..hi in steps of step. */
static double ticks_in_linear(double hi, double step) {
  double w = 0;
  for (int k = 0; k * step <= hi * (1 + 1e-9) && k < 100; k++) {
    char buf[32];
    snprintf(buf, sizeof buf, "%g", k * step);
    w = fmax(w, text_in(buf, TICK_PT, 0));
  }
  return w;
}

/* A log axis labelled "%.0s%c" (1, 10, 100, 1k, 10k, ...): at most 3 digits and a prefix. */
static double ticks_in_log(void) { return text_in("100k", TICK_PT, 0); }

static void legend_layout(layout *L, int nsys, double entry_in) {
  L->lcols = (int)((L->w - L->left - L->right) / entry_in);
  if (L->lcols < 1) L->lcols = 1;
  if (L->lcols > nsys) L->lcols = nsys;
  L->lrows = (nsys + L->lcols - 1) / L->lcols;
}

/* The note on figures drawn from CPU-mode logs (see fg_build). */
static void cpu_note(const fg_model *m, char *out, size_t cap) {
  out[0] = '\0';
  if (m->ncpu == 0) return;
  if (m->ncpu == m->nlogs)
    snprintf(out, cap, "CPU reference logs (device=cpu): these timings measure nothing");
  else
    snprintf(out, cap,
             "%d of %d logs are CPU reference runs (device=cpu): their timings measure "
             "nothing",
             m->ncpu, m->nlogs);
}

/* ---- .gp ---- */

static void gp_array_str(FILE *f, const char *name, int n,
                         const char *(*get)(const fg_model *, int), const fg_model *m) {
  fprintf(f, "array %s[%d] = [", name, n);
  for (int i = 0; i < n; i++) fprintf(f, "%s\"%s\"", i ? ", " : "", get(m, i));
  fputs("]\n", f);
}

static const char *get_row(const fg_model *m, int i) { return m->cfg->devices[m->dev[i]].label; }
static const char *get_col(const fg_model *m, int i) {
  return m->fig->x[0] ? m->xlab[i] : m->cfg->workloads[i].label;
}
static const char *get_sys(const fg_model *m, int i) { return sys_item(m, i)->label; }
static const char *get_seq(const fg_model *m, int i) {
  static char buf[PC_MAX_SEQLENS][16];
  int s = m->fig->seqlens[i];
  if (s % 1024 == 0)
    snprintf(buf[i], sizeof buf[i], "%dK", s / 1024);
  else
    snprintf(buf[i], sizeof buf[i], "%d", s);
  return buf[i];
}

/* The name of the figure's columns, and each column's label in the tables. */
static const char *cols_name(const fg_model *m) {
  return m->fig->x[0] ? "cases" : m->fig->kind == FIG_SWEEP ? "lengths" : "workloads";
}
static void col_text(const fg_model *m, int x, char *buf, size_t cap) {
  if (m->fig->kind == FIG_SWEEP)
    snprintf(buf, cap, "%d", m->fig->seqlens[x]);
  else
    snprintf(buf, cap, "%s", get_col(m, x));
}
/* Width of the first column: 12, or the longest x: label. */
static int col_width(const fg_model *m) {
  int w = 12;
  for (int x = 0; m->fig->x[0] && x < m->nx; x++)
    if ((int)strlen(m->xlab[x]) > w) w = (int)strlen(m->xlab[x]);
  return w;
}

static void gp_header(FILE *f, const fg_model *m, int ncols, const layout *L) {
  const pc_config *c = m->cfg;
  char note[160];
  cpu_note(m, note, sizeof note);
  fprintf(f, "# %s: generated by repro-plot from %s; rerun with `gnuplot %s.gp` in this folder.\n",
          m->fig->name, c->path, m->fig->name);
  fprintf(f, "outbase = \"%s\"\ndatafile = \"%s.dat\"\n", m->fig->name, m->fig->name);
  fprintf(f, "formats = \"pdf png svg\"\n");
  fprintf(f, "title_text = \"%s\"\nylabel_text = \"%s\"\nnote_text = \"%s\"\n", m->fig->title,
          m->fig->ylabel, note);
  fprintf(f, "nrows = %d\nncols = %d\nnsys = %d\nours = %d\n", m->ndev, ncols, m->nsys, m->ours);
  fprintf(f, "# layout in inches (computed by repro-plot: margins fit the tick labels)\n");
  fprintf(f, "W = %.3f\nH = %.3f\nleft = %.3f\nright = %.3f\ntop = %.3f\nbottom = %.3f\n", L->w,
          L->h, L->left, L->right, L->top, L->bottom);
  fprintf(f, "cgap = %.3f\nrgap = %.3f\npw = %.4f\nph = %.4f\nnote_h = %.3f\n", L->cgap, L->rgap,
          L->pw, L->ph, L->note_h);
  gp_array_str(f, "rowlabel", m->ndev, get_row, m);
  gp_array_str(f, "syslabel", m->nsys, get_sys, m);
  fprintf(f, "array syscolor[%d] = [", m->nsys);
  for (int s = 0; s < m->nsys; s++) fprintf(f, "%s%u", s ? ", " : "", sys_color(m, s));
  fputs("]\n", f);
  /* legend texts; labels hold no quotes (config.c rejects them) */
  fprintf(f, "legend_cols = %d\nlegend_rows = %d\n", L->lcols, L->lrows);
  fprintf(f, "array legend_text[%d] = [", m->nsys);
  for (int s = 0; s < m->nsys; s++) {
    if (m->fig->kind == FIG_GRID)
      fprintf(f, "%s\"(%c) %s\"", s ? ", " : "", 'A' + s, sys_item(m, s)->label);
    else
      fprintf(f, "%s\"%s\"", s ? ", " : "", sys_item(m, s)->label);
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

/* ---- grid figures (Fig 12, Fig 14): rows devices, columns workloads, bars systems ---- */

/* Per-panel y maximum: the figure's fixed range, or rounded up from the tallest bar. */
static double grid_ymax(const fg_model *m, int d, int x) {
  if (m->fig->ymax > 0) return m->fig->ymax;
  double top = 0;
  for (int s = 0; s < m->nsys; s++) {
    double v = cell_value(fg_at(m, d, x, s), MET_MS);
    if (!isnan(v) && v > top) top = v;
  }
  return nice_ceiling(top * 1.15);
}

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
    v[s] = cell_value(fg_at(m, d, x, s), MET_MS);
    p.has_bar[s] = !isnan(v[s]);
    p.bar[s] = (box){in_x(&p, s - 0.4), in_x(&p, s + 0.4), 0, p.has_bar[s] ? in_y(&p, v[s]) : 0};
  }
  for (int s = 0; s < ns; s++)
    if (p.has_bar[s] && v[s] > ymax) {
      char cut[32];
      snprintf(cut, sizeof cut, "%.1f", v[s]);
      place_cut(&p, s, cut, sys_color(m, s), s == m->ours);
    }
  for (int s = 0; s < ns; s++)
    if (!p.has_bar[s])
      place_mark(&p, ns, (p.bar[s].x0 + p.bar[s].x1) / 2, cell_mark(fg_at(m, d, x, s), v[s]));
  double spd = fg_speedup(m, d, x);
  if (m->ours >= 0 && !isnan(spd)) {
    char sp[32];
    snprintf(sp, sizeof sp, "%.1f×", spd);
    place_speedup(&p, ns, m->ours, sp, in_x(&p, 1) - in_x(&p, 0));
  }
  fprintf(f, "# device=%s workload=%s ymax=%g\n", c->devices[m->dev[d]].name,
          m->fig->x[0] ? m->xlab[x] : c->workloads[x].name, ymax);
  fprintf(f, "# idx letter value_ms bar_h color ours box_x0 box_x1 box_y0 box_y1\n");
  for (int s = 0; s < ns; s++) {
    fprintf(f, "%d %c %.6g %.6g %u %d", s, 'A' + s, v[s], isnan(v[s]) ? NAN : fmin(v[s], ymax),
            sys_color(m, s), s == m->ours);
    dat_bar_box(f, &p, s, 1);
  }
  fputs("\n\n", f);
  dat_labels(f, &p);
}

static int emit_grid(const fg_model *m, FILE *dat, FILE *gp) {
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
      step[i] = m->fig->ytics > 0 ? m->fig->ytics : nice_step(ymax[i]);
      tickw = fmax(tickw, ticks_in_linear(ymax[i], step[i]));
    }
  layout L = {0};
  char note[160];
  cpu_note(m, note, sizeof note);
  L.note_h = note[0] ? 0.2 : 0;
  /* the y label and the row labels stand left of the tick labels (template: at 0.1 and 0.3 in) */
  L.left = 0.43 + tickw + 0.1;
  L.cgap = 0.12 + tickw + 0.08;
  L.right = 0.3;
  L.pw = m->nx >= 4 ? 1.45 : 6.5 / m->nx; /* few columns: wider panels */
  L.w = L.left + L.right + L.pw * m->nx + L.cgap * (m->nx - 1);
  legend_layout(&L, m->nsys, 2.2);
  L.top = L.note_h + 0.45 + 0.22 * L.lrows;
  L.bottom = 0.32;
  L.rgap = 0.42;
  L.ph = 1.2;
  L.h = L.top + L.bottom + L.ph * m->ndev + L.rgap * (m->ndev - 1);
  for (int d = 0; d < m->ndev; d++)
    for (int x = 0; x < m->nx; x++) dat_grid_panel(dat, m, d, x, ymax[d * m->nx + x], &L);
  gp_header(gp, m, m->nx, &L);
  gp_array_str(gp, "collabel", m->nx, get_col, m);
  fprintf(gp, "array panel_ymax[%d] = [", n);
  for (int i = 0; i < n; i++) fprintf(gp, "%s%g", i ? ", " : "", ymax[i]);
  fprintf(gp, "]\narray panel_step[%d] = [", n);
  for (int i = 0; i < n; i++) fprintf(gp, "%s%g", i ? ", " : "", step[i]);
  fputs("]\n", gp);
  free(ymax);
  free(step);
  return 0;
}

/* ---- sweep figures (Fig 13): rows devices, columns TFLOP/s and peak MiB, groups lengths ---- */

/* The y range of a panel whose values span [mn, mx] (mn = INFINITY, mx = 0 when it has none):
 * a log axis of whole decades around the data, or 0 up to a round number above it. */
static void axis_range(double mn, double mx, int logy, double *lo, double *hi) {
  if (logy) {
    *lo =
        isfinite(mn) ? pow(10, floor(log10(mn)) - (mn < 3 * pow(10, floor(log10(mn))) ? 1 : 0)) : 1;
    *hi = mx > 0 ? pow(10, ceil(log10(mx * 2))) : 1e5;
    if (*hi <= *lo) *hi = *lo * 100;
  } else {
    *lo = 0;
    *hi = nice_ceiling((mx > 0 ? mx : 1) * 1.2);
  }
}

static void sweep_range(const fg_model *m, int d, metric k, double *lo, double *hi) {
  double mn = INFINITY, mx = 0;
  for (int x = 0; x < m->nx; x++)
    for (int s = 0; s < m->nsys; s++) {
      double v = cell_value(fg_at(m, d, x, s), k);
      if (isnan(v)) continue;
      mn = fmin(mn, v);
      mx = fmax(mx, v);
    }
  axis_range(mn, mx, k == MET_MIB, lo, hi);
}

static void dat_sweep_panel(FILE *f, const fg_model *m, int d, metric k, double lo, double hi,
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
      v[i] = cell_value(fg_at(m, d, x, s), k);
      xpos[i] = x + (s - (ns - 1) / 2.0) * bw;
      p.has_bar[i] = !isnan(v[i]);
      p.bar[i] = (box){in_x(&p, xpos[i] - bw / 2), in_x(&p, xpos[i] + bw / 2), 0,
                       p.has_bar[i] ? in_y(&p, v[i]) : 0};
    }
  for (int i = 0; i < nb; i++)
    if (p.has_bar[i] && v[i] > hi) {
      char cut[32];
      snprintf(cut, sizeof cut, "%.3g", v[i]);
      place_cut(&p, i, cut, sys_color(m, i % ns), i % ns == m->ours);
    }
  for (int i = 0; i < nb; i++)
    if (!p.has_bar[i])
      place_mark(&p, nb, (p.bar[i].x0 + p.bar[i].x1) / 2,
                 cell_mark(fg_at(m, d, i / ns, i % ns), v[i]));
  fprintf(f, "# device=%s metric=%s range=%g:%g\n", c->devices[m->dev[d]].name,
          k == MET_TFLOPS ? "tflops" : "peak_mib", lo, hi);
  fprintf(f, "# x value color ours box_x0 box_x1 box_y0 box_y1 seqlen system\n");
  for (int i = 0; i < nb; i++) {
    int s = i % ns;
    fprintf(f, "%.5f %.6g %u %d", xpos[i], v[i], sys_color(m, s), s == m->ours);
    dat_bar_box(f, &p, i, 0);
    fprintf(f, " %d %s\n", m->fig->seqlens[i / ns], sys_item(m, s)->name);
  }
  fputs("\n\n", f);
  dat_labels(f, &p);
}

static int emit_sweep(const fg_model *m, FILE *dat, FILE *gp) {
  double lo[2 * PC_MAX_ITEMS], hi[2 * PC_MAX_ITEMS], step[2 * PC_MAX_ITEMS];
  double tickw = 0;
  for (int d = 0; d < m->ndev; d++) {
    sweep_range(m, d, MET_TFLOPS, &lo[2 * d], &hi[2 * d]);
    sweep_range(m, d, MET_MIB, &lo[2 * d + 1], &hi[2 * d + 1]);
    step[2 * d] = nice_step(hi[2 * d]);
    step[2 * d + 1] = 0; /* log axis: decades */
    tickw = fmax(tickw, ticks_in_linear(hi[2 * d], step[2 * d]));
  }
  layout L = {0};
  char note[160];
  cpu_note(m, note, sizeof note);
  L.note_h = note[0] ? 0.2 : 0;
  L.left = 0.3 + tickw + 0.1; /* row labels at 0.12 in (template), then the tick labels */
  L.cgap = 0.3 + ticks_in_log() + 0.1;
  L.right = 0.15;
  L.pw = 3.2;
  L.w = L.left + L.right + L.cgap + 2 * L.pw;
  legend_layout(&L, m->nsys, 2.2);
  L.top = L.note_h + 0.45 + 0.22 * L.lrows;
  L.bottom = 0.45;
  L.rgap = 0.5;
  L.ph = 1.8;
  L.h = L.top + L.bottom + L.ph * m->ndev + L.rgap * (m->ndev - 1);
  for (int d = 0; d < m->ndev; d++) {
    dat_sweep_panel(dat, m, d, MET_TFLOPS, lo[2 * d], hi[2 * d], &L);
    dat_sweep_panel(dat, m, d, MET_MIB, lo[2 * d + 1], hi[2 * d + 1], &L);
  }
  gp_header(gp, m, 2, &L);
  gp_array_str(gp, "grouplabel", m->nx, get_seq, m);
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

/* ---- bar figures (comparison, speedup): panels of grouped bars, one file per device ---- */

/* One panel: the cells of device row d of model m, groups = its columns, one bar per system
 * (but the baseline). Values: the metric from the logs, or the speedup over the baseline. */
typedef struct {
  const fg_model *m;
  int d;
  metric k;
  int base; /* speedup: index into m->sys of the baseline, which has no bar; else -1 */
  int logy;
  double lo, hi, step; /* step 0: a log axis */
  char title[PC_LABEL * 3];
} bpanel;

static int bp_nbars(const bpanel *b) { return b->m->nsys - (b->base >= 0); }
/* The system (index into m->sys) of the j-th bar of a group. */
static int bp_sys(const bpanel *b, int j) { return b->base >= 0 && j >= b->base ? j + 1 : j; }

static double bp_value(const bpanel *b, int x, int s) {
  const fg_cell *c = fg_at(b->m, b->d, x, s);
  if (b->k != MET_SPEEDUP) return cell_value(c, b->k);
  double own = cell_ms(c), base = cell_ms(fg_at(b->m, b->d, x, b->base));
  return isnan(own) || isnan(base) ? NAN : base / own;
}

/* No bar: the system's own mark, or n/a when it ran but its baseline did not. */
static const char *bp_mark(const bpanel *b, int x, int s) {
  const fg_cell *c = fg_at(b->m, b->d, x, s);
  if (b->k == MET_SPEEDUP && !isnan(cell_ms(c))) return "n/a";
  return cell_mark(c, NAN);
}

static void bp_range(bpanel *b) {
  double mn = INFINITY, mx = 0;
  for (int x = 0; x < b->m->nx; x++)
    for (int j = 0; j < bp_nbars(b); j++) {
      double v = bp_value(b, x, bp_sys(b, j));
      if (isnan(v)) continue;
      mn = fmin(mn, v);
      mx = fmax(mx, v);
    }
  if (b->k == MET_SPEEDUP && b->logy) { /* the line at 1 stays inside */
    mn = fmin(mn, 1);
    mx = fmax(mx, 1);
  }
  axis_range(mn, mx, b->logy, &b->lo, &b->hi);
  b->step = b->logy ? 0 : nice_step(b->hi);
}

/* Widest y tick label: linear steps, or the decades of a log axis written as %g. */
static double bp_ticks_in(const bpanel *b) {
  if (!b->logy) return ticks_in_linear(b->hi, b->step);
  double w = 0;
  for (double v = b->lo; v <= b->hi * (1 + 1e-9); v *= 10) {
    char buf[32];
    snprintf(buf, sizeof buf, "%g", v);
    w = fmax(w, text_in(buf, TICK_PT, 0));
  }
  return w;
}

#define GROUP_PT 6.0 /* the group (case) labels under each panel */

static const char *bp_group_label(const bpanel *b, int x) {
  static char buf[PC_XLABEL];
  col_text(b->m, x, buf, sizeof buf);
  return buf;
}

static void dat_bars_panel(FILE *f, const bpanel *b, const layout *L) {
  const fg_model *m = b->m;
  int nb = bp_nbars(b), n = m->nx * nb;
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
      v[i] = bp_value(b, x, bp_sys(b, j));
      xpos[i] = x + (j - (nb - 1) / 2.0) * bw;
      p.has_bar[i] = !isnan(v[i]);
      p.bar[i] = (box){in_x(&p, xpos[i] - bw / 2), in_x(&p, xpos[i] + bw / 2), 0,
                       p.has_bar[i] ? in_y(&p, v[i]) : 0};
    }
  for (int i = 0; i < n; i++)
    if (!p.has_bar[i])
      place_mark(&p, n, (p.bar[i].x0 + p.bar[i].x1) / 2, bp_mark(b, i / nb, bp_sys(b, i % nb)));
  static const char *const kname[MET_COUNT] = {"ms", "tflops", "peak_mib", "speedup"};
  fprintf(f, "# device=%s experiment=%s metric=%s%s%s range=%g:%g\n",
          m->cfg->devices[m->dev[b->d]].name, m->fig->experiment, kname[b->k],
          b->base >= 0 ? " baseline=" : "", b->base >= 0 ? sys_item(m, b->base)->name : "", b->lo,
          b->hi);
  fprintf(f, "# x value color ours box_x0 box_x1 box_y0 box_y1 column system label\n");
  for (int i = 0; i < n; i++) {
    int s = bp_sys(b, i % nb);
    fprintf(f, "%.5f %.6g %u %d", xpos[i], v[i], sys_color(m, s), sys_item(m, s)->ours);
    dat_bar_box(f, &p, i, 0);
    fprintf(f, " %d %s \"%s\"\n", i / nb, sys_item(m, s)->name, bp_group_label(b, i / nb));
  }
  fputs("\n\n", f);
  dat_labels(f, &p);
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

/* A bar figure: nrows x ncols panels (row-major), the legend of the systems that have bars,
 * each panel's own range, groups and title. */
static int emit_bars(const char *name, const char *cfg_path, const char *title,
                     const char *rowlabels[], bpanel *bp, int nrows, int ncols, double min_pw,
                     const char *note, FILE *dat, FILE *gp) {
  int np = nrows * ncols;
  const pc_config *c = bp[0].m->cfg;
  /* the legend: every system with a bar in some panel, in plot: systems order */
  int legend[PC_MAX_ITEMS], nleg = 0;
  for (int s = 0; s < c->nsystems; s++) {
    int used = 0;
    for (int i = 0; i < np && !used; i++)
      for (int j = 0; j < bp_nbars(&bp[i]) && !used; j++)
        used = bp[i].m->sys[bp_sys(&bp[i], j)] == s;
    if (used) legend[nleg++] = s;
  }
  double tickw = 0, labw = 0, pw = min_pw;
  for (int i = 0; i < np; i++) {
    bp_range(&bp[i]);
    tickw = fmax(tickw, bp_ticks_in(&bp[i]));
    const fg_model *m = bp[i].m;
    double group_in = bp_nbars(&bp[i]) * 0.075 + 0.12; /* room for a group's bars */
    pw = fmax(pw, group_in * m->nx);
    for (int x = 0; x < m->nx; x++)
      labw = fmax(labw, text_in(bp_group_label(&bp[i], x), GROUP_PT, 0));
  }
  int maxg = 1;
  for (int i = 0; i < np; i++) maxg = bp[i].m->nx > maxg ? bp[i].m->nx : maxg;
  /* group labels wider than their group are written at 45 degrees */
  int xrot = labw > pw / maxg - 0.05 ? 45 : 0;
  double xlab_h = xrot ? (labw + thick_in(GROUP_PT)) * 0.7072 : thick_in(GROUP_PT);
  layout L = {0};
  L.note_h = note[0] ? 0.2 : 0;
  /* a rotated group label reaches left of its group: the first one must stay on the page */
  double reach = xrot ? fmax(0, (labw + thick_in(GROUP_PT)) * 0.7072 - pw / (2 * maxg)) : 0;
  L.left = fmax(0.3 + tickw + 0.1, reach + 0.1); /* row labels at 0.12 in, then the tick labels */
  L.cgap = fmax(0.3 + tickw + 0.1, reach + 0.1);
  L.right = 0.15;
  L.pw = pw;
  L.w = L.left + L.right + ncols * L.pw + (ncols - 1) * L.cgap;
  legend_layout(&L, nleg ? nleg : 1, 2.2);
  L.top = L.note_h + 0.6 + 0.22 * L.lrows; /* title, legend rows, the first panel title */
  L.bottom = 0.12 + xlab_h + 0.25;         /* group labels, then the x label */
  L.rgap = L.bottom + 0.25;                /* the row above's labels, then this row's panel title */
  L.ph = 1.8;
  L.h = L.top + L.bottom + L.ph * nrows + L.rgap * (nrows - 1);
  for (int i = 0; i < np; i++) dat_bars_panel(dat, &bp[i], &L);

  fprintf(gp, "# %s: generated by repro-plot from %s; rerun with `gnuplot %s.gp` in this folder.\n",
          name, cfg_path, name);
  fprintf(gp, "outbase = \"%s\"\ndatafile = \"%s.dat\"\nformats = \"pdf png svg\"\n", name, name);
  fprintf(gp, "title_text = \"%s\"\nnote_text = \"%s\"\nxlabel_text = \"%s\"\n", title, note,
          bp[0].m->fig->x[0] ? "problem size" : "workload");
  fprintf(gp, "nrows = %d\nncols = %d\nnleg = %d\nxrot = %d\n", nrows, ncols, nleg, xrot);
  fprintf(gp,
          "# layout in inches (computed by repro-plot: margins fit the tick and group labels)\n");
  fprintf(gp, "W = %.3f\nH = %.3f\nleft = %.3f\nright = %.3f\ntop = %.3f\nbottom = %.3f\n", L.w,
          L.h, L.left, L.right, L.top, L.bottom);
  fprintf(gp, "cgap = %.3f\nrgap = %.3f\npw = %.4f\nph = %.4f\nnote_h = %.3f\n", L.cgap, L.rgap,
          L.pw, L.ph, L.note_h);
  fprintf(gp, "legend_cols = %d\nlegend_rows = %d\n", L.lcols, L.lrows);
  fprintf(gp, "array rowlabel[%d] = [", nrows);
  for (int r = 0; r < nrows; r++) fprintf(gp, "%s\"%s\"", r ? ", " : "", rowlabels[r]);
  fprintf(gp, "]\narray legend_text[%d] = [", nleg ? nleg : 1);
  for (int i = 0; i < nleg; i++)
    fprintf(gp, "%s\"%s\"", i ? ", " : "", c->systems[legend[i]].label);
  fprintf(gp, "%s]\narray legend_color[%d] = [", nleg ? "" : "\"\"", nleg ? nleg : 1);
  for (int i = 0; i < nleg; i++)
    fprintf(gp, "%s%u", i ? ", " : "", system_color(&c->systems[legend[i]], legend[i]));
  fprintf(gp, "%s]\narray legend_ours[%d] = [", nleg ? "" : "0", nleg ? nleg : 1);
  for (int i = 0; i < nleg; i++) fprintf(gp, "%s%d", i ? ", " : "", c->systems[legend[i]].ours);
  fprintf(gp, "%s]\n", nleg ? "" : "0");
  /* per panel: range, ticks (0 = log decades), groups (offset into grouplabel), bar width, title */
  int ngroups = 0;
  for (int i = 0; i < np; i++) ngroups += bp[i].m->nx ? bp[i].m->nx : 1;
  const char *arrays[] = {"panel_lo", "panel_hi", "panel_step", "panel_log",
                          "panel_ng", "panel_g0", "panel_barw", "panel_ref"};
  for (int a = 0, g0 = 0; a < 8; a++, g0 = 0) {
    fprintf(gp, "array %s[%d] = [", arrays[a], np);
    for (int i = 0; i < np; i++) {
      const bpanel *b = &bp[i];
      int nb = bp_nbars(b);
      double vals[] = {
          b->lo, b->hi, b->step, b->logy, b->m->nx, g0, 0.8 / (nb ? nb : 1), b->k == MET_SPEEDUP};
      fprintf(gp, "%s%g", i ? ", " : "", vals[a]);
      g0 += b->m->nx ? b->m->nx : 1;
    }
    fputs("]\n", gp);
  }
  fprintf(gp, "array panel_title[%d] = [", np);
  for (int i = 0; i < np; i++) fprintf(gp, "%s\"%s\"", i ? ", " : "", bp[i].title);
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
  return 0;
}

static const char *metric_title(metric k, int logy) {
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

static int emit_comparison(const fg_model *m, FILE *dat, FILE *gp) {
  bpanel bp[MET_COUNT];
  const pc_figure *f = m->fig;
  for (int i = 0; i < f->nmetrics; i++) {
    bp[i] = (bpanel){
        .m = m, .d = 0, .k = f->metrics[i], .base = -1, .logy = (f->logy >> f->metrics[i]) & 1};
    snprintf(bp[i].title, sizeof bp[i].title, "%s", metric_title(f->metrics[i], bp[i].logy));
  }
  char title[PC_LABEL * 4], note[160];
  bars_title(m, f->title, title, sizeof title);
  cpu_note(m, note, sizeof note);
  const char *rows[] = {m->cfg->devices[m->dev[0]].label};
  return emit_bars(m->name, m->cfg->path, title, rows, bp, 1, f->nmetrics, 3.2, note, dat, gp);
}

/* Opens <dir>/<name>.dat and .gp, runs emit, appends the template and closes both. */
static int emit_files(const char *dir, const char *name, const char *tmpl_dir, const char *tmpl,
                      int (*emit)(const void *, FILE *, FILE *), const void *arg) {
  FILE *dat = open_out(dir, name, "dat");
  if (!dat) return -1;
  FILE *gp = open_out(dir, name, "gp");
  if (!gp) {
    fclose(dat);
    return -1;
  }
  fprintf(dat, "# %s: gnuplot data written by repro-plot from the logs; NaN = no bar.\n", name);
  int rc = emit(arg, dat, gp);
  if (rc == 0) rc = copy_template(gp, tmpl_dir, tmpl);
  if (ferror(dat) || ferror(gp)) rc = -1;
  if (fclose(dat) != 0) rc = -1;
  if (fclose(gp) != 0) rc = -1;
  if (rc) fprintf(stderr, "%s/%s: writing the figure files failed\n", dir, name);
  return rc;
}

static int emit_model(const void *arg, FILE *dat, FILE *gp) {
  const fg_model *m = arg;
  switch (m->fig->kind) {
  case FIG_GRID: return emit_grid(m, dat, gp);
  case FIG_SWEEP: return emit_sweep(m, dat, gp);
  case FIG_COMPARISON: return emit_comparison(m, dat, gp);
  case FIG_SPEEDUP: break;
  }
  return -1;
}

int fg_emit(const fg_model *m, const char *dir, const char *template_dir) {
  const char *tmpl = m->fig->kind == FIG_GRID    ? "grid"
                     : m->fig->kind == FIG_SWEEP ? "sweep"
                                                 : "bars";
  return emit_files(dir, m->name, template_dir, tmpl, emit_model, m);
}

typedef struct {
  const fg_model *panels;
  const pc_figure *fig;
  const char *name;
} speedup_arg;

/* The label of a speedup panel's figure: its title, else its experiment. */
static const char *panel_label(const fg_model *m) {
  return m->fig->title[0] ? m->fig->title : m->fig->experiment;
}

static int emit_speedup(const void *arg, FILE *dat, FILE *gp) {
  const speedup_arg *a = arg;
  const pc_figure *f = a->fig;
  bpanel bp[PC_MAX_FIGURES];
  const char *rows[PC_MAX_FIGURES];
  int ncpu = 0, nlogs = 0;
  for (int i = 0; i < f->npanels; i++) {
    const fg_model *m = &a->panels[i];
    int base = bar_of(m, m->cfg->systems[f->panel_base[i]].name);
    bp[i] = (bpanel){
        .m = m, .d = 0, .k = MET_SPEEDUP, .base = base, .logy = (f->logy >> MET_SPEEDUP) & 1};
    snprintf(bp[i].title, sizeof bp[i].title, "%s: speedup over %s", panel_label(m),
             sys_item(m, base)->label);
    rows[i] = "";
    ncpu += m->ncpu;
    nlogs += m->nlogs;
  }
  fg_model sum = a->panels[0]; /* the CPU note over all panels */
  sum.ncpu = ncpu;
  sum.nlogs = nlogs;
  char title[PC_LABEL * 4], note[160];
  bars_title(&a->panels[0], f->title[0] ? f->title : "Speedup", title, sizeof title);
  cpu_note(&sum, note, sizeof note);
  return emit_bars(a->name, a->panels[0].cfg->path, title, rows, bp, f->npanels, 1, 6.4, note, dat,
                   gp);
}

int fg_emit_speedup(const fg_model *panels, const pc_figure *fig, const char *name, const char *dir,
                    const char *template_dir) {
  speedup_arg a = {panels, fig, name};
  return emit_files(dir, name, template_dir, "bars", emit_speedup, &a);
}

/* ---- terminal output: each table shows what its figure shows ---- */

static void print_value(FILE *out, const fg_cell *c, metric k, int w) {
  double v = cell_value(c, k);
  if (isnan(v))
    fprintf(out, " %*s", w, cell_mark(c, v));
  else if (k == MET_MS || v < 1)
    fprintf(out, " %*.*f", w, v < 0.01 ? 5 : 3, v);
  else
    fprintf(out, " %*.*f", w, v >= 1000 ? 0 : v >= 100 ? 1 : 2, v);
}

/* Ours against the best other system in column x: time and memory lower is better (best/ours),
 * throughput higher is better (ours/best). NAN when either is missing. */
static double ours_ratio(const fg_model *m, int d, int x, metric k) {
  if (m->ours < 0) return NAN;
  double ours = cell_value(fg_at(m, d, x, m->ours), k), best = NAN;
  for (int s = 0; s < m->nsys; s++) {
    if (s == m->ours) continue;
    double v = cell_value(fg_at(m, d, x, s), k);
    if (!isnan(v) && (isnan(best) || (k == MET_TFLOPS ? v > best : v < best))) best = v;
  }
  if (isnan(ours) || isnan(best)) return NAN;
  return k == MET_TFLOPS ? ours / best : best / ours;
}

/* One table: rows the figure's columns (workloads, lengths or cases), columns the systems,
 * then ours' ratio to the best other system and its geometric mean. */
static void print_metric_table(const fg_model *m, int d, metric k, const char *what,
                               const char *ratio_name, const char *ratio_what,
                               const char *ratio_ref, FILE *out) {
  const pc_config *c = m->cfg;
  int w[PC_MAX_ITEMS], cw = col_width(m);
  for (int s = 0; s < m->nsys; s++) {
    int l = (int)strlen(sys_item(m, s)->name);
    w[s] = l > 8 ? l : 8;
  }
  fprintf(out, "[%s] %s\n%-*s", c->devices[m->dev[d]].label, what, cw,
          m->fig->x[0]                ? "case"
          : m->fig->kind == FIG_SWEEP ? "seqlen"
                                      : "workload");
  for (int s = 0; s < m->nsys; s++) fprintf(out, " %*s", w[s], sys_item(m, s)->name);
  fprintf(out, " %9s\n", ratio_name);
  double logsum = 0;
  int n = 0;
  for (int x = 0; x < m->nx; x++) {
    char lab[PC_XLABEL];
    col_text(m, x, lab, sizeof lab);
    fprintf(out, "%-*s", cw, lab);
    for (int s = 0; s < m->nsys; s++) print_value(out, fg_at(m, d, x, s), k, w[s]);
    double r = ours_ratio(m, d, x, k);
    if (isnan(r)) {
      fprintf(out, " %9s\n", "-");
    } else {
      fprintf(out, " %8.2fx\n", r);
      logsum += log(r);
      n++;
    }
  }
  if (m->ours < 0) return;
  if (n)
    fprintf(out, "geometric mean %s of %s %s: %.2fx (%d of %d %s)\n", ratio_what,
            sys_item(m, m->ours)->label, ratio_ref, exp(logsum / n), n, m->nx, cols_name(m));
  else
    fprintf(out, "geometric mean %s of %s: - (no %s has both ours and another system)\n",
            ratio_what, sys_item(m, m->ours)->label, cols_name(m));
}

static void print_panel_metric(const fg_model *m, int d, metric k, FILE *out) {
  switch (k) {
  case MET_MS:
    print_metric_table(m, d, MET_MS, "execution time, ms (lower is better)", "speedup", "speedup",
                       "over the best other system", out);
    break;
  case MET_TFLOPS:
    print_metric_table(m, d, MET_TFLOPS, "throughput, TFLOP/s (higher is better)", "ours/best",
                       "throughput", "over the best other system (ours / best)", out);
    break;
  case MET_MIB:
    print_metric_table(m, d, MET_MIB, "peak memory, MiB (lower is better)", "saving",
                       "memory saving", "against the lowest other system (lowest / ours)", out);
    break;
  default: break;
  }
}

void fg_print_table(const fg_model *m, FILE *out) {
  const pc_config *c = m->cfg;
  const char *marks = "NS = no log or not supported, OOM, TLE = timeout, ERR = failed";
  if (m->fig->kind == FIG_GRID) {
    fprintf(out, "\n== %s: execution time in ms per %s (experiment %s), as the bars; ",
            m->fig->name, m->fig->x[0] ? "case" : "workload",
            m->fig->experiment[0] ? m->fig->experiment : "all");
    fprintf(out, "speedup = best other / ours, the red label\n");
  } else if (m->fig->kind == FIG_COMPARISON) {
    fprintf(out, "\n== %s: experiment %s per case on %s, the figure's panels\n", m->name,
            m->fig->experiment, c->devices[m->dev[0]].label);
  } else {
    int w = pc_find(c->workloads, c->nworkloads, m->fig->workload);
    fprintf(out, "\n== %s: %s by sequence length: throughput in TFLOP/s and peak memory in MiB, ",
            m->fig->name, w >= 0 ? c->workloads[w].label : m->fig->workload);
    fprintf(out, "the figure's two columns of panels\n");
  }
  fprintf(out, "   (%s)\n", marks);
  char note[160];
  cpu_note(m, note, sizeof note);
  if (note[0]) fprintf(out, "** %s **\n", note);
  for (int d = 0; d < m->ndev; d++) {
    if (m->fig->kind == FIG_GRID) {
      print_panel_metric(m, d, MET_MS, out);
    } else if (m->fig->kind == FIG_COMPARISON) {
      for (int i = 0; i < m->fig->nmetrics; i++) print_panel_metric(m, d, m->fig->metrics[i], out);
    } else {
      print_panel_metric(m, d, MET_TFLOPS, out);
      print_panel_metric(m, d, MET_MIB, out);
    }
  }
}

/* The file name a cell's log would have: its experiment's template with the placeholders
 * filled (x: columns: from a log of the column). */
static void cell_file_name(const fg_model *m, int d, int x, int s, char *out, size_t cap) {
  const pc_config *c = m->cfg;
  const char *t = pc_log_name(c, m->fig->experiment);
  size_t n = 0;
  while (*t && n + 1 < cap) {
    if (*t != '{') {
      out[n++] = *t++;
      continue;
    }
    const char *close = strchr(t, '}');
    if (!close) break;
    char key[32] = "", val[PT_NAME] = "", num[16];
    snprintf(key, sizeof key, "%.*s", (int)(close - t - 1), t + 1);
    const char *kv =
        m->fig->x[0] && m->xrow[x] ? pt_key_value(m->xrow[x], key, num, sizeof num) : NULL;
    if (!strcmp(key, "experiment"))
      snprintf(val, sizeof val, "%s", m->fig->experiment);
    else if (!strcmp(key, "device"))
      snprintf(val, sizeof val, "%s", c->devices[m->dev[d]].name);
    else if (!strcmp(key, "system"))
      snprintf(val, sizeof val, "%s", sys_item(m, s)->name);
    else if (kv)
      snprintf(val, sizeof val, "%s", kv);
    else if (!strcmp(key, "workload"))
      snprintf(val, sizeof val, "%s",
               m->fig->kind != FIG_SWEEP ? c->workloads[x].name : m->fig->workload);
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
      for (int s = 0; s < m->nsys; s++) {
        if (fg_at(m, d, x, s)->status != ST_MISSING || !sys_item(m, s)->expected) continue;
        if (m->fig->x[0] && !m->xrow[x]) continue; /* no logs: no names to give */
        if (limit == 0 || missing < limit) {
          char name[PT_PATH];
          cell_file_name(m, d, x, s, name, sizeof name);
          fprintf(out, "  missing  %s\n", name);
        }
        missing++;
      }
  if (limit && missing > limit)
    fprintf(out, "  ... and %d more missing logs of %s (--verbose lists all)\n", missing - limit,
            m->name);
  return missing;
}

void fg_print_speedup(const fg_model *panels, const pc_figure *fig, const char *name, FILE *out) {
  const fg_model *m0 = &panels[0];
  fprintf(out, "\n== %s: speedup over each panel's baseline on %s (baseline time / system time)\n",
          name, m0->cfg->devices[m0->dev[0]].label);
  fprintf(out, "   (NS = no log or not supported, OOM, TLE = timeout, ERR = failed, n/a = the "
               "baseline has no time)\n");
  for (int i = 0; i < fig->npanels; i++) {
    const fg_model *m = &panels[i];
    int base = bar_of(m, m->cfg->systems[fig->panel_base[i]].name), cw = col_width(m);
    bpanel b = {.m = m, .d = 0, .k = MET_SPEEDUP, .base = base};
    fprintf(out, "[%s] speedup over %s (higher is better)\n%-*s", panel_label(m),
            sys_item(m, base)->name, cw, m->fig->x[0] ? "case" : "workload");
    for (int j = 0; j < bp_nbars(&b); j++) {
      int l = (int)strlen(sys_item(m, bp_sys(&b, j))->name);
      fprintf(out, " %*s", l > 8 ? l : 8, sys_item(m, bp_sys(&b, j))->name);
    }
    fputc('\n', out);
    for (int x = 0; x < m->nx; x++) {
      char lab[PC_XLABEL];
      col_text(m, x, lab, sizeof lab);
      fprintf(out, "%-*s", cw, lab);
      for (int j = 0; j < bp_nbars(&b); j++) {
        int s = bp_sys(&b, j), l = (int)strlen(sys_item(m, s)->name);
        double v = bp_value(&b, x, s);
        if (isnan(v))
          fprintf(out, " %*s", l > 8 ? l : 8, bp_mark(&b, x, s));
        else
          fprintf(out, " %*.2fx", (l > 8 ? l : 8) - 1, v);
      }
      fputc('\n', out);
    }
  }
}
