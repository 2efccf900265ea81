/* config: what the loaders share (config.h's types): params, names and lists of names,
 * integers, messages quoting a value, a file read whole. The experiment file is
 * config_experiment.c's, its matrix config_matrix.c's, the cluster file config_cluster.c's. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_impl.h"
#include "template.h"

const char *params_get(const paramlist *p, const char *name) {
  for (int i = p->n - 1; i >= 0; i--)
    if (strcmp(p->v[i].name, name) == 0) return p->v[i].value;
  return NULL;
}

void params_set(paramlist *p, const char *name, const char *value, const ynode *at) {
  for (int i = 0; i < p->n; i++)
    if (strcmp(p->v[i].name, name) == 0) {
      p->v[i].value = value;
      p->v[i].at = at;
      return;
    }
  p->v = xrealloc(p->v, (size_t)(p->n + 1) * sizeof *p->v);
  p->v[p->n++] = (param){name, value, at};
}

/* y_error of "<before><value quoted><after>": newlines and control bytes escaped. */
int cfg_error_q(ydoc_err *err, const ynode *at, const char *before, const char *value,
                const char *after) {
  char *q = quote_value(value);
  int rc = y_error(err, at, "%s%s%s", before, q, after);
  free(q);
  return rc;
}

/* An integer under `key`: the message names the key and quotes what was found. */
int cfg_key_int(ydoc_err *err, const ynode *n, const char *key, long min, long max, long *out) {
  char *end;
  errno = 0;
  long v = n->type == Y_SCALAR && !n->quoted ? strtol(n->str, &end, 10) : 0;
  if (n->type != Y_SCALAR || n->quoted || errno || end == n->str || *end || v < min || v > max) {
    char *q = n->type == Y_SCALAR ? quote_value(n->str) : xstrdup(y_type_name(n->type));
    int rc = y_error(err, n, "%s: expected an integer in [%ld, %ld], found %s", key, min, max, q);
    free(q);
    return rc;
  }
  *out = v;
  return 0;
}

int cfg_is_ident(const char *s) {
  if (!((*s >= 'a' && *s <= 'z') || *s == '_')) return 0;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || *s == '_' || (*s >= '0' && *s <= '9'))) return 0;
  return 1;
}

/* name: scalar mapping of variables (params, defaults, vars). */
int cfg_load_params(ydoc_err *err, const ynode *map, const char *what, paramlist *out) {
  if (y_expect(err, map, Y_MAP, what) != 0) return -1;
  for (int i = 0; i < map->n; i++) {
    const ynode *k = map->items[2 * i], *v = map->items[2 * i + 1];
    if (!cfg_is_ident(k->str)) {
      char *before = xasprintf("%s: ", what);
      int rc =
          cfg_error_q(err, k, before, k->str, " is not a variable name: expected [a-z_][a-z0-9_]*");
      free(before);
      return rc;
    }
    if (v->type != Y_SCALAR)
      return y_error(err, v, "%s: value of '%s': expected a scalar, found %s", what, k->str,
                     y_type_name(v->type));
    const char *problem = tpl_value_problem(v->str);
    if (problem) return y_error(err, v, "%s: value of '%s' %s", what, k->str, problem);
    params_set(out, k->str, v->str, v);
  }
  return 0;
}

/* A string or a list of strings (names). */
int cfg_load_names(ydoc_err *err, const ynode *n, const char *what, strvec *out) {
  const char *name;
  if (n->type == Y_SCALAR) {
    if (y_name(err, n, what, &name) != 0) return -1;
    sv_push(out, name);
    return 0;
  }
  if (n->type != Y_SEQ)
    return y_error(err, n, "%s: expected a name or a list of names, found %s", what,
                   y_type_name(n->type));
  if (n->n == 0) return y_error(err, n, "%s: expected at least one name", what);
  for (int i = 0; i < n->n; i++) {
    if (y_name(err, n->items[i], what, &name) != 0) return -1;
    if (sv_find(out, name) >= 0)
      return y_error(err, n->items[i], "%s: '%s' listed twice", what, name);
    sv_push(out, name);
  }
  return 0;
}

/* Reads a whole file for a loader; -1 with *err when it cannot. */
int cfg_read_input(const char *path, char **data, size_t *len, char **err) {
  char why[128];
  *data = repro_slurp(path, REPRO_MAX_YAML_BYTES, len, why, sizeof why);
  if (*data) return 0;
  *err = xasprintf("%s: cannot read: %s", path, why);
  return -1;
}
