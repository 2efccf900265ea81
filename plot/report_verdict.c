/* report_verdict: the page's first table: per figure with plot: claims: and GPU, the paper's
 * claim, this run's ratio of FlashTensor (artifact) and of ours (CUDA C) to the best baseline,
 * and whether the claim is reproduced (the rule is printed under it). */
#include "report_parts.h"

#include <math.h>
#include <string.h>

/* A claim is reproduced when this run's ratio is above 1 and at least this fraction of it. */
#define RP_CLAIM_HOLDS 0.8

/* System s's ratio to the best baseline in column x of device row d for metric k (best / it
 * for time and memory, it / best for throughput), or NAN. Baselines: every system with a log
 * there but those marked ours (FlashTensor (artifact) and ours (CUDA C) are neither's
 * baseline), a system without a bar in the figure included; stale logs count for nobody. */
static double baseline_ratio(const fg_model *m, int d, int x, int s, pc_metric k) {
  return fg_ratio_to(k, fg_fresh_value(m, d, x, s, k), fg_best_other(m, d, x, k, 1));
}

/* The geometric mean of baseline_ratio over device row d's columns; *n the columns counted. */
static double baseline_geomean(const fg_model *m, int d, int s, pc_metric k, int *n) {
  double logsum = 0;
  *n = 0;
  for (int x = 0; d >= 0 && s >= 0 && x < m->nx; x++) {
    double r = baseline_ratio(m, d, x, s, k);
    if (!isnan(r)) logsum += log(r), (*n)++;
  }
  return *n ? exp(logsum / *n) : NAN;
}

/* The claim of figure f, metric k, device dev (config indices), or NAN. */
static double claim_of(const pc_config *c, int f, pc_metric k, int dev) {
  for (int i = 0; i < c->nclaims; i++)
    if (c->claims[i].figure == f && c->claims[i].metric == k && c->claims[i].device == dev)
      return c->claims[i].ratio;
  return NAN;
}

/* The bar of the claims' system in m, and the bar of ours: the last other system marked ours. */
static int claim_bar(const fg_model *m) {
  return m->cfg->claim_system < 0 ? -1 : fg_bar_of(m, m->cfg->systems[m->cfg->claim_system].name);
}
static int ours_bar(const fg_model *m) {
  int c = claim_bar(m);
  for (int b = m->nsys - 1; b >= 0; b--)
    if (fg_sys_item(m, b)->ours && b != c) return b;
  return -1;
}

static const char *verdict_ratio_name(pc_metric k) {
  return k == MET_MS       ? "speedup: best baseline ms / its ms"
         : k == MET_TFLOPS ? "throughput: its TFLOP/s / best baseline's"
                           : "memory saving: lowest baseline MiB / its MiB";
}

/* This run's ratio as a cell: "2.80x (7 of 7 workloads)", or "no log". */
static void put_verdict_value(FILE *out, const fg_model *m, double v, int n) {
  if (isnan(v))
    fputs("<td class=\"ns\">no log</td>", out);
  else
    fprintf(out, "<td>%.2fx (%d of %d %s)</td>", v, n, m->nx, fg_cols_name(m));
}

/* The rule's outcome for value v against claim c. */
static int holds(double v, double c) { return v > 1 && v >= RP_CLAIM_HOLDS * c; }

/* One row: figure, GPU, ratio, the paper's claim, this run's values and the verdict. */
static void put_verdict_row(FILE *out, const fg_model *m, int f, pc_metric k, int dev) {
  const pc_config *c = m->cfg;
  int d = 0, cb = claim_bar(m), ob = ours_bar(m), nft, nours;
  while (d < m->ndev && m->dev[d] != dev) d++;
  if (d == m->ndev) d = -1;
  const char *paper_dev = "";
  double claim = claim_of(c, f, k, dev);
  if (isnan(claim) && c->claim_device >= 0) {
    claim = claim_of(c, f, k, c->claim_device);
    paper_dev = c->devices[c->claim_device].label;
  }
  double ft = baseline_geomean(m, d, cb, k, &nft), ours = baseline_geomean(m, d, ob, k, &nours);
  fputs("<tr>", out);
  rp_cell(out, "td", c->figures[f].name);
  rp_cell(out, "td", c->devices[dev].label);
  rp_cell(out, "td", verdict_ratio_name(k));
  if (isnan(claim)) {
    fputs("<td class=\"ns\">none</td>", out);
  } else {
    fprintf(out, "<td>%.2fx", claim);
    if (paper_dev[0]) {
      fputs(" (", out);
      rp_esc(out, paper_dev);
      fputc(')', out);
    }
    fputs("</td>", out);
  }
  put_verdict_value(out, m, ft, nft);
  put_verdict_value(out, m, ours, nours);
  char vs[96] = "";
  if (!isnan(claim)) {
    int len = snprintf(vs, sizeof vs, " vs paper %.2fx", claim);
    if (paper_dev[0]) snprintf(vs + len, sizeof vs - (size_t)len, " (%s)", paper_dev);
  }
  const char *ft_label = cb >= 0 ? fg_sys_item(m, cb)->label : "FlashTensor";
  const char *ours_label = ob >= 0 ? fg_sys_item(m, ob)->label : "ours";
  if (isnan(claim)) {
    fputs("<td class=\"ns\">the paper claims nothing here</td>", out);
  } else if (!isnan(ft)) {
    int ok = holds(ft, claim);
    fprintf(out, "<td class=\"%s\">%s: ", ok ? "ok" : "warn", ok ? "reproduced" : "not reproduced");
    rp_esc(out, ft_label);
    fprintf(out, " %.2fx", ft);
    rp_esc(out, vs);
    fputs("</td>", out);
  } else if (!isnan(ours)) {
    int ok = holds(ours, claim);
    fputs("<td class=\"ns\">", out);
    rp_esc(out, ft_label);
    fputs(" not run on this GPU; ", out);
    rp_esc(out, ours_label);
    fprintf(out, " %.2fx", ours);
    rp_esc(out, vs);
    fprintf(out, ": <span class=\"%s\">%s</span></td>", ok ? "ok" : "warn",
            ok ? "the claim holds for it" : "the claim does not hold for it");
  } else {
    fputs("<td class=\"ns\">not run on this GPU</td>", out);
  }
  fputs("</tr>\n", out);
}

/* A figure's rows: per metric its claims are of, per device with a claim or with logs. */
static void verdict_model(const rp_section *s, int f, const fg_model *m, int n, const char *name,
                          void *arg) {
  (void)s, (void)name;
  if (n != 1) return;
  FILE *out = arg;
  const pc_config *c = m->cfg;
  pc_metric k[MET_COUNT];
  int nk = fg_table_metrics(m->fig, k);
  for (int i = 0; i < nk; i++)
    for (int dev = 0; dev < c->ndevices; dev++) {
      int any = 0, rows = 0;
      for (int dev2 = 0; dev2 < c->ndevices; dev2++) any |= !isnan(claim_of(c, f, k[i], dev2));
      for (int d = 0; d < m->ndev; d++) rows |= m->dev[d] == dev;
      if (any && (rows || !isnan(claim_of(c, f, k[i], dev)))) put_verdict_row(out, m, f, k[i], dev);
    }
}

/* The first table of the page: per figure with claims and GPU, the paper's claim, this run's
 * ratio of FlashTensor and of ours, and the verdict, with its rule. */
int rp_put_verdict(FILE *out, const rp_section *secs, int n) {
  const pc_config *first = NULL;
  for (int i = 0; i < n && !first; i++)
    if (secs[i].cfg.nclaims && secs[i].cfg.claim_system >= 0) first = &secs[i].cfg;
  fputs("<h2 id=\"verdict\">Verdict: the paper's claims against this run</h2>\n", out);
  if (!first) {
    fputs("<p class=\"note\">No section's config has <code>plot: claims:</code>: there is no "
          "claim to hold this run to.</p>\n",
          out);
    return 0;
  }
  const char *ft = first->systems[first->claim_system].label, *ours = "ours";
  for (int sys = first->nsystems - 1; sys >= 0; sys--)
    if (first->systems[sys].ours && sys != first->claim_system) {
      ours = first->systems[sys].label;
      break;
    }
  fputs("<div class=\"scroll\"><table class=\"verdict\"><thead><tr><th>figure</th><th>GPU</th>"
        "<th>ratio (&gt; 1: better than the best baseline)</th><th>paper: ",
        out);
  rp_esc(out, ft);
  fputs(" in the artifact's logs</th><th>", out);
  rp_esc(out, ft);
  fputs(", this run</th><th>", out);
  rp_esc(out, ours);
  fputs(", this run</th><th>verdict</th></tr></thead><tbody>\n", out);
  for (int i = 0; i < n; i++) {
    const rp_section *s = &secs[i];
    if (!s->cfg.nclaims || s->cfg.claim_system < 0) continue;
    for (int f = 0; f < s->cfg.nfigures; f++) {
      int any = 0;
      for (int c = 0; c < s->cfg.nclaims; c++) any |= s->cfg.claims[c].figure == f;
      if (any && rp_each_model(s, f, verdict_model, out)) return -1;
    }
  }
  fputs("</tbody></table></div>\n<p class=\"note\">The rule. Ratio: per column (workload, "
        "length), the best baseline's time over the system's (throughput: the system's over the "
        "best baseline's; memory: the lowest baseline's over the system's), so that &gt; 1 means "
        "better; its geometric mean over the columns where both have a log. Baselines: the "
        "figure's systems that are neither ",
        out);
  rp_esc(out, ft);
  fputs(" nor ", out);
  rp_esc(out, ours);
  fprintf(out,
          " (those not marked <code>ours: true</code>); stale logs count for nobody. Paper: the "
          "same ratio of %s in the original artifact's own logs "
          "(<code>plot: claims:</code> of the figure's experiment.yaml, with how it was drawn); "
          "a GPU the artifact has no logs of is held to the paper's GPU's claim (named in "
          "brackets). Verdict: <b>reproduced</b> when %s's ratio in this run is above 1 and at "
          "least %g &times; the paper's, <b>not reproduced</b> otherwise; where %s has no log "
          "on the GPU, the rule is applied to %s and said so; <b>not run on this GPU</b> when "
          "neither has a log there.</p>\n",
          ft, ft, RP_CLAIM_HOLDS, ft, ours);
  return 0;
}
