/* reader_parts: what reader.c reads a log with, below it (reader_ours.c, reader_artifact.c,
 * logdate.c, cells.c); not part of the reader's interface (reader.h). */
#ifndef PLOT_READER_PARTS_H
#define PLOT_READER_PARTS_H

#include <stddef.h>
#include <sys/stat.h>

#include "issues.h"
#include "table.h"

/* reader_ours.c: a log of our format into row (format "ours"), checking its config line
 * against the keys of the file name (named, may be NULL), reading the default keys keys[0..nkeys)
 * from it (the figure's: its config line's value wins the default) and setting *date (may be
 * NULL) to its meta date= in seconds since 1970, NAN when it has none. 0, or -1 when it is
 * skipped (an ISSUE_SKIPPED was added: empty, binary, no usable result line), or RD_FOREIGN
 * when it is not of our format. */
#define RD_FOREIGN 1
int rd_parse_ours(const char *buf, size_t len, const char *path, pt_row *row, rd_issues *is,
                  const pt_row *named, const pt_kv *keys, int nkeys, double *date);

/* reader_artifact.c: the pattern table compiled once (0, or -1 with a message on stderr) and
 * freed; a log of the artifact's format into row (format "ae"; the patterns compiled). 0, or -1
 * when it is skipped (a time line cut mid-way). */
int rd_artifact_init(void);
void rd_artifact_cleanup(void);
int rd_parse_artifact(const char *buf, size_t len, const char *path, pt_row *row, rd_issues *is);

/* logdate.c: when a log was written, for --latest. */
typedef struct {
  double when; /* seconds since 1970 */
  int from_meta;
} rd_log_date;
/* meta date= as the harness writes it (2026-11-22T00:01:46Z, UTC) in seconds since 1970, or
 * NAN when it is not that. */
double rd_parse_date(const char *s);
/* The log's meta date (NAN: none), else its file's modification time. */
rd_log_date rd_log_date_of(double meta_date, const struct stat *st);
/* "2026-03-01T12:00:00Z", with ", file time" when the log had no meta date. */
void rd_fmt_date(const rd_log_date *d, char *buf, size_t cap);

/* cells.c: the rows t[start..) a read added, one per cell (pt_same_cell): of several logs of
 * one cell the first's row becomes ERR naming them all, or with latest the newest by its date
 * (dates: one per row) stays, the others are listed as not drawn; the rows dropped leave t.
 * Messages name a log by its path below root. */
void rd_one_row_per_cell(pt_table *t, size_t start, const rd_log_date *dates, const char *root,
                         int latest, rd_issues *is);

#endif
