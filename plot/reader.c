/* reader: where a log becomes a number (see reader.h). */
#define _GNU_SOURCE           /* memmem */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "reader.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pcre2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fileio.h"
#include "kvline.h"
#include "logverdict.h"
#include "patterns.h"
#include "strbuf.h"

/* ---- issues ---- */

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

/* ---- compiled pattern table ---- */

typedef struct {
  pcre2_code *code;
  pcre2_match_data *md;
  int group[AE_NMETRICS]; /* capture group number of each metric, 0 when absent */
} compiled_pattern;

static compiled_pattern *compiled;

int rd_init(void) {
  if (compiled) return 0;
  compiled = calloc((size_t)ae_npatterns, sizeof *compiled);
  if (!compiled) return -1;
  for (int i = 0; i < ae_npatterns; i++) {
    int err;
    PCRE2_SIZE off;
    compiled_pattern *cp = &compiled[i];
    cp->code =
        pcre2_compile((PCRE2_SPTR)ae_patterns[i].regex, PCRE2_ZERO_TERMINATED, 0, &err, &off, NULL);
    if (!cp->code) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(err, msg, sizeof msg);
      fprintf(stderr, "plot/patterns.c: pattern \"%s\" column %zu: %s\n", ae_patterns[i].name,
              (size_t)off, (char *)msg);
      return -1;
    }
    pcre2_jit_compile(cp->code, PCRE2_JIT_COMPLETE); /* optional: falls back to the interpreter */
    cp->md = pcre2_match_data_create_from_pattern(cp->code, NULL);
    if (!cp->md) return -1;
    for (int m = 0; m < AE_NMETRICS; m++) {
      int g = pcre2_substring_number_from_name(cp->code, (PCRE2_SPTR)ae_metric_names[m]);
      cp->group[m] = g > 0 ? g : 0;
    }
  }
  return 0;
}

void rd_cleanup(void) {
  if (!compiled) return;
  for (int i = 0; i < ae_npatterns; i++) {
    pcre2_match_data_free(compiled[i].md);
    pcre2_code_free(compiled[i].code);
  }
  free(compiled);
  compiled = NULL;
}

/* ---- shared helpers ---- */

static int line_number(const char *buf, const char *at) {
  int n = 1;
  for (const char *p = buf; (p = memchr(p, '\n', (size_t)(at - p))); p++) n++;
  return n;
}

/* ---- the AE format ---- */

typedef struct {
  double v[AE_NMETRICS];
  int have[AE_NMETRICS];
  int status_set;
  pt_status status;
} ae_values;

/* Bounds of the line around p: lines end at \n, and \r (progress bars redraw with \r). */
static void line_bounds(const char *buf, const char *end, const char *p, const char **ls,
                        const char **le) {
  const char *s = p;
  while (s > buf && s[-1] != '\n' && s[-1] != '\r') s--;
  const char *e = p;
  while (e < end && *e != '\n' && *e != '\r') e++;
  *ls = s;
  *le = e;
}

/* Runs one pattern over buf[0, len). A line holding the literal that does not have the
 * pattern's shape sets *bad_shape (the first such line); one that has the shape but a value
 * that is not finite (or not positive where the pattern wants it) sets *bad_value and never
 * counts. Returns the number of lines that counted. */
static int ae_scan(int pi, const char *buf, size_t len, ae_values *vals, const char **bad_shape,
                   const char **bad_value) {
  const ae_pattern *pat = &ae_patterns[pi];
  compiled_pattern *cp = &compiled[pi];
  size_t litlen = strlen(pat->literal);
  const char *end = buf + len, *p = buf;
  int matched = 0;
  *bad_shape = *bad_value = NULL;
  while (p < end) {
    const char *hit = memmem(p, (size_t)(end - p), pat->literal, litlen);
    if (!hit) break;
    const char *ls, *le;
    line_bounds(buf, end, hit, &ls, &le);
    p = le < end ? le + 1 : end;
    if (pat->line_start && hit != ls) continue; /* start_peak_mem_mib=: another key */
    int rc = pcre2_match(cp->code, (PCRE2_SPTR)ls, (PCRE2_SIZE)(le - ls), 0, 0, cp->md, NULL);
    if (rc < 0) {
      if (!*bad_shape) *bad_shape = ls;
      continue;
    }
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(cp->md);
    double v[AE_NMETRICS];
    int have[AE_NMETRICS] = {0}, line_ok = 1;
    for (int m = 0; m < AE_NMETRICS; m++) {
      int g = cp->group[m];
      if (!g || ov[2 * g] == PCRE2_UNSET) continue;
      if (lv_parse_decimal(ls + ov[2 * g], ov[2 * g + 1] - ov[2 * g], &v[m]) || v[m] < 0 ||
          (pat->positive && v[m] <= 0))
        line_ok = 0;
      have[m] = 1;
    }
    if (!line_ok) { /* nan, inf, negative: never a value; a later line counts */
      if (!*bad_value) *bad_value = ls;
      continue;
    }
    for (int m = 0; m < AE_NMETRICS; m++) {
      if (!have[m] || (pat->pick == PICK_MAX && vals->have[m] && vals->v[m] >= v[m])) continue;
      vals->v[m] = v[m];
      vals->have[m] = 1;
    }
    if (pat->sets_status && !vals->status_set) {
      vals->status_set = 1;
      vals->status = pat->status;
    }
    matched = 1;
    if (pat->pick == PICK_FIRST) break;
  }
  return matched;
}

static int pattern_has_metrics(int pi) {
  for (int m = 0; m < AE_NMETRICS; m++)
    if (compiled[pi].group[m]) return 1;
  return 0;
}

static int ae_parse(const char *buf, size_t len, const char *path, pt_row *row, rd_issues *is) {
  ae_values vals;
  memset(&vals, 0, sizeof vals);
  /* A record counts only when complete: metrics are read from newline-terminated lines. A
   * cut last line that could hold one (it has a pattern's literal) makes the log torn. */
  const char *lastnl = len ? memrchr(buf, '\n', len) : NULL;
  size_t whole = lastnl ? (size_t)(lastnl - buf) + 1 : 0;
  int torn = 0;
  for (int i = 0; i < ae_npatterns && whole < len && !torn; i++)
    torn = pattern_has_metrics(i) && memmem(buf + whole, len - whole, ae_patterns[i].literal,
                                            strlen(ae_patterns[i].literal)) != NULL;
  const char *bad_time = NULL;
  for (int i = 0; i < ae_npatterns; i++) {
    const char *bad, *badv;
    int is_time = strcmp(ae_patterns[i].name, "time") == 0;
    int matched = ae_scan(i, buf, pattern_has_metrics(i) ? whole : len, &vals, &bad, &badv);
    if (badv) {
      rd_issue_add(is, ISSUE_WARNING, path, line_number(buf, badv),
                   "a \"%s\" line has a value that is not a finite%s number; it does not count",
                   ae_patterns[i].literal, ae_patterns[i].positive ? " positive" : "");
      if (is_time && !matched) bad_time = badv;
    }
    if (matched || !bad || !ae_patterns[i].required_shape) continue;
    int line = line_number(buf, bad);
    if (is_time) {
      rd_issue_add(is, ISSUE_SKIPPED, path, line,
                   "time line does not match \"[sys] avg <f> ms, min <f> ms, max <f> ms[, <f> "
                   "gflops/s] (<n> runs, <n> warmups[, profiled])\" (truncated?)");
      return -1;
    }
    rd_issue_add(is, ISSUE_WARNING, path, line, "a \"%s\" line does not have the expected shape %s",
                 ae_patterns[i].literal, ae_patterns[i].regex);
  }
  snprintf(row->format, sizeof row->format, "ae");
  if (torn) {
    row->status = ST_ERROR;
    snprintf(row->reason, sizeof row->reason, "torn log: the last line is cut (no newline)");
    rd_issue_add(is, ISSUE_WARNING, path, line_number(buf, buf + whole),
                 "last line is cut (no newline; truncated log?): the cell is ERR");
    return 0;
  }
  if (vals.have[AE_AVG_MS]) {
    row->status = ST_OK;
    row->avg_ms = vals.v[AE_AVG_MS];
    row->min_ms = vals.have[AE_MIN_MS] ? vals.v[AE_MIN_MS] : NAN;
    row->max_ms = vals.have[AE_MAX_MS] ? vals.v[AE_MAX_MS] : NAN;
    row->gflops_s = vals.have[AE_GFLOPS_S] ? vals.v[AE_GFLOPS_S] : NAN;
  } else if (bad_time) {
    row->status = ST_ERROR;
    snprintf(row->reason, sizeof row->reason,
             "the time line (line %d) has no finite positive avg/min/max",
             line_number(buf, bad_time));
  } else if (vals.status_set) {
    row->status = vals.status;
    snprintf(row->reason, sizeof row->reason, "no time line; output says %s",
             pt_status_name(vals.status));
  } else {
    row->status = ST_UNSUPPORTED; /* the artifact's convention: no time line = NS */
    snprintf(row->reason, sizeof row->reason, "no time line");
  }
  /* TensorRT logs: activation + weights bytes win over mib= (the artifact's rule) */
  if (vals.have[AE_TRT_ACT_BYTES] || vals.have[AE_TRT_WEIGHT_BYTES])
    row->peak_mib = ((vals.have[AE_TRT_ACT_BYTES] ? vals.v[AE_TRT_ACT_BYTES] : 0) +
                     (vals.have[AE_TRT_WEIGHT_BYTES] ? vals.v[AE_TRT_WEIGHT_BYTES] : 0)) /
                    (1024.0 * 1024.0);
  else if (vals.have[AE_MIB])
    row->peak_mib = vals.v[AE_MIB];
  return 0;
}

/* ---- our format ----
 * Whether a log of our format is good, and why not, is common/logverdict.c's rule (the
 * runner's too); this reads the values and says where each line is odd. */

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

/* The value of the n decimal digits at s, or -1 when they are not all digits. */
static int digits_at(const char *s, int n) {
  int v = 0;
  for (int i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

/* meta date= as the harness writes it (2026-11-22T00:01:46Z, UTC) in seconds since 1970, or
 * NAN when it is not that. */
static double parse_date(const char *s) {
  if (strlen(s) != 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' ||
      s[16] != ':' || s[19] != 'Z')
    return NAN;
  int y = digits_at(s, 4), mo = digits_at(s + 5, 2), d = digits_at(s + 8, 2),
      h = digits_at(s + 11, 2), mi = digits_at(s + 14, 2), sec = digits_at(s + 17, 2);
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 ||
      sec < 0 || sec > 60)
    return NAN;
  struct tm tm = {.tm_year = y - 1900,
                  .tm_mon = mo - 1,
                  .tm_mday = d,
                  .tm_hour = h,
                  .tm_min = mi,
                  .tm_sec = sec};
  return (double)timegm(&tm);
}

/* Makes row ERR with reason: no numbers. */
static void refuse(pt_row *row, const char *reason) {
  row->status = ST_ERROR;
  row->avg_ms = row->min_ms = row->max_ms = row->gflops_s = row->peak_mib = NAN;
  row->compile_s = NAN;
  pt_utf8_copy(row->reason, sizeof row->reason, reason);
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

/* The config line's values of the default keys (o: NULL for none); the file name's win later. */
static void config_default_keys(const kv_record *rec, const rd_opts *o, const char *path, int line,
                                pt_row *row, rd_issues *is) {
  for (int k = 0; o && k < o->ndefault_keys; k++) {
    const char *key = o->default_keys[k].key, *v = kv_get(rec, key);
    if (v && pt_set_key(row, key, v, 0))
      rd_issue_add(is, ISSUE_WARNING, path, line, "config %s=\"%.40s\" is not a name", key, v);
  }
}

static void ours_config(const kv_record *rec, const rd_opts *o, const char *path, int line,
                        pt_row *row, rd_issues *is) {
  take_name(row->experiment, kv_get(rec, "experiment"), path, line, "experiment", is);
  take_name(row->workload, kv_get(rec, "workload"), path, line, "workload", is);
  take_name(row->system, kv_get(rec, "system"), path, line, "system", is);
  config_default_keys(rec, o, path, line, row, is);
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
  const rd_opts *o;    /* NULL: no default keys */
  double date;         /* meta date= in seconds since 1970, NAN when none */
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
    ours_config(rec, c->o, c->path, ln->line, c->row, c->is);
    check_named_keys(rec, c->named, c->path, ln->line, c->is);
  } else if (strcmp(rec->tag, "meta") == 0) {
    ours_meta(rec, c->row);
    const char *d = kv_get(rec, "date");
    if (d && isnan(c->date)) c->date = parse_date(d);
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
    refuse(row, v->why);
    return 0;
  default:
    if (lv_cause_refused(v->cause)) refuse(row, v->why); /* cut, malformed, a key twice */
    return 0;
  }
}

/* rd_parse_buffer, checking the config line against the keys of the file name (named),
 * reading the default keys of o from it (o may be NULL) and setting *date (may be NULL) to the
 * log's meta date= in seconds since 1970, NAN when it has none. An empty or binary file is
 * skipped; one not of our format is read as the artifact's. */
static int parse_buffer(const char *buf, size_t len, const char *path, pt_row *row, rd_issues *is,
                        const pt_row *named, const rd_opts *o, double *date) {
  ours_ctx c = {.path = path, .row = row, .is = is, .named = named, .o = o, .date = NAN};
  lv_verdict v;
  snprintf(row->format, sizeof row->format, "ours");
  lv_judge(buf, len, &v, ours_line, &c);
  if (date) *date = c.date;
  if (v.cause == LV_EMPTY || v.cause == LV_BINARY) {
    rd_issue_add(is, ISSUE_SKIPPED, path, 0, "%s", v.why);
    return -1;
  }
  if (v.cause == LV_FOREIGN) return ae_parse(buf, len, path, row, is);
  return ours_verdict(&v, path, row, is);
}

int rd_parse_buffer(const char *buf, size_t len, const char *path, pt_row *row, rd_issues *is) {
  return parse_buffer(buf, len, path, row, is, NULL, NULL, NULL);
}

/* ---- file names ---- */

static char *key_field(pt_row *row, const char *name, size_t n) {
  if (n == 10 && memcmp(name, "experiment", n) == 0) return row->experiment;
  if (n == 6 && memcmp(name, "device", n) == 0) return row->device;
  if (n == 8 && memcmp(name, "workload", n) == 0) return row->workload;
  if (n == 6 && memcmp(name, "system", n) == 0) return row->system;
  return NULL;
}

int rd_match_name(const char *tmpl, const char *base, pt_row *row) {
  const char *t = tmpl, *b = base;
  while (*t) {
    if (*t != '{') {
      if (*t++ != *b++) return -1;
      continue;
    }
    const char *close = strchr(t, '}');
    if (!close) return -1;
    const char *key = t + 1;
    size_t klen = (size_t)(close - key);
    t = close + 1;
    /* a value runs to the next literal character of the template (values hold no '.') */
    const char *vend = *t ? strchr(b, *t) : b + strlen(b);
    if (!vend || vend == b) return -1;
    size_t vlen = (size_t)(vend - b);
    if (vlen >= PT_NAME) return -1;
    char val[PT_NAME];
    memcpy(val, b, vlen);
    val[vlen] = '\0';
    if (!pt_valid_name(val)) return -1;
    char *dst = key_field(row, key, klen);
    if (dst) {
      strcpy(dst, val);
    } else {
      char kname[PT_KEY];
      if (klen >= sizeof kname) return -1;
      memcpy(kname, key, klen);
      kname[klen] = '\0';
      if (pt_set_key(row, kname, val, 1)) return -1;
    }
    b = vend;
  }
  if (*b) return -1;
  for (char *d = row->device; *d; d++) *d = (char)tolower((unsigned char)*d);
  return 0;
}

/* ---- files and directories ---- */

static void canon_key(const rd_opts *o, rd_axis axis, char *key) {
  if (!o->canon || !*key) return;
  const char *c = o->canon(o->canon_ctx, axis, key);
  if (c != key && strlen(c) < PT_NAME) memmove(key, c, strlen(c) + 1);
}

int rd_complete_row(const rd_opts *o, pt_row *row) {
  if (!row->experiment[0] && o->default_experiment)
    snprintf(row->experiment, PT_NAME, "%s", o->default_experiment);
  if (!row->workload[0] && o->default_workload)
    snprintf(row->workload, PT_NAME, "%s", o->default_workload);
  for (int k = 0; k < o->ndefault_keys; k++)
    if (!pt_key_value(row, o->default_keys[k].key))
      pt_set_key(row, o->default_keys[k].key, o->default_keys[k].val, 0);
  char *names[] = {row->experiment, row->device, row->workload, row->system}; /* rd_axis order */
  for (int a = AXIS_EXPERIMENT; a <= AXIS_SYSTEM; a++) canon_key(o, (rd_axis)a, names[a]);
  /* a cell named by case keys (m, seqlen, ...) needs no workload: a log the runner wrote for
   * a binary that never printed its config line still tells its cell */
  return (!row->workload[0] && !pt_case_keys(row)) || !row->system[0] || !row->device[0] ? -1 : 0;
}

/* Keys from the file name win; the config line fills only what the name lacks. A config line
 * that contradicts the name is a warning, because one of the two is mislabelled. */
static void merge_keys(const pt_row *named, pt_row *row, const char *path, rd_issues *is) {
  const char *names[] = {"experiment", "workload", "system"};
  char *dst[] = {row->experiment, row->workload, row->system};
  const char *src[] = {named->experiment, named->workload, named->system};
  for (int k = 0; k < 3; k++) {
    if (!src[k][0]) continue;
    if (dst[k][0] && strcmp(dst[k], src[k]) != 0)
      rd_issue_add(is, ISSUE_WARNING, path, 0, "file name says %s=%s but the log says %s", names[k],
                   src[k], dst[k]);
    strcpy(dst[k], src[k]);
  }
  strcpy(row->device, named->device);
  /* the name's case keys (checked against the config line), then the config line's others */
  pt_row cfg = *row;
  memcpy(row->keys, named->keys, sizeof row->keys);
  row->nkeys = named->nkeys;
  for (int k = 0; k < cfg.nkeys; k++)
    if (row->nkeys < PT_MAXKEYS && !pt_key_value(row, cfg.keys[k].key))
      row->keys[row->nkeys++] = cfg.keys[k];
}

/* What the walk has seen: (st_dev, st_ino) of every directory walked and file read, so
 * directory links to . or .. and second names of one file never read anything twice. */
typedef struct {
  dev_t dev;
  ino_t ino;
  char *path; /* where it was first seen */
} seen_entry;

typedef struct {
  seen_entry *v; /* open addressing, cap a power of two */
  size_t n, cap;
} seen_set;

static size_t seen_hash(dev_t d, ino_t i, size_t cap) {
  unsigned long long h = (unsigned long long)i * 0x9E3779B97F4A7C15ull ^ (unsigned long long)d;
  return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

/* Returns the path first seen with (dev, ino), or NULL after adding it as path. */
static const char *seen_add(seen_set *s, dev_t dev, ino_t ino, const char *path) {
  if (2 * (s->n + 1) > s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 64;
    seen_entry *nv = calloc(cap, sizeof *nv);
    if (!nv) return NULL; /* out of memory: reading twice beats not reading */
    for (size_t i = 0; i < s->cap; i++) {
      if (!s->v[i].path) continue;
      size_t h = seen_hash(s->v[i].dev, s->v[i].ino, cap);
      while (nv[h].path) h = (h + 1) & (cap - 1);
      nv[h] = s->v[i];
    }
    free(s->v);
    s->v = nv;
    s->cap = cap;
  }
  size_t h = seen_hash(dev, ino, s->cap);
  for (; s->v[h].path; h = (h + 1) & (s->cap - 1))
    if (s->v[h].dev == dev && s->v[h].ino == ino) return s->v[h].path;
  char *copy = strdup(path);
  if (!copy) return NULL;
  s->v[h] = (seen_entry){dev, ino, copy};
  s->n++;
  return NULL;
}

static void seen_free(seen_set *s) {
  for (size_t i = 0; i < s->cap; i++) free(s->v[i].path);
  free(s->v);
}

/* When a log was written, for --latest: its meta date=, else its file's modification time. */
typedef struct {
  double when; /* seconds since 1970 */
  int from_meta;
} log_date;

typedef struct {
  const rd_opts *o;
  pt_table *t;
  rd_issues *is;
  seen_set dirs, files;
  const char *root; /* the path given to rd_read_path */
  char *root_real;  /* its real path (owned); links whose target is outside are not followed */
  size_t start;     /* the table's row count before the walk */
  log_date *dates;  /* one per row the walk added (owned) */
  size_t ndates, capdates;
  rd_file_fn on_file; /* rd_walk_files: called with each file instead of reading rows */
  void *on_file_ctx;
  const char *suffix; /* rd_walk_files: the file names it visits end so */
} walk_ctx;

static const char *file_kind(mode_t m) {
  return S_ISFIFO(m)   ? "a FIFO"
         : S_ISSOCK(m) ? "a socket"
         : S_ISCHR(m)  ? "a character device"
         : S_ISBLK(m)  ? "a block device"
                       : "not a regular file";
}

/* Reads a regular file whole; never blocks on a FIFO or device (opened O_NONBLOCK and
 * checked with fstat before any read). Returns the NUL-terminated buffer, or NULL with why. */
static char *slurp_regular(const char *path, size_t max, size_t *len, struct stat *st, char *why,
                           size_t cap) {
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    snprintf(why, cap, "%s", strerror(errno));
    return NULL;
  }
  char *buf = NULL;
  if (fstat(fd, st) != 0) {
    snprintf(why, cap, "%s", strerror(errno));
  } else if (!S_ISREG(st->st_mode)) {
    snprintf(why, cap, "%s, not a regular file", file_kind(st->st_mode));
  } else if ((size_t)st->st_size > max) {
    snprintf(why, cap, "larger than %zu bytes (the limit)", max);
  } else if (!(buf = malloc((size_t)st->st_size + 1))) {
    snprintf(why, cap, "out of memory");
  } else {
    size_t n = 0, want = (size_t)st->st_size;
    while (n < want) { /* a file that shrinks while read ends early; one that grows is cut */
      ssize_t r = read(fd, buf + n, want - n);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) {
        snprintf(why, cap, "%s", strerror(errno));
        free(buf);
        buf = NULL;
        break;
      }
      if (r == 0) break;
      n += (size_t)r;
    }
    if (buf) {
      buf[n] = '\0';
      *len = n;
    }
  }
  close(fd);
  return buf;
}

/* The file name against the template(s): with several, the first that matches and names its
 * own experiment ({experiment} is in each, config.c checks). */
static int match_templates(const rd_opts *o, const char *base, pt_row *named) {
  if (o->nlog_names == 0) {
    pt_row_init(named);
    return rd_match_name(o->log_name, base, named);
  }
  for (int i = 0; i < o->nlog_names; i++) {
    pt_row_init(named);
    if (rd_match_name(o->log_names[i], base, named) == 0 &&
        !strcmp(named->experiment, o->log_experiments[i]))
      return 0;
  }
  return -1;
}

/* Remembers the date of the row just added; 0, or -1 when out of memory. */
static int add_date(walk_ctx *w, double meta_date, const struct stat *st) {
  if (w->ndates == w->capdates) {
    size_t cap = w->capdates ? 2 * w->capdates : 64;
    log_date *nd = realloc(w->dates, cap * sizeof *nd);
    if (!nd) return -1;
    w->dates = nd;
    w->capdates = cap;
  }
  log_date *d = &w->dates[w->ndates++];
  d->from_meta = !isnan(meta_date);
  d->when = d->from_meta ? meta_date : (double)st->st_mtim.tv_sec + st->st_mtim.tv_nsec * 1e-9;
  return 0;
}

/* A file of the walk read whole (at most REPRO_MAX_LOG_BYTES: a 1 GiB "log" is not a log), or
 * NULL with the issue added: it cannot be read, or the walk read it already (a second link to
 * the same file). The caller frees the buffer. */
static char *read_once(walk_ctx *w, const char *path, size_t *len, struct stat *st) {
  char why[128];
  char *buf = slurp_regular(path, REPRO_MAX_LOG_BYTES, len, st, why, sizeof why);
  if (!buf) {
    rd_issue_add(w->is, ISSUE_SKIPPED, path, 0, "cannot read: %s", why);
    return NULL;
  }
  const char *first = seen_add(&w->files, st->st_dev, st->st_ino, path);
  if (first) {
    rd_issue_add(w->is, ISSUE_SKIPPED, path, 0,
                 "already read as %s (the same file): not read twice", first);
    free(buf);
    return NULL;
  }
  return buf;
}

static int read_file(walk_ctx *w, const char *path) {
  const rd_opts *o = w->o;
  rd_issues *is = w->is;
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  pt_row named;
  if (match_templates(o, base, &named) != 0) {
    char all[RD_MAX_TEMPLATES * 130] = "";
    for (int i = 0; i < o->nlog_names; i++)
      snprintf(all + strlen(all), sizeof all - strlen(all), "%s%s", i ? " or " : "",
               o->log_names[i]);
    rd_issue_add(is, ISSUE_SKIPPED, path, 0, "unknown file: name does not match %s",
                 o->nlog_names ? all : o->log_name);
    return 0;
  }
  size_t len = 0;
  struct stat st;
  char *buf = read_once(w, path, &len, &st);
  if (!buf) return 0;
  pt_row row;
  pt_row_init(&row);
  double date;
  int rc = parse_buffer(buf, len, path, &row, is, &named, o, &date);
  free(buf);
  if (rc != 0) return 0;
  merge_keys(&named, &row, path, is);
  snprintf(row.figure, sizeof row.figure, "%s", o->figure ? o->figure : "");
  pt_utf8_copy(row.source, sizeof row.source, path);
  if (rd_complete_row(o, &row) != 0) {
    rd_issue_add(is, ISSUE_SKIPPED, path, 0,
                 "cannot tell the cell: device, workload and system must come from the file "
                 "name, the config line or the figure's defaults");
    return 0;
  }
  if (pt_append(w->t, &row) != 0 || add_date(w, date, &st) != 0) {
    w->t->n = w->start + w->ndates; /* the row and its date, or neither */
    rd_issue_add(is, ISSUE_SKIPPED, path, 0, "out of memory");
    return 0;
  }
  return 1;
}

/* rd_walk_files' visit: a file whose name ends in the suffix, read whole once, handed over. */
static int visit_file(walk_ctx *w, const char *path) {
  size_t plen = strlen(path), slen = strlen(w->suffix);
  if (plen < slen || strcmp(path + plen - slen, w->suffix) != 0) return 0;
  size_t len = 0;
  struct stat st;
  char *buf = read_once(w, path, &len, &st);
  if (!buf) return 0;
  w->on_file(w->on_file_ctx, path, buf, len);
  free(buf);
  return 1;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int walk_dir(walk_ctx *w, const char *path, const struct stat *dst);

/* 1 when the real path of link full lies inside the walk's root (or the root is unknown). */
static int link_inside_root(const walk_ctx *w, const char *full) {
  if (!w->root_real) return 1;
  char *real = realpath(full, NULL);
  if (!real) return 0;
  size_t n = strlen(w->root_real);
  int inside = !strcmp(w->root_real, "/") ||
               (!strncmp(real, w->root_real, n) && (real[n] == '/' || real[n] == '\0'));
  free(real);
  return inside;
}

/* One directory entry: lstat first, so a dangling link is reported and a FIFO, socket or
 * device is listed without ever being opened; a link whose target lies outside the root is
 * listed once and not followed. */
static int walk_entry(walk_ctx *w, const char *full) {
  struct stat lst, st;
  if (lstat(full, &lst) != 0) {
    rd_issue_add(w->is, ISSUE_SKIPPED, full, 0, "cannot stat: %s", strerror(errno));
    return 0;
  }
  st = lst;
  if (S_ISLNK(lst.st_mode)) {
    char target[PT_PATH];
    ssize_t n = readlink(full, target, sizeof target - 1);
    target[n > 0 ? n : 0] = '\0';
    if (stat(full, &st) != 0) {
      rd_issue_add(w->is, ISSUE_SKIPPED, full, 0, "dangling symlink (-> %s): %s", target,
                   strerror(errno));
      return 0;
    }
    if (!link_inside_root(w, full)) {
      rd_issue_add(w->is, ISSUE_SKIPPED, full, 0,
                   "symlink leads out of the log folder (-> %s): not followed", target);
      return 0;
    }
  }
  if (S_ISDIR(st.st_mode)) return walk_dir(w, full, &st);
  if (!S_ISREG(st.st_mode)) {
    rd_issue_add(w->is, ISSUE_SKIPPED, full, 0, "%s, not a regular file: not read",
                 file_kind(st.st_mode));
    return 0;
  }
  return w->on_file ? visit_file(w, full) : read_file(w, full);
}

static int walk_dir(walk_ctx *w, const char *path, const struct stat *dst) {
  const char *first = seen_add(&w->dirs, dst->st_dev, dst->st_ino, path);
  if (first) {
    rd_issue_add(w->is, ISSUE_SKIPPED, path, 0,
                 "directory already read as %s (a symlink loop?): not read twice", first);
    return 0;
  }
  DIR *d = opendir(path);
  if (!d) {
    rd_issue_add(w->is, ISSUE_SKIPPED, path, 0, "cannot open directory: %s", strerror(errno));
    return -1;
  }
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *de;
  while ((de = readdir(d))) {
    if (de->d_name[0] == '.') continue; /* ., .., .gitkeep */
    if (n == cap) {
      cap = cap ? cap * 2 : 64;
      char **nn = realloc(names, cap * sizeof *nn);
      if (!nn) break;
      names = nn;
    }
    if (!(names[n] = strdup(de->d_name))) break;
    n++;
  }
  closedir(d);
  if (n > 1) qsort(names, n, sizeof *names, cmp_str);
  int added = 0;
  for (size_t i = 0; i < n; i++) {
    char full[PT_PATH];
    int wr = snprintf(full, sizeof full, "%s/%s", path, names[i]);
    free(names[i]);
    if (wr < 0 || (size_t)wr >= sizeof full) {
      rd_issue_add(w->is, ISSUE_SKIPPED, path, 0, "path too long: %s/...", path);
      continue;
    }
    int r = walk_entry(w, full);
    if (r > 0) added += r;
  }
  free(names);
  return added;
}

/* ---- one row per cell: two logs of one cell are an error, or --latest picks the newest ---- */

/* A hash of a row's cell (pt_same_cell: experiment, device, workload, system, and its keys in
 * any order). */
static unsigned long long fnv(unsigned long long h, const char *s) {
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return (h ^ 0xffu) * 1099511628211ull; /* a separator: "ab","c" is not "a","bc" */
}

static unsigned long long cell_hash(const pt_row *r) {
  const unsigned long long basis = 1469598103934665603ull;
  unsigned long long h =
      fnv(fnv(fnv(fnv(basis, r->experiment), r->device), r->workload), r->system);
  unsigned long long keys = 0;
  for (int k = 0; k < r->nkeys; k++) keys += fnv(fnv(basis, r->keys[k].key), r->keys[k].val);
  return h ^ (keys * 0x9E3779B97F4A7C15ull);
}

typedef struct {
  unsigned long long hash;
  size_t i; /* the row's index from the walk's start */
} cell_ref;

static int cmp_cell_ref(const void *a, const void *b) {
  const cell_ref *x = a, *y = b;
  if (x->hash != y->hash) return x->hash < y->hash ? -1 : 1;
  return (x->i > y->i) - (x->i < y->i);
}

/* A log's path as messages name it: below the walk's root, else whole. */
static const char *rel_name(const walk_ctx *w, const char *source) {
  size_t n = strlen(w->root);
  if (strncmp(source, w->root, n) != 0 || source[n] != '/') return source;
  while (source[n] == '/') n++;
  return source + n;
}

/* "2026-03-01T12:00:00Z", with ", file time" when the log had no meta date. */
static void fmt_date(const log_date *d, char *buf, size_t cap) {
  time_t t = (time_t)d->when;
  struct tm tm;
  if (!gmtime_r(&t, &tm) || !strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm)) snprintf(buf, cap, "?");
  if (!d->from_meta) snprintf(buf + strlen(buf), cap - strlen(buf), ", file time");
}

/* --latest: the newest log of the cell (members m[0..k), keep) stays; the others are listed as
 * not drawn, naming the one drawn. */
static void newest_wins(walk_ctx *w, const size_t *m, size_t k, size_t keep, unsigned char *drop) {
  const pt_row *rows = w->t->rows + w->start;
  char newest[48], older[48];
  fmt_date(&w->dates[m[keep]], newest, sizeof newest);
  for (size_t i = 0; i < k; i++) {
    if (i == keep) continue;
    drop[m[i]] = 1;
    fmt_date(&w->dates[m[i]], older, sizeof older);
    rd_issue_add(w->is, ISSUE_NOT_DRAWN, rows[m[i]].source, 0,
                 "an older log of this cell (dated %s): --latest draws %s (dated %s)", older,
                 rel_name(w, rows[m[keep]].source), newest);
  }
}

/* Several logs of one cell and no newest to pick: the first one's row stays as ERR naming them
 * all, the others are listed and go. tie: --latest found no single newest. */
static void cell_error(walk_ctx *w, const size_t *m, size_t k, int tie, unsigned char *drop) {
  pt_row *rows = w->t->rows + w->start;
  const char *hint =
      tie ? "the newest have the same date, --latest cannot choose" : "--latest draws the newest";
  char all[PT_REASON] = "", others[PT_REASON] = "", why[PT_REASON];
  for (size_t i = 0; i < k; i++) {
    const char *name = rel_name(w, rows[m[i]].source);
    text_set(all + strlen(all), sizeof all - strlen(all), "%s%s", i ? ", " : "", name);
    if (i)
      text_set(others + strlen(others), sizeof others - strlen(others), "%s%s", i > 1 ? ", " : "",
               name);
  }
  for (size_t i = 1; i < k; i++) {
    drop[m[i]] = 1;
    rd_issue_add(w->is, ISSUE_SKIPPED, rows[m[i]].source, 0,
                 "another log of the cell of %s: the cell is ERR (%s)",
                 rel_name(w, rows[m[0]].source), hint);
  }
  rd_issue_add(w->is, ISSUE_WARNING, rows[m[0]].source, 0,
               "%zu logs of one cell (the cell is ERR; %s): this one and %s", k, hint, others);
  text_set(why, sizeof why, "%zu logs of this cell (%s): %s", k, hint, all);
  refuse(&rows[m[0]], why);
}

/* One cell's logs m[0..k), in walk order. */
static void one_cell(walk_ctx *w, const size_t *m, size_t k, unsigned char *drop) {
  size_t keep = 0;
  int tie = 0;
  if (w->o->latest) {
    for (size_t i = 1; i < k; i++)
      if (w->dates[m[i]].when > w->dates[m[keep]].when) keep = i;
    for (size_t i = 0; i < k; i++)
      tie |= i != keep && w->dates[m[i]].when == w->dates[m[keep]].when;
    if (!tie) {
      newest_wins(w, m, k, keep, drop);
      return;
    }
  }
  cell_error(w, m, k, tie, drop);
}

/* The rows the walk added, one per cell: rows of one cell (sorted by cell hash, then compared
 * with pt_same_cell) go to one_cell, and the rows it drops leave the table. */
static void one_row_per_cell(walk_ctx *w) {
  size_t n = w->t->n - w->start;
  if (n < 2) return;
  cell_ref *refs = malloc(n * sizeof *refs);
  size_t *members = malloc(n * sizeof *members);
  unsigned char *drop = calloc(n, 1), *grouped = calloc(n, 1);
  if (refs && members && drop && grouped) {
    const pt_row *rows = w->t->rows + w->start;
    for (size_t i = 0; i < n; i++) refs[i] = (cell_ref){cell_hash(&rows[i]), i};
    qsort(refs, n, sizeof *refs, cmp_cell_ref);
    for (size_t a = 0; a < n; a++) {
      if (grouped[refs[a].i]) continue;
      size_t k = 0;
      members[k++] = refs[a].i;
      for (size_t b = a + 1; b < n && refs[b].hash == refs[a].hash; b++)
        if (!grouped[refs[b].i] && pt_same_cell(&rows[refs[a].i], &rows[refs[b].i])) {
          grouped[refs[b].i] = 1;
          members[k++] = refs[b].i;
        }
      if (k > 1) one_cell(w, members, k, drop);
    }
    size_t out = w->start;
    for (size_t i = 0; i < n; i++) {
      if (drop[i]) continue;
      if (out != w->start + i) w->t->rows[out] = w->t->rows[w->start + i];
      out++;
    }
    w->t->n = out;
  }
  free(refs);
  free(members);
  free(drop);
  free(grouped);
}

/* What a walk owns. */
static void walk_free(walk_ctx *w) {
  seen_free(&w->dirs);
  seen_free(&w->files);
  free(w->root_real);
  free(w->dates);
}

int rd_read_path(const rd_opts *o, const char *path, pt_table *t, rd_issues *is) {
  struct stat st;
  if (stat(path, &st) != 0) return -1;
  walk_ctx w = {.o = o, .t = t, .is = is, .root = path, .start = t->n};
  int r = 0;
  if (S_ISDIR(st.st_mode)) {
    if (access(path, R_OK | X_OK) != 0) return -1;
    w.root_real = realpath(path, NULL);
    r = walk_dir(&w, path, &st);
  } else if (!S_ISREG(st.st_mode)) {
    rd_issue_add(is, ISSUE_SKIPPED, path, 0, "%s, not a regular file: not read",
                 file_kind(st.st_mode));
  } else {
    read_file(&w, path);
  }
  one_row_per_cell(&w);
  walk_free(&w);
  return r < 0 ? -1 : (int)(t->n - w.start);
}

int rd_walk_files(const char *path, const char *suffix, rd_file_fn fn, void *ctx, rd_issues *is) {
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode) || access(path, R_OK | X_OK) != 0) return -1;
  walk_ctx w = {.is = is, .root = path, .on_file = fn, .on_file_ctx = ctx, .suffix = suffix};
  w.root_real = realpath(path, NULL);
  int r = walk_dir(&w, path, &st);
  walk_free(&w);
  return r;
}
