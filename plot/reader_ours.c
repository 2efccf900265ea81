/* reader_ours: a log of our format (kvline records; the LAST usable result line wins): its
 * numbers, its config line's keys, its meta GPU and date, and where each line is odd.
 * Whether it is good, ERR or skipped, and why, is common/logverdict.c's rule (the runner's
 * too); this reads the values in the same pass (lv_judge's line reader). */
#include "reader_parts.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kvline.h"
#include "logverdict.h"

static void take_name(char *dst, const char *val, const char *path, int line, const char *key,
                      rd_issues *is) {
  if (!val) return;
  if (!pt_valid_name(val)) {
    rd_issue_add(is, ISSUE_WARNING, path, line, "config %s=\"%.40s\" is not a name [A-Za-z0-9._-]+",
                 key, val);
    return;
  }
  strcpy(dst, val);
}

/* The numbers of a result line: the time first (it decides the cell), then the others. */
static const char *const result_keys[] = {"avg_ms",   "min_ms",   "max_ms",
                                          "gflops_s", "peak_mib", "compile_s"};
#define NRESULT_KEYS (int)(sizeof result_keys / sizeof *result_keys)

static double *result_field(pt_row *row, int k) {
  double *f[] = {&row->avg_ms,   &row->min_ms,   &row->max_ms,
                 &row->gflops_s, &row->peak_mib, &row->compile_s};
  return f[k];
}

/* Marks row ERR for its time (reason: the verdict's), keeping its other numbers. */
static void time_error(pt_row *row, const char *reason) {
  row->status = ST_ERROR;
  row->avg_ms = row->min_ms = row->max_ms = row->gflops_s = NAN;
  pt_utf8_copy(row->reason, sizeof row->reason, reason);
}

/* Reads the result line's numbers: each a finite decimal number (lv_parse_decimal); one that is
 * none is NAN with a warning (a time under status=ok: the cell is ERR, the verdict's
 * LV_BAD_TIME). */
static void result_numbers(const kv_record *rec, const char *path, int line, pt_row *row,
                           rd_issues *is) {
  for (int k = 0; k < NRESULT_KEYS; k++) {
    const char *v = kv_get(rec, result_keys[k]);
    *result_field(row, k) = NAN;
    int rc = v ? lv_parse_decimal(v, strlen(v), result_field(row, k)) : 0;
    if (!rc) continue;
    if (k == 0 && row->status == ST_OK)
      rd_issue_add(is, ISSUE_WARNING, path, line,
                   "avg_ms must be a positive number (result avg_ms=\"%.40s\" %s): the cell is ERR",
                   v, lv_num_problem(rc));
    else
      rd_issue_add(is, ISSUE_WARNING, path, line, "result %s=\"%.40s\" %s; it does not count",
                   result_keys[k], v, lv_num_problem(rc));
  }
}

/* One result record into row: 0, or -1 (an ISSUE_SKIPPED) when the verdict finds it unusable. */
static int ours_result(const lv_line *ln, const char *path, pt_row *row, rd_issues *is) {
  const kv_record *rec = ln->rec;
  if (ln->unusable) {
    rd_issue_add(is, ISSUE_SKIPPED, path, ln->line, "%s", ln->unusable);
    return -1;
  }
  pt_status_parse(kv_get(rec, "status"), &row->status); /* a word the verdict knows */
  result_numbers(rec, path, ln->line, row, is);
  const char *reason = kv_get(rec, "reason");
  pt_utf8_copy(row->reason, sizeof row->reason, reason ? reason : "");
  if (row->status == ST_OK && !isnan(row->avg_ms) && !(row->avg_ms > 0))
    rd_issue_add(is, ISSUE_WARNING, path, ln->line,
                 "avg_ms must be a positive number (got %g): the cell is ERR", row->avg_ms);
  /* other numbers: negative never count */
  for (int k = 1; k < NRESULT_KEYS; k++) {
    double *f = result_field(row, k);
    if (!isnan(*f) && *f < 0) {
      rd_issue_add(is, ISSUE_WARNING, path, ln->line, "result %s=%g is not a finite number >= 0",
                   result_keys[k], *f);
      *f = NAN;
    }
  }
  return 0;
}

/* The GPU that ran the cell: meta gpu= (kept as written; "none" for CPU runs) and cc= when it
 * is a compute capability N.N. */
static void ours_meta(const kv_record *rec, pt_row *row) {
  const char *gpu = kv_get(rec, "gpu"), *cc = kv_get(rec, "cc");
  if (gpu) pt_utf8_copy(row->gpu, sizeof row->gpu, gpu);
  if (cc && pt_valid_cc(cc)) strcpy(row->cc, cc);
}

/* A case key of the file name that the config line gives another value: one of the two is
 * mislabelled. */
static void check_named_keys(const kv_record *rec, const pt_row *named, const char *path, int line,
                             rd_issues *is) {
  for (int k = 0; named && k < named->nkeys; k++) {
    const char *v = kv_get(rec, named->keys[k].key);
    if (v && strcmp(v, named->keys[k].val))
      rd_issue_add(is, ISSUE_WARNING, path, line, "file name says %s=%s but the log says %.40s",
                   named->keys[k].key, named->keys[k].val, v);
  }
}

/* The config line's values of the default keys; the file name's win later. */
static void config_default_keys(const kv_record *rec, const pt_kv *keys, int nkeys,
                                const char *path, int line, pt_row *row, rd_issues *is) {
  for (int k = 0; k < nkeys; k++) {
    const char *key = keys[k].key, *v = kv_get(rec, key);
    if (v && pt_set_key(row, key, v, 0))
      rd_issue_add(is, ISSUE_WARNING, path, line, "config %s=\"%.40s\" is not a name", key, v);
  }
}

static void ours_config(const kv_record *rec, const pt_kv *keys, int nkeys, const char *path,
                        int line, pt_row *row, rd_issues *is) {
  take_name(row->experiment, kv_get(rec, "experiment"), path, line, "experiment", is);
  take_name(row->workload, kv_get(rec, "workload"), path, line, "workload", is);
  take_name(row->system, kv_get(rec, "system"), path, line, "system", is);
  config_default_keys(rec, keys, nkeys, path, line, row, is);
  const char *sc = kv_get(rec, "scale"); /* the softmax scale: the seed's problem_size has it */
  double v;
  if (sc && lv_parse_decimal(sc, strlen(sc), &v))
    rd_issue_add(is, ISSUE_WARNING, path, line, "config scale=\"%.40s\" is not a number", sc);
  else if (sc)
    row->scale = v;
}

/* What the line reader of one log of our format works on. */
typedef struct {
  const char *path;
  pt_row *row;
  rd_issues *is;
  const pt_row *named; /* the keys of the file name, or NULL */
  const pt_kv *keys;   /* the default keys */
  int nkeys;
  double date; /* meta date= in seconds since 1970, NAN when none */
} ours_ctx;

/* A result record: the last usable one gives the row (the runner may append one). After a
 * usable one, its issues are warnings: the verdict makes the cell ERR when it is unusable. */
static void ours_result_line(ours_ctx *c, const lv_line *ln) {
  pt_row tmp = *c->row;
  rd_issues mine = {0};
  if (ours_result(ln, c->path, &tmp, ln->after_result ? &mine : c->is) == 0) *c->row = tmp;
  for (size_t i = 0; i < mine.n; i++)
    rd_issue_add(c->is, ISSUE_WARNING, c->path, mine.v[i].line, "%s (the cell is ERR)",
                 mine.v[i].msg);
  rd_issues_free(&mine);
}

/* One complete record: a key twice is reported, then its tag says what it gives. */
static void ours_record(ours_ctx *c, const lv_line *ln) {
  const kv_record *rec = ln->rec;
  if (ln->repeated)
    rd_issue_add(c->is, ISSUE_WARNING, c->path, ln->line,
                 "key %.40s appears twice on this line (each key once): the cell is ERR",
                 ln->repeated);
  if (strcmp(rec->tag, "config") == 0) {
    ours_config(rec, c->keys, c->nkeys, c->path, ln->line, c->row, c->is);
    check_named_keys(rec, c->named, c->path, ln->line, c->is);
  } else if (strcmp(rec->tag, "meta") == 0) {
    ours_meta(rec, c->row);
    const char *d = kv_get(rec, "date");
    if (d && isnan(c->date)) c->date = rd_parse_date(d);
  } else if (ln->is_result) {
    ours_result_line(c, ln);
  }
}

/* lv_judge's line reader: each line that is not blank or a comment. */
static void ours_line(void *ctx, const lv_line *ln) {
  ours_ctx *c = ctx;
  if (ln->cut)
    rd_issue_add(c->is, ISSUE_WARNING, c->path, ln->line,
                 "last line is cut (%s; truncated log?): the cell is ERR",
                 ln->err ? ln->err : "no newline");
  else if (ln->err)
    rd_issue_add(c->is, ISSUE_WARNING, c->path, ln->line,
                 "column %d: not a `tag key=value ...` record (%s)", ln->column, ln->err);
  else
    ours_record(c, ln);
}

/* The verdict on the row read from a log of our format: 0, or -1 (an ISSUE_SKIPPED) when the
 * log has no usable result line. */
static int ours_verdict(const lv_verdict *v, const char *path, pt_row *row, rd_issues *is) {
  switch (v->cause) {
  case LV_NO_RESULT: rd_issue_add(is, ISSUE_SKIPPED, path, v->line, "%s", v->why); return -1;
  case LV_BAD_TIME: time_error(row, v->why); return 0;
  case LV_FAILED_CHECK:
    rd_issue_add(is, ISSUE_WARNING, path, v->line, "%s: the cell is ERR", v->why);
    rd_refuse(row, v->why);
    return 0;
  default:
    if (lv_cause_refused(v->cause)) rd_refuse(row, v->why); /* cut, malformed, a key twice */
    return 0;
  }
}

/* rd_parse_ours (reader_parts.h): the line reader over the log, then the verdict. */
int rd_parse_ours(const char *buf, size_t len, const char *path, pt_row *row, rd_issues *is,
                  const pt_row *named, const pt_kv *keys, int nkeys, double *date) {
  ours_ctx c = {.path = path,
                .row = row,
                .is = is,
                .named = named,
                .keys = keys,
                .nkeys = nkeys,
                .date = NAN};
  lv_verdict v;
  snprintf(row->format, sizeof row->format, "ours");
  lv_judge(buf, len, &v, ours_line, &c);
  if (date) *date = c.date;
  if (v.cause == LV_EMPTY || v.cause == LV_BINARY) {
    rd_issue_add(is, ISSUE_SKIPPED, path, 0, "%s", v.why);
    return -1;
  }
  if (v.cause == LV_FOREIGN) return RD_FOREIGN;
  return ours_verdict(&v, path, row, is);
}
