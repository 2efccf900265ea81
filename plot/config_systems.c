/* config_systems: the plot's rows, columns and bars: the names its plot: section lists (else
 * the ones the file registers, common/expmodel.h), each dressed from common/registry.yaml (its
 * label and aliases, a system's colour) and a system also from the file's systems: row (ours,
 * expected). */
#include "config_parts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"

/* Colours of the systems without a row in the registry (a test's stand-ins): greys and muted
 * tones the registry does not use, taken in order, skipping any another system of the plot has. */
static const unsigned fallback_colors[] = {0x4D4D4D, 0xB3B3B3, 0x7A7A7A, 0xD9D9D9, 0x2F4F4F,
                                           0x8FBC8F, 0xBC8F8F, 0xDAA520, 0x6B8E23, 0x708090,
                                           0xA0522D, 0x4682B4, 0xD2B48C, 0x9ACD32, 0x800000};

int pcy_names(ycx *y, const ynode *n, pc_item *items, int *count, const char *what) {
  if (pcy_want(y, n, Y_SEQ, what)) return -1;
  const ynode *v;
  FOR_ITEMS(n, v) {
    if (v->type != Y_SCALAR)
      return yerr(y, v,
                  "%s: expected a name: how it is shown (label, aliases, colour) is its row in "
                  "common/registry.yaml, and a system's ours and expected are its row under the "
                  "file's systems:",
                  what);
    if (*count == PC_MAX_ITEMS) return yerr(y, v, "at most %d %s", PC_MAX_ITEMS, what);
    pc_item *it = &items[*count];
    memset(it, 0, sizeof *it);
    if (pcy_name(y, v, it->name, what)) return -1;
    if (pc_find(items, *count, it->name) >= 0)
      return yerr(y, v, "%s: \"%s\" is listed twice", what, it->name);
    (*count)++;
  }
  return 0;
}

/* The names a list takes when the plot: section gives none: the file's registered ones. */
static int default_names(ycx *y, const xm_names *names, pc_item *items, int *count) {
  if (*count) return 0;
  for (int i = 0; i < names->n; i++) {
    if (i == PC_MAX_ITEMS) return yerr(y, names->v[i], "at most %d names", PC_MAX_ITEMS);
    memset(&items[i], 0, sizeof items[i]);
    if (pcy_name(y, names->v[i], items[i].name, "a name")) return -1;
  }
  *count = names->n;
  return 0;
}

int pcy_default_names(ycx *y, const xm_model *m, pc_config *c) {
  return default_names(y, &m->devices, c->devices, &c->ndevices) ||
                 default_names(y, &m->workloads, c->workloads, &c->nworkloads) ||
                 default_names(y, &m->system_names, c->systems, &c->nsystems)
             ? -1
             : 0;
}

/* Item i's label and aliases from its registry row rows[i] (NULL: its name, no aliases). Two
 * items of one row are an error: a log's name must say whose it is. */
static int dress_item(ycx *y, const rg_row *const *rows, pc_item *items, int i, const ynode *at) {
  pc_item *it = &items[i];
  const rg_row *row = rows[i];
  snprintf(it->label, sizeof it->label, "%s", row ? row->label : it->name);
  for (int a = 0; row && a < row->naliases && a < PC_MAX_ALIASES; a++)
    snprintf(it->aliases[it->naliases++], PT_NAME, "%.*s", PT_NAME - 1, row->aliases[a]);
  for (int o = 0; row && o < i; o++)
    if (rows[o] == row)
      return yerr(y, at, "%s and %s are one row of common/registry.yaml (%s is an alias)",
                  items[o].name, it->name, strcmp(row->name, it->name) ? it->name : items[o].name);
  return 0;
}

/* Every item of a list dressed from its section of the registry. */
static int dress_list(ycx *y, const rg_section *sec, pc_item *items, int n, const ynode *at) {
  const rg_row *rows[PC_MAX_ITEMS];
  for (int i = 0; i < n; i++) {
    rows[i] = rg_find(sec, items[i].name);
    if (dress_item(y, rows, items, i, at)) return -1;
  }
  return 0;
}

/* Gives every system without a registry row the next fallback colour no system of the plot has. */
static void fallback_colour(pc_config *c) {
  size_t next = 0, nfb = sizeof fallback_colors / sizeof *fallback_colors;
  for (int s = 0; s < c->nsystems; s++) {
    pc_item *it = &c->systems[s];
    if (it->has_color) continue;
    for (; next < nfb; next++) { /* a colour no system of the plot has yet */
      int taken = 0;
      for (int o = 0; o < c->nsystems && !taken; o++)
        taken = c->systems[o].has_color && c->systems[o].color == fallback_colors[next];
      if (!taken) break;
    }
    it->color = fallback_colors[next < nfb ? next : (size_t)s % nfb];
    it->has_color = 1;
    next++;
  }
}

/* A system's colour (its registry row), ours and expected (its row under systems:; a system
 * only logs have, such as the artifact's, is expected and not ours). */
static void dress_system(const rg_row *row, const xm_model *m, pc_item *it) {
  it->has_color = row != NULL;
  if (row) it->color = row->color;
  const xm_system *xs = xm_find_system(m, it->name);
  it->ours = xs && xs->ours;
  it->expected = !xs || xs->expected;
}

static int dress_all(ycx *y, const rg_registry *r, const xm_model *m, const ynode *at,
                     pc_config *c) {
  if (dress_list(y, &r->devices, c->devices, c->ndevices, at) ||
      dress_list(y, &r->workloads, c->workloads, c->nworkloads, at) ||
      dress_list(y, &r->systems, c->systems, c->nsystems, at))
    return -1;
  for (int s = 0; s < c->nsystems; s++)
    dress_system(rg_find(&r->systems, c->systems[s].name), m, &c->systems[s]);
  fallback_colour(c);
  return 0;
}

int pcy_dress(ycx *y, const char *path, const xm_model *m, const ynode *at, pc_config *c) {
  rg_registry reg = {0}; /* none found: every name is its own label, in a fallback colour */
  char where[PT_PATH];
  if (rg_path_for(path, where, sizeof where) == 0 && rg_load(where, &reg, &y->err.msg) != 0)
    return -1;
  int rc = dress_all(y, &reg, m, at, c);
  rg_free(&reg);
  return rc;
}
