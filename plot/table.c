/* table: the tidy table (see table.h): its rows, names and cell keys, texts made safe to
 * print, the one rule on a row's numbers, and the order of cells; csv in and out in
 * table_csv.c, json in and out in table_json.c. */
#include "table.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "logverdict.h"
#include "table_impl.h"

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

static const char replacement[] = PT_REPLACEMENT;

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

int pt_is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

void pt_safe_copy(char *dst, size_t cap, const char *src) {
  size_t n = 0, avail = strlen(src);
  while (avail) {
    unsigned char c = (unsigned char)*src;
    size_t k = pt_is_control(c) ? 1 : pt_utf8_len(src, avail);
    char esc[8];
    const char *from = k ? src : replacement;
    size_t w = k ? k : 3;
    if (pt_is_control(c)) {
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

/* A whole decimal number (what a case value that is a size looks like), or not. */
static int as_number(const char *s, double *v) { return pt_parse_decimal(s, strlen(s), v) == 0; }

void pt_fmt_double(char *buf, size_t cap, double v) {
  if (!buf || cap == 0) return;
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(buf, cap, "%.*g", prec, v);
    if (strtod(buf, NULL) == v) break;
  }
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

void pt_put_double(FILE *out, double v) {
  char buf[40];
  pt_fmt_double(buf, sizeof buf, v);
  fputs(buf, out);
}

/* The row's scale is written after its case keys (problem_size), unless a case key is named so. */
int pt_extra_scale(const pt_row *r) {
  for (int k = 0; k < r->nkeys; k++)
    if (r->keys[k].in_name && !strcmp(r->keys[k].key, "scale")) return 0;
  return !isnan(r->scale);
}
