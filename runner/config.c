#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "template.h"

const char *const builtin_vars[] = {"bin",    "root",    "python", "experiment",
                                    "figure", "run_dir", NULL};

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
static int y_error_q(ydoc_err *err, const ynode *at, const char *before, const char *value,
                     const char *after) {
  char *q = quote_value(value);
  int rc = y_error(err, at, "%s%s%s", before, q, after);
  free(q);
  return rc;
}

/* An integer under `key`: the message names the key and quotes what was found. */
static int key_int(ydoc_err *err, const ynode *n, const char *key, long min, long max, long *out) {
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

static int is_ident(const char *s) {
  if (!((*s >= 'a' && *s <= 'z') || *s == '_')) return 0;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || *s == '_' || (*s >= '0' && *s <= '9'))) return 0;
  return 1;
}

/* name: scalar mapping of variables (params, defaults, vars). */
static int load_params(ydoc_err *err, const ynode *map, const char *what, paramlist *out) {
  if (y_expect(err, map, Y_MAP, what) != 0) return -1;
  for (int i = 0; i < map->n; i++) {
    const ynode *k = map->items[2 * i], *v = map->items[2 * i + 1];
    if (!is_ident(k->str)) {
      char *before = xasprintf("%s: ", what);
      int rc =
          y_error_q(err, k, before, k->str, " is not a variable name: expected [a-z_][a-z0-9_]*");
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
static int load_names(ydoc_err *err, const ynode *n, const char *what, strvec *out) {
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

/* Parses "SECONDS", "MM:SS" or "HH:MM:SS". */
static int parse_duration(const char *s, long *out) {
  long parts[3];
  int n = 0;
  const char *p = s;
  while (n < 3) {
    char *end;
    errno = 0;
    if (*p < '0' || *p > '9') return -1;
    long v = strtol(p, &end, 10);
    if (errno || v < 0 || v > 1000000) return -1;
    parts[n++] = v;
    if (*end == '\0') break;
    if (*end != ':') return -1;
    p = end + 1;
  }
  if (*p && n == 3 && strchr(p, ':')) return -1;
  long sec = 0;
  for (int i = 0; i < n; i++) sec = sec * 60 + parts[i];
  if (sec <= 0) return -1;
  *out = sec;
  return 0;
}

/* A family: one command template shared by several systems, which differ only in {system}. */
typedef struct {
  const char *name;
  const ynode *tpl;
} family_def;

typedef struct {
  int n;
  family_def *v;
} familylist;

static const family_def *family_find(const familylist *fl, const char *name) {
  for (int i = 0; i < fl->n; i++)
    if (strcmp(fl->v[i].name, name) == 0) return &fl->v[i];
  return NULL;
}

/* families: name -> template; a later definition (the experiment's) overrides the file's. */
static int load_families(ydoc_err *err, const ynode *map, familylist *fl) {
  if (y_expect(err, map, Y_MAP, "families") != 0) return -1;
  for (int i = 0; i < map->n; i++) {
    const ynode *k = map->items[2 * i], *v = map->items[2 * i + 1];
    const char *name;
    if (y_name(err, k, "family name", &name) != 0) return -1;
    if (v->type != Y_SCALAR || !*v->str)
      return y_error(err, v, "family '%s': expected a command template (a non-empty string)", name);
    if (!strstr(v->str, "{system}"))
      return y_error(err, v,
                     "family '%s': expected {system} in the template: the systems of a family "
                     "differ only in it",
                     name);
    family_def *f = (family_def *)family_find(fl, name);
    if (!f) {
      fl->v = xrealloc(fl->v, (size_t)(fl->n + 1) * sizeof *fl->v);
      f = &fl->v[fl->n++];
    }
    *f = (family_def){name, v};
  }
  return 0;
}

/* The list of family names, for messages. */
static void family_names(const familylist *fl, sbuf *out) {
  for (int i = 0; i < fl->n; i++) sb_addf(out, "%s%s", i ? ", " : "", fl->v[i].name);
  if (fl->n == 0) sb_add(out, "(none: no 'families:' defined)");
}

static int load_system(ydoc_err *err, const ynode *k, const ynode *v, const familylist *fl,
                       system_def *out) {
  static const char *const keys[] = {"command", "family", "absent", NULL};
  const char *name;
  if (y_name(err, k, "system name", &name) != 0) return -1;
  if (y_expect(err, v, Y_MAP, "system") != 0) return -1;
  if (y_check_keys(err, v, keys, "a system") != 0) return -1;
  const ynode *cmd = y_get(v, "command"), *fam = y_get(v, "family"), *absent = y_get(v, "absent");
  if (!!cmd + !!fam + !!absent != 1)
    return y_error(err, v,
                   "system '%s': expected exactly one of 'command' (a template), 'family' (the "
                   "name of a shared template) or 'absent' (why it cannot run)",
                   name);
  const ynode *s = cmd ? cmd : fam ? fam : absent;
  if (s->type != Y_SCALAR || !*s->str)
    return y_error(err, s, "system '%s': expected a non-empty string", name);
  if (fam) {
    const family_def *f = family_find(fl, fam->str);
    if (!f) {
      sbuf names = {0};
      family_names(fl, &names);
      y_error(err, fam, "system '%s': unknown family '%s': expected one of %s", name, fam->str,
              names.s);
      sb_free(&names);
      return -1;
    }
    *out = (system_def){.name = name, .command = f->tpl->str, .at = f->tpl};
    return 0;
  }
  *out = (system_def){.name = name,
                      .command = cmd ? cmd->str : NULL,
                      .absent = absent ? absent->str : NULL,
                      .at = s};
  return 0;
}

static int load_systems(ydoc_err *err, const ynode *map, const familylist *fl, int *n,
                        system_def **out) {
  if (y_expect(err, map, Y_MAP, "systems") != 0) return -1;
  for (int i = 0; i < map->n; i++) {
    system_def sd;
    if (load_system(err, map->items[2 * i], map->items[2 * i + 1], fl, &sd) != 0) return -1;
    int j;
    for (j = 0; j < *n; j++)
      if (strcmp((*out)[j].name, sd.name) == 0) break;
    if (j == *n) *out = xrealloc(*out, (size_t)(++*n) * sizeof **out);
    (*out)[j] = sd; /* an experiment's own definition overrides the file's */
  }
  return 0;
}

/* The systems of experiment v: the file's, then its own; families likewise (its own win). */
static int load_experiment_systems(ydoc_err *err, const ynode *v, const ynode *root,
                                   experiment *e) {
  familylist fl = {0};
  int rc = -1;
  const ynode *n;
  if ((n = y_get(root, "families")) && load_families(err, n, &fl) != 0) goto out;
  if ((n = y_get(v, "families")) && load_families(err, n, &fl) != 0) goto out;
  if ((n = y_get(root, "systems")) && load_systems(err, n, &fl, &e->nsystems, &e->systems) != 0)
    goto out;
  if ((n = y_get(v, "systems")) && load_systems(err, n, &fl, &e->nsystems, &e->systems) != 0)
    goto out;
  rc = 0;
out:
  free(fl.v);
  return rc;
}

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
  if (key_int(err, r->items[0], "range", -AXIS_RANGE_MAX, AXIS_RANGE_MAX, &a->lo) != 0 ||
      key_int(err, r->items[1], "range", -AXIS_RANGE_MAX, AXIS_RANGE_MAX, &a->hi) != 0)
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
      int rc = y_error_q(err, list->type == Y_SEQ ? list->items[i] : list, before, a->values.v[i],
                         after);
      free(before);
      free(after);
      return rc;
    }
  return 0;
}

/* One axis: a name, a list of names, or {values: NAMES, range: [LO, HI]}. */
static int load_axis(ydoc_err *err, const ynode *k, const ynode *v, axis *a) {
  static const char *const keys[] = {"values", "range", NULL};
  const ynode *list = v, *range = NULL;
  a->name = k->str;
  a->at = k;
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
  if (load_names(err, list, "axis value", &a->values) != 0) return -1;
  a->nlisted = a->values.n;
  return range ? load_range(err, range, list, a) : 0;
}

static int load_axes(ydoc_err *err, const ynode *map, experiment *e) {
  if (y_expect(err, map, Y_MAP, "axes") != 0) return -1;
  e->naxes = map->n;
  e->axes = xcalloc((size_t)map->n, sizeof *e->axes);
  e->device_axis = e->system_axis = -1;
  for (int i = 0; i < map->n; i++) {
    const ynode *k = map->items[2 * i];
    if (!is_ident(k->str))
      return y_error_q(err, k, "axis ", k->str, ": expected a name [a-z_][a-z0-9_]*");
    if (strcmp(k->str, "experiment") == 0 || strcmp(k->str, "figure") == 0)
      return y_error(err, k, "axis '%s': this name is reserved", k->str);
    if (load_axis(err, k, map->items[2 * i + 1], &e->axes[i]) != 0) return -1;
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

static int load_exclusions(ydoc_err *err, const ynode *seq, experiment *e) {
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
        int rc = y_error_q(err, k, "exclude: ", k->str, after);
        free(after);
        return rc;
      }
      x->axis[j] = a;
      if (load_names(err, v, "exclude value", &x->values[j]) != 0) return -1;
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
        if (!is_ident(k->str))
          return y_error_q(err, k, "case key ", k->str, ": expected a name [a-z_][a-z0-9_]*");
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
static int load_cases(ydoc_err *err, const ynode *n, const char *sel, experiment *e, int *named,
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

/* Every placeholder of a template must be an axis, a param or a builtin. */
typedef struct {
  ydoc_err *err;
  const experiment *e;
  const ynode *at;
} name_check;

static int check_name(void *ctx, const char *name, size_t len) {
  name_check *c = ctx;
  char key[64];
  if (len >= sizeof key) return y_error(c->err, c->at, "placeholder name too long");
  memcpy(key, name, len);
  key[len] = '\0';
  if (experiment_key(c->e, key) >= 0 || params_get(&c->e->params, key)) return 0;
  for (const char *const *b = builtin_vars; *b; b++)
    if (strcmp(*b, key) == 0) return 0;
  return y_error(
      c->err, c->at,
      "unknown placeholder {%s} in experiment '%s': expected an axis, a case key, a param or "
      "one of "
      "bin, root, python, experiment, figure, run_dir",
      key, c->e->name);
}

static int check_template(ydoc_err *err, const experiment *e, const ynode *at, const char *tpl) {
  name_check c = {err, e, at};
  const char *msg;
  size_t off;
  if (tpl_scan(tpl, check_name, &c, &msg, &off) == 0) return 0;
  if (msg) return y_error(err, at, "template: %s (at byte %zu)", msg, off);
  return -1;
}

static int load_experiment(ydoc_err *err, const ynode *k, const ynode *v, const ynode *root,
                           const char *cases, int *named, ydoc_err *pending, experiment *e) {
  static const char *const keys[] = {"log",    "time_limit", "axes",    "cases", "exclude",
                                     "params", "families",   "systems", NULL};
  if (y_name(err, k, "experiment name", &e->name) != 0) return -1;
  if (y_expect(err, v, Y_MAP, "experiment") != 0) return -1;
  if (y_check_keys(err, v, keys, "an experiment") != 0) return -1;
  const ynode *log = y_get(v, "log"), *tl = y_get(v, "time_limit"), *axes = y_get(v, "axes");
  if (!log)
    return y_error(err, v, "experiment '%s': missing 'log' (the log file name template)", e->name);
  if (!tl)
    return y_error(err, v, "experiment '%s': missing 'time_limit' (seconds or H:MM:SS)", e->name);
  if (!axes) return y_error(err, v, "experiment '%s': missing 'axes'", e->name);
  if (log->type != Y_SCALAR) return y_error(err, log, "log: expected a template string");
  e->log_tpl = log->str;
  e->log_at = log;
  if (tl->type != Y_SCALAR || parse_duration(tl->str, &e->time_limit_s) != 0)
    return y_error_q(err, tl,
                     "time_limit: expected seconds (e.g. 600) or H:MM:SS / MM:SS greater than 0, "
                     "found ",
                     tl->type == Y_SCALAR ? tl->str : y_type_name(tl->type), "");
  if (load_axes(err, axes, e) != 0) return -1;
  const ynode *n;
  if ((n = y_get(v, "cases")) && load_cases(err, n, cases, e, named, pending) != 0) return -1;
  if ((n = y_get(root, "defaults")) && load_params(err, n, "defaults", &e->params) != 0) return -1;
  if ((n = y_get(v, "params")) && load_params(err, n, "params", &e->params) != 0) return -1;
  for (int i = 0; i < e->params.n; i++)
    if (experiment_axis(e, e->params.v[i].name) >= 0)
      return y_error(err, e->params.v[i].at, "param '%s' has the name of an axis",
                     e->params.v[i].name);
  /* A case key may name a param (or a default): the case's value wins for its cells, as an
   * axis value does (a quick list: {m: 512, warmup: 2, runs: 5}). */
  if (load_experiment_systems(err, v, root, e) != 0) return -1;
  if ((n = y_get(v, "exclude")) && load_exclusions(err, n, e) != 0) return -1;
  const axis *sys = &e->axes[e->system_axis];
  const ynode *sys_list = y_get(axes, "system");
  for (int i = 0; i < sys->values.n; i++)
    if (!experiment_system(e, sys->values.v[i]))
      return y_error(err, sys_list->type == Y_SEQ ? sys_list->items[i] : sys_list,
                     "system '%s' of experiment '%s' has no entry under 'systems:'",
                     sys->values.v[i], e->name);
  if (check_template(err, e, log, e->log_tpl) != 0) return -1;
  for (int i = 0; i < e->nsystems; i++)
    if (e->systems[i].command &&
        check_template(err, e, e->systems[i].at, e->systems[i].command) != 0)
      return -1;
  return 0;
}

int expfile_load_buffer(const char *path, const char *data, size_t len, expfile *f, char **errmsg) {
  return expfile_load_buffer_cases(path, NULL, data, len, f, errmsg);
}

int expfile_load_buffer_cases(const char *path, const char *cases, const char *data, size_t len,
                              expfile *f, char **errmsg) {
  static const char *const keys[] = {"figure",      "defaults", "families", "systems",
                                     "experiments", "plot",     NULL};
  memset(f, 0, sizeof *f);
  ydoc_err err = {0}, pending = {0}; /* pending: a --cases list an experiment lacks */
  f->path = path_absolute(path);
  f->dir = path_dirname(f->path);
  f->tree = y_parse(path, data, len, &err);
  if (!f->tree) goto fail;
  const ynode *root = f->tree, *n;
  if (y_check_keys(&err, root, keys, "the experiment file") != 0) goto fail;
  f->figure = path_basename(f->dir);
  if ((n = y_get(root, "figure")) && y_name(&err, n, "figure", &f->figure) != 0) goto fail;
  /* plot: belongs to the plotter; the runner only checks its shape. */
  if ((n = y_get(root, "plot")) && y_expect(&err, n, Y_MAP, "plot") != 0) goto fail;
  if ((n = y_get(root, "defaults")) && y_expect(&err, n, Y_MAP, "defaults") != 0) goto fail;
  if ((n = y_get(root, "families")) && y_expect(&err, n, Y_MAP, "families") != 0) goto fail;
  if ((n = y_get(root, "systems")) && y_expect(&err, n, Y_MAP, "systems") != 0) goto fail;
  const ynode *exps = y_get(root, "experiments");
  if (!exps) {
    y_error(&err, root, "missing 'experiments' (a mapping of experiment name to its matrix)");
    goto fail;
  }
  if (y_expect(&err, exps, Y_MAP, "experiments") != 0) goto fail;
  if (exps->n == 0) {
    y_error(&err, exps, "experiments: expected at least one experiment");
    goto fail;
  }
  f->exps = xcalloc((size_t)exps->n, sizeof *f->exps);
  f->cases = cases;
  int named = 0, chosen = 0;
  pending.file = err.file;
  for (int i = 0; i < exps->n; i++) {
    f->nexps++;
    if (load_experiment(&err, exps->items[2 * i], exps->items[2 * i + 1], root, cases, &named,
                        &pending, &f->exps[i]) != 0)
      goto fail;
    chosen += f->exps[i].cases.list && !f->exps[i].cases.none;
  }
  if (cases && !named) {
    char *q = quote_value(cases);
    err.msg = xasprintf("%s: --cases %s: no experiment has named case lists (cases: {NAME: [...]})",
                        path, q);
    free(q);
    goto fail;
  }
  if (pending.msg && !chosen) { /* no experiment has the list --cases names */
    err.msg = pending.msg;
    pending.msg = NULL;
    goto fail;
  }
  free(pending.msg);
  return 0;
fail:
  free(pending.msg);
  *errmsg = err.msg ? err.msg : xasprintf("%s: invalid experiment file", path);
  expfile_free(f);
  return -1;
}

/* Reads a whole file for a loader; -1 with *err when it cannot. */
static int read_input(const char *path, char **data, size_t *len, char **err) {
  char why[128];
  *data = repro_slurp(path, REPRO_MAX_YAML_BYTES, len, why, sizeof why);
  if (*data) return 0;
  *err = xasprintf("%s: cannot read: %s", path, why);
  return -1;
}

int expfile_load(const char *path, expfile *out, char **err) {
  return expfile_load_cases(path, NULL, out, err);
}

int expfile_load_cases(const char *path, const char *cases, expfile *out, char **err) {
  char *data;
  size_t len;
  if (read_input(path, &data, &len, err) != 0) return -1;
  int rc = expfile_load_buffer_cases(path, cases, data, len, out, err);
  free(data);
  return rc;
}

void expfile_free(expfile *f) {
  for (int i = 0; i < f->nexps; i++) {
    experiment *e = &f->exps[i];
    for (int a = 0; a < e->naxes; a++) sv_free(&e->axes[a].values);
    free(e->axes);
    for (int x = 0; x < e->nexcl; x++) {
      for (int j = 0; j < e->excl[x].naxes; j++) sv_free(&e->excl[x].values[j]);
      free(e->excl[x].axis);
      free(e->excl[x].values);
    }
    free(e->excl);
    caselist_free(&e->cases);
    free(e->params.v);
    free(e->systems);
  }
  free(f->exps);
  y_free(f->tree);
  free(f->path);
  free(f->dir);
  memset(f, 0, sizeof *f);
}

const system_def *experiment_system(const experiment *e, const char *name) {
  for (int i = 0; i < e->nsystems; i++)
    if (strcmp(e->systems[i].name, name) == 0) return &e->systems[i];
  return NULL;
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

/* ---- cluster file ---------------------------------------------------------------------- */

/* Values of #SBATCH options: no whitespace, nothing a shell or sbatch would split on. */
static int slurm_word(ydoc_err *err, const ynode *n, const char *what, const char **out) {
  if (n->type != Y_SCALAR || !*n->str)
    return y_error(err, n, "%s: expected a non-empty string", what);
  for (const char *p = n->str; *p; p++)
    if (!(tpl_is_shell_safe((char[]){*p, 0}) || *p == '=')) {
      char *q = quote_value(n->str), *c = quote_value((char[]){*p, 0});
      int rc =
          y_error(err, n, "%s: %s has character %s: expected [A-Za-z0-9._:,=+@%%/-]+", what, q, c);
      free(q);
      free(c);
      return rc;
    }
  *out = n->str;
  return 0;
}

static int load_device(ydoc_err *err, const ynode *k, const ynode *v, const ynode *root,
                       device_def *d) {
  static const char *const keys[] = {"partition",      "gres",          "account", "qos",  "mem",
                                     "max_concurrent", "cpus_per_task", "setup",   "vars", NULL};
  if (y_name(err, k, "device label", &d->name) != 0) return -1;
  d->at = k;
  if (y_expect(err, v, Y_MAP, "device") != 0) return -1;
  if (y_check_keys(err, v, keys, "a device") != 0) return -1;
  const ynode *n;
  if ((n = y_get(v, "partition")) && slurm_word(err, n, "partition", &d->partition) != 0) return -1;
  if ((n = y_get(v, "gres")) && slurm_word(err, n, "gres", &d->gres) != 0) return -1;
  if ((n = y_get(v, "account")) && slurm_word(err, n, "account", &d->account) != 0) return -1;
  if ((n = y_get(v, "qos")) && slurm_word(err, n, "qos", &d->qos) != 0) return -1;
  if ((n = y_get(v, "mem")) && slurm_word(err, n, "mem", &d->mem) != 0) return -1;
  if ((n = y_get(v, "max_concurrent")) &&
      key_int(err, n, "max_concurrent", 1, 100000, &d->max_concurrent) != 0)
    return -1;
  if ((n = y_get(v, "cpus_per_task")) &&
      key_int(err, n, "cpus_per_task", 1, 100000, &d->cpus_per_task) != 0)
    return -1;
  if ((n = y_get(v, "setup"))) {
    if (n->type == Y_SCALAR) {
      sv_push(&d->setup, n->str);
    } else if (n->type == Y_SEQ) {
      for (int i = 0; i < n->n; i++) {
        if (n->items[i]->type != Y_SCALAR)
          return y_error(err, n->items[i], "setup: expected a shell line");
        sv_push(&d->setup, n->items[i]->str);
      }
    } else {
      return y_error(err, n, "setup: expected a shell line or a list of lines");
    }
  }
  if ((n = y_get(root, "vars")) && load_params(err, n, "vars", &d->vars) != 0) return -1;
  if ((n = y_get(v, "vars")) && load_params(err, n, "vars", &d->vars) != 0) return -1;
  return 0;
}

int cluster_load_buffer(const char *path, const char *data, size_t len, clusterfile *c,
                        char **errmsg) {
  static const char *const keys[] = {"name", "executor", "vars", "devices", NULL};
  memset(c, 0, sizeof *c);
  ydoc_err err = {0};
  c->path = path_absolute(path);
  c->tree = y_parse(path, data, len, &err);
  if (!c->tree) goto fail;
  const ynode *root = c->tree, *n;
  if (y_check_keys(&err, root, keys, "the cluster file") != 0) goto fail;
  c->name = path_basename(c->path);
  if ((n = y_get(root, "name")) && y_name(&err, n, "name", &c->name) != 0) goto fail;
  if ((n = y_get(root, "executor"))) {
    if (n->type == Y_SCALAR && strcmp(n->str, "slurm") == 0)
      c->executor = EXEC_SLURM;
    else if (n->type == Y_SCALAR && strcmp(n->str, "local") == 0)
      c->executor = EXEC_LOCAL;
    else if (n->type == Y_SCALAR && strcmp(n->str, "auto") == 0)
      c->executor = EXEC_AUTO;
    else {
      y_error(&err, n, "executor: expected auto, slurm or local");
      goto fail;
    }
  }
  if ((n = y_get(root, "vars")) && y_expect(&err, n, Y_MAP, "vars") != 0) goto fail;
  const ynode *devs = y_get(root, "devices");
  if (!devs) {
    y_error(&err, root, "missing 'devices' (a mapping of device label to partition, gres, ...)");
    goto fail;
  }
  if (y_expect(&err, devs, Y_MAP, "devices") != 0) goto fail;
  c->devices = xcalloc((size_t)devs->n, sizeof *c->devices);
  for (int i = 0; i < devs->n; i++) {
    c->ndevices++;
    if (load_device(&err, devs->items[2 * i], devs->items[2 * i + 1], root, &c->devices[i]) != 0)
      goto fail;
  }
  return 0;
fail:
  *errmsg = err.msg ? err.msg : xasprintf("%s: invalid cluster file", path);
  cluster_free(c);
  return -1;
}

int cluster_load(const char *path, clusterfile *out, char **err) {
  char *data;
  size_t len;
  if (read_input(path, &data, &len, err) != 0) return -1;
  int rc = cluster_load_buffer(path, data, len, out, err);
  free(data);
  return rc;
}

void cluster_free(clusterfile *c) {
  for (int i = 0; i < c->ndevices; i++) {
    sv_free(&c->devices[i].setup);
    free(c->devices[i].vars.v);
  }
  free(c->devices);
  y_free(c->tree);
  free(c->path);
  memset(c, 0, sizeof *c);
}

const device_def *cluster_device(const clusterfile *c, const char *name) {
  for (int i = 0; i < c->ndevices; i++)
    if (strcmp(c->devices[i].name, name) == 0) return &c->devices[i];
  return NULL;
}
