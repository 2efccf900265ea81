/* config_extras: what the plot: section adds to its figures for the tables and the report:
 * the paper's own times of ours (paper:), the logs a study calls stale (stale:) and the paper's
 * claims the verdict holds this run to (claims:). */
#include "config_parts.h"

#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* A time of plot: paper: (what: its workload): a positive decimal number of ms, and its
 * digits after the point (3 when it has an exponent). */
static int get_paper_time(ycx *y, const ynode *n, double *dst, int *decimals, const char *what) {
  const char *s = pcy_scalar(n);
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
  if (pcy_want(y, v, Y_MAP, "paper times {WORKLOAD: ms, ...}")) return -1;
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
  if (pcy_want(y, v, Y_MAP, "paper devices {DEVICE: {WORKLOAD: ms, ...}}")) return -1;
  const ynode *dk, *dv;
  FOR_PAIRS(v, dk, dv) {
    if (load_paper_device(y, dk, dv, k->str, c)) return -1;
  }
  return 0;
}

/* paper: {EXPERIMENT: {DEVICE: {WORKLOAD: ms, ...}}}: the paper's own times of the ours
 * system, once devices, workloads, systems and figures are loaded. */
int pcy_paper(ycx *y, const ynode *n, pc_config *c) {
  if (!n) return 0;
  if (pcy_want(y, n, Y_MAP, "paper: {EXPERIMENT: {DEVICE: {WORKLOAD: ms, ...}}}")) return -1;
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
int pcy_stale(ycx *y, const ynode *n, pc_config *c) {
  if (pcy_want(y, n, Y_SEQ, "stale: [{log: GLOB, reason: TEXT}, ...]")) return -1;
  const ynode *e;
  FOR_ITEMS(n, e) {
    if (c->nstale == PC_MAX_STALE) return yerr(y, e, "stale: at most %d entries", PC_MAX_STALE);
    if (pcy_want(y, e, Y_MAP, "stale entry {log: GLOB, reason: TEXT}")) return -1;
    pc_stale *st = &c->stale[c->nstale];
    const ynode *k, *v;
    FOR_PAIRS(e, k, v) {
      int rc;
      if (!strcmp(k->str, "log"))
        rc = pcy_text(y, v, st->log, sizeof st->log, "log: a pattern of log file names");
      else if (!strcmp(k->str, "reason"))
        rc = pcy_text(y, v, st->reason, sizeof st->reason, "reason");
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
  if (pcy_want(y, v, Y_MAP, "claims of a figure {METRIC: {DEVICE: ratio, ...}}")) return -1;
  const ynode *mk, *mv, *dk, *dv;
  FOR_PAIRS(v, mk, mv) {
    int m = 0;
    while (m < MET_COUNT && strcmp(mk->str, pcy_metric_names[m])) m++;
    if (m == MET_COUNT || !(shown & 1u << m))
      return yerr(y, mk, "claims: %s shows no ratio of metric \"%s\"", fig->name, mk->str);
    if (pcy_want(y, mv, Y_MAP, "claims {DEVICE: ratio, ...}")) return -1;
    FOR_PAIRS(mv, dk, dv) {
      int dev = pc_find(c->devices, c->ndevices, dk->str);
      if (dev < 0) return yerr(y, dk, "claims: device \"%s\" is not in plot: devices", dk->str);
      if (c->nclaims == PC_MAX_CLAIMS)
        return yerr(y, dk, "claims: at most %d in all", PC_MAX_CLAIMS);
      pc_claim *cl = &c->claims[c->nclaims];
      *cl = (pc_claim){.figure = f, .metric = (pc_metric)m, .device = dev};
      const char *r = pcy_scalar(dv);
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
int pcy_claims(ycx *y, const ynode *n, pc_config *c) {
  c->claim_system = c->claim_device = -1;
  if (!n) return 0;
  if (pcy_want(y, n, Y_MAP,
               "claims: {system: NAME, device: DEVICE, FIGURE: {METRIC: {DEVICE: x}}}"))
    return -1;
  const ynode *sys = y_get(n, "system"), *dev = y_get(n, "device"), *k, *v;
  if (!sys || !pcy_scalar(sys) ||
      (c->claim_system = pc_find(c->systems, c->nsystems, sys->str)) < 0)
    return yerr(y, sys ? sys : n, "claims: system: expected the plot system the claims are of");
  if (dev &&
      (!pcy_scalar(dev) || (c->claim_device = pc_find(c->devices, c->ndevices, dev->str)) < 0))
    return yerr(y, dev, "claims: device: expected the paper's GPU, one of plot: devices");
  FOR_PAIRS(n, k, v) {
    if (strcmp(k->str, "system") && strcmp(k->str, "device") && load_claims_figure(y, k, v, c))
      return -1;
  }
  return 0;
}
