/* expmodel: reads the shared model of an experiment file (expmodel.h). */
#include "expmodel.h"

#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

static int parse_bool(ydoc_err *err, const ynode *n, const char *what, int *out) {
  if (n->type == Y_SCALAR && !n->quoted && strcmp(n->str, "true") == 0) return *out = 1, 0;
  if (n->type == Y_SCALAR && !n->quoted && strcmp(n->str, "false") == 0) return *out = 0, 0;
  return y_error(err, n, "%s: expected true or false", what);
}

int xm_parse_system(ydoc_err *err, const ynode *k, const ynode *v, xm_system *out) {
  static const char *const keys[] = {"command", "family", "absent", "ours", "expected", NULL};
  memset(out, 0, sizeof *out);
  out->at = k;
  out->expected = 1;
  if (y_name(err, k, "system name", &out->name) != 0) return -1;
  if (y_expect(err, v, Y_MAP, "system") != 0) return -1;
  if (y_check_keys(err, v, keys, "a system") != 0) return -1;
  const ynode *cmd = y_get(v, "command"), *fam = y_get(v, "family"), *absent = y_get(v, "absent");
  if (!!cmd + !!fam + !!absent != 1)
    return y_error(err, v,
                   "system '%s': expected exactly one of 'command' (a template), 'family' (the "
                   "name of a shared template) or 'absent' (why it cannot run)",
                   out->name);
  out->run = cmd ? cmd : fam ? fam : absent;
  if (out->run->type != Y_SCALAR || !*out->run->str)
    return y_error(err, out->run, "system '%s': expected a non-empty string", out->name);
  out->command = cmd ? cmd->str : NULL;
  out->family = fam ? fam->str : NULL;
  out->absent = absent ? absent->str : NULL;
  const ynode *ours = y_get(v, "ours"), *expected = y_get(v, "expected");
  if (ours && parse_bool(err, ours, "ours", &out->ours) != 0) return -1;
  if (expected && parse_bool(err, expected, "expected", &out->expected) != 0) return -1;
  if (absent && expected && out->expected)
    return y_error(err, expected, "system '%s': an absent system is never expected", out->name);
  if (absent) out->expected = 0;
  return 0;
}

/* A list of names, none twice. */
static int load_names(ydoc_err *err, const ynode *root, const char *key, xm_names *out) {
  const ynode *seq = y_get(root, key);
  if (!seq) return 0;
  if (y_expect(err, seq, Y_SEQ, key) != 0) return -1;
  out->v = xcalloc((size_t)(seq->n ? seq->n : 1), sizeof *out->v);
  for (int i = 0; i < seq->n; i++) {
    const char *name;
    if (y_name(err, seq->items[i], key, &name) != 0) return -1;
    for (int j = 0; j < out->n; j++)
      if (strcmp(out->v[j]->str, name) == 0)
        return y_error(err, seq->items[i], "%s: '%s' is listed twice", key, name);
    out->v[out->n++] = seq->items[i];
  }
  return 0;
}

static int load_systems(ydoc_err *err, const ynode *root, xm_model *m) {
  const ynode *map = y_get(root, "systems");
  if (!map) return 0;
  if (y_expect(err, map, Y_MAP, "systems") != 0) return -1;
  m->systems = xcalloc((size_t)(map->n ? map->n : 1), sizeof *m->systems);
  m->system_names.v = xcalloc((size_t)(map->n ? map->n : 1), sizeof *m->system_names.v);
  for (int i = 0; i < map->n; i++) {
    if (xm_parse_system(err, map->items[2 * i], map->items[2 * i + 1], &m->systems[i]) != 0)
      return -1;
    m->system_names.v[m->system_names.n++] = map->items[2 * i];
    m->nsystems++;
  }
  return 0;
}

static int load_experiments(ydoc_err *err, const ynode *root, xm_model *m) {
  const ynode *map = y_get(root, "experiments");
  if (!map) return 0;
  if (y_expect(err, map, Y_MAP, "experiments") != 0) return -1;
  m->exps = xcalloc((size_t)(map->n ? map->n : 1), sizeof *m->exps);
  for (int i = 0; i < map->n; i++) {
    xm_experiment *e = &m->exps[i];
    e->at = map->items[2 * i];
    e->node = map->items[2 * i + 1];
    if (y_name(err, e->at, "experiment name", &e->name) != 0) return -1;
    if (y_expect(err, e->node, Y_MAP, "experiment") != 0) return -1;
    e->log = y_get(e->node, "log");
    m->nexps++;
  }
  return 0;
}

int xm_load(ydoc_err *err, const ynode *root, xm_model *m) {
  memset(m, 0, sizeof *m);
  const ynode *fig = y_get(root, "figure");
  if (fig && y_name(err, fig, "figure", &m->figure) != 0) goto fail;
  if (load_names(err, root, "devices", &m->devices) != 0 ||
      load_names(err, root, "workloads", &m->workloads) != 0 || load_systems(err, root, m) != 0 ||
      load_experiments(err, root, m) != 0)
    goto fail;
  return 0;
fail:
  xm_free(m);
  return -1;
}

void xm_free(xm_model *m) {
  free(m->devices.v);
  free(m->workloads.v);
  free(m->system_names.v);
  free(m->systems);
  free(m->exps);
  memset(m, 0, sizeof *m);
}

const xm_system *xm_find_system(const xm_model *m, const char *name) {
  for (int i = 0; i < m->nsystems; i++)
    if (strcmp(m->systems[i].name, name) == 0) return &m->systems[i];
  return NULL;
}

const xm_experiment *xm_find_experiment(const xm_model *m, const char *name) {
  for (int i = 0; i < m->nexps; i++)
    if (strcmp(m->exps[i].name, name) == 0) return &m->exps[i];
  return NULL;
}

int xm_is_all(const ynode *v) {
  return v && v->type == Y_SCALAR && !v->quoted && strcmp(v->str, "all") == 0;
}

const xm_names *xm_registered(ydoc_err *err, const xm_model *m, const char *axis, const ynode *v) {
  const char *list = strcmp(axis, "device") == 0     ? "devices"
                     : strcmp(axis, "workload") == 0 ? "workloads"
                     : strcmp(axis, "system") == 0   ? "systems"
                                                     : NULL;
  if (!list) {
    y_error(err, v,
            "axis '%s': all: only the device, workload and system axes take every registered "
            "name",
            axis);
    return NULL;
  }
  const xm_names *names = list[0] == 'd'   ? &m->devices
                          : list[0] == 'w' ? &m->workloads
                                           : &m->system_names;
  if (names->n == 0) {
    y_error(err, v, "axis '%s': all: the file lists no %s (expected a top-level %s:)", axis, list,
            list);
    return NULL;
  }
  return names;
}
