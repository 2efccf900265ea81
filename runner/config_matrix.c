/* config_matrix: an experiment's matrix: its axes (a range and the ad-hoc values it allows),
 * its case lists (named ones and --cases), its exclusions, and the values of its cells. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_impl.h"

/* The widest range an axis may declare: far wider than any matrix's integers need, and a long
 * on every platform. */
#define AXIS_RANGE_MAX 1000000000L

/* range: [LO, HI], two integers, LO <= HI; every listed value of a is an integer in it. */
static int load_range(ydoc_err *err, const ynode *r, const ynode *list, axis *a) {
  if (strcmp(a->name, "device") == 0 || strcmp(a->name, "system") == 0)
    return y_error(err, r, "axis '%s': range: the device and system axes take names, not integers",
                   a->name);
  if (r->type != Y_SEQ || r->n != 2)
    return y_error(err, r, "axis '%s': range: expected [LO, HI], two integers", a->name);
  if (cfg_key_int(err, r->items[0], "range", -AXIS_RANGE_MAX, AXIS_RANGE_MAX, &a->lo) != 0 ||
      cfg_key_int(err, r->items[1], "range", -AXIS_RANGE_MAX, AXIS_RANGE_MAX, &a->hi) != 0)
    return -1;
  if (a->lo > a->hi)
    return y_error(err, r, "axis '%s': range [%ld, %ld]: expected LO <= HI", a->name, a->lo, a->hi);
  a->ranged = 1;
  for (int i = 0; i < a->values.n; i++)
    if (!axis_in_range(a, a->values.v[i])) {
      char *after = xasprintf(" is not an integer in its range [%ld, %ld] (written plainly: 3, "
                              "not 03 or +3)",
                              a->lo, a->hi);
      char *before = xasprintf("axis '%s': value ", a->name);
      int rc = cfg_error_q(err, list->type == Y_SEQ ? list->items[i] : list, before, a->values.v[i],
                           after);
      free(before);
      free(after);
      return rc;
    }
  return 0;
}

/* `all`: every name the file registers for the axis, in order. */
static int load_registered(ydoc_err *err, const ynode *v, const xm_model *m, axis *a) {
  const xm_names *names = xm_registered(err, m, a->name, v);
  if (!names) return -1;
  for (int i = 0; i < names->n; i++) sv_push(&a->values, names->v[i]->str);
  a->nlisted = a->values.n;
  return 0;
}

/* One axis: a name, a list of names, {values: NAMES, range: [LO, HI]}, or `all`. */
static int load_axis(ydoc_err *err, const ynode *k, const ynode *v, const xm_model *m, axis *a) {
  static const char *const keys[] = {"values", "range", NULL};
  const ynode *list = v, *range = NULL;
  a->name = k->str;
  a->at = k;
  if (xm_is_all(v)) return load_registered(err, v, m, a);
  if (v->type == Y_MAP) {
    if (y_check_keys(err, v, keys, "an axis") != 0) return -1;
    list = y_get(v, "values");
    range = y_get(v, "range");
    if (!list)
      return y_error(err, v,
                     "axis '%s': missing 'values' (the matrix's values; 'range' adds the "
                     "integers --only may name besides them)",
                     a->name);
  }
  if (cfg_load_names(err, list, "axis value", &a->values) != 0) return -1;
  a->nlisted = a->values.n;
  return range ? load_range(err, range, list, a) : 0;
}

int cfg_load_axes(ydoc_err *err, const ynode *map, const xm_model *m, experiment *e) {
  if (y_expect(err, map, Y_MAP, "axes") != 0) return -1;
  e->naxes = map->n;
  e->axes = xcalloc((size_t)map->n, sizeof *e->axes);
  e->device_axis = e->system_axis = -1;
  for (int i = 0; i < map->n; i++) {
    const ynode *k = map->items[2 * i];
    if (!cfg_is_ident(k->str))
      return cfg_error_q(err, k, "axis ", k->str, ": expected a name [a-z_][a-z0-9_]*");
    if (strcmp(k->str, "experiment") == 0 || strcmp(k->str, "figure") == 0)
      return y_error(err, k, "axis '%s': this name is reserved", k->str);
    if (load_axis(err, k, map->items[2 * i + 1], m, &e->axes[i]) != 0) return -1;
    if (strcmp(k->str, "device") == 0) e->device_axis = i;
    if (strcmp(k->str, "system") == 0) e->system_axis = i;
  }
  if (e->device_axis < 0) return y_error(err, map, "axes: expected a 'device' axis");
  if (e->system_axis < 0) return y_error(err, map, "axes: expected a 'system' axis");
  return 0;
}

/* An exclusion may name a value of any named case list, not only the selected one, and any
 * integer of an axis's range (the cells of that ad-hoc value, when a command line adds it). */
static int excludable(const experiment *e, int k, const char *key, const char *v) {
  if (k < e->naxes || e->cases.known.n == 0) return experiment_accepts(e, k, v);
  char *kv = xasprintf("%s=%s", key, v);
  int found = sv_find(&e->cases.known, kv) >= 0;
  free(kv);
  return found;
}

int cfg_load_exclusions(ydoc_err *err, const ynode *seq, experiment *e) {
  if (y_expect(err, seq, Y_SEQ, "exclude") != 0) return -1;
  e->nexcl = seq->n;
  e->excl = xcalloc((size_t)seq->n, sizeof *e->excl);
  for (int i = 0; i < seq->n; i++) {
    const ynode *m = seq->items[i];
    exclusion *x = &e->excl[i];
    if (y_expect(err, m, Y_MAP, "exclude item") != 0) return -1;
    if (m->n == 0) return y_error(err, m, "exclude item: expected at least one axis: value");
    x->naxes = m->n;
    x->axis = xcalloc((size_t)m->n, sizeof *x->axis);
    x->values = xcalloc((size_t)m->n, sizeof *x->values);
    for (int j = 0; j < m->n; j++) {
      const ynode *k = m->items[2 * j], *v = m->items[2 * j + 1];
      int a = experiment_key(e, k->str);
      if (a < 0) {
        char *after = xasprintf(" is not an axis%s of experiment '%s'",
                                e->cases.n ? " or a case key" : "", e->name);
        int rc = cfg_error_q(err, k, "exclude: ", k->str, after);
        free(after);
        return rc;
      }
      x->axis[j] = a;
      if (cfg_load_names(err, v, "exclude value", &x->values[j]) != 0) return -1;
      for (int t = 0; t < x->values[j].n; t++)
        if (!excludable(e, a, k->str, x->values[j].v[t]))
          return y_error(err, v, "exclude: '%s' is not a value of %s '%s'", x->values[j].v[t],
                         a < e->naxes ? "axis" : "case key", k->str);
    }
  }
  return 0;
}

static void caselist_free(caselist *cl) {
  free(cl->keys);
  free(cl->key_at);
  free(cl->vals);
  sv_free(&cl->known);
  memset(cl, 0, sizeof *cl);
}

/* The keys of a case, for messages: "m, n, k". */
static void case_keys(const ynode *m, sbuf *out) {
  for (int i = 0; i < m->n; i++) sb_addf(out, "%s%s", i ? ", " : "", m->items[2 * i]->str);
}

/* One list of cases: mappings with the same keys (none an axis), every value a name. */
static int load_case_list(ydoc_err *err, const ynode *seq, const char *what, const experiment *e,
                          caselist *cl) {
  if (y_expect(err, seq, Y_SEQ, what) != 0) return -1;
  if (seq->n == 0) return y_error(err, seq, "%s: expected at least one case (a mapping)", what);
  cl->at = seq;
  for (int i = 0; i < seq->n; i++) {
    const ynode *m = seq->items[i];
    if (m->type != Y_MAP)
      return y_error(err, m, "%s[%d]: expected a mapping of key: value, found %s", what, i,
                     y_type_name(m->type));
    if (i == 0) {
      if (m->n == 0) return y_error(err, m, "%s[0]: expected at least one key: value", what);
      cl->nkeys = m->n;
      cl->keys = xcalloc((size_t)m->n, sizeof *cl->keys);
      cl->key_at = xcalloc((size_t)m->n, sizeof *cl->key_at);
      cl->vals = xcalloc((size_t)(seq->n * m->n), sizeof *cl->vals);
      for (int j = 0; j < m->n; j++) {
        const ynode *k = m->items[2 * j];
        if (!cfg_is_ident(k->str))
          return cfg_error_q(err, k, "case key ", k->str, ": expected a name [a-z_][a-z0-9_]*");
        if (strcmp(k->str, "experiment") == 0 || strcmp(k->str, "figure") == 0)
          return y_error(err, k, "case key '%s': this name is reserved", k->str);
        if (experiment_axis(e, k->str) >= 0)
          return y_error(err, k, "case key '%s' is also an axis of experiment '%s'", k->str,
                         e->name);
        cl->keys[j] = k->str;
        cl->key_at[j] = k;
      }
    }
    int same = m->n == cl->nkeys;
    for (int j = 0; j < cl->nkeys && same; j++) same = y_get(m, cl->keys[j]) != NULL;
    if (!same) {
      sbuf want = {0}, got = {0};
      case_keys(seq->items[0], &want);
      case_keys(m, &got);
      y_error(err, m, "%s[%d]: expected the keys of %s[0] (%s), found (%s)", what, i, what,
              want.s ? want.s : "", got.s ? got.s : "");
      sb_free(&want);
      sb_free(&got);
      return -1;
    }
    for (int j = 0; j < cl->nkeys; j++) {
      const ynode *v = y_get(m, cl->keys[j]);
      if (v->type != Y_SCALAR)
        return y_error(err, v, "%s[%d]: value of '%s': expected a scalar, found %s", what, i,
                       cl->keys[j], y_type_name(v->type));
      if (y_name(err, v, "case value", &cl->vals[i * cl->nkeys + j]) != 0) return -1;
    }
  }
  cl->n = seq->n;
  return 0;
}

/* cases: a list, or named lists (name -> list) of which `sel` (default: 'default') is taken;
 * every named list is checked. *named: set when the lists are named. A list named by --cases
 * that this experiment lacks leaves it without cells (cases.none, its error kept in *pending):
 * the seed's nsa_only runs one kernel; the file loader refuses a name no experiment has. */
int cfg_load_cases(ydoc_err *err, const ynode *n, const char *sel, experiment *e, int *named,
                   ydoc_err *pending) {
  if (n->type == Y_SEQ) return load_case_list(err, n, "cases", e, &e->cases);
  if (n->type != Y_MAP)
    return y_error(err, n, "cases: expected a list of cases or a mapping of named lists, found %s",
                   y_type_name(n->type));
  if (n->n == 0) return y_error(err, n, "cases: expected at least one named list");
  *named = 1;
  const char *want = sel ? sel : "default";
  const ynode *chosen = NULL;
  sbuf names = {0};
  int rc = 0;
  for (int i = 0; i < n->n && rc == 0; i++) {
    const ynode *k = n->items[2 * i];
    const char *name;
    caselist tmp = {0};
    char *what = NULL;
    rc = y_name(err, k, "case list name", &name);
    if (rc == 0) {
      what = xasprintf("cases.%s", name);
      rc = load_case_list(err, n->items[2 * i + 1], what, e, &tmp);
    }
    for (int c = 0; rc == 0 && c < tmp.n * tmp.nkeys; c++) {
      char *kv = xasprintf("%s=%s", tmp.keys[c % tmp.nkeys], tmp.vals[c]);
      if (sv_find(&e->cases.known, kv) < 0) sv_push(&e->cases.known, kv);
      free(kv);
    }
    free(what);
    caselist_free(&tmp);
    sb_addf(&names, "%s%s", i ? ", " : "", k->str);
    if (rc == 0 && strcmp(k->str, want) == 0) chosen = k;
  }
  if (rc == 0 && !chosen) {
    char *q = quote_value(want);
    rc = y_error(sel ? pending : err, n, "cases: no list %s%s: expected one of %s", q,
                 sel ? " (--cases)" : " (choose one with --cases NAME)", names.s);
    free(q);
    if (sel) { /* no cells here; the first list gives the keys */
      e->cases.none = 1;
      chosen = n->items[0];
      want = chosen->str;
      rc = 0;
    }
  }
  sb_free(&names);
  if (rc != 0) return -1;
  char *what = xasprintf("cases.%s", want);
  rc = load_case_list(err, y_get(n, want), what, e, &e->cases);
  free(what);
  e->cases.list = chosen->str;
  return rc;
}

int experiment_axis(const experiment *e, const char *name) {
  for (int i = 0; i < e->naxes; i++)
    if (strcmp(e->axes[i].name, name) == 0) return i;
  return -1;
}

int experiment_key(const experiment *e, const char *name) {
  int a = experiment_axis(e, name);
  if (a >= 0) return a;
  for (int i = 0; i < e->cases.nkeys; i++)
    if (strcmp(e->cases.keys[i], name) == 0) return e->naxes + i;
  return -1;
}

int experiment_dims(const experiment *e) { return e->naxes + (e->cases.n > 0); }

const char *experiment_value(const experiment *e, const int *vals, int k) {
  if (k < e->naxes) return e->axes[k].values.v[vals[k]];
  return e->cases.vals[vals[e->naxes] * e->cases.nkeys + (k - e->naxes)];
}

int experiment_has_value(const experiment *e, int k, const char *v) {
  if (k < e->naxes) return sv_find(&e->axes[k].values, v) >= 0;
  for (int i = 0; i < e->cases.n; i++)
    if (strcmp(e->cases.vals[i * e->cases.nkeys + (k - e->naxes)], v) == 0) return 1;
  return 0;
}

int axis_in_range(const axis *a, const char *v) {
  if (!a->ranged) return 0;
  char *end, plain[32];
  errno = 0;
  long n = strtol(v, &end, 10);
  if (errno || end == v || *end || n < a->lo || n > a->hi) return 0;
  snprintf(plain, sizeof plain, "%ld", n);
  return strcmp(plain, v) == 0;
}

int experiment_accepts(const experiment *e, int k, const char *v) {
  return experiment_has_value(e, k, v) || (k < e->naxes && axis_in_range(&e->axes[k], v));
}

/* Puts v, just appended to a's ad-hoc values, in numeric order among them. */
static void adhoc_sort_last(axis *a) {
  char **v = a->values.v;
  for (int i = a->values.n - 1; i > a->nlisted && atol(v[i]) < atol(v[i - 1]); i--) {
    char *t = v[i];
    v[i] = v[i - 1];
    v[i - 1] = t;
  }
}

int expfile_add_value(expfile *f, const char *key, const char *v) {
  int takes = 0;
  for (int i = 0; i < f->nexps; i++) {
    experiment *e = &f->exps[i];
    int a = experiment_axis(e, key);
    if (a < 0) continue;
    axis *ax = &e->axes[a];
    if (sv_find(&ax->values, v) < 0 && axis_in_range(ax, v)) {
      sv_push(&ax->values, v);
      adhoc_sort_last(ax);
    }
    takes += sv_find(&ax->values, v) >= 0;
  }
  return takes;
}

int experiment_adhoc_axis(const experiment *e, const int *vals) {
  for (int a = 0; a < e->naxes; a++)
    if (vals[a] >= e->axes[a].nlisted) return a;
  return -1;
}

void cfg_free_matrix(experiment *e) {
  for (int a = 0; a < e->naxes; a++) sv_free(&e->axes[a].values);
  free(e->axes);
  for (int x = 0; x < e->nexcl; x++) {
    for (int j = 0; j < e->excl[x].naxes; j++) sv_free(&e->excl[x].values[j]);
    free(e->excl[x].axis);
    free(e->excl[x].values);
  }
  free(e->excl);
  caselist_free(&e->cases);
}
