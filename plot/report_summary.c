/* report_summary: the summary (per figure: its cells drawn, stale, not run, failed, OOM and
 * NS, and the terminal tables' geometric means, stale logs left out) and the logs'
 * provenance (grouped by GPU, driver, CUDA and commit, with their dates). */
#include "report_parts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The columns of device row d that hold a stale log. */
static int stale_columns(const fg_model *m, int d) {
  int n = 0;
  for (int x = 0; x < m->nx; x++) n += fg_column_stale(m, d, x);
  return n;
}

typedef struct {
  int drawn, missing, failed, oom, ns, stale;
} rp_counts;

/* drawn: a log with status ok (stale: of which plot: stale: names); not run (missing): no log
 * of a system expected here; failed: ERR, TLE; OOM: the system ran out of GPU memory (a size it
 * cannot hold, as the paper's figures mark it, not a fault of the run); NS: not supported, or
 * no log of a system nobody can run here. */
static void count_cells(const fg_model *m, rp_counts *c) {
  for (int d = 0; d < m->ndev; d++)
    for (int x = 0; x < m->nx; x++)
      for (int s = 0; s < m->nsys; s++) {
        pt_status st = fg_at(m, d, x, s)->status;
        if (st == ST_OK)
          c->drawn++, c->stale += fg_at(m, d, x, s)->stale >= 0;
        else if (st == ST_UNSUPPORTED)
          c->ns++;
        else if (st == ST_OOM)
          c->oom++;
        else if (st != ST_MISSING)
          c->failed++;
        else if (m->fig->x[0] && !m->xrow[x]) /* no logs: no cells to name */
          continue;
        else if (fg_sys_item(m, s)->expected)
          c->missing++;
        else
          c->ns++;
      }
}

static const char *ratio_name(pc_metric k) {
  return k == MET_MS ? "speedup" : k == MET_TFLOPS ? "throughput ours/best" : "memory saving";
}

/* One geometric mean: "H100 speedup: 5.38x (7 of 7 workloads)"; both: what a column needs
 * to count ("ours and another system"); nstale: columns whose stale logs were left out. */
static void put_geomean(FILE *out, const fg_model *m, int d, const char *what, double g, int n,
                        const char *both, int nstale) {
  rp_esc(out, m->cfg->devices[m->dev[d]].label);
  fprintf(out, " %s: ", what);
  if (n)
    fprintf(out, "<b>%.2f&times;</b> (%d of %d %s", g, n, m->nx, fg_cols_name(m));
  else
    fprintf(out, "- (none of the %s has both %s", fg_cols_name(m), both);
  if (nstale)
    fprintf(out, "; <span class=\"stale\">%d %s with stale logs left out</span>", nstale,
            fg_cols_name(m));
  fputc(')', out);
}

/* Model m's geometric means per device and ratio, and paper / ours where plot: paper: has the
 * paper's times: list items, or (inline) one line each. Stale logs are left out. */
void rp_put_geomeans(FILE *out, const fg_model *m, int inline_) {
  pc_metric k[MET_COUNT];
  int nk = m->ours < 0 ? 0 : fg_table_metrics(m->fig, k), n;
  for (int d = 0; d < m->ndev; d++) {
    int nstale = stale_columns(m, d);
    for (int i = 0; i < nk; i++) {
      double g = fg_geomean(m, d, fg_ours_ratio, k[i], &n);
      fputs(inline_ ? "<div>" : "<li>", out);
      put_geomean(out, m, d, ratio_name(k[i]), g, n, "ours and another system", nstale);
      if (!inline_) {
        fputs(" of ", out);
        rp_esc(out, fg_sys_item(m, m->ours)->label);
      }
      fputs(inline_ ? "</div>" : "</li>", out);
    }
    if (!fg_has_paper(m, d)) continue;
    double g = fg_geomean(m, d, fg_paper_ratio_k, MET_MS, &n);
    fputs(inline_ ? "<div>" : "<li>", out);
    put_geomean(out, m, d, "paper / ours", g, n, "ours and the paper's time", nstale);
    if (!inline_) fputs(" (the paper's time of ours over this run's, plot: paper:)", out);
    fputs(inline_ ? "</div>" : "</li>", out);
  }
}

static void sum_counts(const rp_section *s, int f, const fg_model *m, int n, const char *name,
                       void *arg) {
  (void)s, (void)f, (void)name;
  if (n == 1) count_cells(m, arg);
}

static void sum_geomeans(const rp_section *s, int f, const fg_model *m, int n, const char *name,
                         void *arg) {
  (void)s, (void)f, (void)name;
  if (n == 1) rp_put_geomeans(arg, m, 1);
}

static int put_summary_row(FILE *out, const rp_section *s, int f) {
  const pc_figure *fig = &s->cfg.figures[f];
  fputs("<tr><td><a href=\"#sec-", out);
  rp_esc(out, s->cfg.figure);
  fputs("\">", out);
  rp_esc(out, s->cfg.figure);
  fputs("</a></td>", out);
  rp_cell(out, "td", fig->name);
  if (fig->kind == FIG_SPEEDUP) {
    fputs("<td class=\"n\" data-v=\"\"></td><td class=\"n\" data-v=\"\"></td>"
          "<td class=\"n\" data-v=\"\"></td><td class=\"n\" data-v=\"\"></td>"
          "<td class=\"n\" data-v=\"\"></td><td class=\"n\" data-v=\"\"></td>"
          "<td>speedup over each panel's baseline (its panels' cells)</td></tr>\n",
          out);
    return 0;
  }
  rp_counts c = {0};
  if (rp_each_model(s, f, sum_counts, &c)) return -1;
  rp_put_count(out, c.drawn, "ok");
  rp_put_count(out, c.stale, "stale");
  rp_put_count(out, c.missing, "ns");
  rp_put_count(out, c.failed, "bad");
  rp_put_count(out, c.oom, "ns");
  rp_put_count(out, c.ns, "ns");
  fputs("<td>", out);
  if (rp_each_model(s, f, sum_geomeans, out)) return -1;
  fputs("</td></tr>\n", out);
  return 0;
}

int rp_put_summary(FILE *out, const rp_section *secs, int n) {
  fputs("<h2 id=\"summary\">Summary</h2>\n<div class=\"scroll\"><table class=\"sort summary\">"
        "<thead><tr><th>section</th><th>figure</th><th>cells drawn</th><th>of which stale</th>"
        "<th>not run</th><th>failed</th><th>OOM</th><th>NS</th>"
        "<th>geometric mean of ours over the best other system</th></tr></thead><tbody>\n",
        out);
  for (int i = 0; i < n; i++)
    for (int f = 0; f < secs[i].cfg.nfigures; f++)
      if (put_summary_row(out, &secs[i], f)) return -1;
  fputs("</tbody></table></div>\n<p class=\"note\">drawn: a log with status ok (stale: one "
        "its plot: stale: names, drawn but left out of every geometric mean); not run: no log of "
        "a system expected here (nobody ran the cell; not a failure); failed: ERR, TLE; OOM: out "
        "of GPU memory at that size; NS: not supported, or no log of a system nobody can run "
        "here. The geometric means are the terminal tables' (speedup: best other / ours; "
        "throughput: ours / best; memory saving: lowest other / ours), stale logs left "
        "out.</p>\n",
        out);
  return 0;
}

/* One provenance group: the logs of one GPU, driver, CUDA and commit. */
typedef struct {
  const pt_row *row;
  const lm_meta *lm;
  int n;
  const char *first, *last;
} prov_group;

static int same_prov(const prov_group *g, const pt_row *r, const lm_meta *lm) {
  return !strcmp(g->row->gpu, r->gpu) && !strcmp(g->lm->driver, lm->driver) &&
         !strcmp(g->lm->cuda, lm->cuda) && !strcmp(g->lm->commit, lm->commit);
}

static void put_prov_row(FILE *out, const rp_section *s, const prov_group *g) {
  fputs("<tr>", out);
  rp_cell(out, "td", s->cfg.figure);
  rp_cell(out, "td", g->row->gpu[0] ? g->row->gpu : "(no meta line)");
  rp_cell(out, "td", g->lm->driver);
  rp_cell(out, "td", g->lm->cuda);
  rp_cell(out, "td", g->lm->commit);
  rp_put_count(out, g->n, "");
  rp_cell(out, "td", g->first ? g->first : "");
  rp_cell(out, "td", g->last ? g->last : "");
  fputs("</tr>\n", out);
}

/* The section's logs grouped by GPU, driver, CUDA and commit, with their dates. */
static int put_provenance_rows(FILE *out, const rp_section *s) {
  prov_group *g = calloc(s->t.n ? s->t.n : 1, sizeof *g);
  if (!g) return -1;
  int ng = 0;
  for (size_t j = 0; j < s->t.n; j++) {
    size_t i = (size_t)(s->order[j] - s->t.rows);
    const pt_row *r = &s->t.rows[i];
    const lm_meta *lm = &s->meta[i];
    int k = 0;
    while (k < ng && !same_prov(&g[k], r, lm)) k++;
    if (k == ng) g[ng++] = (prov_group){.row = r, .lm = lm};
    g[k].n++;
    if (lm->date[0] && (!g[k].first || strcmp(lm->date, g[k].first) < 0)) g[k].first = lm->date;
    if (lm->date[0] && (!g[k].last || strcmp(lm->date, g[k].last) > 0)) g[k].last = lm->date;
  }
  for (int k = 0; k < ng; k++) put_prov_row(out, s, &g[k]);
  free(g);
  return 0;
}

int rp_put_provenance(FILE *out, const rp_section *secs, int n) {
  fputs("<h2 id=\"logs\">Logs: GPU, driver, CUDA, commit and dates</h2>\n"
        "<div class=\"scroll\"><table class=\"sort "
        "prov\"><thead><tr><th>section</th><th>GPU</th><th>driver</th>"
        "<th>CUDA</th><th>commit</th><th>logs</th><th>first</th><th>last</th></tr></thead>"
        "<tbody>\n",
        out);
  for (int i = 0; i < n; i++)
    if (put_provenance_rows(out, &secs[i])) return -1;
  fputs("</tbody></table></div>\n<p class=\"note\">From each log's meta line; the original "
        "artifact's logs have none.</p>\n",
        out);
  return 0;
}
