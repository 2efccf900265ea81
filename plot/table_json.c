/* table_json: the tidy table as JSON: written (pt_write_json, at the end; our fields beside the
 * seed's) and read back (merge, compare, draw --table), with jansson.
 *
 * One reader for two kinds of rows: ours (pt_write_json: figure, experiment, device, ...,
 * beside the seed's fields) and the tilebench seed's result files (a list of objects with
 * kernel, backend, arch, gpu_model, compute_capability, problem_size, latency_ms, tflops,
 * compilation_time). Each of our fields wins where a row has it; the seed's fill the rest. */
#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "table.h"
#include "table_impl.h"

/* The seed's names as ours, per kernel (NULL: any kernel); a name not listed stays as it is.
 * Its backend "cuda" is TileLang's CUDA backend (our system tilelang); its "pytorch" is
 * torch.matmul for gemm (our peer pytorch) but the naive formulation for mha and nsa (our
 * torch); its kernel mha is attnvar's workload attn (studies/tilebench/experiment.yaml). */
typedef enum { SEED_BACKEND, SEED_WORKLOAD } seed_what;
static const struct {
  seed_what what;
  const char *kernel, *seed, *ours;
} seed_names[] = {
    {SEED_BACKEND, NULL, "cuda", "tilelang"},
    {SEED_BACKEND, "mha", "pytorch", "torch"},
    {SEED_BACKEND, "nsa", "pytorch", "torch"},
    {SEED_WORKLOAD, NULL, "mha", "attn"},
};

static const char *seed_name(seed_what what, const char *kernel, const char *name) {
  for (size_t i = 0; i < sizeof seed_names / sizeof *seed_names; i++)
    if (seed_names[i].what == what && !strcmp(seed_names[i].seed, name) &&
        (!seed_names[i].kernel || !strcmp(seed_names[i].kernel, kernel)))
      return seed_names[i].ours;
  return name;
}

typedef struct {
  const char *path;
  size_t row; /* from 1 */
  int line;   /* the line the row starts on */
  pt_warn_fn warn;
  void *arg;
} jctx;

/* "x.json:7: row 3: problem_size: expected an object" (field NULL: the row itself). */
static int jerr(const jctx *c, const char *field, const char *expected) {
  fprintf(stderr, "%s:%d: row %zu: %s%sexpected %s\n", c->path, c->line, c->row, field ? field : "",
          field ? ": " : "", expected);
  return -1;
}

/* Field key as a string in *s (NULL when absent, or null where nullable). 0, or -1 reported. */
static int get_str(const jctx *c, json_t *o, const char *key, int nullable, const char **s) {
  json_t *v = json_object_get(o, key);
  *s = NULL;
  if (!v || (nullable && json_is_null(v))) return 0;
  if (!(*s = json_string_value(v))) return jerr(c, key, nullable ? "a string or null" : "a string");
  return 0;
}

/* Field key as a number (null: NAN) in *v. 1 when present, 0 when absent, -1 reported. */
static int get_num(const jctx *c, json_t *o, const char *key, double *v) {
  json_t *j = json_object_get(o, key);
  if (!j) return 0;
  if (!json_is_null(j) && !json_is_number(j)) return jerr(c, key, "a number or null");
  *v = json_is_null(j) ? NAN : json_number_value(j);
  return 1;
}

/* The device label of a GPU model: h100, h200 or a100 when it names one, else the model
 * lower-cased with every run of other characters as one '-' ("rtx-4090"). */
static void device_of(const char *gpu, char *dst) {
  static const char *const known[] = {"h100", "h200", "a100"};
  size_t n = 0;
  for (const char *p = gpu; *p && n < PT_NAME - 1; p++) {
    char ch = (char)tolower((unsigned char)*p);
    int keep = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '.' || ch == '_';
    if (keep || (n && dst[n - 1] != '-')) dst[n++] = keep ? ch : '-';
  }
  while (n && dst[n - 1] == '-') n--;
  dst[n] = '\0';
  for (size_t i = 0; i < sizeof known / sizeof *known; i++)
    if (strstr(dst, known[i])) strcpy(dst, known[i]);
}

/* problem_size: the case keys (seq_len -> seqlen, is_causal -> causal 0/1; keys lower-cased),
 * scale into r->scale. Values: numbers as written, booleans 1/0, names. */
static int problem_size(const jctx *c, json_t *ps, pt_row *r) {
  if (!ps) return 0;
  if (!json_is_object(ps)) return jerr(c, "problem_size", "an object");
  const char *name;
  json_t *v;
  json_object_foreach(ps, name, v) {
    char low[PT_KEY], val[PT_NAME], field[PT_KEY + 16];
    size_t n = 0;
    for (; name[n] && n < sizeof low - 1; n++) low[n] = (char)tolower((unsigned char)name[n]);
    low[n] = '\0';
    snprintf(field, sizeof field, "problem_size.%s", low);
    if (name[n] || !pt_valid_key(low)) {
      char what[128];
      snprintf(what, sizeof what, "keys [a-z_][a-z0-9_]* shorter than %d characters, not \"%.40s\"",
               PT_KEY, name);
      return jerr(c, "problem_size", what);
    }
    const char *key = pt_seed_key(low, 0);
    if (!strcmp(key, "scale")) {
      if (!json_is_number(v) && !json_is_null(v)) return jerr(c, field, "a number or null");
      r->scale = json_is_null(v) ? NAN : json_number_value(v);
      continue;
    }
    if (json_is_boolean(v))
      snprintf(val, sizeof val, "%d", json_is_true(v));
    else if (json_is_integer(v))
      snprintf(val, sizeof val, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    else if (json_is_real(v))
      pt_fmt_double(val, sizeof val, json_real_value(v));
    else if (json_is_string(v) && strlen(json_string_value(v)) < sizeof val)
      snprintf(val, sizeof val, "%s", json_string_value(v));
    else
      return jerr(c, field, "a number, a boolean or a name [A-Za-z0-9._-]+");
    for (int i = 0; i < r->nkeys; i++)
      if (!strcmp(r->keys[i].key, key)) return jerr(c, field, "each key once");
    if (r->nkeys == PT_MAXKEYS) return jerr(c, "problem_size", "at most 12 keys");
    if (pt_set_key(r, key, val, 1))
      return jerr(c, field, "a number, a boolean or a name [A-Za-z0-9._-]+");
  }
  return 0;
}

/* Our length column (pt_length): an integer, 0 for none; it fills the row's length key unless
 * problem_size gave it. */
static int length_column(const jctx *c, json_t *o, pt_row *r) {
  json_t *sl = json_object_get(o, PT_LENGTH_KEY);
  if (sl &&
      (!json_is_integer(sl) || json_integer_value(sl) < 0 || json_integer_value(sl) > 1 << 30))
    return jerr(c, PT_LENGTH_KEY, "an integer >= 0");
  if (!sl || json_integer_value(sl) == 0 || pt_key_value(r, PT_LENGTH_KEY)) return 0;
  char val[PT_NAME];
  snprintf(val, sizeof val, "%" JSON_INTEGER_FORMAT, json_integer_value(sl));
  return pt_set_key(r, PT_LENGTH_KEY, val, 0) ? jerr(c, PT_LENGTH_KEY, "room beside 11 case keys")
                                              : 0;
}

static int json_row(const jctx *c, json_t *o, pt_row *r) {
  pt_row_init(r);
  r->status = ST_OK;
  if (!json_is_object(o)) return jerr(c, NULL, "an object");
  /* names: ours, then the seed's kernel and backend */
  char kernel[PT_NAME] = "", backend[PT_NAME] = "";
  static const char *const names[] = {"figure", "experiment", "device", "workload",
                                      "system", "kernel",     "backend"};
  char *dst[] = {r->figure, r->experiment, r->device, r->workload, r->system, kernel, backend};
  int got[7];
  for (int k = 0; k < 7; k++) {
    const char *s;
    if (get_str(c, o, names[k], 0, &s)) return -1;
    if (s && *s && !pt_valid_name(s)) return jerr(c, names[k], "a name [A-Za-z0-9._-]+");
    if ((got[k] = s != NULL)) strcpy(dst[k], s);
  }
  if (!got[0]) strcpy(r->figure, "tilebench");
  if (!got[1]) strcpy(r->experiment, kernel);
  if (!got[4]) strcpy(r->system, seed_name(SEED_BACKEND, r->experiment, backend));
  if (!got[3]) strcpy(r->workload, seed_name(SEED_WORKLOAD, r->experiment, r->experiment));
  if (!r->system[0]) return jerr(c, "backend", "a name [A-Za-z0-9._-]+ (or our system)");
  /* the GPU, the device named after it */
  const char *gpu, *cc, *status, *texts[3];
  if (get_str(c, o, "gpu_model", 1, &gpu) || get_str(c, o, "compute_capability", 1, &cc) ||
      get_str(c, o, "status", 0, &status))
    return -1;
  if (cc && *cc && !pt_valid_cc(cc)) return jerr(c, "compute_capability", "\"N.N\" or null");
  pt_utf8_copy(r->gpu, sizeof r->gpu, gpu ? gpu : "");
  strcpy(r->cc, cc ? cc : "");
  if (!got[2]) device_of(r->gpu, r->device);
  if (!r->device[0]) return jerr(c, "gpu_model", "a GPU model (the device is named after it)");
  if (status && pt_status_parse(status, &r->status))
    return jerr(c, "status", "ok, oom, unsupported, error or timeout");
  /* numbers: ours where present, else the seed's (tflops in TFLOP/s) */
  double tflops = NAN;
  int k;
  if ((k = get_num(c, o, "avg_ms", &r->avg_ms)) < 0 ||
      (!k && get_num(c, o, "latency_ms", &r->avg_ms) < 0) ||
      (k = get_num(c, o, "gflops_s", &r->gflops_s)) < 0 ||
      (!k && get_num(c, o, "tflops", &tflops) < 0) || get_num(c, o, "min_ms", &r->min_ms) < 0 ||
      get_num(c, o, "max_ms", &r->max_ms) < 0 || get_num(c, o, "peak_mib", &r->peak_mib) < 0 ||
      get_num(c, o, "compilation_time", &r->compile_s) < 0)
    return -1;
  if (!k && isfinite(tflops)) { /* 45.23 TFLOP/s is 45230 GFLOP/s, not 45230.000000000007 */
    char buf[40];
    snprintf(buf, sizeof buf, "%.12g", tflops * 1000);
    r->gflops_s = strtod(buf, NULL);
  }
  if (!status && !(r->avg_ms > 0))
    return jerr(c, "latency_ms", "a time > 0 (a row without our status is ok)");
  if (problem_size(c, json_object_get(o, "problem_size"), r) || length_column(c, o, r)) return -1;
  /* texts: ours, or the seed's file */
  static const char *const text_keys[] = {"format", "source", "reason"};
  for (int i = 0; i < 3; i++)
    if (get_str(c, o, text_keys[i], 0, &texts[i])) return -1;
  pt_utf8_copy(r->format, sizeof r->format, texts[0] ? texts[0] : "seed");
  pt_utf8_copy(r->source, sizeof r->source, texts[1] ? texts[1] : c->path);
  pt_utf8_copy(r->reason, sizeof r->reason, texts[2] ? texts[2] : "");
  return 0;
}

/* pt_check_numbers' note for a json row: "x.json:7: warning: row 3: avg_ms must be ...", to
 * the caller's warn or stderr. */
static void json_note(void *arg, const char *key, double v) {
  const jctx *c = arg;
  char num[160], msg[192];
  pt_number_message(num, sizeof num, !strcmp(key, "compile_s") ? "compilation_time" : key, v);
  snprintf(msg, sizeof msg, "row %zu: %s", c->row, num);
  if (c->warn)
    c->warn(c->arg, c->path, c->line, msg);
  else
    fprintf(stderr, "%s:%d: warning: %s\n", c->path, c->line, msg);
}

/* The line each element of the top-level list starts on, lines[0..n), from the text jansson
 * parsed (so well formed): strings skipped, brackets counted. */
static void row_lines(const char *buf, size_t len, int *lines, size_t n) {
  int line = 1, depth = 0, in_str = 0, want = 0;
  size_t k = 0;
  for (size_t i = 0; i < len && k < n; i++) {
    char ch = buf[i];
    if (ch == '\n') line++;
    if (in_str) {
      if (ch == '\\')
        i++; /* an escape is never a line break: JSON strings hold no control characters */
      else if (ch == '"')
        in_str = 0;
      continue;
    }
    if (depth == 1 && want && !isspace((unsigned char)ch) && ch != ',' && ch != ']') {
      lines[k++] = line;
      want = 0;
    }
    if (ch == '"')
      in_str = 1;
    else if (ch == '[' || ch == '{')
      want |= ++depth == 1;
    else if (ch == ']' || ch == '}')
      depth--;
    else if (ch == ',' && depth == 1)
      want = 1;
  }
}

/* The file parsed (a syntax error said as path:line:column), its rows' lines in *lines (the
 * caller frees both). NULL on an error, said on stderr. */
static json_t *load_rows(const char *path, int **lines) {
  size_t len = 0;
  char why[128];
  char *buf = repro_slurp(path, (size_t)1 << 30, &len, why, sizeof why);
  if (!buf) {
    fprintf(stderr, "%s: cannot open: %s\n", path, why);
    return NULL;
  }
  json_error_t e;
  json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &e);
  if (!root)
    fprintf(stderr, "%s:%d:%d: expected JSON (a list of row objects): %s\n", path,
            e.line > 0 ? e.line : 1, e.column > 0 ? e.column : 0, e.text);
  else if (!json_is_array(root))
    fprintf(stderr, "%s:1: expected a list of row objects ([{\"kernel\": ...}, ...])\n", path);
  else if (!(*lines = calloc(json_array_size(root) + 1, sizeof **lines)))
    fprintf(stderr, "%s: out of memory\n", path);
  else
    row_lines(buf, len, *lines, json_array_size(root));
  free(buf);
  if (root && !*lines) {
    json_decref(root);
    root = NULL;
  }
  return root;
}

int pt_read_json(const char *path, pt_table *t, pt_warn_fn warn, void *arg) {
  int *lines = NULL;
  json_t *root = load_rows(path, &lines);
  if (!root) return -1;
  int rc = 0;
  size_t i;
  json_t *o;
  json_array_foreach(root, i, o) {
    jctx c = {path, i + 1, lines[i], warn, arg};
    pt_row r;
    if (json_row(&c, o, &r)) {
      rc = -1;
      break;
    }
    r.from_table = 1;
    pt_check_numbers(&r, json_note, &c);
    if (pt_append(t, &r)) {
      fprintf(stderr, "%s: out of memory\n", path);
      rc = -1;
      break;
    }
  }
  free(lines);
  json_decref(root);
  return rc;
}

int pt_read_table(const char *path, pt_table *t, pt_warn_fn warn, void *arg) {
  size_t n = strlen(path);
  int json = n > 5 && !strcmp(path + n - 5, ".json");
  FILE *f = json ? NULL : fopen(path, "rb");
  if (f) {
    int ch;
    while ((ch = fgetc(f)) != EOF && isspace(ch)) continue;
    json = ch == '[' || ch == '{'; /* '{': told that a list is expected */
    fclose(f);
  }
  return json ? pt_read_json(path, t, warn, arg) : pt_read_csv(path, t, warn, arg);
}

/* ---- json out: pt_write_json ---- */

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
  if (*p || pt_parse_decimal(s, strlen(s), &v) != 0 || (v == 0 && *s == '-')) return 0;
  pt_fmt_double(back, sizeof back, v);
  return !strcmp(back, s);
}

/* A string; a control character is written as the text \xNN (its backslash escaped), as csv
 * and the terminal show it. */
static void json_str(FILE *out, const char *s) {
  fputc('"', out);
  for (size_t n = strlen(s); n;) {
    unsigned char c = (unsigned char)*s;
    size_t k = 1;
    if (c == '"' || c == '\\')
      fprintf(out, "\\%c", c);
    else if (pt_is_control(c))
      fprintf(out, "\\\\x%02x", c);
    else if (c < 0x80)
      fputc(c, out);
    else if ((k = pt_utf8_len(s, n)))
      fwrite(s, 1, k, out);
    else {
      fputs(PT_REPLACEMENT, out);
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
    pt_put_double(out, v);
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
  if (pt_extra_scale(r)) {
    fputs(n ? ", \"scale\": " : "\"scale\": ", out);
    pt_put_double(out, r->scale);
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
