/* table: the tidy table every reader fills and every emitter reads.
 *
 * One row per log file (one cell): its keys (figure, experiment, device, workload, system,
 * seqlen), its numbers (NAN where the log has none), its status and the file it came from.
 * Readers append rows; the figure code looks cells up by key; json/csv export writes it. */
#ifndef PLOT_TABLE_H
#define PLOT_TABLE_H

#include <stddef.h>
#include <stdio.h>

#define PT_NAME   48 /* figure/experiment/device/workload/system names (validated, short) */
#define PT_PATH   512
#define PT_REASON 160

typedef enum {
  ST_OK = 0,
  ST_OOM,
  ST_UNSUPPORTED,
  ST_ERROR,
  ST_TIMEOUT,
  ST_MISSING, /* no log at all for a cell the figure wants; never stored in a table */
} pt_status;

typedef struct {
  char figure[PT_NAME];
  char experiment[PT_NAME];
  char device[PT_NAME];
  char workload[PT_NAME];
  char system[PT_NAME];
  int seqlen;                                        /* 0 when unknown */
  double avg_ms, min_ms, max_ms, gflops_s, peak_mib; /* NAN when absent */
  pt_status status;
  char format[8]; /* "ours" or "ae" */
  char source[PT_PATH];
  char reason[PT_REASON];
} pt_row;

typedef struct {
  pt_row *rows;
  size_t n, cap;
} pt_table;

void pt_row_init(pt_row *row);
/* Appends a copy; returns 0, or -1 when out of memory. */
int pt_append(pt_table *t, const pt_row *row);
void pt_free(pt_table *t);

const char *pt_status_name(pt_status s);            /* ok oom unsupported error timeout missing */
int pt_status_parse(const char *s, pt_status *out); /* 0 or -1 for an unknown word */

/* Same cell: experiment, device, workload, system and seqlen equal (figure ignored). */
int pt_same_cell(const pt_row *a, const pt_row *b);
/* Total order on the cell keys, for sorted output. */
int pt_cmp_cell(const void *a, const void *b);

/* Export. Numbers NAN are written as empty (csv) or null (json). The output is always valid
 * UTF-8 (invalid bytes in a source path or reason are written as U+FFFD); csv quotes a field
 * holding a comma, quote, CR or LF as RFC 4180 says, so a reason may span lines. */
void pt_write_csv(FILE *out, const pt_table *t);
void pt_write_json(FILE *out, const pt_table *t);

/* Reads a csv written by pt_write_csv (for merge/compare): RFC 4180 records (quoted fields
 * may hold commas, doubled quotes and line breaks; CRLF or LF line ends). Returns 0, or -1 with a message
 * naming path:line on stderr. */
int pt_read_csv(const char *path, pt_table *t);

/* Length of the well-formed UTF-8 sequence at p (at most avail bytes), or 0 when the bytes
 * there are not one (a stray continuation byte, an overlong form, a surrogate, a cut
 * character). */
size_t pt_utf8_len(const char *p, size_t avail);

/* Copies src into dst[0..cap) as valid UTF-8: invalid bytes become U+FFFD, and a text too
 * long is cut at a character boundary. dst is always NUL-terminated (cap > 0). */
void pt_utf8_copy(char *dst, size_t cap, const char *src);

/* 1 when s is a safe name: [A-Za-z0-9._-]+, shorter than PT_NAME. */
int pt_valid_name(const char *s);

#endif
