/* table_input: tables as draw's, table's and report's input; merge's rule (table_input.h). */
#include "table_input.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

void ti_cell_name(const pt_row *r, char *buf, size_t cap) {
  size_t n = (size_t)snprintf(buf, cap, "%s.%s.%s.%s@%s", r->experiment, r->device, r->workload,
                              r->system, pt_length(r));
  int first = 1;
  for (int k = 0; k < r->nkeys && n < cap; k++) {
    if (!strcmp(r->keys[k].key, PT_LENGTH_KEY)) continue;
    n += (size_t)snprintf(buf + n, cap - n, "%s%s=%s", first ? "[" : ",", r->keys[k].key,
                          r->keys[k].val);
    first = 0;
  }
  if (!first && n < cap) snprintf(buf + n, cap - n, "]");
}

int ti_merge(pt_table *dst, const pt_table *src, const char *name, const char *who) {
  for (size_t i = 0; i < src->n; i++) {
    size_t j = 0;
    while (j < dst->n && !(pt_same_cell_gpu(&dst->rows[j], &src->rows[i]) &&
                           !strcmp(dst->rows[j].figure, src->rows[i].figure)))
      j++;
    if (j < dst->n) {
      char cell[TI_CELL_NAME];
      ti_cell_name(&src->rows[i], cell, sizeof cell);
      fprintf(stderr, "%s: %s replaces %s%s%s, a row read before it\n", who, name, cell,
              src->rows[i].gpu[0] ? " on " : "", src->rows[i].gpu);
      dst->rows[j] = src->rows[i];
    } else if (pt_append(dst, &src->rows[i])) {
      return -1;
    }
  }
  return 0;
}

/* pt_read_table's warnings as issues of the table (--strict counts them as a log's). */
static void warn_issue(void *arg, const char *path, int line, const char *msg) {
  rd_issue_add(arg, ISSUE_WARNING, path, line, "%s", msg);
}

/* Keeps the rows of table t (read from path) that are c's figure's, completed as a log's row;
 * the others go, those of other figures counted in a note, those without a cell as issues. */
static void keep_figure_rows(const pc_config *c, const rd_opts *o, const char *path, pt_table *t,
                             rd_issues *is) {
  size_t out = 0, other = 0;
  char shown[PT_PATH];
  pt_safe_copy(shown, sizeof shown, path);
  for (size_t i = 0; i < t->n; i++) {
    pt_row *r = &t->rows[i];
    if (r->figure[0] && strcmp(r->figure, c->figure)) {
      other++;
      continue;
    }
    snprintf(r->figure, sizeof r->figure, "%s", c->figure);
    for (char *d = r->device; *d; d++) *d = (char)tolower((unsigned char)*d); /* as a log name's */
    if (rd_complete_row(o, r)) {
      rd_issue_add(is, ISSUE_SKIPPED, path, 0,
                   "a row of %s: cannot tell the cell: it needs a device, a system, and a "
                   "workload or case keys (its own or the figure's defaults)",
                   r->source);
      continue;
    }
    if (out != i) t->rows[out] = *r;
    out++;
  }
  t->n = out;
  if (other)
    fprintf(stderr, "repro-plot: note: %s: %zu rows of other figures than %s left out\n", shown,
            other, c->figure);
}

/* Rows j > i of t's cell i (pt_same_cell: on another GPU, as ti_merge keeps them) are
 * skipped, and row i is ERR naming them all, as two logs of one cell are. */
static void one_row_per_cell(pt_table *t, rd_issues *is) {
  unsigned char *drop = calloc(t->n ? t->n : 1, 1);
  if (!drop) return;
  for (size_t i = 0; i < t->n; i++) {
    if (drop[i]) continue;
    pt_row *first = &t->rows[i];
    char gpus[PT_REASON] = "";
    size_t k = 1;
    for (size_t j = i + 1; j < t->n; j++) {
      if (drop[j] || !pt_same_cell(first, &t->rows[j])) continue;
      drop[j] = 1;
      k++;
      text_set(gpus + strlen(gpus), sizeof gpus - strlen(gpus), "; %s", t->rows[j].gpu);
      rd_issue_add(is, ISSUE_SKIPPED, t->rows[j].source, 0,
                   "another row of the cell of %s, from another GPU (%s): the cell is ERR",
                   first->source, t->rows[j].gpu);
    }
    if (k == 1) continue;
    char why[PT_REASON];
    text_set(why, sizeof why, "%zu rows of this cell from different GPUs: %s%s", k, first->gpu,
             gpus);
    rd_issue_add(is, ISSUE_WARNING, first->source, 0, "%s (the cell is ERR)", why);
    pt_time_error(first);
    first->peak_mib = first->compile_s = NAN;
    pt_utf8_copy(first->reason, sizeof first->reason, why);
  }
  size_t out = 0;
  for (size_t i = 0; i < t->n; i++)
    if (!drop[i]) t->rows[out++] = t->rows[i];
  t->n = out;
  free(drop);
}

int ti_read_tables(const pc_config *c, const char *const *paths, int n, pt_table *t,
                   rd_issues *is) {
  rd_opts o = pc_reader_opts(c);
  int rc = 0;
  for (int i = 0; i < n && !rc; i++) {
    pt_table one = {0};
    rc = pt_read_table(paths[i], &one, warn_issue, is);
    if (!rc) keep_figure_rows(c, &o, paths[i], &one, is);
    if (!rc && ti_merge(t, &one, paths[i], "repro-plot")) {
      fprintf(stderr, "%s: out of memory\n", paths[i]);
      rc = -1;
    }
    pt_free(&one);
  }
  if (!rc) one_row_per_cell(t, is);
  return rc;
}
