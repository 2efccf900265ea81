/* table_csv: the tidy table as csv: written (pt_write_csv: one line per record, formula-like
 * texts guarded) and read back (pt_read_csv: RFC 4180 records, file:line of what is wrong). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "table.h"
#include "table_impl.h"

/* Writes s[0, n) as valid UTF-8 (invalid bytes as U+FFFD), each control character as \xNN. */
static void put_safe(FILE *out, const char *s, size_t n) {
  while (n) {
    unsigned char c = (unsigned char)*s;
    size_t k = pt_is_control(c) ? 0 : pt_utf8_len(s, n);
    if (pt_is_control(c))
      fprintf(out, "\\x%02x", c);
    else if (k)
      fwrite(s, 1, k, out);
    else
      fputs(PT_REPLACEMENT, out);
    s += k ? k : 1;
    n -= k ? k : 1;
  }
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

static void csv_num(FILE *out, double v) {
  if (!isnan(v)) pt_put_double(out, v);
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
    if (pt_extra_scale(r)) {
      fputs(n ? " scale=" : "scale=", out);
      pt_put_double(out, r->scale);
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
