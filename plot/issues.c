/* issues: what the reader says of a file: an issue (where it is odd, skipped or not drawn,
 * rd_issue_add) and a row refused (ERR with its reason and no numbers, rd_refuse). */
#include "issues.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void rd_issue_add(rd_issues *is, rd_issue_kind kind, const char *path, int line, const char *fmt,
                  ...) {
  if (is->n == is->cap) {
    size_t cap = is->cap ? is->cap * 2 : 16;
    rd_issue *nv = realloc(is->v, cap * sizeof *nv);
    if (!nv) return; /* dropping a message is better than dying while reporting */
    is->v = nv;
    is->cap = cap;
  }
  rd_issue *it = &is->v[is->n++];
  pt_safe_copy(it->path, sizeof it->path, path); /* printed as it is: no control characters */
  it->line = line;
  it->kind = kind;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  pt_safe_copy(it->msg, sizeof it->msg, msg); /* "%.40s" of a log's text may cut a character */
}

void rd_issues_free(rd_issues *is) {
  free(is->v);
  is->v = NULL;
  is->n = is->cap = 0;
}

/* Makes row ERR with reason: no numbers. */
void rd_refuse(pt_row *row, const char *reason) {
  row->status = ST_ERROR;
  row->avg_ms = row->min_ms = row->max_ms = row->gflops_s = row->peak_mib = NAN;
  row->compile_s = NAN;
  pt_utf8_copy(row->reason, sizeof row->reason, reason);
}
