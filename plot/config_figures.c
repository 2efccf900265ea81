/* config_figures: one entry of plot: figures: (its kind, title, x: template, metrics,
 * sweep, range), then, once every system and figure is loaded, its bars' systems and a
 * speedup figure's panels resolved by name. */
#include "config_parts.h"

#include <stdio.h>
#include <string.h>

/* x: a label template whose placeholders are cell keys ({m}, {dtype}, {seqlen}, {workload});
 * {device} and {system} are no columns (one file per device, one bar per system). */
static int get_x(ycx *y, const ynode *n, char *dst) {
  if (pcy_text(y, n, dst, PC_XLABEL, "x (a label template such as \"{m}x{n}x{k}\")")) return -1;
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

/* A list of metric names (ms, tflops, mib, speedup) as a bit set; order kept in out when given. */
static int get_metrics(ycx *y, const ynode *n, const char *what, pc_metric *out, int *nout,
                       unsigned *bits) {
  if (pcy_want(y, n, Y_SEQ, what)) return -1;
  const ynode *v;
  *bits = 0;
  FOR_ITEMS(n, v) {
    const char *s = pcy_scalar(v);
    int m = 0;
    while (m < MET_COUNT && !(s && !strcmp(s, pcy_metric_names[m]))) m++;
    if (m == MET_COUNT) return yerr(y, v, "expected %s: ms, tflops, mib or speedup", what);
    if (*bits & 1u << m) return yerr(y, v, "%s: %s is listed twice", what, s);
    *bits |= 1u << m;
    if (out) out[(*nout)++] = (pc_metric)m;
  }
  return 0;
}

/* seqlens: a sweep's columns, lengths (whole numbers) of the rows' length key. */
static int get_sweep(ycx *y, const ynode *n, pc_figure *f) {
  if (pcy_want(y, n, Y_SEQ, "seqlens")) return -1;
  snprintf(f->sweep_key, sizeof f->sweep_key, "%s", PT_LENGTH_KEY);
  const ynode *s;
  FOR_ITEMS(n, s) {
    int len = 0;
    if (f->nsweep == PC_MAX_SWEEP) return yerr(y, s, "at most %d seqlens", PC_MAX_SWEEP);
    if (pcy_int(y, s, &len, "seqlen")) return -1;
    snprintf(f->sweep[f->nsweep++], PT_NAME, "%d", len);
  }
  return 0;
}

int pcy_figure(ycx *y, const ynode *n, pc_figure *f) {
  if (pcy_want(y, n, Y_MAP, "a figure {name: ..., kind: grid|sweep|comparison|speedup, ...}"))
    return -1;
  memset(f, 0, sizeof *f);
  const ynode *k, *v;
  int have_kind = 0;
  FOR_PAIRS(n, k, v) {
    const char *key = k->str;
    int rc = 0;
    if (!strcmp(key, "name"))
      rc = pcy_name(y, v, f->name, "figure name");
    else if (!strcmp(key, "kind")) {
      const char *s = pcy_scalar(v);
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
      rc = pcy_name(y, v, f->experiment, "experiment");
    else if (!strcmp(key, "workload"))
      rc = pcy_name(y, v, f->workload, "workload");
    else if (!strcmp(key, "title"))
      rc = pcy_text(y, v, f->title, sizeof f->title, "title");
    else if (!strcmp(key, "ylabel"))
      rc = pcy_text(y, v, f->ylabel, sizeof f->ylabel, "ylabel");
    else if (!strcmp(key, "ymax"))
      rc = pcy_number(y, v, &f->ymax, "ymax");
    else if (!strcmp(key, "ytics"))
      rc = pcy_number(y, v, &f->ytics, "ytics");
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
int pcy_resolve_systems(ycx *y, const ynode *n, const pc_config *c, pc_figure *f) {
  const ynode *list = y_get(n, "systems"), *v;
  f->nsys = 0;
  if (!list) {
    for (int s = 0; s < c->nsystems; s++) f->sys[f->nsys++] = s;
    return 0;
  }
  if (f->kind == FIG_SPEEDUP)
    return yerr(y, list, "systems: a speedup figure takes each panel's figure's systems");
  if (pcy_want(y, list, Y_SEQ, "systems (names of the plot's systems)")) return -1;
  FOR_ITEMS(list, v) {
    const char *name = pcy_scalar(v);
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
int pcy_resolve_panels(ycx *y, const ynode *n, const pc_config *c, pc_figure *f) {
  const ynode *list = y_get(n, "panels"), *v;
  if (!list) return 0;
  if (f->kind != FIG_SPEEDUP) return yerr(y, list, "panels: only speedup figures have panels");
  if (pcy_want(y, list, Y_SEQ, "panels: [{figure: NAME, baseline: SYSTEM}, ...]")) return -1;
  FOR_ITEMS(list, v) {
    if (pcy_want(y, v, Y_MAP, "a panel {figure: NAME, baseline: SYSTEM}")) return -1;
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
      if (pcy_scalar(fig) && !strcmp(c->figures[i].name, pcy_scalar(fig))) fi = i;
    if (fi < 0 || !c->figures[fi].experiment[0] ||
        (c->figures[fi].kind != FIG_COMPARISON && c->figures[fi].kind != FIG_GRID))
      return yerr(
          y, fig,
          "panel figure: expected the name of a comparison or grid figure of one experiment");
    const pc_figure *pf = &c->figures[fi];
    int b = pcy_scalar(base) ? pc_find(c->systems, c->nsystems, pcy_scalar(base)) : -1, in = 0;
    for (int i = 0; b >= 0 && i < pf->nsys; i++) in |= pf->sys[i] == b;
    if (!in) return yerr(y, base, "baseline: expected one of the systems of figure %s", pf->name);
    f->panel_fig[f->npanels] = fi;
    f->panel_base[f->npanels++] = b;
  }
  if (!f->npanels) return yerr(y, list, "panels: expected at least one panel");
  return 0;
}
