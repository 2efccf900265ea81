/* config_load: loads the `plot:` section of experiment.yaml (pc_load, config.h) over the file's
 * shared model (common/expmodel.h): its keys in order, its defaults, and the log name templates
 * of the experiments it draws; figures:, the rows, columns and bars (names dressed from
 * common/registry.yaml) and paper:/stale:/claims: through config_figures.c, config_systems.c and
 * config_extras.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "config_parts.h"

/* A default cell key (seqlen: 4096): a key name that is no axis, and a name as its value. */
static int get_default_key(ycx *y, const ynode *k, const ynode *v, pc_config *c) {
  const char *key = k->str;
  if (!pt_valid_key(key) || !strcmp(key, "device") || !strcmp(key, "system"))
    return yerr(y, k,
                "defaults: expected experiment, workload or a cell key such as seqlen "
                "([a-z_][a-z0-9_]*, not device or system), got \"%s\"",
                key);
  if (c->ndefault_keys == PT_MAXKEYS) return yerr(y, k, "defaults: at most %d keys", PT_MAXKEYS);
  pt_kv *d = &c->default_keys[c->ndefault_keys];
  if (pcy_name(y, v, d->val, key)) return -1;
  snprintf(d->key, sizeof d->key, "%s", key);
  c->ndefault_keys++;
  return 0;
}

static int load_defaults(ycx *y, const ynode *n, pc_config *c) {
  if (pcy_want(y, n, Y_MAP, "defaults")) return -1;
  const ynode *k, *v;
  FOR_PAIRS(n, k, v) {
    const char *key = k->str;
    int rc;
    if (!strcmp(key, "experiment"))
      rc = pcy_name(y, v, c->default_experiment, "experiment");
    else if (!strcmp(key, "workload"))
      rc = pcy_name(y, v, c->default_workload, "workload");
    else
      rc = get_default_key(y, k, v, c);
    if (rc) return -1;
  }
  return 0;
}

static int load_plot(ycx *y, const ynode *n, const xm_model *m, pc_config *c) {
  if (pcy_want(y, n, Y_MAP, "plot")) return -1;
  const ynode *k, *v;
  FOR_PAIRS(n, k, v) {
    const char *key = k->str;
    int rc;
    if (!strcmp(key, "figure"))
      rc = pcy_name(y, v, c->figure, "figure");
    else if (!strcmp(key, "log_name"))
      return yerr(y, k,
                  "plot: log_name is not read: the log file name is the drawn experiment's "
                  "own 'log:' (experiments.NAME.log); remove this key");
    else if (!strcmp(key, "defaults"))
      rc = load_defaults(y, v, c);
    else if (!strcmp(key, "devices"))
      rc = pcy_names(y, v, c->devices, &c->ndevices, "devices");
    else if (!strcmp(key, "workloads"))
      rc = pcy_names(y, v, c->workloads, &c->nworkloads, "workloads");
    else if (!strcmp(key, "systems"))
      rc = pcy_names(y, v, c->systems, &c->nsystems, "systems");
    else if (!strcmp(key, "figures")) {
      if (pcy_want(y, v, Y_SEQ, "figures")) return -1;
      const ynode *f;
      rc = 0;
      FOR_ITEMS(v, f) {
        if (c->nfigures == PC_MAX_FIGURES) return yerr(y, f, "at most %d figures", PC_MAX_FIGURES);
        if (pcy_figure(y, f, &c->figures[c->nfigures])) return -1;
        for (int g = 0; g < c->nfigures; g++)
          if (!strcmp(c->figures[g].name, c->figures[c->nfigures].name))
            return yerr(y, f, "figure %s is listed twice (its files would overwrite)",
                        c->figures[g].name);
        c->nfigures++;
      }
    } else if (!strcmp(key, "paper") || !strcmp(key, "claims"))
      rc = 0; /* names of devices, workloads, figures: read once all are loaded */
    else if (!strcmp(key, "stale"))
      rc = pcy_stale(y, v, c);
    else
      return yerr(y, k,
                  "unknown key \"%s\" in plot; expected figure, defaults, devices, "
                  "workloads, systems, figures, paper, claims, stale",
                  key);
    if (rc) return -1;
  }
  if (pcy_default_names(y, m, c) || pcy_dress(y, c->path, m, n, c)) return -1;
  if (!c->ndevices || !c->nsystems || !c->nfigures)
    return yerr(y, n,
                "plot needs devices, systems (its own lists, else the file's devices: and "
                "systems:) and figures");
  /* names of systems and figures, now that all are loaded: bars first, then the panels */
  const ynode *figs = y_get(n, "figures");
  for (int f = 0; f < c->nfigures; f++)
    if (pcy_resolve_systems(y, figs->items[f], c, &c->figures[f])) return -1;
  for (int f = 0; f < c->nfigures; f++)
    if (pcy_resolve_panels(y, figs->items[f], c, &c->figures[f])) return -1;
  for (int f = 0; f < c->nfigures; f++) { /* a grid's or comparison's one workload column */
    const pc_figure *fig = &c->figures[f];
    if (!fig->workload[0] || fig->kind == FIG_SWEEP) continue;
    const ynode *w = y_get(figs->items[f], "workload");
    if (fig->kind == FIG_SPEEDUP || fig->x[0])
      return yerr(y, w,
                  "workload: only a grid or comparison figure of workload columns (no x:) "
                  "draws one workload's column");
    if (pc_find(c->workloads, c->nworkloads, fig->workload) < 0)
      return yerr(y, w, "workload \"%s\" is not in plot: workloads", fig->workload);
  }
  if (pcy_claims(y, y_get(n, "claims"), c)) return -1;
  return pcy_paper(y, y_get(n, "paper"), c);
}

/* The `log:` template of experiment name (the runner checks the rest of the experiment). */
static const ynode *experiment_log(ycx *y, const xm_model *m, const char *name, const ynode *at) {
  const xm_experiment *e = xm_find_experiment(m, name);
  if (!e) {
    yerr(y, at, "experiment '%s' is not under experiments: (the plot draws the logs it names)",
         name);
    return NULL;
  }
  const ynode *log = e->log;
  if (!log || log->type != Y_SCALAR) {
    yerr(y, log ? log : e->node, "experiments.%s.log: expected the log file name template", name);
    return NULL;
  }
  return log;
}

/* A log template the plot can read: {device} in it, and short enough. */
static int check_log_template(ycx *y, const ynode *log, char *dst, size_t cap) {
  if (strlen(log->str) >= cap)
    return yerr(y, log, "log: expected a template shorter than %zu characters", cap);
  if (!strstr(log->str, "{device}"))
    return yerr(y, log, "log: the plot needs {device} in the log file name");
  strcpy(dst, log->str);
  return 0;
}

/* One log folder is read with the `log:` templates of the experiments the figures draw (every
 * experiment when a figure names none; a speedup figure draws its panels' experiments). They
 * agree, or each holds {experiment}, so a file name says whose template reads it. */
static int load_log_name(ycx *y, const ynode *root, const xm_model *m, const ynode *plot,
                         pc_config *c) {
  const ynode *first = NULL;
  const char *first_exp = NULL;
  if (m->nexps == 0)
    return yerr(y, y_get(root, "experiments") ? y_get(root, "experiments") : root,
                "expected an 'experiments:' mapping: the plot takes the log "
                "file name from experiments.NAME.log");
  int differ = 0;
  for (int i = 0; i < m->nexps; i++) {
    const char *name = m->exps[i].name;
    int drawn = 0;
    for (int f = 0; f < c->nfigures; f++)
      drawn |= c->figures[f].kind != FIG_SPEEDUP &&
               (!c->figures[f].experiment[0] || !strcmp(c->figures[f].experiment, name));
    if (!drawn) continue;
    const ynode *log = experiment_log(y, m, name, m->exps[i].at);
    if (!log) return -1;
    if (c->nlog_names == RD_MAX_TEMPLATES)
      return yerr(y, log, "the plot draws more than %d experiments", RD_MAX_TEMPLATES);
    if (check_log_template(y, log, c->log_names[c->nlog_names], sizeof c->log_names[0]) ||
        pcy_name(y, m->exps[i].at, c->log_exps[c->nlog_names], "experiment name"))
      return -1;
    c->nlog_names++;
    if (!first) {
      first = log;
      first_exp = name;
      continue;
    }
    if (strcmp(log->str, first->str) == 0) continue;
    differ = 1;
    if (!strstr(log->str, "{experiment}") || !strstr(first->str, "{experiment}"))
      return yerr(y, log,
                  "experiments '%s' and '%s' (line %d) have different log templates "
                  "(\"%s\" and \"%s\"), but one log folder is read with one name pattern: give "
                  "the experiments the plot draws the same log:, or {experiment} in each",
                  name, first_exp, first->line, log->str, first->str);
  }
  if (!differ) c->nlog_names = 0;             /* one shared template: log_name alone */
  const ynode *figs = y_get(plot, "figures"); /* load_plot checked: a list of c->nfigures */
  for (int f = 0; f < c->nfigures; f++)
    if (c->figures[f].experiment[0] &&
        !experiment_log(y, m, c->figures[f].experiment, y_get(figs->items[f], "experiment")))
      return -1;
  if (!first) return yerr(y, plot, "the plot draws no experiment of this file");
  return check_log_template(y, first, c->log_name, sizeof c->log_name);
}

/* Default figure name: the folder holding the YAML (fig12/experiment.yaml -> fig12). */
static void default_figure_name(const char *path, char *dst) {
  char tmp[PT_PATH];
  snprintf(tmp, sizeof tmp, "%s", path);
  char *slash = strrchr(tmp, '/');
  if (!slash) {
    strcpy(tmp, ".");
    slash = NULL;
  } else
    *slash = '\0';
  const char *base = strrchr(tmp, '/');
  base = base ? base + 1 : tmp;
  /* a valid name fits PT_NAME; anything longer is no valid name */
  if (!strcmp(base, ".") || strlen(base) >= PT_NAME || !pt_valid_name(base)) base = "figure";
  snprintf(dst, PT_NAME, "%.*s", PT_NAME - 1, base);
}

int pc_load(const char *path, pc_config *c) {
  char *msg = NULL;
  int rc = pc_load_msg(path, c, &msg);
  if (msg) fprintf(stderr, "%s\n", msg);
  free(msg);
  return rc;
}

int pc_load_msg(const char *path, pc_config *c, char **msg) {
  *msg = NULL;
  memset(c, 0, sizeof *c);
  snprintf(c->path, sizeof c->path, "%s", path);
  ycx y = {0};
  ynode *root = y_load_file(path, &y.err);
  xm_model m = {0};
  int rc = -1;
  if (!root || xm_load(&y.err, root, &m)) goto out;
  const ynode *plot = y_get(root, "plot");
  if (!plot) {
    yerr(&y, root, "no top-level plot: section");
    goto out;
  }
  if (load_plot(&y, plot, &m, c) || load_log_name(&y, root, &m, plot, c)) goto out;
  /* the figure's name: plot.figure, else the file's own figure:, else the folder's name */
  const ynode *fig = y_get(root, "figure");
  if (!c->figure[0] && fig && pcy_name(&y, fig, c->figure, "figure")) goto out;
  if (!c->figure[0]) default_figure_name(path, c->figure);
  rc = 0;
out:
  *msg = y.err.msg;
  xm_free(&m);
  y_free(root);
  return rc;
}
