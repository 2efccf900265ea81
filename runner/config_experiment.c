/* config_experiment: an experiment file becomes experiments: their log name, time limit,
 * systems and families, params and templates (every placeholder known); their matrix (axes,
 * cases, exclusions) is config_matrix.c's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_impl.h"
#include "template.h"

const char *const builtin_vars[] = {"bin",    "root",    "python", "experiment",
                                    "figure", "run_dir", NULL};

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

/* A systems: row (its keys checked by the shared model), its command its own or its family's. */
static int load_system(ydoc_err *err, const ynode *k, const ynode *v, const familylist *fl,
                       system_def *out) {
  xm_system xs;
  if (xm_parse_system(err, k, v, &xs) != 0) return -1;
  if (xs.family) {
    const family_def *f = family_find(fl, xs.family);
    if (!f) {
      sbuf names = {0};
      family_names(fl, &names);
      y_error(err, xs.run, "system '%s': unknown family '%s': expected one of %s", xs.name,
              xs.family, names.s);
      sb_free(&names);
      return -1;
    }
    *out = (system_def){.name = xs.name, .command = f->tpl->str, .at = f->tpl};
    return 0;
  }
  *out = (system_def){.name = xs.name, .command = xs.command, .absent = xs.absent, .at = xs.run};
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

static int load_experiment(ydoc_err *err, const ynode *k, const ynode *v, const expfile *f,
                           int *named, ydoc_err *pending, experiment *e) {
  const ynode *root = f->tree;
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
    return cfg_error_q(err, tl,
                       "time_limit: expected seconds (e.g. 600) or H:MM:SS / MM:SS greater than 0, "
                       "found ",
                       tl->type == Y_SCALAR ? tl->str : y_type_name(tl->type), "");
  if (cfg_load_axes(err, axes, &f->model, e) != 0) return -1;
  const ynode *n;
  if ((n = y_get(v, "cases")) && cfg_load_cases(err, n, f->cases, e, named, pending) != 0)
    return -1;
  if ((n = y_get(root, "defaults")) && cfg_load_params(err, n, "defaults", &e->params) != 0)
    return -1;
  if ((n = y_get(v, "params")) && cfg_load_params(err, n, "params", &e->params) != 0) return -1;
  for (int i = 0; i < e->params.n; i++)
    if (experiment_axis(e, e->params.v[i].name) >= 0)
      return y_error(err, e->params.v[i].at, "param '%s' has the name of an axis",
                     e->params.v[i].name);
  /* A case key may name a param (or a default): the case's value wins for its cells, as an
   * axis value does (a quick list: {m: 512, warmup: 2, runs: 5}). */
  if (load_experiment_systems(err, v, root, e) != 0) return -1;
  if ((n = y_get(v, "exclude")) && cfg_load_exclusions(err, n, e) != 0) return -1;
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
  static const char *const keys[] = {"figure",    "defaults",    "families", "systems", "devices",
                                     "workloads", "experiments", "plot",     NULL};
  memset(f, 0, sizeof *f);
  ydoc_err err = {0}, pending = {0}; /* pending: a --cases list an experiment lacks */
  f->path = path_absolute(path);
  f->dir = path_dirname(f->path);
  f->tree = y_parse(path, data, len, &err);
  if (!f->tree) goto fail;
  const ynode *root = f->tree, *n;
  if (y_check_keys(&err, root, keys, "the experiment file") != 0) goto fail;
  f->figure = path_basename(f->dir);
  if (xm_load(&err, root, &f->model) != 0) goto fail;
  if (f->model.figure) f->figure = f->model.figure;
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
    if (load_experiment(&err, exps->items[2 * i], exps->items[2 * i + 1], f, &named, &pending,
                        &f->exps[i]) != 0)
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

int expfile_load(const char *path, expfile *out, char **err) {
  return expfile_load_cases(path, NULL, out, err);
}

int expfile_load_cases(const char *path, const char *cases, expfile *out, char **err) {
  char *data;
  size_t len;
  if (cfg_read_input(path, &data, &len, err) != 0) return -1;
  int rc = expfile_load_buffer_cases(path, cases, data, len, out, err);
  free(data);
  return rc;
}

void expfile_free(expfile *f) {
  for (int i = 0; i < f->nexps; i++) {
    experiment *e = &f->exps[i];
    cfg_free_matrix(e);
    free(e->params.v);
    free(e->systems);
  }
  free(f->exps);
  xm_free(&f->model);
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
