/* reader: where a log becomes a number (see reader.h): a file's format picked (ours, else the
 * artifact's), its name's keys, the row completed from the figure's defaults, and a folder's
 * logs read into rows, one per cell (the formats: reader_ours.c, reader_artifact.c; the walk:
 * walk.c; one row per cell: cells.c). */
#include "reader.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reader_parts.h"
#include "walk.h"

/* ---- a log's format ---- */

int rd_init(void) { return rd_artifact_init(); }
void rd_cleanup(void) { rd_artifact_cleanup(); }

/* rd_parse_ours, and the artifact's reader for a log that is not of our format. An empty or
 * binary file is skipped. */
static int parse_buffer(const char *buf, size_t len, const char *path, pt_row *row, rd_issues *is,
                        const pt_row *named, const rd_opts *o, double *date) {
  int rc = rd_parse_ours(buf, len, path, row, is, named, o ? o->default_keys : NULL,
                         o ? o->ndefault_keys : 0, date);
  return rc == RD_FOREIGN ? rd_parse_artifact(buf, len, path, row, is) : rc;
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

/* ---- rows: a log's keys completed ---- */

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

/* The file name against the template(s): with several, the first that matches and names its
 * own experiment ({experiment} is in each, config_load.c checks). */
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

/* ---- a folder's logs, one row per cell ---- */

/* What reading one path into rows works on. */
typedef struct {
  const rd_opts *o;
  pt_table *t;
  rd_issues *is;
  size_t start;       /* the table's row count before the read */
  rd_log_date *dates; /* one per row the read added (owned) */
  size_t ndates, capdates;
} read_ctx;

/* Remembers the date of the row just added; 0, or -1 when out of memory. */
static int add_date(read_ctx *r, double meta_date, const struct stat *st) {
  if (r->ndates == r->capdates) {
    size_t cap = r->capdates ? 2 * r->capdates : 64;
    rd_log_date *nd = realloc(r->dates, cap * sizeof *nd);
    if (!nd) return -1;
    r->dates = nd;
    r->capdates = cap;
  }
  r->dates[r->ndates++] = rd_log_date_of(meta_date, st);
  return 0;
}

/* The walk's visit: one log into a row of the table. */
static int read_file(void *ctx, wk_walk *w, const char *path) {
  read_ctx *r = ctx;
  const rd_opts *o = r->o;
  rd_issues *is = r->is;
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
  char *buf = wk_read_once(w, path, &len, &st);
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
  if (pt_append(r->t, &row) != 0 || add_date(r, date, &st) != 0) {
    r->t->n = r->start + r->ndates; /* the row and its date, or neither */
    rd_issue_add(is, ISSUE_SKIPPED, path, 0, "out of memory");
    return 0;
  }
  return 1;
}

int rd_read_path(const rd_opts *o, const char *path, pt_table *t, rd_issues *is) {
  struct stat st;
  if (stat(path, &st) != 0) return -1;
  read_ctx rc = {.o = o, .t = t, .is = is, .start = t->n};
  wk_walk w;
  wk_init(&w, is, read_file, &rc);
  int r = 0;
  if (S_ISDIR(st.st_mode)) {
    if (access(path, R_OK | X_OK) != 0) return -1;
    r = wk_walk_root(&w, path, &st);
  } else if (!S_ISREG(st.st_mode)) {
    rd_issue_add(is, ISSUE_SKIPPED, path, 0, "%s, not a regular file: not read",
                 wk_file_kind(st.st_mode));
  } else {
    read_file(&rc, &w, path);
  }
  rd_one_row_per_cell(t, rc.start, rc.dates, path, o->latest, is);
  wk_free(&w);
  free(rc.dates);
  return r < 0 ? -1 : (int)(t->n - rc.start);
}

/* ---- every file of one suffix ---- */

/* What rd_walk_files hands each file to. */
typedef struct {
  const char *suffix; /* the file names it visits end so */
  rd_file_fn fn;
  void *ctx;
} files_ctx;

/* rd_walk_files' visit: a file whose name ends in the suffix, read whole once, handed over. */
static int visit_file(void *ctx, wk_walk *w, const char *path) {
  const files_ctx *f = ctx;
  size_t plen = strlen(path), slen = strlen(f->suffix);
  if (plen < slen || strcmp(path + plen - slen, f->suffix) != 0) return 0;
  size_t len = 0;
  struct stat st;
  char *buf = wk_read_once(w, path, &len, &st);
  if (!buf) return 0;
  f->fn(f->ctx, path, buf, len);
  free(buf);
  return 1;
}

int rd_walk_files(const char *path, const char *suffix, rd_file_fn fn, void *ctx, rd_issues *is) {
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode) || access(path, R_OK | X_OK) != 0) return -1;
  files_ctx f = {suffix, fn, ctx};
  wk_walk w;
  wk_init(&w, is, visit_file, &f);
  int r = wk_walk_root(&w, path, &st);
  wk_free(&w);
  return r;
}
