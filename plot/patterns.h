/* patterns: the figures of merit of the FlashTensor-AE log format, declared as data.
 *
 * Each entry says which cheap literal must appear on a line (the prefilter, found with
 * memmem), the PCRE2 regex run on that line only, and what it yields: named groups set the
 * metric of the same name (see ae_metric), or a match sets a cell status. Adding a metric
 * is one row here plus, where needed, one name in ae_metric. Like Ramble/JUBE "figures of
 * merit": the extraction rules live in one table, not in the reader's code. */
#ifndef PLOT_PATTERNS_H
#define PLOT_PATTERNS_H

#include "table.h"

typedef enum {
  AE_AVG_MS,
  AE_MIN_MS,
  AE_MAX_MS,
  AE_GFLOPS_S,
  AE_MIB,
  AE_TRT_ACT_BYTES,
  AE_TRT_WEIGHT_BYTES,
  AE_NMETRICS
} ae_metric;

/* Group name of each metric, indexed by ae_metric ("avg_ms", "mib", ...). */
extern const char *const ae_metric_names[AE_NMETRICS];

/* Values that are not finite (nan, inf) or out of range never count: such a line is reported
 * and skipped, and a later valid line counts. */
typedef enum {
  PICK_FIRST, /* the first matching line wins (the original plot scripts used re.search) */
  PICK_MAX,   /* the largest value over all matching lines (peak memory) */
} ae_pick;

typedef struct {
  const char *name;    /* for messages */
  const char *literal; /* must occur in the line; the regex runs only on such lines */
  const char *regex;   /* PCRE2, named groups = ae_metric_names */
  ae_pick pick;
  int required_shape; /* 1: a line with the literal that does not match is malformed */
  int sets_status;    /* 1: a match marks the cell with `status` when it has no time */
  pt_status status;
  int line_start; /* 1: the literal must begin the line (mib=, not start_peak_mem_mib=) */
  int positive;   /* 1: every metric of a matching line must be > 0 (times), else >= 0 */
} ae_pattern;

extern const ae_pattern ae_patterns[];
extern const int ae_npatterns;

#endif
