/* reader_artifact: a log of the FlashTensor-AE artifact's format, free text scanned with the
 * pattern table of patterns.c (compiled once, rd_init): its time line, memory and status. */
#define _GNU_SOURCE           /* memmem, memrchr */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "reader_parts.h"

#include <math.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "logverdict.h"
#include "patterns.h"

/* ---- compiled pattern table ---- */

typedef struct {
  pcre2_code *code;
  pcre2_match_data *md;
  int group[AE_NMETRICS]; /* capture group number of each metric, 0 when absent */
} compiled_pattern;

static compiled_pattern *compiled;

int rd_artifact_init(void) {
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

void rd_artifact_cleanup(void) {
  if (!compiled) return;
  for (int i = 0; i < ae_npatterns; i++) {
    pcre2_match_data_free(compiled[i].md);
    pcre2_code_free(compiled[i].code);
  }
  free(compiled);
  compiled = NULL;
}

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

int rd_parse_artifact(const char *buf, size_t len, const char *path, pt_row *row, rd_issues *is) {
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
