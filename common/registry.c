/* registry: loads common/registry.yaml (registry.h): its three sections, each row checked. */
#include "registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "reporoot.h"
#include "strbuf.h"

#ifndef REPRO_REGISTRY_BUILT
#define REPRO_REGISTRY_BUILT "common/registry.yaml"
#endif

#define RG_LABEL_MAX 64

static const char *scalar(const ynode *n) { return n && n->type == Y_SCALAR ? n->str : NULL; }

/* A label reaches gnuplot scripts inside double quotes: printable and quote-free. */
static int check_label(ydoc_err *err, const ynode *n, const char *row) {
  const char *s = scalar(n);
  if (!s || !*s || strlen(s) >= RG_LABEL_MAX)
    return y_error(err, n, "%s: label: expected a string of 1 to %d characters", row,
                   RG_LABEL_MAX - 1);
  for (const char *p = s; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == '"' || *p == '\'' || *p == '\\' || *p == '`')
      return y_error(err, n,
                     "%s: label: expected no quotes, apostrophes, backslashes, backticks or "
                     "control characters",
                     row);
  return 0;
}

static int parse_color(ydoc_err *err, const ynode *n, const char *row, unsigned *out) {
  const char *s = scalar(n);
  char *end = NULL;
  unsigned long v = 0;
  if (s && s[0] == '#' && strlen(s) == 7) v = strtoul(s + 1, &end, 16);
  if (!end || *end) return y_error(err, n, "%s: color: expected \"#rrggbb\"", row);
  *out = (unsigned)v;
  return 0;
}

static int load_aliases(ydoc_err *err, const ynode *n, const char *row, rg_row *r) {
  if (y_expect(err, n, Y_SEQ, "aliases") != 0) return -1;
  for (int i = 0; i < n->n; i++) {
    if (r->naliases == RG_MAX_ALIASES)
      return y_error(err, n->items[i], "%s: at most %d aliases", row, RG_MAX_ALIASES);
    if (y_name(err, n->items[i], "alias", &r->aliases[r->naliases]) != 0) return -1;
    r->naliases++;
  }
  return 0;
}

/* One row NAME: {label, aliases, color (systems: required)}. */
static int load_row(ydoc_err *err, const ynode *k, const ynode *v, int is_system, rg_row *r) {
  static const char *const system_keys[] = {"label", "color", "aliases", NULL};
  static const char *const other_keys[] = {"label", "aliases", NULL};
  memset(r, 0, sizeof *r);
  r->at = k;
  if (y_name(err, k, "a name", &r->name) != 0) return -1;
  if (y_expect(err, v, Y_MAP, "a row {label: ..., ...}") != 0) return -1;
  if (y_check_keys(err, v, is_system ? system_keys : other_keys, r->name) != 0) return -1;
  const ynode *label = y_get(v, "label"), *color = y_get(v, "color"), *al = y_get(v, "aliases");
  if (!label) return y_error(err, v, "%s: expected its label: \"...\"", r->name);
  if (check_label(err, label, r->name) != 0) return -1;
  r->label = label->str;
  if (is_system && !color) return y_error(err, v, "%s: expected its color: \"#rrggbb\"", r->name);
  if (color && parse_color(err, color, r->name, &r->color) != 0) return -1;
  return al ? load_aliases(err, al, r->name, r) : 0;
}

/* No name or alias of row r is a name or alias of an earlier row; no system shares a colour. */
static int check_unique(ydoc_err *err, const rg_section *s, const rg_row *r, int is_system) {
  const rg_row *dup = rg_find(s, r->name);
  for (int a = 0; a < r->naliases && !dup; a++) dup = rg_find(s, r->aliases[a]);
  if (dup)
    return y_error(err, r->at, "%s is listed twice (as a name or alias; first as %s, line %d)",
                   r->name, dup->name, dup->at->line);
  for (int i = 0; is_system && i < s->n; i++)
    if (s->v[i].color == r->color)
      return y_error(err, r->at, "%s has %s's colour #%06X: two systems never share one", r->name,
                     s->v[i].name, r->color);
  return 0;
}

static int load_section(ydoc_err *err, const ynode *root, const char *key, rg_section *s) {
  const ynode *map = y_get(root, key);
  if (!map) return 0;
  if (y_expect(err, map, Y_MAP, key) != 0) return -1;
  int is_system = strcmp(key, "systems") == 0;
  s->v = xcalloc((size_t)(map->n ? map->n : 1), sizeof *s->v);
  for (int i = 0; i < map->n; i++) {
    rg_row r;
    if (load_row(err, map->items[2 * i], map->items[2 * i + 1], is_system, &r) != 0) return -1;
    if (check_unique(err, s, &r, is_system) != 0) return -1;
    s->v[s->n++] = r;
  }
  return 0;
}

int rg_load(const char *path, rg_registry *r, char **errmsg) {
  static const char *const keys[] = {"systems", "workloads", "devices", NULL};
  memset(r, 0, sizeof *r);
  r->path = xstrdup(path);
  ydoc_err err = {0};
  r->tree = y_load_file(path, &err);
  if (r->tree && y_check_keys(&err, r->tree, keys, "the registry") == 0 &&
      load_section(&err, r->tree, "systems", &r->systems) == 0 &&
      load_section(&err, r->tree, "workloads", &r->workloads) == 0 &&
      load_section(&err, r->tree, "devices", &r->devices) == 0)
    return 0;
  *errmsg = err.msg ? err.msg : xasprintf("%s: invalid registry", path);
  rg_free(r);
  return -1;
}

void rg_free(rg_registry *r) {
  free(r->systems.v);
  free(r->workloads.v);
  free(r->devices.v);
  y_free(r->tree);
  free(r->path);
  memset(r, 0, sizeof *r);
}

const rg_row *rg_find(const rg_section *s, const char *name) {
  for (int i = 0; i < s->n; i++) {
    if (strcmp(s->v[i].name, name) == 0) return &s->v[i];
    for (int a = 0; a < s->v[i].naliases; a++)
      if (strcmp(s->v[i].aliases[a], name) == 0) return &s->v[i];
  }
  return NULL;
}

static int file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int rg_path_for(const char *config, char *out, size_t cap) {
  char *root = repro_root_find(config);
  if (root) {
    snprintf(out, cap, "%s/common/registry.yaml", root);
    free(root);
    if (file_exists(out)) return 0;
  }
  snprintf(out, cap, "%s", REPRO_REGISTRY_BUILT);
  return file_exists(out) ? 0 : -1;
}
