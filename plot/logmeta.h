/* logmeta: what one log of our format says besides its numbers: its first meta record (GPU,
 * driver, CUDA, commit, date), its check records and the status of each result record. The
 * reader (reader.c) turns a log into a number; the report (report.c) and `repro-plot
 * provenance` (provenance.c) read this. Lines that are no kvline record are passed over. */
#ifndef PLOT_LOGMETA_H
#define PLOT_LOGMETA_H

#include <stddef.h>

#include "table.h"

#define LM_MAX_CHECKS   8 /* check records kept in detail; all are counted */
#define LM_MAX_STATUSES 8 /* result records whose status is kept; all are counted */

typedef struct {
  char output[PT_NAME];
  char rel_l2[24];
  int ok; /* 1 passed (ok=1), 0 failed (any other ok=), -1 no ok= */
} lm_check;

typedef struct {
  int has_meta;                                                 /* a meta record was read */
  char gpu[PT_GPU], driver[32], cuda[32], commit[48], date[40]; /* "" when absent */
  lm_check checks[LM_MAX_CHECKS];        /* the first LM_MAX_CHECKS check records */
  int nchecks, ntotal, npassed, nfailed; /* kept, all, ok=1 and ok=0 among all */
  char status[LM_MAX_STATUSES][PT_NAME]; /* each result record's status=, in order */
  int nstatus, nresults;                 /* kept, all */
} lm_meta;

/* Fills m from a log held in memory (buf need not be NUL-terminated). */
void lm_parse(const char *buf, size_t len, lm_meta *m);

/* Reads the log at path into m. 0, or -1 when it cannot be read (m is then empty). */
int lm_read(const char *path, lm_meta *m);

#endif
