#include "expand.h"

#include <stdlib.h>
#include <string.h>

#include "template.h"

static int parse_filter(const char *arg, const char *opt, filter *f, char **err) {
  memset(f, 0, sizeof *f);
  char *copy = xstrdup(arg), *save = NULL;
  for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(tok, '=');
    int neg = eq && eq > tok && eq[-1] == '!';
    if (!eq || eq - neg == tok || !eq[1]) {
      char *q = quote_value(arg);
      *err = xasprintf("%s %s: expected key=value or key!=value[,key=value...]", opt, q);
      free(q);
      free(copy);
      filter_free(f);
      return -1;
    }
    eq[-neg] = '\0';
    f->keys = xrealloc(f->keys, (size_t)(f->n + 1) * sizeof *f->keys);
    f->vals = xrealloc(f->vals, (size_t)(f->n + 1) * sizeof *f->vals);
    f->neg = xrealloc(f->neg, (size_t)(f->n + 1));
    f->keys[f->n] = xstrdup(tok);
    f->vals[f->n] = xstrdup(eq + 1);
    f->neg[f->n] = (char)neg;
    f->n++;
  }
  free(copy);
  if (f->n == 0) {
    char *q = quote_value(arg);
    *err = xasprintf("%s %s: expected key=value", opt, q);
    free(q);
    return -1;
  }
  return 0;
}

int filter_parse(const char *arg, filter *f, char **err) {
  return parse_filter(arg, "--only", f, err);
}

int exclude_parse(const char *arg, filter *f, char **err) {
  if (parse_filter(arg, "--exclude", f, err) != 0) return -1;
  f->exclude = 1;
  return 0;
}

void filter_free(filter *f) {
  for (int i = 0; i < f->n; i++) {
    free(f->keys[i]);
    free(f->vals[i]);
  }
  free(f->keys);
  free(f->vals);
  free(f->neg);
  memset(f, 0, sizeof *f);
}

static int is_var_name(const char *s, size_t n) {
  if (n == 0 || !((*s >= 'a' && *s <= 'z') || *s == '_')) return 0;
  for (size_t i = 1; i < n; i++)
    if (!((s[i] >= 'a' && s[i] <= 'z') || s[i] == '_' || (s[i] >= '0' && s[i] <= '9'))) return 0;
  return 1;
}

int set_parse(const char *arg, paramlist *sets, strvec *store, char **err) {
  const char *eq = strchr(arg, '=');
  const char *problem = eq ? tpl_value_problem(eq + 1) : NULL;
  if (!eq || !is_var_name(arg, (size_t)(eq - arg)) || problem) {
    char *q = quote_value(arg);
    *err = xasprintf("--set %s: expected NAME=VALUE, NAME a param name ([a-z_][a-z0-9_]*)%s%s", q,
                     problem ? ", but the value " : "", problem ? problem : "");
    free(q);
    return -1;
  }
  char *copy = xstrdup(arg); /* "name\0value", owned by store */
  copy[eq - arg] = '\0';
  sv_push_own(store, copy);
  params_set(sets, copy, copy + (eq - arg) + 1, NULL);
  return 0;
}

/* A set name must be a param of some experiment where it is no axis or case key (there, a
 * cell's coordinate wins); otherwise it would change nothing. */
int check_sets(const expfile *file, char **err) {
  for (int i = 0; file->sets && i < file->sets->n; i++) {
    const char *name = file->sets->v[i].name;
    int param = 0, key = -1;
    for (int e = 0; e < file->nexps; e++) {
      const experiment *ex = &file->exps[e];
      if (experiment_key(ex, name) >= 0)
        key = e;
      else
        param |= params_get(&ex->params, name) != NULL;
    }
    if (!param && key >= 0) {
      *err = xasprintf("--set %s: %s is an axis or a case key of experiment '%s' in %s (a "
                       "cell's coordinate): select its values with --only/--exclude",
                       name, name, file->exps[key].name, file->path);
      return -1;
    }
    if (!param) {
      *err = xasprintf("--set %s: expected a param of defaults: or an experiment's params: in %s",
                       name, file->path);
      return -1;
    }
  }
  return 0;
}

const char *cell_value(const cellset *cs, const cell *c, const char *axis_name) {
  const experiment *e = &cs->file->exps[c->exp];
  if (strcmp(axis_name, "experiment") == 0) return e->name;
  int k = experiment_key(e, axis_name);
  return k < 0 ? NULL : experiment_value(e, c->vals, k);
}

static int excluded(const experiment *e, const int *vals) {
  for (int x = 0; x < e->nexcl; x++) {
    const exclusion *ex = &e->excl[x];
    int all = 1;
    for (int j = 0; j < ex->naxes && all; j++)
      all = sv_find(&ex->values[j], experiment_value(e, vals, ex->axis[j])) >= 0;
    if (all) return 1;
  }
  return 0;
}

/* key!=value holds for a cell without the key (an experiment without that case key). */
static int matches(const cellset *cs, const cell *c, const filter *f) {
  for (int i = 0; i < f->n; i++) {
    const char *v = cell_value(cs, c, f->keys[i]);
    int equal = v && strcmp(v, f->vals[i]) == 0;
    if (equal == f->neg[i]) return 0;
  }
  return 1;
}

/* Some --only filter matches (or there is none) and no --exclude filter does. */
static int selected(const cellset *cs, const cell *c, const filter *filters, int nfilters) {
  int any_only = 0, in = 0;
  for (int f = 0; f < nfilters; f++) {
    if (filters[f].exclude) continue;
    any_only = 1;
    in = in || matches(cs, c, &filters[f]);
  }
  if (any_only && !in) return 0;
  for (int f = 0; f < nfilters; f++)
    if (filters[f].exclude && matches(cs, c, &filters[f])) return 0;
  return 1;
}

/* A filter key must be an axis or a case key somewhere and its value must occur: catches typos early. */
static int check_filters(const expfile *file, const filter *filters, int nfilters, char **err) {
  for (int i = 0; i < nfilters; i++)
    for (int k = 0; k < filters[i].n; k++) {
      const char *key = filters[i].keys[k], *val = filters[i].vals[k];
      const char *opt = filters[i].exclude ? "--exclude" : "--only";
      int key_seen = 0, val_seen = 0;
      for (int e = 0; e < file->nexps; e++) {
        const experiment *ex = &file->exps[e];
        if (strcmp(key, "experiment") == 0) {
          key_seen = 1;
          val_seen |= strcmp(ex->name, val) == 0;
          continue;
        }
        int a = experiment_key(ex, key);
        if (a < 0) continue;
        key_seen = 1;
        val_seen |= experiment_has_value(ex, a, val);
      }
      if (!key_seen) {
        char *q = quote_value(key);
        *err = xasprintf("%s: %s is not an axis or a case key of any experiment in %s", opt, q,
                         file->path);
        free(q);
        return -1;
      }
      if (!val_seen) {
        char *q = quote_value(val);
        *err = xasprintf("%s: no experiment in %s has %s=%s", opt, file->path, key,
                         tpl_is_name(val) ? val : q);
        free(q);
        return -1;
      }
    }
  return 0;
}

static const cellset *sort_cs;
static int by_log(const void *a, const void *b) {
  return strcmp(sort_cs->cells[*(const int *)a].log, sort_cs->cells[*(const int *)b].log);
}

/* Two cells writing one log file would lose data: refuse such a matrix. */
static int check_unique_logs(const cellset *cs, char **err) {
  int *idx = xmalloc((size_t)cs->ncells * sizeof *idx);
  for (int i = 0; i < cs->ncells; i++) idx[i] = i;
  sort_cs = cs;
  qsort(idx, (size_t)cs->ncells, sizeof *idx, by_log);
  int rc = 0;
  for (int i = 1; i < cs->ncells && rc == 0; i++)
    if (strcmp(cs->cells[idx[i]].log, cs->cells[idx[i - 1]].log) == 0) {
      const experiment *e = &cs->file->exps[cs->cells[idx[i]].exp];
      *err = xasprintf(
          "%s:%d:%d: two cells get the log name '%s': the template must use every axis and case "
          "key that varies",
          cs->file->path, e->log_at->line, e->log_at->col, cs->cells[idx[i]].log);
      rc = -1;
    }
  free(idx);
  return rc;
}

static int group_of(cellset *cs, int exp, const char *device) {
  for (int g = cs->ngroups - 1; g >= 0; g--)
    if (cs->groups[g].exp == exp && strcmp(cs->groups[g].device, device) == 0) return g;
  cs->groups = xrealloc(cs->groups, (size_t)(cs->ngroups + 1) * sizeof *cs->groups);
  group *g = &cs->groups[cs->ngroups];
  *g = (group){
      .exp = exp, .device = device, .name = xasprintf("%s.%s", cs->file->exps[exp].name, device)};
  return cs->ngroups++;
}

static void group_add(group *g, int cell_index) {
  if ((g->ncells & (g->ncells - 1)) == 0) /* grow at powers of two */
    g->cells = xrealloc(g->cells, (size_t)(g->ncells ? 2 * g->ncells : 1) * sizeof *g->cells);
  g->cells[g->ncells++] = cell_index;
}

/* The number of values of dimension d (an axis, or the case list after them). */
static int dim_size(const experiment *e, int d) {
  return d < e->naxes ? e->axes[d].values.n : e->cases.n;
}

static long matrix_size(const experiment *e) {
  if (e->cases.none) return 0; /* --cases named a list it lacks */
  long n = e->cases.n ? e->cases.n : 1;
  for (int a = 0; a < e->naxes; a++) {
    n *= e->axes[a].values.n;
    if (n > 10000000) return -1;
  }
  return n;
}

int expand(const expfile *file, const clusterfile *cluster, const filter *filters, int nfilters,
           cellset *cs, char **err) {
  memset(cs, 0, sizeof *cs);
  cs->file = file;
  if (check_filters(file, filters, nfilters, err) != 0 || check_sets(file, err) != 0) return -1;
  long total = 0, vals = 0;
  for (int e = 0; e < file->nexps; e++) {
    long n = matrix_size(&file->exps[e]);
    if (n < 0 || total + n > 10000000) {
      *err = xasprintf("%s: more than 10 million cells: refusing", file->path);
      return -1;
    }
    total += n;
    vals += n * experiment_dims(&file->exps[e]);
  }
  cs->cells = xcalloc((size_t)total, sizeof *cs->cells);
  cs->val_pool = xcalloc((size_t)vals, sizeof *cs->val_pool);
  int *pool = cs->val_pool;
  sbuf name = {0};
  runtime_vars none = {0};
  for (int e = 0; e < file->nexps; e++) {
    const experiment *ex = &file->exps[e];
    int dims = experiment_dims(ex);
    int *idx = xcalloc((size_t)dims, sizeof *idx);
    long n = matrix_size(ex);
    for (long k = 0; k < n; k++) {
      /* idx counts in mixed radix, the case list (then the last axis) fastest */
      if (k > 0)
        for (int a = dims - 1; a >= 0; a--) {
          if (++idx[a] < dim_size(ex, a)) break;
          idx[a] = 0;
        }
      if (excluded(ex, idx)) continue;
      cell *c = &cs->cells[cs->ncells];
      c->exp = e;
      c->vals = pool;
      memcpy(pool, idx, (size_t)dims * sizeof *idx);
      pool += dims;
      sb_clear(&name);
      cell_env env = {cs, c, NULL, &none};
      char *msg = NULL;
      if (tpl_render(ex->log_tpl, TPL_NAME, cell_lookup, &env, &name, &msg) != 0) {
        *err = xasprintf("%s:%d:%d: log name of experiment '%s': %s", file->path, ex->log_at->line,
                         ex->log_at->col, ex->name, msg);
        free(msg);
        free(idx);
        sb_free(&name);
        cellset_free(cs);
        return -1;
      }
      c->log = xstrdup(name.s);
      const char *device = ex->axes[ex->device_axis].values.v[idx[ex->device_axis]];
      const char *system = ex->axes[ex->system_axis].values.v[idx[ex->system_axis]];
      c->group = group_of(cs, e, device);
      c->task = cs->groups[c->group].ncells;
      group_add(&cs->groups[c->group], cs->ncells);
      c->sel = selected(cs, c, filters, nfilters) ? CELL_SELECTED : CELL_FILTERED;
      if (c->sel == CELL_SELECTED && experiment_system(ex, system)->absent) c->sel = CELL_ABSENT;
      if (c->sel == CELL_SELECTED && cluster && !cluster_device(cluster, device))
        c->sel = CELL_NO_DEVICE;
      cs->ncells++;
    }
    free(idx);
  }
  sb_free(&name);
  if (check_unique_logs(cs, err) != 0) {
    cellset_free(cs);
    return -1;
  }
  return 0;
}

void cellset_free(cellset *cs) {
  for (int i = 0; i < cs->ncells; i++) free(cs->cells[i].log);
  for (int g = 0; g < cs->ngroups; g++) {
    free(cs->groups[g].name);
    free(cs->groups[g].cells);
  }
  free(cs->cells);
  free(cs->groups);
  free(cs->val_pool);
  memset(cs, 0, sizeof *cs);
}

const char *cell_lookup(void *ptr, const char *name) {
  const cell_env *env = ptr;
  const experiment *e = &env->cs->file->exps[env->c->exp];
  const char *v;
  /* axes and case keys first: a cell's coordinates are never overridden */
  int k = experiment_key(e, name);
  if (k >= 0) return experiment_value(e, env->c->vals, k);
  if (env->cs->file->sets && (v = params_get(env->cs->file->sets, name))) return v;
  if (strcmp(name, "experiment") == 0) return e->name;
  if (strcmp(name, "figure") == 0) return env->cs->file->figure;
  if (env->dev && (v = params_get(&env->dev->vars, name))) return v;
  if ((v = params_get(&e->params, name))) return v;
  if (strcmp(name, "bin") == 0) return env->rt->bin;
  if (strcmp(name, "root") == 0) return env->rt->root;
  if (strcmp(name, "run_dir") == 0) return env->rt->run_dir;
  if (strcmp(name, "python") == 0) return env->rt->python ? env->rt->python : "python3";
  return NULL;
}

int cell_command(const cell_env *env, sbuf *out, char **err) {
  const experiment *e = &env->cs->file->exps[env->c->exp];
  const system_def *s =
      experiment_system(e, e->axes[e->system_axis].values.v[env->c->vals[e->system_axis]]);
  if (!s->command) {
    *err = xasprintf("system '%s' is absent: %s", s->name, s->absent);
    return -1;
  }
  char *msg = NULL;
  if (!env->rt->root && strstr(s->command, "{root}"))
    msg = xasprintf("{root}: no repository root above %s (expected a folder holding %s)",
                    env->cs->file->dir, REPO_ROOT_MARKER);
  if (msg || tpl_render(s->command, TPL_SHELL, cell_lookup, (void *)env, out, &msg) != 0) {
    *err = xasprintf("%s:%d:%d: command of system '%s' for %s: %s", env->cs->file->path,
                     s->at->line, s->at->col, s->name, env->c->log, msg);
    free(msg);
    return -1;
  }
  return 0;
}
