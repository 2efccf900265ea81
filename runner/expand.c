#include "expand.h"

#include <stdlib.h>
#include <string.h>

#include "template.h"

int filter_parse(const char *arg, filter *f, char **err) {
  memset(f, 0, sizeof *f);
  char *copy = xstrdup(arg), *save = NULL;
  for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(tok, '=');
    if (!eq || eq == tok || !eq[1]) {
      char *q = quote_value(arg);
      *err = xasprintf("--only %s: expected key=value[,key=value...]", q);
      free(q);
      free(copy);
      filter_free(f);
      return -1;
    }
    *eq = '\0';
    f->keys = xrealloc(f->keys, (size_t)(f->n + 1) * sizeof *f->keys);
    f->vals = xrealloc(f->vals, (size_t)(f->n + 1) * sizeof *f->vals);
    f->keys[f->n] = xstrdup(tok);
    f->vals[f->n] = xstrdup(eq + 1);
    f->n++;
  }
  free(copy);
  if (f->n == 0) {
    char *q = quote_value(arg);
    *err = xasprintf("--only %s: expected key=value", q);
    free(q);
    return -1;
  }
  return 0;
}

void filter_free(filter *f) {
  for (int i = 0; i < f->n; i++) {
    free(f->keys[i]);
    free(f->vals[i]);
  }
  free(f->keys);
  free(f->vals);
  memset(f, 0, sizeof *f);
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

static int matches(const cellset *cs, const cell *c, const filter *f) {
  for (int i = 0; i < f->n; i++) {
    const char *v = cell_value(cs, c, f->keys[i]);
    if (!v || strcmp(v, f->vals[i]) != 0) return 0;
  }
  return 1;
}

/* A filter key must be an axis or a case key somewhere and its value must occur: catches typos early. */
static int check_filters(const expfile *file, const filter *filters, int nfilters, char **err) {
  for (int i = 0; i < nfilters; i++)
    for (int k = 0; k < filters[i].n; k++) {
      const char *key = filters[i].keys[k], *val = filters[i].vals[k];
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
        *err = xasprintf("--only: %s is not an axis or a case key of any experiment in %s", q,
                         file->path);
        free(q);
        return -1;
      }
      if (!val_seen) {
        char *q = quote_value(val);
        *err = xasprintf("--only: no experiment in %s has %s=%s", file->path, key,
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
  if (check_filters(file, filters, nfilters, err) != 0) return -1;
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
      c->sel = CELL_FILTERED;
      for (int f = 0; f < nfilters && c->sel == CELL_FILTERED; f++)
        if (matches(cs, c, &filters[f])) c->sel = CELL_SELECTED;
      if (nfilters == 0) c->sel = CELL_SELECTED;
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
