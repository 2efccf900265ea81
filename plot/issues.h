/* issues: what the reader says of a file (reader.h): where it is odd, or why it gave no row or
 * no figure draws it; and a row it refuses (ERR with its reason). Issues hold no control
 * characters (written as \xNN), so they print safely. */
#ifndef PLOT_ISSUES_H
#define PLOT_ISSUES_H

#include <stddef.h>

#include "table.h"

/* SKIPPED: the file gave no row. WARNING: it gave a row, but something in it is odd.
 * NOT_DRAWN: it gave a row that no figure draws (the message says why). */
typedef enum { ISSUE_SKIPPED, ISSUE_WARNING, ISSUE_NOT_DRAWN } rd_issue_kind;

typedef struct {
  char path[PT_PATH];
  int line; /* 0 when the issue is about the whole file */
  rd_issue_kind kind;
  char msg[240];
} rd_issue;

typedef struct {
  rd_issue *v;
  size_t n, cap;
} rd_issues;

void rd_issue_add(rd_issues *is, rd_issue_kind kind, const char *path, int line, const char *fmt,
                  ...) __attribute__((format(printf, 5, 6)));
void rd_issues_free(rd_issues *is);

/* Makes row ERR with reason, without numbers. */
void rd_refuse(pt_row *row, const char *reason);

#endif
