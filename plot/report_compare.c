/* report_compare: --compare: per section, the cells with a time on both sides, the geometric
 * mean of ms / compare, those outside the tolerance and the cells of one side only; the table
 * of every section's. */
#include "report_parts.h"

#include <math.h>
#include <string.h>

typedef struct {
  int n, outside, only_here, only_cmp;
  double logsum;
} cmp_stats;

/* compare's numbers: cells with a time on both sides, their ratios' geometric mean, those
 * outside the tolerance, cells of one side only. */
static void compare_stats(const rp_section *s, double tol, cmp_stats *st) {
  memset(st, 0, sizeof *st);
  for (size_t i = 0; i < s->t.n; i++) {
    const pt_row *b = rp_match(&s->cmp, &s->t.rows[i]);
    double q = rp_compare_ratio(&s->t.rows[i], b);
    st->only_here += !b;
    if (isnan(q)) continue;
    st->n++;
    st->logsum += log(q);
    st->outside += fabs(q - 1) > tol;
  }
  for (size_t j = 0; j < s->cmp.n; j++) st->only_cmp += !rp_match(&s->t, &s->cmp.rows[j]);
}

/* The compared logs' cells that these logs lack. */
static void put_only_compare(FILE *out, const rp_section *s) {
  fputs("<div class=\"scroll\"><table class=\"sort only\"><thead><tr><th>device</th>"
        "<th>workload</th><th>system</th><th>keys</th><th>status</th>"
        "<th class=\"n\">compare ms</th><th>log</th></tr></thead><tbody>\n",
        out);
  for (size_t j = 0; j < s->cmp.n; j++) {
    const pt_row *b = &s->cmp.rows[j];
    if (rp_match(&s->t, b)) continue;
    fputs("<tr>", out);
    rp_put_cell_id(out, b, pc_stale_index(&s->cfg, b->source) >= 0);
    rp_td(out, rp_base_name(b->source));
    fputc('\n', out);
  }
  fputs("</tbody></table></div>\n", out);
}

void rp_put_compare_summary(FILE *out, const rp_opts *o, const rp_section *s) {
  if (!o->compare) return;
  if (!s->has_cmp) {
    fputs("<p class=\"note\">--compare: no folder <code>", out);
    rp_esc(out, o->compare);
    fputc('/', out);
    rp_esc(out, s->cfg.figure);
    fputs("</code>", out);
    fputs("</p>\n", out);
    return;
  }
  cmp_stats st;
  compare_stats(s, o->tol, &st);
  fputs("<p class=\"cmp\">compared with <code>", out);
  rp_esc(out, o->compare);
  fputc('/', out);
  rp_esc(out, s->cfg.figure);
  fputs("</code>: ", out);
  if (st.n)
    fprintf(out, "geometric mean of ms / compare over %d cells <b>%.4f</b>", st.n,
            exp(st.logsum / st.n));
  else
    fputs("no cell has a time on both sides", out);
  fprintf(out,
          "; <b class=\"%s\">%d outside &plusmn;%g%%</b>; only here: %d; only in compare: %d</p>\n",
          st.outside ? "bad" : "ok", st.outside, o->tol * 100, st.only_here, st.only_cmp);
  if (st.only_cmp) {
    fprintf(out, "<details class=\"cells\"><summary>%d cells only in the compared logs</summary>",
            st.only_cmp);
    put_only_compare(out, s);
    fputs("</details>\n", out);
  }
}

void rp_put_compare_table(FILE *out, const rp_opts *o, const rp_section *secs, int n) {
  if (!o->compare) return;
  fputs("<h3>Compared with <code>", out);
  rp_esc(out, o->compare);
  fprintf(out,
          "</code> (tolerance &plusmn;%g%%)</h3>\n<div class=\"scroll\"><table class=\"sort "
          "compare\"><thead><tr>"
          "<th>section</th><th>cells on both sides</th><th>geometric mean ms / compare</th>"
          "<th>outside</th><th>only here</th><th>only in compare</th></tr></thead><tbody>\n",
          o->tol * 100);
  for (int i = 0; i < n; i++) {
    const rp_section *s = &secs[i];
    fputs("<tr>", out);
    rp_cell(out, "td", s->cfg.figure);
    if (!s->has_cmp) {
      fputs("<td colspan=\"5\" class=\"ns\">no such folder in the compared root</td></tr>\n", out);
      continue;
    }
    cmp_stats st;
    compare_stats(s, o->tol, &st);
    rp_put_count(out, st.n, "");
    rp_num_cell(out, st.n ? exp(st.logsum / st.n) : NAN, "%.4f");
    rp_put_count(out, st.outside, "bad");
    rp_put_count(out, st.only_here, "");
    rp_put_count(out, st.only_cmp, "");
    fputs("</tr>\n", out);
  }
  fputs("</tbody></table></div>\n", out);
}
