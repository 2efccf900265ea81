#include "expand.h"

#include <stdlib.h>
#include <string.h>

#include "reporoot.h"
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

/* Some --only filter matches (or there is none) and no --exclude filter does. A cell with an
 * ad-hoc value passes only an --only filter that names the value (diag_k=3 selects the k = 3
 * cells, experiment=diag the matrix's). */
static int selected(const cellset *cs, const cell *c, const filter *filters, int nfilters) {
  int any_only = 0, in = 0;
  for (int f = 0; f < nfilters; f++) {
    if (filters[f].exclude) continue;
    any_only = 1;
    in = in || (matches(cs, c, &filters[f]) && filters_name_adhoc(cs, c, &filters[f], 1));
  }
  if (any_only && !in) return 0;
  for (int f = 0; f < nfilters; f++)
    if (filters[f].exclude && matches(cs, c, &filters[f])) return 0;
  return 1;
}

/* A positive --only pair: the value it names joins its axis when the axis's range allows it. */
static int names_value(const filter *f, int k) { return !f->exclude && !f->neg[k]; }

void filters_add_values(expfile *file, const filter *filters, int nfilters) {
  for (int i = 0; i < nfilters; i++)
    for (int k = 0; k < filters[i].n; k++)
      if (names_value(&filters[i], k) && strcmp(filters[i].keys[k], "experiment") != 0)
        expfile_add_value(file, filters[i].keys[k], filters[i].vals[k]);
}

int filters_name_adhoc(const cellset *cs, const cell *c, const filter *filters, int nfilters) {
  const experiment *e = &cs->file->exps[c->exp];
  for (int a = 0; a < e->naxes; a++) {
    if (c->vals[a] < e->axes[a].nlisted) continue;
    const char *v = e->axes[a].values.v[c->vals[a]];
    int named = 0;
    for (int i = 0; i < nfilters && !named; i++)
      for (int k = 0; k < filters[i].n && !named; k++)
        named = names_value(&filters[i], k) && strcmp(filters[i].keys[k], e->axes[a].name) == 0 &&
                strcmp(filters[i].vals[k], v) == 0;
    if (!named) return 0;
  }
  return 1;
}

/* Axis key of experiment e when it has a range, else NULL. */
static const axis *ranged_axis(const expfile *file, int e, const char *key) {
  int a = experiment_axis(&file->exps[e], key);
  return a >= 0 && file->exps[e].axes[a].ranged ? &file->exps[e].axes[a] : NULL;
}

/* " (axis K takes its listed values or ... a plain integer ... in [LO, HI] in experiments E,
 * F)" when axes K of file have a range, else nothing: what a filter may name besides a list. */
static void range_hint(const expfile *file, const char *key, sbuf *out) {
  sbuf ranges = {0};
  for (int e = 0; e < file->nexps; e++) {
    const axis *a = ranged_axis(file, e, key);
    int seen = 0; /* this range is written with an earlier experiment's */
    for (int p = 0; p < e && a && !seen; p++) {
      const axis *b = ranged_axis(file, p, key);
      seen = b && b->lo == a->lo && b->hi == a->hi;
    }
    if (!a || seen) continue;
    sb_addf(&ranges, "%s[%ld, %ld] in experiments", ranges.s ? "; " : "", a->lo, a->hi);
    for (int q = e; q < file->nexps; q++) {
      const axis *b = ranged_axis(file, q, key);
      if (b && b->lo == a->lo && b->hi == a->hi)
        sb_addf(&ranges, "%s %s", q == e ? "" : ",", file->exps[q].name);
    }
  }
  if (ranges.s)
    sb_addf(out,
            " (axis %s takes its listed values or, as an ad-hoc value, a plain integer (no + or "
            "leading 0) in %s)",
            key, ranges.s);
  sb_free(&ranges);
}

/* A filter key must be an axis or a case key somewhere and its value must occur: catches typos
 * early. A positive --only pair's value must be a cell's (filters_add_values added those its
 * range allows); --exclude and K!=V may name any value a range allows. */
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
        val_seen |= names_value(&filters[i], k) ? experiment_has_value(ex, a, val)
                                                : experiment_accepts(ex, a, val);
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
        sbuf hint = {0};
        range_hint(file, key, &hint);
        *err = xasprintf("%s: no experiment in %s has %s=%s%s", opt, file->path, key,
                         tpl_is_name(val) ? val : q, hint.s ? hint.s : "");
        sb_free(&hint);
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

/* idx's next value in mixed radix: the last dimension (the case list, else the last axis)
 * fastest. */
static void next_index(const experiment *e, int *idx, int dims) {
  for (int a = dims - 1; a >= 0; a--) {
    if (++idx[a] < dim_size(e, a)) return;
    idx[a] = 0;
  }
}

/* An expansion in progress: its filters and cluster, where the next cell's value indices go,
 * and the buffer its log name is rendered in. */
typedef struct {
  const filter *filters;
  int nfilters;
  const clusterfile *cluster;
  int *pool;
  sbuf name;
} expansion;

/* Adds the cell of experiment e whose value indices are idx: its log name, group, task and
 * selection. 0, or -1 with *err when its log name cannot be rendered. */
static int add_cell(cellset *cs, expansion *x, int e, const int *idx, char **err) {
  const experiment *ex = &cs->file->exps[e];
  int dims = experiment_dims(ex);
  cell *c = &cs->cells[cs->ncells];
  c->exp = e;
  c->vals = x->pool;
  memcpy(x->pool, idx, (size_t)dims * sizeof *idx);
  x->pool += dims;
  sb_clear(&x->name);
  runtime_vars none = {0};
  cell_env env = {cs, c, NULL, &none};
  char *msg = NULL;
  if (tpl_render(ex->log_tpl, TPL_NAME, cell_lookup, &env, &x->name, &msg) != 0) {
    *err = xasprintf("%s:%d:%d: log name of experiment '%s': %s", cs->file->path, ex->log_at->line,
                     ex->log_at->col, ex->name, msg);
    free(msg);
    return -1;
  }
  c->log = xstrdup(x->name.s);
  const char *device = ex->axes[ex->device_axis].values.v[idx[ex->device_axis]];
  const char *system = ex->axes[ex->system_axis].values.v[idx[ex->system_axis]];
  c->group = group_of(cs, e, device);
  c->task = cs->groups[c->group].ncells;
  group_add(&cs->groups[c->group], cs->ncells);
  c->sel = selected(cs, c, x->filters, x->nfilters) ? CELL_SELECTED : CELL_FILTERED;
  if (c->sel == CELL_SELECTED && experiment_system(ex, system)->absent) c->sel = CELL_ABSENT;
  if (c->sel == CELL_SELECTED && x->cluster && !cluster_device(x->cluster, device))
    c->sel = CELL_NO_DEVICE;
  cs->ncells++;
  return 0;
}

/* Adds experiment e's cells, excluded combinations dropped: first the matrix of the listed
 * values, then (when a command line added ad-hoc values) the cells holding an ad-hoc value, in
 * the same order. So the listed cells keep the places and tasks they have without them. */
static int add_experiment(cellset *cs, expansion *x, int e, char **err) {
  const experiment *ex = &cs->file->exps[e];
  int dims = experiment_dims(ex), adhoc = 0, rc = 0;
  for (int a = 0; a < ex->naxes; a++) adhoc |= ex->axes[a].values.n > ex->axes[a].nlisted;
  long n = matrix_size(ex);
  int *idx = xcalloc((size_t)dims, sizeof *idx);
  for (int pass = 0; pass <= adhoc && rc == 0; pass++) {
    memset(idx, 0, (size_t)dims * sizeof *idx);
    for (long k = 0; k < n && rc == 0; k++) {
      if (k > 0) next_index(ex, idx, dims);
      if ((experiment_adhoc_axis(ex, idx) >= 0) != pass || excluded(ex, idx)) continue;
      rc = add_cell(cs, x, e, idx, err);
    }
  }
  free(idx);
  return rc;
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
  expansion x = {
      .filters = filters, .nfilters = nfilters, .cluster = cluster, .pool = cs->val_pool};
  int rc = 0;
  for (int e = 0; e < file->nexps && rc == 0; e++) rc = add_experiment(cs, &x, e, err);
  sb_free(&x.name);
  if (rc != 0 || check_unique_logs(cs, err) != 0) {
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
                    env->cs->file->dir, REPRO_ROOT_MARKER);
  if (msg || tpl_render(s->command, TPL_SHELL, cell_lookup, (void *)env, out, &msg) != 0) {
    *err = xasprintf("%s:%d:%d: command of system '%s' for %s: %s", env->cs->file->path,
                     s->at->line, s->at->col, s->name, env->c->log, msg);
    free(msg);
    return -1;
  }
  return 0;
}
