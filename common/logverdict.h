/* logverdict: whether a cell's log is good, and why not. The one rule that repro-run (status,
 * --resume, the end summary and finish: runner/cellog.c) and repro-plot (plot/reader.c) hold
 * every log of our format to (the log contract: kvline records, "# repro-log 1").
 *
 * A log is good when all of these hold, checked in this order (the first that fails says why):
 *   - it is not empty and not binary (a NUL byte, or control bytes above 1% of its first 64 KiB);
 *   - it is of our format (starts with "# repro-log" or "result status=", or has a line that
 *     does); the original artifact's logs are not, and only the plotter reads those;
 *   - its last record ends in a newline (a record is a line that is not blank or a comment);
 *   - its last result line is usable: it is a kvline record whose status= is ok, oom,
 *     unsupported, error or timeout, and a status=ok has an avg_ms; of several result lines the
 *     last usable one decides (the runner appends its own after a killed cell), and a malformed
 *     one after it spoils the log;
 *   - no record holds a key twice, and the log has at most one meta and one config line;
 *   - under status=ok, avg_ms is a positive finite decimal number (lv_parse_decimal) and every
 *     check line says ok=1;
 *   - the status is a final answer: ok, unsupported or oom (error and timeout are rerun).
 * Reading never goes past buf+len; buf need not be NUL-terminated. */
#ifndef REPRO_LOGVERDICT_H
#define REPRO_LOGVERDICT_H

#include <stddef.h>

#include "kvline.h"

/* Why a log is good or not, one value per rule above. */
typedef enum {
  LV_GOOD,   /* the last result line says ok, unsupported or oom, and nothing spoils it */
  LV_FAILED, /* it says error or timeout: the program's (or the runner's) own failure */
  /* the log has a usable result line but cannot be trusted (the plot draws ERR with why): */
  LV_CUT,             /* its last record has no newline (a write that did not end) */
  LV_MALFORMED,       /* a result line after the last usable one is not usable */
  LV_REPEATED_KEY,    /* a record holds a key twice */
  LV_REPEATED_RECORD, /* a second meta or config line */
  LV_BAD_TIME,        /* status=ok with an avg_ms that is no positive finite decimal number */
  LV_FAILED_CHECK,    /* status=ok under a check line that did not pass */
  /* no result to draw (the plot skips the file): */
  LV_NO_RESULT, /* our format, no usable result line */
  LV_EMPTY,
  LV_BINARY,
  LV_FOREIGN /* not our format: the original artifact's logs, read by the plotter alone */
} lv_cause;

/* 1 for the causes the plot draws as ERR with their why (LV_CUT .. LV_FAILED_CHECK). */
int lv_cause_refused(lv_cause c);

typedef struct {
  lv_cause cause;
  int good;  /* cause == LV_GOOD */
  int line;  /* the line why is about (LV_GOOD, LV_FAILED: the deciding result line; LV_NO_RESULT:
                the last line); 0 when it is about the whole file */
  int lines; /* the lines of the log (0 for LV_EMPTY, LV_BINARY, LV_FOREIGN) */
  /* The last usable result line's status word ("" when none), its state= (the runner's:
   * TIMEOUT, CANCELLED, ...) and its reason=, as written ("" when absent). */
  char status[32], state[32], reason[256];
  /* Why the log is not good, "" when it is: the plotter's words, e.g. "torn log: line 3 is cut
   * (no newline)", "line 3: avg_ms appears twice (each key once per line)", "avg_ms must be a
   * positive number", "check output=lse failed (line 4: rel_l2=2.5e-01)"; for LV_FAILED the
   * result line's reason, else "result status=error". */
  char why[256];
} lv_verdict;

/* One line of our format as lv_judge reads it, for a reader that wants more of it than the
 * verdict (the plotter's values and per-line warnings). Blank and comment lines are skipped. */
typedef struct {
  int line;             /* 1-based */
  int column;           /* where the record starts (after its blanks), 1-based */
  int cut;              /* the last line, without its newline: never a record */
  int is_result;        /* its first word is "result" */
  int after_result;     /* a usable result line came before this one */
  const kv_record *rec; /* the record; NULL when the line is cut or is no kvline record */
  const char *err;      /* why the text is no kvline record (kv_parse's words); NULL when it is */
  const char *repeated; /* a key the record holds twice, NULL when none */
  /* For a result record: why it is not usable ("result status=ok needs a numeric avg_ms"),
   * NULL when it is. */
  const char *unusable;
} lv_line;

typedef void (*lv_line_fn)(void *ctx, const lv_line *ln);

/* Judges the log buf[0, len) into out; calls fn (when not NULL) with every line of our format
 * that is not blank or a comment, in order (not for LV_EMPTY, LV_BINARY, LV_FOREIGN). Returns
 * out->good. */
int lv_judge(const char *buf, size_t len, lv_verdict *out, lv_line_fn fn, void *ctx);

/* lv_judge without a line reader. */
int log_verdict(const char *buf, size_t len, lv_verdict *out);

/* 1 when status is a final answer: ok, unsupported or oom. */
int lv_status_final(const char *status);

/* Reads [s, s+len) as a decimal number: [+-]?(D+[.D*]|.D+)([eE][+-]?D+)? and nothing else (no
 * hex, inf, nan or spaces, which strtod would take). Returns 0 with *out set, LV_NUM_SYNTAX when
 * the text is no such number, LV_NUM_RANGE when it is one too large for a double (1e999); *out
 * is left alone on an error. */
#define LV_NUM_SYNTAX (-1)
#define LV_NUM_RANGE  (-2)
int lv_parse_decimal(const char *s, size_t len, double *out);
/* What an lv_parse_decimal error says of a value ("is not a decimal number"). */
const char *lv_num_problem(int rc);

#endif
