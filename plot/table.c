#include "table.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "logverdict.h"

static const char *status_names[] = {"ok", "oom", "unsupported", "error", "timeout", "missing"};

void pt_row_init(pt_row *row) {
  memset(row, 0, sizeof *row);
  row->avg_ms = row->min_ms = row->max_ms = row->gflops_s = row->peak_mib = NAN;
  row->compile_s = row->scale = NAN;
  row->status = ST_UNSUPPORTED;
}

int pt_append(pt_table *t, const pt_row *row) {
  if (t->n == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 64;
    pt_row *nr = realloc(t->rows, cap * sizeof *nr);
    if (!nr) return -1;
    t->rows = nr;
    t->cap = cap;
  }
  t->rows[t->n++] = *row;
  return 0;
}

void pt_free(pt_table *t) {
  free(t->rows);
  t->rows = NULL;
  t->n = t->cap = 0;
}

const char *pt_status_name(pt_status s) {
  return (unsigned)s < sizeof status_names / sizeof *status_names ? status_names[s] : "?";
}

int pt_status_parse(const char *s, pt_status *out) {
  for (unsigned i = 0; i < ST_MISSING; i++)
    if (strcmp(s, status_names[i]) == 0) {
      *out = (pt_status)i;
      return 0;
    }
  return -1;
}

int pt_valid_name(const char *s) {
  size_t n = 0;
  for (; s[n]; n++) {
    char c = s[n];
    int ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
             c == '.' || c == '_' || c == '-';
    if (!ok) return 0;
  }
  return n > 0 && n < PT_NAME;
}

int pt_valid_key(const char *s) {
  size_t n = 0;
  for (; s[n]; n++) {
    char c = s[n];
    if (!((c >= 'a' && c <= 'z') || c == '_' || (n > 0 && c >= '0' && c <= '9'))) return 0;
  }
  return n > 0 && n < PT_KEY;
}

int pt_set_key(pt_row *r, const char *key, const char *val, int in_name) {
  if (!pt_valid_key(key) || !pt_valid_name(val)) return -1;
  int i = 0;
  while (i < r->nkeys && strcmp(r->keys[i].key, key) != 0) i++;
  if (i == PT_MAXKEYS) return -1;
  if (i == r->nkeys) {
    r->nkeys++;
    strcpy(r->keys[i].key, key);
  }
  strcpy(r->keys[i].val, val);
  r->keys[i].in_name = in_name;
  return 0;
}

const char *pt_key_value(const pt_row *r, const char *key) {
  const char *fields[] = {"experiment", "device", "workload", "system"};
  const char *vals[] = {r->experiment, r->device, r->workload, r->system};
  for (int i = 0; i < 4; i++)
    if (!strcmp(key, fields[i])) return vals[i][0] ? vals[i] : NULL;
  for (int i = 0; i < r->nkeys; i++)
    if (!strcmp(r->keys[i].key, key)) return r->keys[i].val;
  return NULL;
}

int pt_case_keys(const pt_row *r) {
  int n = 0;
  for (int i = 0; i < r->nkeys; i++) n += r->keys[i].in_name;
  return n;
}

const char *pt_length(const pt_row *r) {
  const char *v = pt_key_value(r, PT_LENGTH_KEY);
  return v ? v : "0";
}

const char *pt_arch(const pt_row *r, char *buf, size_t cap) {
  unsigned major = 0, minor = 0;
  int n = 0;
  if (!r->cc[0] || sscanf(r->cc, "%u.%u%n", &major, &minor, &n) != 2 || r->cc[n])
    snprintf(buf, cap, "%s", "");
  else
    snprintf(buf, cap, "sm_%u%u", major, minor);
  return buf;
}

int pt_valid_cc(const char *s) {
  unsigned major, minor;
  int n = 0;
  return s[0] >= '0' && s[0] <= '9' && strlen(s) < PT_CC &&
         sscanf(s, "%u.%u%n", &major, &minor, &n) == 2 && !s[n];
}

/* Case keys the tilebench seed's problem_size names otherwise (our name, its name). */
static const char *const seed_keys[][2] = {{"seqlen", "seq_len"}, {"causal", "is_causal"}};

const char *pt_seed_key(const char *key, int to_seed) {
  for (size_t i = 0; i < sizeof seed_keys / sizeof *seed_keys; i++)
    if (!strcmp(key, seed_keys[i][!to_seed])) return seed_keys[i][!!to_seed];
  return key;
}

size_t pt_utf8_len(const char *s, size_t avail) {
  const unsigned char *p = (const unsigned char *)s;
  if (!avail) return 0;
  unsigned c = p[0];
  if (c < 0x80) return 1;
  size_t k = c >= 0xC2 && c <= 0xDF ? 1 : (c & 0xF0) == 0xE0 ? 2 : c >= 0xF0 && c <= 0xF4 ? 3 : 0;
  if (!k || avail <= k) return 0;
  for (size_t i = 1; i <= k; i++)
    if ((p[i] & 0xC0) != 0x80) return 0;
  if (k == 2 && ((c == 0xE0 && p[1] < 0xA0) || (c == 0xED && p[1] >= 0xA0))) return 0;
  if (k == 3 && ((c == 0xF0 && p[1] < 0x90) || (c == 0xF4 && p[1] >= 0x90))) return 0;
  return k + 1;
}

static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD */

void pt_utf8_copy(char *dst, size_t cap, const char *src) {
  size_t n = 0, avail = strlen(src);
  while (avail) {
    size_t k = pt_utf8_len(src, avail);
    const char *from = k ? src : replacement;
    size_t w = k ? k : 3;
    if (n + w >= cap) break; /* cut before a character, never inside one */
    memcpy(dst + n, from, w);
    n += w;
    src += k ? k : 1;
    avail -= k ? k : 1;
  }
  dst[n] = '\0';
}

static int is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

void pt_safe_copy(char *dst, size_t cap, const char *src) {
  size_t n = 0, avail = strlen(src);
  while (avail) {
    unsigned char c = (unsigned char)*src;
    size_t k = is_control(c) ? 1 : pt_utf8_len(src, avail);
    char esc[8];
    const char *from = k ? src : replacement;
    size_t w = k ? k : 3;
    if (is_control(c)) {
      snprintf(esc, sizeof esc, "\\x%02x", c);
      from = esc;
      w = 4;
    }
    if (n + w >= cap) break; /* cut before a character or an escape, never inside one */
    memcpy(dst + n, from, w);
    n += w;
    src += k ? k : 1;
    avail -= k ? k : 1;
  }
  dst[n] = '\0';
}

/* Writes s[0, n) as valid UTF-8 (invalid bytes as U+FFFD), each control character as \xNN. */
static void put_safe(FILE *out, const char *s, size_t n) {
  while (n) {
    unsigned char c = (unsigned char)*s;
    size_t k = is_control(c) ? 0 : pt_utf8_len(s, n);
    if (is_control(c))
      fprintf(out, "\\x%02x", c);
    else if (k)
      fwrite(s, 1, k, out);
    else
      fputs(replacement, out);
    s += k ? k : 1;
    n -= k ? k : 1;
  }
}

/* The cell keys of a and b are the same set with the same values (in any order, wherever each
 * came from: a length from a config line is the same cell as one from a file name). */
static int same_keys(const pt_row *a, const pt_row *b) {
  if (a->nkeys != b->nkeys) return 0;
  for (int i = 0; i < a->nkeys; i++) {
    const char *v = pt_key_value(b, a->keys[i].key);
    if (!v || strcmp(a->keys[i].val, v) != 0) return 0;
  }
  return 1;
}

int pt_same_cell(const pt_row *a, const pt_row *b) {
  return strcmp(a->experiment, b->experiment) == 0 && strcmp(a->device, b->device) == 0 &&
         strcmp(a->workload, b->workload) == 0 && strcmp(a->system, b->system) == 0 &&
         same_keys(a, b);
}

int pt_same_cell_gpu(const pt_row *a, const pt_row *b) {
  return pt_same_cell(a, b) && (!a->gpu[0] || !b->gpu[0] || strcmp(a->gpu, b->gpu) == 0);
}

_Static_assert(PT_NUM_SYNTAX == LV_NUM_SYNTAX && PT_NUM_RANGE == LV_NUM_RANGE,
               "table.h's number codes are the log verdict's");

int pt_parse_decimal(const char *s, size_t len, double *out) {
  return lv_parse_decimal(s, len, out);
}

const char *pt_num_problem(int rc) { return lv_num_problem(rc); }

void pt_time_error(pt_row *r) {
  r->status = ST_ERROR;
  r->avg_ms = r->min_ms = r->max_ms = r->gflops_s = NAN;
  snprintf(r->reason, sizeof r->reason, "%s", PT_TIME_REASON);
}

void pt_check_numbers(pt_row *r, pt_number_note note, void *arg) {
  if ((r->status == ST_OK && isnan(r->avg_ms)) || (!isnan(r->avg_ms) && !(r->avg_ms > 0))) {
    if (note) note(arg, "avg_ms", r->avg_ms);
    pt_time_error(r);
  }
  double *others[] = {&r->min_ms, &r->max_ms, &r->gflops_s, &r->peak_mib, &r->compile_s};
  static const char *const keys[] = {"min_ms", "max_ms", "gflops_s", "peak_mib", "compile_s"};
  for (int k = 0; k < 5; k++)
    if (!isnan(*others[k]) && !(*others[k] >= 0)) {
      if (note) note(arg, keys[k], *others[k]);
      *others[k] = NAN;
    }
}

void pt_number_message(char *buf, size_t cap, const char *key, double v) {
  char num[40] = "none";
  if (!isnan(v)) pt_fmt_double(num, sizeof num, v);
  if (!strcmp(key, "avg_ms"))
    snprintf(buf, cap, "%s (got %s): the cell is ERR", PT_TIME_REASON, num);
  else
    snprintf(buf, cap, "%s=%s is not a finite number >= 0; it does not count", key, num);
}

/* pt_check_numbers' note for a csv table: "path:line: warning: avg_ms must be a positive number
 * (got -1): the cell is ERR", to warn or stderr. */
typedef struct {
  const char *path;
  int line;
  pt_warn_fn warn;
  void *arg;
} table_note_ctx;

static void table_note(void *arg, const char *key, double v) {
  const table_note_ctx *c = arg;
  char msg[160];
  pt_number_message(msg, sizeof msg, !strcmp(key, "compile_s") ? "compilation_time" : key, v);
  if (c->warn)
    c->warn(c->arg, c->path, c->line, msg);
  else
    fprintf(stderr, "%s:%d: warning: %s\n", c->path, c->line, msg);
}

/* A whole decimal number (what a case value that is a size looks like), or not. */
static int as_number(const char *s, double *v) { return pt_parse_decimal(s, strlen(s), v) == 0; }

void pt_fmt_double(char *buf, size_t cap, double v) {
  if (!buf || cap == 0) return;
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(buf, cap, "%.*g", prec, v);
    if (strtod(buf, NULL) == v) break;
  }
}

/* A value JSON can carry as a number as it is written: -?(0|[1-9][0-9]*)(.[0-9]+)? (names
 * hold no exponent sign; "007" or "1." stay strings) that a JSON reader gives back as the same
 * text ("0.50", "-0" or 20 digits stay strings: pt_read_json must read back what was written). */
static int json_number_text(const char *s) {
  const char *p = s + (*s == '-');
  if (!(*p >= '0' && *p <= '9') || (p[0] == '0' && p[1] >= '0' && p[1] <= '9')) return 0;
  while (*p >= '0' && *p <= '9') p++;
  if (*p == '.') {
    if (!(p[1] >= '0' && p[1] <= '9')) return 0;
    for (p++; *p >= '0' && *p <= '9';) p++;
  }
  double v;
  char back[40];
  if (*p || !as_number(s, &v) || (v == 0 && *s == '-')) return 0;
  pt_fmt_double(back, sizeof back, v);
  return !strcmp(back, s);
}

int pt_cmp_value(const char *a, const char *b) {
  double x, y;
  if (as_number(a, &x) && as_number(b, &y) && x != y) return x < y ? -1 : 1;
  return strcmp(a, b);
}

int pt_cmp_cell(const void *pa, const void *pb) {
  const pt_row *a = pa, *b = pb;
  int c;
  if ((c = strcmp(a->figure, b->figure))) return c;
  if ((c = strcmp(a->experiment, b->experiment))) return c;
  if ((c = strcmp(a->device, b->device))) return c;
  if ((c = strcmp(a->workload, b->workload))) return c;
  if ((c = strcmp(a->system, b->system))) return c;
  if ((c = pt_cmp_value(pt_length(a), pt_length(b)))) return c;
  /* cell keys in the order of a's (its log name's first), then the key count, then the GPU */
  for (int i = 0; i < a->nkeys && i < b->nkeys; i++) {
    if ((c = strcmp(a->keys[i].key, b->keys[i].key))) return c;
    if ((c = pt_cmp_value(a->keys[i].val, b->keys[i].val))) return c;
  }
  if (a->nkeys != b->nkeys) return (a->nkeys > b->nkeys) - (a->nkeys < b->nkeys);
  return strcmp(a->gpu, b->gpu);
}

/* ---- csv ---- */

static const char *csv_header =
    "figure,experiment,device,workload,system," PT_LENGTH_KEY
    ",status,avg_ms,min_ms,max_ms,gflops_s,"
    "peak_mib,format,source,reason,gpu_model,compute_capability,compilation_time,problem_size";
#define CSV_NFIELDS     19
#define CSV_OLD_NFIELDS 15 /* tables written before the GPU and problem-size columns */

/* A text a spreadsheet would run as a formula: it begins with =, +, - or @ (OWASP's CSV
 * injection list; its tab and carriage return never begin a field: csv writes every control
 * character as the text \xNN), after any apostrophes: "'=x" counts too, so that the apostrophe
 * csv_str puts before such a text reads back unambiguously (csv_unguard). */
static int csv_formula_like(const char *s) {
  while (*s == '\'') s++;
  return *s && strchr("=+-@", *s) != NULL;
}

/* A text field: control characters as \xNN (so a record is one line), quoted when it holds a
 * comma or quote. One that a spreadsheet would take as a formula is written quoted with an
 * apostrophe before it ("'=HYPERLINK(...)": text in every spreadsheet, OWASP's advice). */
static void csv_str(FILE *out, const char *s) {
  int guard = csv_formula_like(s);
  if (!guard && !strpbrk(s, ",\"")) {
    put_safe(out, s, strlen(s));
    return;
  }
  fputs(guard ? "\"'" : "\"", out);
  for (const char *q; (q = strchr(s, '"')); s = q + 1) {
    put_safe(out, s, (size_t)(q - s));
    fputs("\"\"", out);
  }
  put_safe(out, s, strlen(s));
  fputc('"', out);
}

/* A text field read back: the apostrophe csv_str put before a formula-like text removed. */
static void csv_unguard(char *s) {
  if (s[0] == '\'' && csv_formula_like(s + 1)) memmove(s, s + 1, strlen(s));
}

static void put_double(FILE *out, double v) {
  char buf[40];
  pt_fmt_double(buf, sizeof buf, v);
  fputs(buf, out);
}

/* The row's scale is written after its case keys (problem_size), unless a case key is named so. */
static int extra_scale(const pt_row *r) {
  for (int k = 0; k < r->nkeys; k++)
    if (r->keys[k].in_name && !strcmp(r->keys[k].key, "scale")) return 0;
  return !isnan(r->scale);
}

static void csv_num(FILE *out, double v) {
  if (!isnan(v)) put_double(out, v);
}

/* Text fields, each followed by a comma. */
static void csv_texts(FILE *out, const char *const *texts, int n) {
  for (int i = 0; i < n; i++) {
    csv_str(out, texts[i]);
    fputc(',', out);
  }
}

void pt_write_csv(FILE *out, const pt_table *t) {
  fprintf(out, "%s\n", csv_header);
  for (size_t i = 0; i < t->n; i++) {
    const pt_row *r = &t->rows[i];
    const char *keys[] = {r->figure,
                          r->experiment,
                          r->device,
                          r->workload,
                          r->system,
                          pt_length(r),
                          pt_status_name(r->status)};
    csv_texts(out, keys, 7);
    const double nums[] = {r->avg_ms, r->min_ms, r->max_ms, r->gflops_s, r->peak_mib};
    for (int k = 0; k < 5; k++) {
      csv_num(out, nums[k]);
      fputc(',', out);
    }
    const char *texts[] = {r->format, r->source, r->reason, r->gpu, r->cc};
    csv_texts(out, texts, 5);
    csv_num(out, r->compile_s);
    fputc(',', out);
    int n = 0; /* the case keys */
    for (int k = 0; k < r->nkeys; k++)
      if (r->keys[k].in_name)
        fprintf(out, "%s%s=%s", n++ ? " " : "", r->keys[k].key, r->keys[k].val);
    if (extra_scale(r)) {
      fputs(n ? " scale=" : "scale=", out);
      put_double(out, r->scale);
    }
    fputc('\n', out);
  }
}

/* csv_record's errors. */
#define CSV_BROKEN_QUOTE (-1) /* text after a closing quote */
#define CSV_TOO_MANY     (-2) /* more than max fields */
#define CSV_OPEN_QUOTE   (-3) /* the file ends inside a quoted field */

/* One RFC 4180 record from [*pp, end) split in place: quoted fields may hold commas, doubled
 * quotes and line breaks; a record ends at LF or CRLF outside quotes. Fields are unescaped
 * and NUL-terminated in place (the text only shrinks). *lines counts the line breaks
 * consumed; *cut is set when the file ends in the record, without its line end. Returns the
 * field count, or CSV_BROKEN_QUOTE, CSV_TOO_MANY or CSV_OPEN_QUOTE. */
static int csv_record(char **pp, char *end, char **fields, int max, int *lines, int *cut) {
  char *p = *pp;
  int n = 0;
  *cut = 0;
  for (;;) {
    if (n == max) return CSV_TOO_MANY;
    char *w = p;
    fields[n++] = w;
    if (p < end && *p == '"') {
      p++;
      for (;;) {
        if (p == end) return CSV_OPEN_QUOTE;
        if (*p == '"' && p + 1 < end && p[1] == '"') {
          *w++ = '"';
          p += 2;
        } else if (*p == '"') {
          p++;
          break;
        } else {
          if (*p == '\n') ++*lines;
          *w++ = *p++;
        }
      }
      if (p < end && *p == '\r' && p + 1 < end && p[1] == '\n') p++;
      if (p < end && *p != ',' && *p != '\n') return CSV_BROKEN_QUOTE;
    } else {
      while (p < end && *p != ',' && *p != '\n') p++;
      w = p;
      if (w > fields[n - 1] && w[-1] == '\r') w--;
    }
    int more = p < end && *p == ',';
    if (p < end && *p == '\n') ++*lines;
    *cut = p == end;
    if (p < end) p++;
    *w = '\0';
    if (!more) {
      *pp = p;
      return n;
    }
  }
}

/* What a record that is no record of nwant fields lacks, for "path:line: expected ...". */
static const char *csv_record_problem(int nf, int cut) {
  if (nf == CSV_OPEN_QUOTE)
    return "a closing quote: the file ends inside a quoted field (a table cut short)";
  if (nf == CSV_BROKEN_QUOTE) return "a comma or a line end after a closing quote";
  if (cut) return "the record's line end: the file ends inside its last field (a table cut short)";
  return NULL;
}

/* A number field: decimal, or empty for none (NAN). */
static int csv_double(const char *s, double *out) {
  if (!*s) {
    *out = NAN;
    return 0;
  }
  return pt_parse_decimal(s, strlen(s), out) ? -1 : 0;
}

static int copy_name(char *dst, const char *src, int allow_empty) {
  if (!*src && allow_empty) {
    dst[0] = '\0';
    return 0;
  }
  if (!pt_valid_name(src)) return -1;
  strcpy(dst, src);
  return 0;
}

/* "m=1024 n=1024 k=1024" (the problem_size column) into r's case keys; scale= into r->scale. */
static int parse_keys(char *s, pt_row *r) {
  char *save = NULL;
  for (char *w = strtok_r(s, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
    char *eq = strchr(w, '=');
    if (!eq) return -1;
    *eq = '\0';
    if (!strcmp(w, "scale")) {
      if (!isnan(r->scale) || !eq[1] || csv_double(eq + 1, &r->scale) || !isfinite(r->scale))
        return -1;
      continue;
    }
    int i = 0;
    while (i < r->nkeys && strcmp(r->keys[i].key, w) != 0) i++;
    if (i < r->nkeys || pt_set_key(r, w, eq + 1, 1)) return -1; /* twice, or not a key and name */
  }
  return 0;
}

/* The length column into the row's length key, unless problem_size gave it ("0": none). */
static int csv_length(const char *s, pt_row *r) {
  if (!strcmp(s, "0") || pt_key_value(r, PT_LENGTH_KEY)) return 0;
  return pt_set_key(r, PT_LENGTH_KEY, s, 0);
}

/* The fields after reason: gpu_model, compute_capability, compilation_time, problem_size. */
static int csv_newer_fields(char **f, pt_row *r, const char **what) {
  pt_utf8_copy(r->gpu, sizeof r->gpu, f[15]);
  *what = "a compute capability N.N or nothing";
  if (f[16][0] && !pt_valid_cc(f[16])) return -1;
  strcpy(r->cc, f[16]);
  *what = "a number in compilation_time";
  if (csv_double(f[17], &r->compile_s)) return -1;
  *what = "problem_size: key=value words (keys [a-z_][a-z0-9_]*, values names; scale= a number)";
  return parse_keys(f[18], r);
}

/* The fields of a csv record that are numbers (avg_ms..peak_mib, compilation_time): the
 * others are texts, csv_unguard'ed. */
static int csv_is_number_field(int i) { return (i >= 7 && i <= 11) || i == 17; }

/* One csv record (15 or 19 fields) into r; *what says what a field should have been. */
static int csv_row(char **f, int nf, pt_row *r, const char **what) {
  pt_row_init(r);
  for (int i = 0; i < nf; i++)
    if (!csv_is_number_field(i)) csv_unguard(f[i]);
  *what = "a name [A-Za-z0-9._-]+ in figure..system";
  if (copy_name(r->figure, f[0], 1) || copy_name(r->experiment, f[1], 1) ||
      copy_name(r->device, f[2], 0) || copy_name(r->workload, f[3], 1) ||
      copy_name(r->system, f[4], 0))
    return -1;
  *what = "a status (ok oom unsupported error timeout)";
  if (pt_status_parse(f[6], &r->status)) return -1;
  *what = "numbers in avg_ms..peak_mib";
  double *nums[] = {&r->avg_ms, &r->min_ms, &r->max_ms, &r->gflops_s, &r->peak_mib};
  for (int k = 0; k < 5; k++)
    if (csv_double(f[7 + k], nums[k])) return -1;
  pt_utf8_copy(r->format, sizeof r->format, f[12]);
  pt_utf8_copy(r->source, sizeof r->source, f[13]);
  pt_utf8_copy(r->reason, sizeof r->reason, f[14]);
  if (nf > CSV_OLD_NFIELDS && csv_newer_fields(f, r, what)) return -1;
  *what = "a length (0, or the seqlen key's value: a name [A-Za-z0-9._-]+)";
  return csv_length(f[5], r);
}

int pt_read_csv(const char *path, pt_table *t, pt_warn_fn warn, void *arg) {
  char shown[PT_PATH]; /* the path as messages print it */
  pt_safe_copy(shown, sizeof shown, path);
  size_t len = 0;
  char why[128];
  char *buf = repro_slurp(path, (size_t)1 << 30, &len, why, sizeof why);
  if (!buf) {
    fprintf(stderr, "%s: cannot open: %s\n", shown, why);
    return -1;
  }
  char *p = buf, *end = buf + len;
  int lineno = 1, rc = 0;
  char *hf[CSV_NFIELDS + 1];
  int lines = 0, cut = 0;
  int nh = csv_record(&p, end, hf, CSV_NFIELDS + 1, &lines, &cut);
  char header[512] = "";
  for (int i = 0; i < nh; i++)
    snprintf(header + strlen(header), sizeof header - strlen(header), "%s%s", i ? "," : "", hf[i]);
  /* the header as written now, or its first 15 columns (an older table) */
  size_t old_len = 0;
  for (int commas = 0; csv_header[old_len] && commas < CSV_OLD_NFIELDS; old_len++)
    commas += csv_header[old_len] == ',';
  int nwant = nh == CSV_OLD_NFIELDS ? CSV_OLD_NFIELDS : CSV_NFIELDS;
  if ((nh != CSV_NFIELDS || strcmp(header, csv_header) != 0) &&
      (nh != CSV_OLD_NFIELDS || strlen(header) != old_len - 1 ||
       strncmp(header, csv_header, old_len - 1) != 0)) {
    fprintf(stderr, "%s:1: expected the header \"%s\"\n", shown, csv_header);
    free(buf);
    return -1;
  }
  if (cut) {
    fprintf(stderr, "%s:1: expected %s\n", shown, csv_record_problem(nh, cut));
    free(buf);
    return -1;
  }
  lineno += lines;
  while (p < end) {
    if (*p == '\n' || (*p == '\r' && p + 1 < end && p[1] == '\n')) { /* an empty line */
      p += *p == '\r' ? 2 : 1;
      lineno++;
      continue;
    }
    int at = lineno;
    char *f[CSV_NFIELDS];
    const char *what = "";
    pt_row row;
    lines = 0;
    int nf = csv_record(&p, end, f, nwant, &lines, &cut);
    lineno += lines;
    const char *problem = csv_record_problem(nf, cut);
    if (problem) {
      fprintf(stderr, "%s:%d: expected %s\n", shown, at, problem);
      rc = -1;
      break;
    }
    if (nf != nwant) {
      fprintf(stderr, "%s:%d: expected %d comma-separated fields, got %s\n", shown, at, nwant,
              nf < 0 ? "more" : "fewer");
      rc = -1;
      break;
    }
    if (csv_row(f, nf, &row, &what)) {
      fprintf(stderr, "%s:%d: expected %s\n", shown, at, what);
      rc = -1;
      break;
    }
    table_note_ctx note = {shown, at, warn, arg};
    row.from_table = 1;
    pt_check_numbers(&row, table_note, &note);
    if (pt_append(t, &row)) {
      fprintf(stderr, "%s: out of memory\n", shown);
      rc = -1;
      break;
    }
  }
  free(buf);
  return rc;
}

/* ---- json ---- */

/* A string; a control character is written as the text \xNN (its backslash escaped), as csv
 * and the terminal show it. */
static void json_str(FILE *out, const char *s) {
  fputc('"', out);
  for (size_t n = strlen(s); n;) {
    unsigned char c = (unsigned char)*s;
    size_t k = 1;
    if (c == '"' || c == '\\')
      fprintf(out, "\\%c", c);
    else if (is_control(c))
      fprintf(out, "\\\\x%02x", c);
    else if (c < 0x80)
      fputc(c, out);
    else if ((k = pt_utf8_len(s, n)))
      fwrite(s, 1, k, out);
    else {
      fputs(replacement, out);
      k = 1;
    }
    s += k;
    n -= k;
  }
  fputc('"', out);
}

static void json_num(FILE *out, const char *key, double v) {
  fprintf(out, ", \"%s\": ", key);
  if (isnan(v) || isinf(v))
    fputs("null", out);
  else
    put_double(out, v);
}

/* A string, or null when empty. */
static void json_str_or_null(FILE *out, const char *s) {
  if (*s)
    json_str(out, s);
  else
    fputs("null", out);
}

/* A value as a JSON number when it is written as one, else as a string. */
static void json_value(FILE *out, const char *val) {
  if (json_number_text(val))
    fputs(val, out);
  else
    json_str(out, val);
}

/* The fields of the seed's JSON rows (its runner's names) beside ours. problem_size: the case
 * keys under the seed's names (pt_seed_key), a value that is a decimal number as a JSON number
 * (the seed's problem_size holds numbers), causal 0/1 as false/true, then scale. */
static void json_seed_fields(FILE *out, const pt_row *r) {
  char arch[24];
  fputs(", \"kernel\": ", out);
  json_str(out, r->experiment);
  fputs(", \"backend\": ", out);
  json_str(out, r->system);
  fputs(", \"arch\": ", out);
  json_str_or_null(out, pt_arch(r, arch, sizeof arch));
  fputs(", \"gpu_model\": ", out);
  json_str_or_null(out, r->gpu);
  fputs(", \"compute_capability\": ", out);
  json_str_or_null(out, r->cc);
  fputs(", \"problem_size\": {", out);
  int n = 0; /* the case keys */
  for (int k = 0; k < r->nkeys; k++) {
    const char *key = r->keys[k].key, *val = r->keys[k].val;
    if (!r->keys[k].in_name) continue;
    fprintf(out, "%s\"%s\": ", n++ ? ", " : "", pt_seed_key(key, 1));
    if (!strcmp(key, "causal") && (!strcmp(val, "0") || !strcmp(val, "1")))
      fputs(*val == '1' ? "true" : "false", out);
    else
      json_value(out, val);
  }
  if (extra_scale(r)) {
    fputs(n ? ", \"scale\": " : "\"scale\": ", out);
    put_double(out, r->scale);
  }
  fputc('}', out);
  json_num(out, "latency_ms", r->avg_ms);
  /* GFLOP/s is logged with one decimal: ten significant digits keep it whole */
  double tflops = r->gflops_s / 1000.0;
  if (isfinite(tflops)) {
    char buf[40];
    snprintf(buf, sizeof buf, "%.10g", tflops);
    tflops = strtod(buf, NULL);
  }
  json_num(out, "tflops", tflops);
  json_num(out, "compilation_time", r->compile_s);
}

void pt_write_json(FILE *out, const pt_table *t) {
  fputs("[\n", out);
  for (size_t i = 0; i < t->n; i++) {
    const pt_row *r = &t->rows[i];
    const char *keys[] = {"figure", "experiment", "device", "workload", "system"};
    const char *vals[] = {r->figure, r->experiment, r->device, r->workload, r->system};
    fputs("  {", out);
    for (int k = 0; k < 5; k++) {
      fprintf(out, "%s\"%s\": ", k ? ", " : "", keys[k]);
      json_str(out, vals[k]);
    }
    fputs(", \"" PT_LENGTH_KEY "\": ", out);
    json_value(out, pt_length(r));
    fprintf(out, ", \"status\": \"%s\"", pt_status_name(r->status));
    json_num(out, "avg_ms", r->avg_ms);
    json_num(out, "min_ms", r->min_ms);
    json_num(out, "max_ms", r->max_ms);
    json_num(out, "gflops_s", r->gflops_s);
    json_num(out, "peak_mib", r->peak_mib);
    fputs(", \"format\": ", out);
    json_str(out, r->format);
    fputs(", \"source\": ", out);
    json_str(out, r->source);
    fputs(", \"reason\": ", out);
    json_str(out, r->reason);
    json_seed_fields(out, r);
    fprintf(out, "}%s\n", i + 1 < t->n ? "," : "");
  }
  fputs("]\n", out);
}
