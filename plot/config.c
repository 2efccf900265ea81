/* config: loads the `plot:` section of experiment.yaml (see config.h). */
#include "config.h"

#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "yamlnode.h"

typedef struct {
  ydoc_err err; /* the first error, "file:line:col: message" */
} ycx;

#define yerr(y, n, ...) y_error(&(y)->err, (n), __VA_ARGS__)

static const char *scalar(const ynode *n) { return n && n->type == Y_SCALAR ? n->str : NULL; }

static int get_name(ycx *y, const ynode *n, char *dst, const char *what) {
  const char *s = scalar(n);
  if (!s || !pt_valid_name(s))
    return yerr(y, n, "expected %s: a name of [A-Za-z0-9._-]+ shorter than %d characters", what,
                PT_NAME);
  strcpy(dst, s);
  return 0;
}

static int get_text(ycx *y, const ynode *n, char *dst, size_t cap, const char *what) {
  const char *s = scalar(n);
  if (!s || strlen(s) >= cap)
    return yerr(y, n, "expected %s: a string shorter than %zu characters", what, cap);
  /* labels reach gnuplot scripts inside double quotes: keep them printable and quote-free */
  for (const char *p = s; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == '"' || *p == '\'' || *p == '\\' || *p == '`')
      return yerr(
          y, n,
          "expected %s without quotes, apostrophes, backslashes, backticks or control characters",
          what);
  strcpy(dst, s);
  return 0;
}

static int get_number(ycx *y, const ynode *n, double *dst, const char *what) {
  const char *s = scalar(n);
  char *end;
  errno = 0;
  double v = s ? strtod(s, &end) : 0;
  if (!s || !*s || *end || errno || v < 0) return yerr(y, n, "expected %s: a number >= 0", what);
  *dst = v;
  return 0;
}

static int get_int(ycx *y, const ynode *n, int *dst, const char *what) {
  double v = 0;
  if (get_number(y, n, &v, what)) return -1;
  if (v != (int)v || v > 1 << 24) return yerr(y, n, "expected %s: a whole number", what);
  *dst = (int)v;
  return 0;
}

static int get_bool(ycx *y, const ynode *n, int *dst, const char *what) {
  const char *s = scalar(n);
  if (s && (!strcmp(s, "true") || !strcmp(s, "yes"))) {
    *dst = 1;
    return 0;
  }
  if (s && (!strcmp(s, "false") || !strcmp(s, "no"))) {
    *dst = 0;
    return 0;
  }
  return yerr(y, n, "expected %s: true or false", what);
}

static int get_color(ycx *y, const ynode *n, unsigned *dst) {
  const char *s = scalar(n);
  char *end;
  if (!s || s[0] != '#' || strlen(s) != 7) return yerr(y, n, "expected color: \"#rrggbb\"");
  unsigned long v = strtoul(s + 1, &end, 16);
  if (*end) return yerr(y, n, "expected color: \"#rrggbb\"");
  *dst = (unsigned)v;
  return 0;
}

/* Mapping pairs (k, v) and list items (v) of the loader's tree. */
#define FOR_PAIRS(map, k, v) \
  for (int p_ = 0;           \
       p_ < (map)->n && ((k) = (map)->items[2 * p_], (v) = (map)->items[2 * p_ + 1], 1); p_++)
#define FOR_ITEMS(seq, v) for (int i_ = 0; i_ < (seq)->n && ((v) = (seq)->items[i_], 1); i_++)

static int want(ycx *y, const ynode *n, ytype t, const char *what) {
  if (n && n->type == t) return 0;
  return yerr(y, n, "expected %s: %s, found %s", what, y_type_name(t),
              n ? y_type_name(n->type) : "nothing");
}

static int load_item(ycx *y, const ynode *n, pc_item *it, int is_system) {
  if (want(y, n, Y_MAP, "an item {name: ..., label: ...}")) return -1;
  memset(it, 0, sizeof *it);
  it->expected = 1;
  const ynode *k, *v;
  FOR_PAIRS(n, k, v) {
    const char *key = k->str;
    int rc;
    if (!strcmp(key, "name"))
      rc = get_name(y, v, it->name, "name");
    else if (!strcmp(key, "label"))
      rc = get_text(y, v, it->label, sizeof it->label, "label");
    else if (!strcmp(key, "aliases")) {
      if (want(y, v, Y_SEQ, "aliases")) return -1;
      const ynode *a;
      rc = 0;
      FOR_ITEMS(v, a) {
        if (it->naliases == PC_MAX_ALIASES) return yerr(y, a, "at most %d aliases", PC_MAX_ALIASES);
        if (get_name(y, a, it->aliases[it->naliases++], "alias")) return -1;
      }
    } else if (is_system && !strcmp(key, "ours"))
      rc = get_bool(y, v, &it->ours, "ours");
    else if (is_system && !strcmp(key, "expected"))
      rc = get_bool(y, v, &it->expected, "expected");
    else if (is_system && !strcmp(key, "color"))
      return yerr(y, k,
                  "color: a system's colour is its row in plot/systems.yaml, the same in "
                  "every figure; remove this key (or change the system's row there)");
    else
      return yerr(y, k, "unknown key \"%s\"; expected name, label, aliases%s", key,
                  is_system ? ", ours, expected" : "");
    if (rc) return -1;
  }
  if (!it->name[0]) return yerr(y, n, "item without a name");
  if (!it->label[0]) snprintf(it->label, sizeof it->label, "%s", it->name);
  return 0;
}

static int load_list(ycx *y, const ynode *n, pc_item *items, int *count, int is_system,
                     const char *what) {
  if (want(y, n, Y_SEQ, what)) return -1;
  const ynode *v;
  FOR_ITEMS(n, v) {
    if (*count == PC_MAX_ITEMS) return yerr(y, v, "at most %d %s", PC_MAX_ITEMS, what);
    if (load_item(y, v, &items[*count], is_system)) return -1;
    const pc_item *it = &items[*count];
    int dup = pc_find(items, *count, it->name) >= 0;
    for (int a = 0; a < it->naliases; a++) dup |= pc_find(items, *count, it->aliases[a]) >= 0;
    if (dup) return yerr(y, v, "%s \"%s\" is listed twice (as a name or alias)", what, it->name);
    (*count)++;
  }
  return 0;
}

/* ---- the palette: plot/systems.yaml, one colour per system in every figure ---- */

#define PC_MAX_PALETTE 64

#ifdef PLOT_TEMPLATE_DIR
#define PC_PALETTE_BUILT PLOT_TEMPLATE_DIR "/../systems.yaml"
#else
#define PC_PALETTE_BUILT "plot/systems.yaml"
#endif

/* Colours of the systems without a row in the palette (a test's stand-ins): greys and muted
 * tones the palette does not use, taken in order, skipping any another system of the plot has. */
static const unsigned fallback_colors[] = {0x4D4D4D, 0xB3B3B3, 0x7A7A7A, 0xD9D9D9, 0x2F4F4F,
                                           0x8FBC8F, 0xBC8F8F, 0xDAA520, 0x6B8E23, 0x708090,
                                           0xA0522D, 0x4682B4, 0xD2B48C, 0x9ACD32, 0x800000};

static int file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The palette for the experiment file at config: the plot/systems.yaml of the repository that
 * holds it (the nearest folder above with .repro-root), else the one beside the templates
 * repro-plot was built with. 0 with its path, or -1 when there is none. */
int pc_palette_path(const char *config, char *out, size_t cap) {
  char *real = realpath(config, NULL);
  if (real) {
    for (char *slash = strrchr(real, '/'); slash; slash = strrchr(real, '/')) {
      *slash = '\0';
      char mark[PT_PATH];
      snprintf(mark, sizeof mark, "%s/.repro-root", real);
      if (access(mark, F_OK) != 0) continue;
      snprintf(out, cap, "%s/plot/systems.yaml", real);
      if (file_exists(out)) {
        free(real);
        return 0;
      }
      break;
    }
    free(real);
  }
  snprintf(out, cap, "%s", PC_PALETTE_BUILT);
  return file_exists(out) ? 0 : -1;
}

/* One row NAME: {color: "#rrggbb", aliases: [...]}; no name or colour of an earlier row. */
static int load_palette_row(ycx *y, const ynode *k, const ynode *v, pc_item *pal, int n) {
  pc_item *it = &pal[n];
  memset(it, 0, sizeof *it);
  if (get_name(y, k, it->name, "a system name")) return -1;
  if (want(y, v, Y_MAP, "a palette row {color: \"#rrggbb\", aliases: [...]}")) return -1;
  const ynode *ck, *cv;
  FOR_PAIRS(v, ck, cv) {
    if (!strcmp(ck->str, "color")) {
      if (get_color(y, cv, &it->color)) return -1;
      it->has_color = 1;
    } else if (!strcmp(ck->str, "aliases")) {
      if (want(y, cv, Y_SEQ, "aliases")) return -1;
      const ynode *a;
      FOR_ITEMS(cv, a) {
        if (it->naliases == PC_MAX_ALIASES) return yerr(y, a, "at most %d aliases", PC_MAX_ALIASES);
        if (get_name(y, a, it->aliases[it->naliases++], "alias")) return -1;
      }
    } else
      return yerr(y, ck, "unknown key \"%s\"; expected color, aliases", ck->str);
  }
  if (!it->has_color) return yerr(y, v, "system %s: expected its color: \"#rrggbb\"", it->name);
  int dup = pc_find(pal, n, it->name);
  for (int a = 0; a < it->naliases && dup < 0; a++) dup = pc_find(pal, n, it->aliases[a]);
  if (dup >= 0)
    return yerr(y, k, "system %s is listed twice (as a name or alias; first as %s)", it->name,
                pal[dup].name);
  for (int i = 0; i < n; i++)
    if (pal[i].color == it->color)
      return yerr(y, v, "%s has %s's colour #%06X: two systems never share one", it->name,
                  pal[i].name, it->color);
  return 0;
}

/* Reads the palette at path into pal. Returns the rows, or -1 (the error in y). */
static int load_palette(ycx *y, const char *path, pc_item *pal) {
  ydoc_err err = {0};
  ynode *root = y_load_file(path, &err);
  int n = -1;
  if (!root) {
    y->err.msg = err.msg;
    return -1;
  }
  const ynode *sys = y_get(root, "systems");
  if (want(y, sys ? sys : root, Y_MAP, "systems: {NAME: {color: \"#rrggbb\"}, ...}")) goto out;
  n = 0;
  const ynode *k, *v;
  FOR_PAIRS(sys, k, v) {
    if (n == PC_MAX_PALETTE) {
      yerr(y, k, "at most %d systems", PC_MAX_PALETTE);
      n = -1;
      goto out;
    }
    if (load_palette_row(y, k, v, pal, n)) {
      n = -1;
      goto out;
    }
    n++;
  }
out:
  y_free(root);
  return n;
}

/* Gives every plot system its colour: the palette's row of its name, else of one of its
 * aliases, else the next fallback colour no other system of the plot has. */
static void color_systems(pc_config *c, const pc_item *pal, int npal) {
  for (int s = 0; s < c->nsystems; s++) {
    pc_item *it = &c->systems[s];
    int p = pc_find(pal, npal, it->name);
    for (int a = 0; a < it->naliases && p < 0; a++) p = pc_find(pal, npal, it->aliases[a]);
    it->has_color = it->palette = p >= 0;
    if (p >= 0) it->color = pal[p].color;
  }
  size_t next = 0, nfb = sizeof fallback_colors / sizeof *fallback_colors;
  for (int s = 0; s < c->nsystems; s++) {
    pc_item *it = &c->systems[s];
    if (it->has_color) continue;
    for (; next < nfb; next++) { /* a colour no system of the plot has yet */
      int taken = 0;
      for (int o = 0; o < c->nsystems && !taken; o++)
        taken = c->systems[o].has_color && c->systems[o].color == fallback_colors[next];
      if (!taken) break;
    }
    it->color = fallback_colors[next < nfb ? next : (size_t)s % nfb];
    it->has_color = 1;
    next++;
  }
}

/* The systems' colours: their rows in the palette of the experiment file at path. */
static int load_colors(ycx *y, const char *path, pc_config *c) {
  pc_item pal[PC_MAX_PALETTE];
  int npal = 0;
  if (pc_palette_path(path, c->palette, sizeof c->palette) == 0)
    npal = load_palette(y, c->palette, pal);
  else
    c->palette[0] = '\0';
  if (npal < 0) return -1;
  color_systems(c, pal, npal);
  return 0;
}

/* x: a label template whose placeholders are cell keys ({m}, {dtype}, {seqlen}, {workload});
 * {device} and {system} are no columns (one file per device, one bar per system). */
static int get_x(ycx *y, const ynode *n, char *dst) {
  if (get_text(y, n, dst, PC_XLABEL, "x (a label template such as \"{m}x{n}x{k}\")")) return -1;
  int nkeys = 0;
  for (const char *p = dst; *p; p++) {
    if (*p == '}') return yerr(y, n, "x: a '}' without its '{'");
    if (*p != '{') continue;
    const char *close = strchr(p, '}');
    char key[PT_KEY];
    size_t len = close ? (size_t)(close - p - 1) : 0;
    if (!close || len == 0 || len >= sizeof key)
      return yerr(y, n, "x: expected {key} placeholders, a key of [a-z_][a-z0-9_]*");
    memcpy(key, p + 1, len);
    key[len] = '\0';
    if (!pt_valid_key(key)) return yerr(y, n, "x: {%s} is no key name ([a-z_][a-z0-9_]*)", key);
    if (!strcmp(key, "device") || !strcmp(key, "system") || !strcmp(key, "experiment"))
      return yerr(
          y, n,
          "x: {%s} cannot be a column (files are per device and per experiment, bars per system)",
          key);
    nkeys++;
    p = close;
  }
  if (!nkeys) return yerr(y, n, "x: expected at least one {key} placeholder");
  return 0;
}

static const char *const metric_names[MET_COUNT] = {"ms", "tflops", "mib", "speedup"};

/* A list of metric names (ms, tflops, mib, speedup) as a bit set; order kept in out when given. */
static int get_metrics(ycx *y, const ynode *n, const char *what, pc_metric *out, int *nout,
                       unsigned *bits) {
  if (want(y, n, Y_SEQ, what)) return -1;
  const ynode *v;
  *bits = 0;
  FOR_ITEMS(n, v) {
    const char *s = scalar(v);
    int m = 0;
    while (m < MET_COUNT && !(s && !strcmp(s, metric_names[m]))) m++;
    if (m == MET_COUNT) return yerr(y, v, "expected %s: ms, tflops, mib or speedup", what);
    if (*bits & 1u << m) return yerr(y, v, "%s: %s is listed twice", what, s);
    *bits |= 1u << m;
    if (out) out[(*nout)++] = (pc_metric)m;
  }
  return 0;
}

/* seqlens: a sweep's columns, lengths (whole numbers) of the rows' length key. */
static int get_sweep(ycx *y, const ynode *n, pc_figure *f) {
  if (want(y, n, Y_SEQ, "seqlens")) return -1;
  snprintf(f->sweep_key, sizeof f->sweep_key, "%s", PT_LENGTH_KEY);
  const ynode *s;
  FOR_ITEMS(n, s) {
    int len = 0;
    if (f->nsweep == PC_MAX_SWEEP) return yerr(y, s, "at most %d seqlens", PC_MAX_SWEEP);
    if (get_int(y, s, &len, "seqlen")) return -1;
    snprintf(f->sweep[f->nsweep++], PT_NAME, "%d", len);
  }
  return 0;
}

static int load_figure(ycx *y, const ynode *n, pc_figure *f) {
  if (want(y, n, Y_MAP, "a figure {name: ..., kind: grid|sweep|comparison|speedup, ...}"))
    return -1;
  memset(f, 0, sizeof *f);
  const ynode *k, *v;
  int have_kind = 0;
  FOR_PAIRS(n, k, v) {
    const char *key = k->str;
    int rc = 0;
    if (!strcmp(key, "name"))
      rc = get_name(y, v, f->name, "figure name");
    else if (!strcmp(key, "kind")) {
      const char *s = scalar(v);
      if (s && !strcmp(s, "grid"))
        f->kind = FIG_GRID;
      else if (s && !strcmp(s, "sweep"))
        f->kind = FIG_SWEEP;
      else if (s && !strcmp(s, "comparison"))
        f->kind = FIG_COMPARISON;
      else if (s && !strcmp(s, "speedup"))
        f->kind = FIG_SPEEDUP;
      else
        return yerr(y, v, "expected kind: grid, sweep, comparison or speedup");
      have_kind = 1;
    } else if (!strcmp(key, "x"))
      rc = get_x(y, v, f->x);
    else if (!strcmp(key, "metrics")) {
      unsigned bits;
      f->nmetrics = 0;
      rc = get_metrics(y, v, "metrics", f->metrics, &f->nmetrics, &bits);
    } else if (!strcmp(key, "logy")) {
      int none = 0;
      rc = get_metrics(y, v, "logy", NULL, &none, &f->logy);
    } else if (!strcmp(key, "systems") || !strcmp(key, "panels"))
      rc = 0; /* names of systems and figures: resolve_figure, once all are loaded */
    else if (!strcmp(key, "experiment"))
      rc = get_name(y, v, f->experiment, "experiment");
    else if (!strcmp(key, "workload"))
      rc = get_name(y, v, f->workload, "workload");
    else if (!strcmp(key, "title"))
      rc = get_text(y, v, f->title, sizeof f->title, "title");
    else if (!strcmp(key, "ylabel"))
      rc = get_text(y, v, f->ylabel, sizeof f->ylabel, "ylabel");
    else if (!strcmp(key, "ymax"))
      rc = get_number(y, v, &f->ymax, "ymax");
    else if (!strcmp(key, "ytics"))
      rc = get_number(y, v, &f->ytics, "ytics");
    else if (!strcmp(key, "seqlens"))
      rc = get_sweep(y, v, f);
    else
      return yerr(y, k,
                  "unknown key \"%s\"; expected name, kind, experiment, workload, title, "
                  "ylabel, ymax, ytics, seqlens, x, systems, metrics, logy, panels",
                  key);
    if (rc) return -1;
  }
  if (!f->name[0] || !have_kind) return yerr(y, n, "a figure needs name and kind");
  if (f->kind == FIG_SWEEP && (!f->nsweep || !f->workload[0]))
    return yerr(y, n, "a sweep figure needs workload and seqlens");
  if (f->x[0] && f->kind != FIG_GRID && f->kind != FIG_COMPARISON)
    return yerr(y, y_get(n, "x"), "x: only grid and comparison figures have columns of cases");
  if (f->kind == FIG_COMPARISON && !f->experiment[0])
    return yerr(y, n, "a comparison figure needs experiment (one kernel per figure)");
  if (f->kind == FIG_SPEEDUP && (f->experiment[0] || !y_get(n, "panels")))
    return yerr(
        y, n,
        "a speedup figure needs panels (and no experiment: each panel names a comparison figure)");
  if (f->nmetrics && f->kind != FIG_COMPARISON)
    return yerr(y, y_get(n, "metrics"), "metrics: only comparison figures choose their panels");
  if (f->kind == FIG_COMPARISON && !f->nmetrics) {
    f->metrics[f->nmetrics++] = MET_MS;
    f->metrics[f->nmetrics++] = MET_TFLOPS;
  }
  unsigned drawn = 0;
  for (int i = 0; i < f->nmetrics; i++) drawn |= 1u << f->metrics[i];
  if (f->kind == FIG_SPEEDUP) drawn = 1u << MET_SPEEDUP;
  if (f->logy & ~drawn)
    return yerr(y, y_get(n, "logy"), "logy: only metrics the figure draws (%s)",
                f->kind == FIG_SPEEDUP      ? "speedup"
                : f->kind == FIG_COMPARISON ? "its metrics"
                                            : "none for grid and sweep figures");
  return 0;
}

/* The bars of figure f: its systems: list (names or aliases of the plot's systems), else every
 * plot system. */
static int resolve_systems(ycx *y, const ynode *n, const pc_config *c, pc_figure *f) {
  const ynode *list = y_get(n, "systems"), *v;
  f->nsys = 0;
  if (!list) {
    for (int s = 0; s < c->nsystems; s++) f->sys[f->nsys++] = s;
    return 0;
  }
  if (f->kind == FIG_SPEEDUP)
    return yerr(y, list, "systems: a speedup figure takes each panel's figure's systems");
  if (want(y, list, Y_SEQ, "systems (names of the plot's systems)")) return -1;
  FOR_ITEMS(list, v) {
    const char *name = scalar(v);
    int s = name ? pc_find(c->systems, c->nsystems, name) : -1;
    if (s < 0) return yerr(y, v, "systems: expected a name of the plot's systems:");
    for (int i = 0; i < f->nsys; i++)
      if (f->sys[i] == s) return yerr(y, v, "systems: %s is listed twice", name);
    f->sys[f->nsys++] = s;
  }
  if (!f->nsys) return yerr(y, list, "systems: expected at least one system");
  return 0;
}

/* A speedup figure's panels: [{figure: NAME, baseline: SYSTEM}, ...]; the figure is a grid or
 * comparison figure of one experiment, the baseline one of its systems. */
static int resolve_panels(ycx *y, const ynode *n, const pc_config *c, pc_figure *f) {
  const ynode *list = y_get(n, "panels"), *v;
  if (!list) return 0;
  if (f->kind != FIG_SPEEDUP) return yerr(y, list, "panels: only speedup figures have panels");
  if (want(y, list, Y_SEQ, "panels: [{figure: NAME, baseline: SYSTEM}, ...]")) return -1;
  FOR_ITEMS(list, v) {
    if (want(y, v, Y_MAP, "a panel {figure: NAME, baseline: SYSTEM}")) return -1;
    if (f->npanels == PC_MAX_FIGURES) return yerr(y, v, "at most %d panels", PC_MAX_FIGURES);
    const ynode *fk, *fv, *fig = NULL, *base = NULL;
    FOR_PAIRS(v, fk, fv) {
      if (!strcmp(fk->str, "figure"))
        fig = fv;
      else if (!strcmp(fk->str, "baseline"))
        base = fv;
      else
        return yerr(y, fk, "unknown key \"%s\"; expected figure, baseline", fk->str);
    }
    if (!fig || !base) return yerr(y, v, "a panel needs figure and baseline");
    int fi = -1;
    for (int i = 0; i < c->nfigures && fi < 0; i++)
      if (scalar(fig) && !strcmp(c->figures[i].name, scalar(fig))) fi = i;
    if (fi < 0 || !c->figures[fi].experiment[0] ||
        (c->figures[fi].kind != FIG_COMPARISON && c->figures[fi].kind != FIG_GRID))
      return yerr(
          y, fig,
          "panel figure: expected the name of a comparison or grid figure of one experiment");
    const pc_figure *pf = &c->figures[fi];
    int b = scalar(base) ? pc_find(c->systems, c->nsystems, scalar(base)) : -1, in = 0;
    for (int i = 0; b >= 0 && i < pf->nsys; i++) in |= pf->sys[i] == b;
    if (!in) return yerr(y, base, "baseline: expected one of the systems of figure %s", pf->name);
    f->panel_fig[f->npanels] = fi;
    f->panel_base[f->npanels++] = b;
  }
  if (!f->npanels) return yerr(y, list, "panels: expected at least one panel");
  return 0;
}

/* A time of plot: paper: (what: its workload): a positive decimal number of ms, and its
 * digits after the point (3 when it has an exponent). */
static int get_paper_time(ycx *y, const ynode *n, double *dst, int *decimals, const char *what) {
  const char *s = scalar(n);
  double v = 0;
  if (!s || pt_parse_decimal(s, strlen(s), &v) != 0 || !(v > 0) || !isfinite(v))
    return yerr(y, n, "paper: expected the paper's time of %s in ms, a positive decimal number",
                what);
  const char *dot = strchr(s, '.');
  size_t digits = dot ? strspn(dot + 1, "0123456789") : 0;
  *decimals = strpbrk(s, "eE") ? 3 : digits > 6 ? 6 : (int)digits;
  *dst = v;
  return 0;
}

/* The plot: paper: entry of experiment exp on device dev, or -1. */
static int paper_index(const pc_config *c, const char *exp, int dev) {
  for (int i = 0; i < c->npaper; i++)
    if (c->paper[i].device == dev && !strcmp(c->paper[i].experiment, exp)) return i;
  return -1;
}

/* One device's times: {WORKLOAD: ms, ...}, workloads named as in plot: workloads. */
static int load_paper_device(ycx *y, const ynode *k, const ynode *v, const char *exp,
                             pc_config *c) {
  int dev = pc_find(c->devices, c->ndevices, k->str);
  if (dev < 0) return yerr(y, k, "paper: device \"%s\" is not in plot: devices", k->str);
  if (paper_index(c, exp, dev) >= 0)
    return yerr(y, k, "paper: %s on device %s is listed twice", exp, c->devices[dev].name);
  if (c->npaper == PC_MAX_PAPER)
    return yerr(y, k, "paper: at most %d devices in all experiments", PC_MAX_PAPER);
  if (want(y, v, Y_MAP, "paper times {WORKLOAD: ms, ...}")) return -1;
  pc_paper *p = &c->paper[c->npaper];
  snprintf(p->experiment, sizeof p->experiment, "%s", exp);
  p->device = dev;
  for (int w = 0; w < PC_MAX_ITEMS; w++) p->ms[w] = NAN;
  const ynode *wk, *wv;
  FOR_PAIRS(v, wk, wv) {
    int w = pc_find(c->workloads, c->nworkloads, wk->str);
    if (w < 0) return yerr(y, wk, "paper: workload \"%s\" is not in plot: workloads", wk->str);
    if (!isnan(p->ms[w]))
      return yerr(y, wk, "paper: workload %s is listed twice", c->workloads[w].name);
    if (get_paper_time(y, wv, &p->ms[w], &p->decimals[w], wk->str)) return -1;
  }
  c->npaper++;
  return 0;
}

/* 1 when a grid figure of workload columns draws experiment exp (where the paper's times
 * stand beside ours). */
static int grid_draws(const pc_config *c, const char *exp) {
  for (int f = 0; f < c->nfigures; f++)
    if (c->figures[f].kind == FIG_GRID && !c->figures[f].x[0] &&
        !strcmp(c->figures[f].experiment, exp))
      return 1;
  return 0;
}

/* One experiment's devices: {DEVICE: {WORKLOAD: ms, ...}}. */
static int load_paper_experiment(ycx *y, const ynode *k, const ynode *v, pc_config *c) {
  if (!grid_draws(c, k->str))
    return yerr(y, k,
                "paper: experiment \"%s\" is drawn by no grid figure of workloads (the "
                "paper's times stand beside ours there)",
                k->str);
  if (want(y, v, Y_MAP, "paper devices {DEVICE: {WORKLOAD: ms, ...}}")) return -1;
  const ynode *dk, *dv;
  FOR_PAIRS(v, dk, dv) {
    if (load_paper_device(y, dk, dv, k->str, c)) return -1;
  }
  return 0;
}

/* paper: {EXPERIMENT: {DEVICE: {WORKLOAD: ms, ...}}}: the paper's own times of the ours
 * system, once devices, workloads, systems and figures are loaded. */
static int load_paper(ycx *y, const ynode *n, pc_config *c) {
  if (!n) return 0;
  if (want(y, n, Y_MAP, "paper: {EXPERIMENT: {DEVICE: {WORKLOAD: ms, ...}}}")) return -1;
  int ours = 0;
  for (int s = 0; s < c->nsystems; s++) ours |= c->systems[s].ours;
  if (!ours)
    return yerr(y, n,
                "paper: the paper's times are the ours system's, and no plot system has "
                "ours: true");
  const ynode *k, *v;
  FOR_PAIRS(n, k, v) {
    if (load_paper_experiment(y, k, v, c)) return -1;
  }
  return 0;
}

double pc_paper_ms(const pc_config *c, const char *exp, int dev, int w, int *decimals) {
  int i = paper_index(c, exp, dev);
  if (i < 0 || w < 0 || w >= c->nworkloads) return NAN;
  if (decimals) *decimals = c->paper[i].decimals[w];
  return c->paper[i].ms[w];
}

/* stale: [{log: GLOB, reason: TEXT}, ...]: logs drawn but marked stale, left out of the
 * report's geometric means. */
static int load_stale(ycx *y, const ynode *n, pc_config *c) {
  if (want(y, n, Y_SEQ, "stale: [{log: GLOB, reason: TEXT}, ...]")) return -1;
  const ynode *e;
  FOR_ITEMS(n, e) {
    if (c->nstale == PC_MAX_STALE) return yerr(y, e, "stale: at most %d entries", PC_MAX_STALE);
    if (want(y, e, Y_MAP, "stale entry {log: GLOB, reason: TEXT}")) return -1;
    pc_stale *st = &c->stale[c->nstale];
    const ynode *k, *v;
    FOR_PAIRS(e, k, v) {
      int rc;
      if (!strcmp(k->str, "log"))
        rc = get_text(y, v, st->log, sizeof st->log, "log: a pattern of log file names");
      else if (!strcmp(k->str, "reason"))
        rc = get_text(y, v, st->reason, sizeof st->reason, "reason");
      else
        return yerr(y, k, "unknown key \"%s\"; expected log, reason", k->str);
      if (rc) return -1;
    }
    if (!st->log[0] || !st->reason[0]) return yerr(y, e, "stale: each entry needs log and reason");
    c->nstale++;
  }
  return 0;
}

int pc_stale_index(const pc_config *c, const char *path) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  for (int i = 0; i < c->nstale; i++)
    if (fnmatch(c->stale[i].log, base, 0) == 0) return i;
  return -1;
}

/* One figure's claims: {METRIC: {DEVICE: ratio, ...}, ...}, metrics the figure's tables show. */
static int load_claims_figure(ycx *y, const ynode *k, const ynode *v, pc_config *c) {
  int f = 0;
  while (f < c->nfigures && strcmp(c->figures[f].name, k->str)) f++;
  if (f == c->nfigures) return yerr(y, k, "claims: figure \"%s\" is not in plot: figures", k->str);
  const pc_figure *fig = &c->figures[f];
  unsigned shown = fig->kind == FIG_GRID    ? 1u << MET_MS
                   : fig->kind == FIG_SWEEP ? 1u << MET_TFLOPS | 1u << MET_MIB
                                            : 0;
  for (int i = 0; fig->kind == FIG_COMPARISON && i < fig->nmetrics; i++)
    shown |= 1u << fig->metrics[i];
  if (want(y, v, Y_MAP, "claims of a figure {METRIC: {DEVICE: ratio, ...}}")) return -1;
  const ynode *mk, *mv, *dk, *dv;
  FOR_PAIRS(v, mk, mv) {
    int m = 0;
    while (m < MET_COUNT && strcmp(mk->str, metric_names[m])) m++;
    if (m == MET_COUNT || !(shown & 1u << m))
      return yerr(y, mk, "claims: %s shows no ratio of metric \"%s\"", fig->name, mk->str);
    if (want(y, mv, Y_MAP, "claims {DEVICE: ratio, ...}")) return -1;
    FOR_PAIRS(mv, dk, dv) {
      int dev = pc_find(c->devices, c->ndevices, dk->str);
      if (dev < 0) return yerr(y, dk, "claims: device \"%s\" is not in plot: devices", dk->str);
      if (c->nclaims == PC_MAX_CLAIMS)
        return yerr(y, dk, "claims: at most %d in all", PC_MAX_CLAIMS);
      pc_claim *cl = &c->claims[c->nclaims];
      *cl = (pc_claim){.figure = f, .metric = (pc_metric)m, .device = dev};
      const char *r = scalar(dv);
      if (!r || pt_parse_decimal(r, strlen(r), &cl->ratio) != 0 || !(cl->ratio > 0) ||
          !isfinite(cl->ratio))
        return yerr(y, dv, "claims: expected the claimed ratio on %s, a positive decimal number",
                    dk->str);
      const char *dot = strchr(r, '.');
      cl->decimals = dot ? (int)strspn(dot + 1, "0123456789") : 0;
      if (cl->decimals > 6) cl->decimals = 6;
      c->nclaims++;
    }
  }
  return 0;
}

/* claims: {system: NAME, device: DEVICE, FIGURE: {METRIC: {DEVICE: ratio}}, ...}, once figures
 * are loaded; device: the paper's GPU, whose claims stand for a GPU the artifact has no logs of. */
static int load_claims(ycx *y, const ynode *n, pc_config *c) {
  c->claim_system = c->claim_device = -1;
  if (!n) return 0;
  if (want(y, n, Y_MAP, "claims: {system: NAME, device: DEVICE, FIGURE: {METRIC: {DEVICE: x}}}"))
    return -1;
  const ynode *sys = y_get(n, "system"), *dev = y_get(n, "device"), *k, *v;
  if (!sys || !scalar(sys) || (c->claim_system = pc_find(c->systems, c->nsystems, sys->str)) < 0)
    return yerr(y, sys ? sys : n, "claims: system: expected the plot system the claims are of");
  if (dev && (!scalar(dev) || (c->claim_device = pc_find(c->devices, c->ndevices, dev->str)) < 0))
    return yerr(y, dev, "claims: device: expected the paper's GPU, one of plot: devices");
  FOR_PAIRS(n, k, v) {
    if (strcmp(k->str, "system") && strcmp(k->str, "device") && load_claims_figure(y, k, v, c))
      return -1;
  }
  return 0;
}

/* A default cell key (seqlen: 4096): a key name that is no axis, and a name as its value. */
static int get_default_key(ycx *y, const ynode *k, const ynode *v, pc_config *c) {
  const char *key = k->str;
  if (!pt_valid_key(key) || !strcmp(key, "device") || !strcmp(key, "system"))
    return yerr(y, k,
                "defaults: expected experiment, workload or a cell key such as seqlen "
                "([a-z_][a-z0-9_]*, not device or system), got \"%s\"",
                key);
  if (c->ndefault_keys == PT_MAXKEYS) return yerr(y, k, "defaults: at most %d keys", PT_MAXKEYS);
  pt_kv *d = &c->default_keys[c->ndefault_keys];
  if (get_name(y, v, d->val, key)) return -1;
  snprintf(d->key, sizeof d->key, "%s", key);
  c->ndefault_keys++;
  return 0;
}

static int load_defaults(ycx *y, const ynode *n, pc_config *c) {
  if (want(y, n, Y_MAP, "defaults")) return -1;
  const ynode *k, *v;
  FOR_PAIRS(n, k, v) {
    const char *key = k->str;
    int rc;
    if (!strcmp(key, "experiment"))
      rc = get_name(y, v, c->default_experiment, "experiment");
    else if (!strcmp(key, "workload"))
      rc = get_name(y, v, c->default_workload, "workload");
    else
      rc = get_default_key(y, k, v, c);
    if (rc) return -1;
  }
  return 0;
}

static int load_plot(ycx *y, const ynode *n, pc_config *c) {
  if (want(y, n, Y_MAP, "plot")) return -1;
  const ynode *k, *v;
  FOR_PAIRS(n, k, v) {
    const char *key = k->str;
    int rc;
    if (!strcmp(key, "figure"))
      rc = get_name(y, v, c->figure, "figure");
    else if (!strcmp(key, "log_name"))
      return yerr(y, k,
                  "plot: log_name is not read: the log file name is the drawn experiment's "
                  "own 'log:' (experiments.NAME.log); remove this key");
    else if (!strcmp(key, "defaults"))
      rc = load_defaults(y, v, c);
    else if (!strcmp(key, "devices"))
      rc = load_list(y, v, c->devices, &c->ndevices, 0, "devices");
    else if (!strcmp(key, "workloads"))
      rc = load_list(y, v, c->workloads, &c->nworkloads, 0, "workloads");
    else if (!strcmp(key, "systems"))
      rc = load_list(y, v, c->systems, &c->nsystems, 1, "systems");
    else if (!strcmp(key, "figures")) {
      if (want(y, v, Y_SEQ, "figures")) return -1;
      const ynode *f;
      rc = 0;
      FOR_ITEMS(v, f) {
        if (c->nfigures == PC_MAX_FIGURES) return yerr(y, f, "at most %d figures", PC_MAX_FIGURES);
        if (load_figure(y, f, &c->figures[c->nfigures])) return -1;
        for (int g = 0; g < c->nfigures; g++)
          if (!strcmp(c->figures[g].name, c->figures[c->nfigures].name))
            return yerr(y, f, "figure %s is listed twice (its files would overwrite)",
                        c->figures[g].name);
        c->nfigures++;
      }
    } else if (!strcmp(key, "paper") || !strcmp(key, "claims"))
      rc = 0; /* names of devices, workloads, figures: read once all are loaded */
    else if (!strcmp(key, "stale"))
      rc = load_stale(y, v, c);
    else
      return yerr(y, k,
                  "unknown key \"%s\" in plot; expected figure, defaults, devices, "
                  "workloads, systems, figures, paper, claims, stale",
                  key);
    if (rc) return -1;
  }
  if (!c->ndevices || !c->nsystems || !c->nfigures)
    return yerr(y, n, "plot needs devices, systems and figures");
  /* names of systems and figures, now that all are loaded: bars first, then the panels */
  const ynode *figs = y_get(n, "figures");
  for (int f = 0; f < c->nfigures; f++)
    if (resolve_systems(y, figs->items[f], c, &c->figures[f])) return -1;
  for (int f = 0; f < c->nfigures; f++)
    if (resolve_panels(y, figs->items[f], c, &c->figures[f])) return -1;
  for (int f = 0; f < c->nfigures; f++) { /* a grid's or comparison's one workload column */
    const pc_figure *fig = &c->figures[f];
    if (!fig->workload[0] || fig->kind == FIG_SWEEP) continue;
    const ynode *w = y_get(figs->items[f], "workload");
    if (fig->kind == FIG_SPEEDUP || fig->x[0])
      return yerr(y, w,
                  "workload: only a grid or comparison figure of workload columns (no x:) "
                  "draws one workload's column");
    if (pc_find(c->workloads, c->nworkloads, fig->workload) < 0)
      return yerr(y, w, "workload \"%s\" is not in plot: workloads", fig->workload);
  }
  if (load_claims(y, y_get(n, "claims"), c)) return -1;
  return load_paper(y, y_get(n, "paper"), c);
}

/* The `log:` template of experiment name (the runner checks the rest of the experiment). */
static const ynode *experiment_log(ycx *y, const ynode *exps, const char *name, const ynode *at) {
  const ynode *e = y_get(exps, name);
  if (!e) {
    yerr(y, at, "experiment '%s' is not under experiments: (the plot draws the logs it names)",
         name);
    return NULL;
  }
  const ynode *log = y_get(e, "log");
  if (!log || log->type != Y_SCALAR) {
    yerr(y, log ? log : e, "experiments.%s.log: expected the log file name template", name);
    return NULL;
  }
  return log;
}

/* A log template the plot can read: {device} in it, and short enough. */
static int check_log_template(ycx *y, const ynode *log, char *dst, size_t cap) {
  if (strlen(log->str) >= cap)
    return yerr(y, log, "log: expected a template shorter than %zu characters", cap);
  if (!strstr(log->str, "{device}"))
    return yerr(y, log, "log: the plot needs {device} in the log file name");
  strcpy(dst, log->str);
  return 0;
}

/* One log folder is read with the `log:` templates of the experiments the figures draw (every
 * experiment when a figure names none; a speedup figure draws its panels' experiments). They
 * agree, or each holds {experiment}, so a file name says whose template reads it. */
static int load_log_name(ycx *y, const ynode *root, const ynode *plot, pc_config *c) {
  const ynode *exps = y_get(root, "experiments"), *first = NULL;
  const char *first_exp = NULL;
  if (!exps || exps->type != Y_MAP || exps->n == 0)
    return yerr(y, exps ? exps : root,
                "expected an 'experiments:' mapping: the plot takes the log "
                "file name from experiments.NAME.log");
  int differ = 0;
  for (int i = 0; i < exps->n; i++) {
    const char *name = exps->items[2 * i]->str;
    int drawn = 0;
    for (int f = 0; f < c->nfigures; f++)
      drawn |= c->figures[f].kind != FIG_SPEEDUP &&
               (!c->figures[f].experiment[0] || !strcmp(c->figures[f].experiment, name));
    if (!drawn) continue;
    const ynode *log = experiment_log(y, exps, name, exps->items[2 * i]);
    if (!log) return -1;
    if (c->nlog_names == RD_MAX_TEMPLATES)
      return yerr(y, log, "the plot draws more than %d experiments", RD_MAX_TEMPLATES);
    if (check_log_template(y, log, c->log_names[c->nlog_names], sizeof c->log_names[0]) ||
        get_name(y, exps->items[2 * i], c->log_exps[c->nlog_names], "experiment name"))
      return -1;
    c->nlog_names++;
    if (!first) {
      first = log;
      first_exp = name;
      continue;
    }
    if (strcmp(log->str, first->str) == 0) continue;
    differ = 1;
    if (!strstr(log->str, "{experiment}") || !strstr(first->str, "{experiment}"))
      return yerr(y, log,
                  "experiments '%s' and '%s' (line %d) have different log templates "
                  "(\"%s\" and \"%s\"), but one log folder is read with one name pattern: give "
                  "the experiments the plot draws the same log:, or {experiment} in each",
                  name, first_exp, first->line, log->str, first->str);
  }
  if (!differ) c->nlog_names = 0;             /* one shared template: log_name alone */
  const ynode *figs = y_get(plot, "figures"); /* load_plot checked: a list of c->nfigures */
  for (int f = 0; f < c->nfigures; f++)
    if (c->figures[f].experiment[0] &&
        !experiment_log(y, exps, c->figures[f].experiment, y_get(figs->items[f], "experiment")))
      return -1;
  if (!first) return yerr(y, plot, "the plot draws no experiment of this file");
  return check_log_template(y, first, c->log_name, sizeof c->log_name);
}

/* Default figure name: the folder holding the YAML (fig12/experiment.yaml -> fig12). */
static void default_figure_name(const char *path, char *dst) {
  char tmp[PT_PATH];
  snprintf(tmp, sizeof tmp, "%s", path);
  char *slash = strrchr(tmp, '/');
  if (!slash) {
    strcpy(tmp, ".");
    slash = NULL;
  } else
    *slash = '\0';
  const char *base = strrchr(tmp, '/');
  base = base ? base + 1 : tmp;
  /* a valid name fits PT_NAME; anything longer is no valid name */
  if (!strcmp(base, ".") || strlen(base) >= PT_NAME || !pt_valid_name(base)) base = "figure";
  snprintf(dst, PT_NAME, "%.*s", PT_NAME - 1, base);
}

int pc_load(const char *path, pc_config *c) {
  char *msg = NULL;
  int rc = pc_load_msg(path, c, &msg);
  if (msg) fprintf(stderr, "%s\n", msg);
  free(msg);
  return rc;
}

int pc_load_msg(const char *path, pc_config *c, char **msg) {
  *msg = NULL;
  memset(c, 0, sizeof *c);
  snprintf(c->path, sizeof c->path, "%s", path);
  ycx y = {0};
  ynode *root = y_load_file(path, &y.err);
  int rc = -1;
  if (!root) goto out;
  const ynode *plot = y_get(root, "plot");
  if (!plot) {
    yerr(&y, root, "no top-level plot: section");
    goto out;
  }
  if (load_plot(&y, plot, c) || load_log_name(&y, root, plot, c)) goto out;
  if (load_colors(&y, path, c)) goto out;
  /* the figure's name: plot.figure, else the file's own figure:, else the folder's name */
  const ynode *fig = y_get(root, "figure");
  if (!c->figure[0] && fig && get_name(&y, fig, c->figure, "figure")) goto out;
  if (!c->figure[0]) default_figure_name(path, c->figure);
  rc = 0;
out:
  *msg = y.err.msg;
  y_free(root);
  return rc;
}

const char *pc_log_name(const pc_config *c, const char *exp) {
  for (int i = 0; i < c->nlog_names; i++)
    if (!strcmp(c->log_exps[i], exp)) return c->log_names[i];
  return c->log_name;
}

int pc_render_x(const char *tmpl, const pt_row *r, char *out, size_t cap) {
  size_t n = 0;
  for (const char *t = tmpl; *t;) {
    const char *close = *t == '{' ? strchr(t, '}') : NULL;
    if (!close) { /* config.c checked the placeholders: a '{' here always closes */
      if (n + 1 < cap) out[n++] = *t;
      t++;
      continue;
    }
    char key[PT_KEY];
    snprintf(key, sizeof key, "%.*s", (int)(close - t - 1), t + 1);
    const char *v = pt_key_value(r, key);
    if (!v) return -1;
    int w = snprintf(out + n, cap - n, "%s", v);
    n = w < 0 || (size_t)w >= cap - n ? cap - 1 : n + (size_t)w;
    t = close + 1;
  }
  out[n < cap ? n : cap - 1] = '\0';
  return 0;
}

int pc_find(const pc_item *items, int n, const char *name) {
  for (int i = 0; i < n; i++) {
    if (!strcmp(items[i].name, name)) return i;
    for (int a = 0; a < items[i].naliases; a++)
      if (!strcmp(items[i].aliases[a], name)) return i;
  }
  return -1;
}

static const char *canon(void *ctx, rd_axis axis, const char *name) {
  const pc_config *c = ctx;
  const pc_item *items = NULL;
  int n = 0;
  switch (axis) {
  case AXIS_DEVICE:
    items = c->devices;
    n = c->ndevices;
    break;
  case AXIS_WORKLOAD:
    items = c->workloads;
    n = c->nworkloads;
    break;
  case AXIS_SYSTEM:
    items = c->systems;
    n = c->nsystems;
    break;
  case AXIS_EXPERIMENT: return name;
  }
  int i = pc_find(items, n, name);
  return i >= 0 ? items[i].name : name;
}

rd_opts pc_reader_opts(const pc_config *c) {
  rd_opts o = {
      .figure = c->figure,
      .log_name = c->log_name,
      .nlog_names = c->nlog_names,
      .default_experiment = c->default_experiment[0] ? c->default_experiment : NULL,
      .default_workload = c->default_workload[0] ? c->default_workload : NULL,
      .default_keys = c->default_keys,
      .ndefault_keys = c->ndefault_keys,
      .canon = canon,
      .canon_ctx = (void *)c,
  };
  for (int i = 0; i < c->nlog_names; i++) {
    o.log_names[i] = c->log_names[i];
    o.log_experiments[i] = c->log_exps[i];
  }
  return o;
}

int pc_read_logs(const pc_config *c, const char *dir, int latest, pt_table *t, rd_issues *is) {
  struct stat st;
  if (stat(dir, &st) != 0) return 0;
  rd_opts o = pc_reader_opts(c);
  o.latest = latest;
  if (rd_read_path(&o, dir, t, is) < 0) {
    fprintf(stderr, "%s: cannot read: %s\n", dir, strerror(errno));
    return -1;
  }
  return 1;
}
