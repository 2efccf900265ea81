/* report_logs: the tables of logs: every row of a section's tidy table in one table (folded),
 * its keys, status, numbers, checks, whether a figure draws it, GPU, commit, log and reason,
 * with the paper's and the compared cell's time beside it. */
#include "report_parts.h"

#include <math.h>
#include <string.h>

/* A cell of another table (--compare, --paper) with r's keys, or NULL: compare's matching. */
const pt_row *rp_match(const pt_table *t, const pt_row *r) {
  for (size_t i = 0; i < t->n; i++)
    if (pt_same_cell(&t->rows[i], r)) return &t->rows[i];
  return NULL;
}

static double row_ms(const pt_row *r) {
  return r && r->status == ST_OK && isfinite(r->avg_ms) && r->avg_ms > 0 ? r->avg_ms : NAN;
}

/* The row's time over the compared row's, or NAN when either has none. */
double rp_compare_ratio(const pt_row *r, const pt_row *b) {
  double a = row_ms(r), c = row_ms(b);
  return isnan(a) || isnan(c) ? NAN : a / c;
}

/* The mark of a row: ok, or NS/OOM/TLE/ERR as the figures show it; its class. */
static const char *row_mark(const pt_row *r) {
  fg_cell c = {r->status, r, -1};
  return r->status == ST_OK ? "ok" : fg_cell_mark(&c, NAN);
}
static const char *row_class(const pt_row *r) {
  return r->status == ST_OK ? "ok" : r->status == ST_UNSUPPORTED ? "ns" : "bad";
}

/* The rows of the tables of logs are written compact, a thousand of them being most of the
 * page: HTML's optional end tags of td and tr left out, numbers aligned by their column (the
 * style's .tidy rules) and sorted by their text (the head's class n). */
void rp_td(FILE *out, const char *text) {
  fputs("<td>", out);
  rp_esc(out, text);
}

/* A number, or an empty cell when v is NAN. */
static void td_num(FILE *out, double v, const char *fmt) {
  fputs("<td>", out);
  if (!isnan(v)) fprintf(out, fmt, v);
}

static void td_ms(FILE *out, double v) {
  td_num(out, v, v < 0.01 ? "%.5f" : v < 1000 ? "%.3f" : "%.1f");
}

/* The row's mark (ok, NS, OOM, TLE, ERR) in its class. */
static void td_mark(FILE *out, const pt_row *r) {
  fprintf(out, "<td class=\"%s\">%s", row_class(r), row_mark(r));
}

static const char *check_class(int ok) { return ok == 1 ? "ok" : ok == 0 ? "bad" : "ns"; }

static void put_keys(FILE *out, const pt_row *r) {
  fputs("<td>", out);
  for (int k = 0; k < r->nkeys; k++) {
    if (k) fputc(' ', out);
    rp_esc(out, r->keys[k].key);
    fputc('=', out);
    rp_esc(out, r->keys[k].val);
  }
}

/* The check records: passed (a check mark), failed (a cross) or unjudged, each its output and
 * rel_l2; when all are alike their class is the cell's. */
static void put_checks(FILE *out, const lm_meta *lm) {
  int same = lm->nchecks > 0 && lm->ntotal == lm->nchecks;
  for (int i = 1; same && i < lm->nchecks; i++) same = lm->checks[i].ok == lm->checks[0].ok;
  if (same)
    fprintf(out, "<td class=\"%s\">", check_class(lm->checks[0].ok));
  else
    fputs("<td>", out);
  for (int i = 0; i < lm->nchecks; i++) {
    const lm_check *c = &lm->checks[i];
    if (i) fputs("<br>", out);
    if (!same) fprintf(out, "<span class=\"%s\">", check_class(c->ok));
    fputs(c->ok == 1 ? "\xe2\x9c\x93 " : c->ok == 0 ? "\xe2\x9c\x97 " : "? ", out);
    rp_esc(out, c->output);
    fputc(' ', out);
    rp_esc(out, c->rel_l2);
    if (!same) fputs("</span>", out);
  }
  if (lm->ntotal > lm->nchecks)
    fprintf(out, "<br>+%d more (%d failed in all)", lm->ntotal - lm->nchecks, lm->nfailed);
}

/* The compared cell's time and the ratio, highlighted outside the tolerance. */
static void put_compare(FILE *out, const pt_row *r, const pt_row *b, double tol) {
  if (!b) {
    fputs("<td class=\"ns\">only here<td>", out);
    return;
  }
  if (isnan(row_ms(b)))
    td_mark(out, b);
  else
    td_ms(out, b->avg_ms);
  double q = rp_compare_ratio(r, b);
  if (!isnan(q) && fabs(q - 1) > tol)
    fprintf(out, "<td class=\"out\">%.3f", q);
  else
    td_num(out, q, "%.3f");
}

const char *rp_base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

/* The tables' paper column: the --paper logs when given (the artifact's, every system), else
 * the config's plot: paper: times of ours; none when the section has neither. */
static int paper_column(const rp_section *s) { return s->has_paper || s->cfg.npaper > 0; }

/* Row i's paper cell: the --paper log of its cell, or its plot: paper: time. */
static void put_paper(FILE *out, const rp_section *s, size_t i) {
  if (!s->has_paper) {
    double v = s->paper_ms[i];
    fputs("<td>", out);
    if (!isnan(v)) fprintf(out, "%.*f", s->paper_dec[i], v);
    return;
  }
  const pt_row *p = rp_match(&s->paper, &s->t.rows[i]);
  if (p && isnan(row_ms(p)))
    td_mark(out, p);
  else
    td_ms(out, row_ms(p));
}

static void put_table_head(FILE *out, const rp_section *s) {
  fprintf(out,
          "<div class=\"scroll\"><table class=\"sort tidy%s%s\"><thead><tr><th>device</th>"
          "<th>workload</th><th>system</th><th>keys</th><th>status</th><th class=\"n\">ms</th>"
          "<th class=\"n\">TFLOP/s</th><th class=\"n\">peak MiB</th>",
          paper_column(s) ? " p" : "", s->has_cmp ? " c" : "");
  if (paper_column(s)) fputs("<th class=\"n\">paper ms</th>", out);
  if (s->has_cmp) fputs("<th class=\"n\">compare ms</th><th class=\"n\">ms / compare</th>", out);
  fputs("<th>checks: output rel_l2</th><th>drawn</th><th>GPU</th><th>commit</th><th>log</th>"
        "<th>reason</th>"
        "</tr></thead><tbody>\n",
        out);
}

/* A row's first cells: the cell it measures (device, workload, system, case keys), its mark
 * ("ok, stale" for a log plot: stale: names) and its time. */
void rp_put_cell_id(FILE *out, const pt_row *r, int stale) {
  rp_td(out, r->device);
  rp_td(out, r->workload);
  rp_td(out, r->system);
  put_keys(out, r);
  if (stale)
    fprintf(out, "<td class=\"stale\">%s, stale", row_mark(r));
  else
    td_mark(out, r);
  td_ms(out, row_ms(r));
}

/* Row i's drawn cell: yes, or no with why (a system its figure does not list, say): the log is
 * a row of its own here even when no bar shows it. */
static void put_drawn(FILE *out, const rp_section *s, size_t i) {
  if (s->drawn[i]) {
    fputs("<td>yes", out);
    return;
  }
  char why[320];
  fg_why_not_drawn(&s->cfg, &s->t.rows[i], why, sizeof why);
  fputs("<td class=\"warn\">no: ", out);
  rp_esc(out, why);
}

static void put_row(FILE *out, const rp_section *s, size_t i, double tol) {
  const pt_row *r = &s->t.rows[i], *b = s->has_cmp ? rp_match(&s->cmp, r) : NULL;
  double q = b ? rp_compare_ratio(r, b) : NAN;
  int out_ = !isnan(q) && fabs(q - 1) > tol, stale = s->stale[i] >= 0;
  const char *cls = out_ && stale ? " class=\"out stale\""
                    : out_        ? " class=\"out\""
                    : stale       ? " class=\"stale\""
                                  : "";
  fprintf(out, "<tr%s>", cls);
  rp_put_cell_id(out, r, stale);
  td_num(out, r->gflops_s / 1000, "%.1f");
  td_num(out, r->peak_mib, "%.1f");
  if (paper_column(s)) put_paper(out, s, i);
  if (s->has_cmp) put_compare(out, r, b, tol);
  put_checks(out, &s->meta[i]);
  put_drawn(out, s, i);
  rp_td(out, r->gpu);
  rp_td(out, s->meta[i].commit);
  rp_td(out, rp_base_name(r->source));
  fputs("<td>", out);
  if (stale) {
    fputs("<span class=\"stale\">stale: ", out);
    rp_esc(out, s->cfg.stale[s->stale[i]].reason);
    fputs("</span>", out);
    if (r->reason[0]) fputs("; ", out);
  }
  rp_esc(out, r->reason);
  fputc('\n', out);
}

/* The rows of t whose home is figure home (-1: no figure), in cell order, folded (a details
 * closed at first: summary says what); the count of them. */
int rp_put_rows(FILE *out, const rp_section *s, int home, double tol, const char *summary) {
  int n = 0, nstale = 0, nundrawn = 0;
  for (size_t j = 0; j < s->t.n; j++) {
    size_t i = (size_t)(s->order[j] - s->t.rows);
    if (s->home[i] != home) continue;
    n++;
    nstale += s->stale[i] >= 0;
    nundrawn += !s->drawn[i];
  }
  if (!n) return 0;
  fprintf(out, "<details class=\"cells\"><summary>%s: %d logs", summary, n);
  if (nstale) fprintf(out, ", <span class=\"stale\">%d stale</span>", nstale);
  if (nundrawn) fprintf(out, ", <span class=\"warn\">%d not drawn (why: its row)</span>", nundrawn);
  fputs("</summary>\n", out);
  put_table_head(out, s);
  for (size_t j = 0; j < s->t.n; j++) {
    size_t i = (size_t)(s->order[j] - s->t.rows);
    if (s->home[i] == home) put_row(out, s, i, tol);
  }
  fputs("</tbody></table></div></details>\n", out);
  return n;
}
