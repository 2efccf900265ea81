/* logverdict: whether a cell's log is good, and why not (see logverdict.h). */
#define _GNU_SOURCE /* memmem */
#include "logverdict.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

/* What the lines read so far say (lv_judge's state). */
typedef struct {
  int cut;         /* the line that is cut, 0 when none */
  int have_result; /* a usable result line was read */
  int last_bad;    /* the line of an unusable result line after it, 0 when none */
  int result_line; /* the last usable result line */
  int bad_time;    /* it says status=ok with no positive finite avg_ms */
  char status[32], state[32], reason[256]; /* its values */
  int nfailed, check_line;                 /* check lines that did not pass; the first one's line */
  char check_what[128]; /* "check output=lse failed (line 4: rel_l2=2.5e-01 ...)" */
  int dup_line;         /* the first line with a key twice, 0 when none */
  char dup_key[48];
  /* the lines of the log's one meta and one config record, and the first second one of either */
  int meta_line, config_line, again_line, again_first;
  const char *again_tag;
  char problem[128]; /* why the current result line is not usable */
} lv_state;

/* Copies src into dst[0, cap), cut to fit (a byte copy: this runs on every result line). */
static void copy_text(char *dst, size_t cap, const char *src) {
  size_t n = strlen(src);
  if (n >= cap) n = cap - 1;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

int lv_cause_refused(lv_cause c) { return c >= LV_CUT && c <= LV_FAILED_CHECK; }

int lv_status_final(const char *status) {
  return strcmp(status, "ok") == 0 || strcmp(status, "unsupported") == 0 ||
         strcmp(status, "oom") == 0;
}

/* The status words a result line may say. */
static int status_known(const char *status) {
  return lv_status_final(status) || strcmp(status, "error") == 0 || strcmp(status, "timeout") == 0;
}

/* ---- numbers ---- */

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* The number of decimal digits at s[*i..len), *i moved past them. */
static size_t skip_digits(const char *s, size_t len, size_t *i) {
  size_t from = *i;
  while (*i < len && is_digit(s[*i])) ++*i;
  return *i - from;
}

/* 1 when [s, s+len) has the shape of a decimal number (lv_parse_decimal's grammar). */
static int decimal_shape(const char *s, size_t len) {
  size_t i = 0;
  if (i < len && (s[i] == '+' || s[i] == '-')) i++;
  size_t digits = skip_digits(s, len, &i);
  if (i < len && s[i] == '.') {
    i++;
    digits += skip_digits(s, len, &i);
  }
  if (!digits) return 0;
  if (i < len && (s[i] == 'e' || s[i] == 'E')) {
    i++;
    if (i < len && (s[i] == '+' || s[i] == '-')) i++;
    if (!skip_digits(s, len, &i)) return 0;
  }
  return i == len;
}

int lv_parse_decimal(const char *s, size_t len, double *out) {
  if (!decimal_shape(s, len)) return LV_NUM_SYNTAX;
  char small[64], *text = len < sizeof small ? small : malloc(len + 1);
  if (!text) return LV_NUM_SYNTAX;
  memcpy(text, s, len);
  text[len] = '\0';
  errno = 0;
  double v = strtod(text, NULL); /* the text is decimal: strtod reads all of it */
  int range = errno == ERANGE && isinf(v);
  if (text != small) free(text);
  if (range) return LV_NUM_RANGE; /* an underflow is a number near 0, and kept */
  *out = v;
  return 0;
}

const char *lv_num_problem(int rc) {
  return rc == LV_NUM_RANGE ? "is too large for a double (not finite)" : "is not a decimal number";
}

/* ---- the whole file ---- */

/* A file is binary when it holds NUL bytes or, in its first 64 KiB, control characters above
 * 1%. Progress bars (\r, \b), ANSI colours (ESC) and UTF-8 bars are text. */
static int looks_binary(const char *buf, size_t len) {
  if (memchr(buf, '\0', len)) return 1;
  size_t n = len < 65536 ? len : 65536, ctrl = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)buf[i];
    if (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != 0x1b && c != '\b' && c != '\f')
      ctrl++;
  }
  return ctrl * 100 > n;
}

/* Our format: the "# repro-log" header, or a result line at the start of a line (a log holding
 * only the runner's line: the program never started). */
static int is_our_format(const char *buf, size_t len) {
  static const char head[] = "# repro-log";
  if (len >= sizeof head - 1 && memcmp(buf, head, sizeof head - 1) == 0) return 1;
  static const char res[] = "result status=";
  if (len >= sizeof res - 1 && memcmp(buf, res, sizeof res - 1) == 0) return 1;
  return memmem(buf, len, "\nresult status=", sizeof res) != NULL;
}

/* ---- records ---- */

/* The first key that rec holds twice, or NULL. Keys are compared by their first byte before
 * strcmp: this runs on every record. */
static const char *repeated_key(const kv_record *rec) {
  for (int i = 1; i < rec->npairs; i++) {
    const char *k = rec->pairs[i].key;
    for (int j = 0; j < i; j++)
      if (rec->pairs[j].key[0] == k[0] && !strcmp(rec->pairs[j].key, k)) return k;
  }
  return NULL;
}

/* 1 when the text [q, le) starts with the word "result". */
static int result_word(const char *q, const char *le) {
  return le - q >= 6 && memcmp(q, "result", 6) == 0 &&
         (le - q == 6 || q[6] == ' ' || q[6] == '\t' || q[6] == '\r');
}

/* The pairs that say how a check failed, in this order, where its line has them. */
static const char *const check_detail_keys[] = {"rel_l2",    "max_abs", "nonfinite", "mismatches",
                                                "differing", "hard",    "malformed", "unjudged"};

/* A check line passes with ok=1 alone; the first other one is remembered with how it failed
 * (ok= other than 0, then up to three of check_detail_keys). */
static void take_check(const kv_record *rec, int line, lv_state *st) {
  const char *ok = kv_get(rec, "ok"), *output = kv_get(rec, "output");
  if (ok && !strcmp(ok, "1")) return;
  if (st->nfailed++) return;
  st->check_line = line;
  char detail[96] = "";
  size_t n = 0;
  if (!ok || strcmp(ok, "0"))
    n += (size_t)snprintf(detail, sizeof detail, ok ? "ok=%.16s is not 0 or 1" : "no ok=%s",
                          ok ? ok : "0|1");
  size_t nk = sizeof check_detail_keys / sizeof *check_detail_keys;
  for (size_t k = 0, shown = 0; k < nk && shown < 3 && n < sizeof detail; k++) {
    const char *v = kv_get(rec, check_detail_keys[k]);
    if (!v) continue;
    n += (size_t)snprintf(detail + n, sizeof detail - n, "%s%s=%.16s", n ? " " : "",
                          check_detail_keys[k], v);
    shown++;
  }
  text_set(st->check_what, sizeof st->check_what, "check output=%.40s failed (line %d%s%s)",
           output ? output : "(none)", line, detail[0] ? ": " : "", detail);
}

/* Why a result record is not usable (st->problem), or NULL when it is. */
static const char *result_problem(const kv_record *rec, lv_state *st) {
  const char *status = kv_get(rec, "status");
  if (!status || !status_known(status)) {
    text_set(st->problem, sizeof st->problem,
             "result line: expected status=ok|oom|unsupported|error|timeout, got \"%.40s\"",
             status ? status : "(none)");
    return st->problem;
  }
  if (strcmp(status, "ok") == 0 && !kv_get(rec, "avg_ms"))
    return "result status=ok needs a numeric avg_ms";
  return NULL;
}

/* 1 when the value v is a positive finite decimal number. */
static int positive_time(const char *v) {
  double t;
  return v && lv_parse_decimal(v, strlen(v), &t) == 0 && t > 0;
}

/* A usable result record at line: it decides, until a later one. */
static void take_result(const kv_record *rec, int line, lv_state *st) {
  const char *status = kv_get(rec, "status"), *state = kv_get(rec, "state"),
             *reason = kv_get(rec, "reason");
  st->have_result = 1;
  st->last_bad = 0;
  st->result_line = line;
  copy_text(st->status, sizeof st->status, status);
  copy_text(st->state, sizeof st->state, state ? state : "");
  copy_text(st->reason, sizeof st->reason, reason ? reason : "");
  st->bad_time = strcmp(status, "ok") == 0 && !positive_time(kv_get(rec, "avg_ms"));
}

/* A meta or config record at line: a log has one of each (a second one would say another
 * GPU, commit or shape than the first, and which one the numbers belong to is unknown). */
static void take_header(const char *tag, int line, lv_state *st) {
  int meta = strcmp(tag, "meta") == 0, *first = meta ? &st->meta_line : &st->config_line;
  if (!*first) {
    *first = line;
  } else if (!st->again_line) {
    st->again_line = line;
    st->again_first = *first;
    st->again_tag = meta ? "meta" : "config";
  }
}

/* A complete record: a key twice is noted, then its tag says what it gives. */
static void take_record(const kv_record *rec, lv_line *ln, lv_state *st) {
  ln->repeated = repeated_key(rec);
  if (ln->repeated && !st->dup_line) {
    st->dup_line = ln->line;
    snprintf(st->dup_key, sizeof st->dup_key, "%.40s", ln->repeated);
  }
  if (strcmp(rec->tag, "meta") == 0 || strcmp(rec->tag, "config") == 0) {
    take_header(rec->tag, ln->line, st);
  } else if (strcmp(rec->tag, "check") == 0) {
    take_check(rec, ln->line, st);
  } else if (strcmp(rec->tag, "result") == 0) {
    ln->is_result = 1;
    ln->unusable = result_problem(rec, st);
    if (ln->unusable)
      st->last_bad = ln->line;
    else
      take_result(rec, ln->line, st);
  }
}

/* One line that is not blank or a comment: its record from [q, le); nl says whether a newline
 * ends it. */
static void take_line(kv_record *rec, const char *q, const char *le, int nl, lv_line *ln,
                      lv_state *st) {
  const char *err = NULL;
  int parsed = kv_parse(rec, q, (size_t)(le - q), &err) == 0;
  ln->is_result = result_word(q, le);
  if (!nl) {
    ln->cut = 1;
    ln->err = parsed ? NULL : err;
    st->cut = ln->line;
  } else if (!parsed) {
    ln->err = err;
    if (ln->is_result) st->last_bad = ln->line;
  } else {
    ln->rec = rec;
    take_record(rec, ln, st);
  }
}

/* Every line of buf in order; returns the number of lines. */
static int read_lines(const char *buf, size_t len, lv_state *st, lv_line_fn fn, void *ctx) {
  kv_record rec = {0};
  const char *p = buf, *end = buf + len;
  int lineno = 0;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *le = nl ? nl : end;
    lineno++;
    const char *q = p;
    while (q < le && (*q == ' ' || *q == '\t' || *q == '\r')) q++;
    if (q < le && *q != '#') {
      lv_line ln = {.line = lineno, .column = (int)(q - p) + 1, .after_result = st->have_result};
      take_line(&rec, q, le, nl != NULL, &ln, st);
      if (fn) fn(ctx, &ln);
    }
    p = nl ? nl + 1 : end;
  }
  kv_record_free(&rec);
  return lineno;
}

/* The verdict of the lines read into st. */
static void decide(const lv_state *st, lv_verdict *out) {
  copy_text(out->status, sizeof out->status, st->status);
  copy_text(out->state, sizeof out->state, st->state);
  copy_text(out->reason, sizeof out->reason, st->reason);
  out->line = st->result_line;
  if (st->cut) {
    out->cause = LV_CUT;
    out->line = st->cut;
    text_set(out->why, sizeof out->why, "torn log: line %d is cut (no newline)", st->cut);
  } else if (st->have_result && st->last_bad) {
    out->cause = LV_MALFORMED;
    out->line = st->last_bad;
    text_set(out->why, sizeof out->why, "the last result line (line %d) is malformed",
             st->last_bad);
  } else if (!st->have_result) {
    out->cause = LV_NO_RESULT;
    out->line = out->lines;
    text_set(out->why, sizeof out->why,
             "no usable `result status=...` line (truncated or unfinished log?)");
  } else if (st->dup_line) {
    out->cause = LV_REPEATED_KEY;
    out->line = st->dup_line;
    text_set(out->why, sizeof out->why, "line %d: %s appears twice (each key once per line)",
             st->dup_line, st->dup_key);
  } else if (st->again_line) {
    out->cause = LV_REPEATED_RECORD;
    out->line = st->again_line;
    text_set(out->why, sizeof out->why,
             "line %d: a second %s line (the first is line %d): a log has one", st->again_line,
             st->again_tag, st->again_first);
  } else if (st->bad_time) {
    out->cause = LV_BAD_TIME;
    text_set(out->why, sizeof out->why, "avg_ms must be a positive number");
  } else if (st->nfailed && strcmp(st->status, "ok") == 0) {
    out->cause = LV_FAILED_CHECK;
    out->line = st->check_line;
    char more[40] = "";
    if (st->nfailed > 1) snprintf(more, sizeof more, "; %d checks failed", st->nfailed);
    text_set(out->why, sizeof out->why, "%s%s", st->check_what, more);
  } else if (lv_status_final(st->status)) {
    out->cause = LV_GOOD;
  } else {
    out->cause = LV_FAILED;
    if (st->reason[0])
      text_set(out->why, sizeof out->why, "%s", st->reason);
    else
      text_set(out->why, sizeof out->why, "result status=%s", st->status);
  }
}

/* A verdict about the whole file (line 0). */
static void whole_file(lv_verdict *out, lv_cause cause, const char *why) {
  out->cause = cause;
  snprintf(out->why, sizeof out->why, "%s", why);
}

int lv_judge(const char *buf, size_t len, lv_verdict *out, lv_line_fn fn, void *ctx) {
  memset(out, 0, sizeof *out);
  if (len == 0) {
    whole_file(out, LV_EMPTY, "empty file");
  } else if (looks_binary(buf, len)) {
    whole_file(out, LV_BINARY, "binary file (NUL or control bytes), not a log");
  } else if (!is_our_format(buf, len)) {
    whole_file(out, LV_FOREIGN,
               "not a log of this kit (no `# repro-log` header and no `result status=` line)");
  } else {
    lv_state st;
    memset(&st, 0, sizeof st);
    out->lines = read_lines(buf, len, &st, fn, ctx);
    decide(&st, out);
  }
  out->good = out->cause == LV_GOOD;
  return out->good;
}

int log_verdict(const char *buf, size_t len, lv_verdict *out) {
  return lv_judge(buf, len, out, NULL, NULL);
}
