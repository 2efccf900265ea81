/* cells: one row per cell of the rows a read added: two logs of one cell make it ERR naming
 * them all, or (--latest) the newest is drawn and the others are listed as not drawn. */
#include "reader_parts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

/* The rows one read added (from start on) and what telling their cells apart needs. */
typedef struct {
  pt_table *t;
  size_t start;
  const rd_log_date *dates; /* one per row from start on */
  const char *root;         /* the path read: messages name a log below it */
  int latest;
  rd_issues *is;
} cells_ctx;

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
static const char *rel_name(const cells_ctx *w, const char *source) {
  size_t n = strlen(w->root);
  if (strncmp(source, w->root, n) != 0 || source[n] != '/') return source;
  while (source[n] == '/') n++;
  return source + n;
}

/* --latest: the newest log of the cell (members m[0..k), keep) stays; the others are listed as
 * not drawn, naming the one drawn. */
static void newest_wins(cells_ctx *w, const size_t *m, size_t k, size_t keep, unsigned char *drop) {
  const pt_row *rows = w->t->rows + w->start;
  char newest[48], older[48];
  rd_fmt_date(&w->dates[m[keep]], newest, sizeof newest);
  for (size_t i = 0; i < k; i++) {
    if (i == keep) continue;
    drop[m[i]] = 1;
    rd_fmt_date(&w->dates[m[i]], older, sizeof older);
    rd_issue_add(w->is, ISSUE_NOT_DRAWN, rows[m[i]].source, 0,
                 "an older log of this cell (dated %s): --latest draws %s (dated %s)", older,
                 rel_name(w, rows[m[keep]].source), newest);
  }
}

/* Several logs of one cell and no newest to pick: the first one's row stays as ERR naming them
 * all, the others are listed and go. tie: --latest found no single newest. */
static void cell_error(cells_ctx *w, const size_t *m, size_t k, int tie, unsigned char *drop) {
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
  rd_refuse(&rows[m[0]], why);
}

/* One cell's logs m[0..k), in walk order. */
static void one_cell(cells_ctx *w, const size_t *m, size_t k, unsigned char *drop) {
  size_t keep = 0;
  int tie = 0;
  if (w->latest) {
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
static void one_row_per_cell(cells_ctx *w) {
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

void rd_one_row_per_cell(pt_table *t, size_t start, const rd_log_date *dates, const char *root,
                         int latest, rd_issues *is) {
  cells_ctx w = {t, start, dates, root, latest, is};
  one_row_per_cell(&w);
}
