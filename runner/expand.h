/* expand: where a matrix becomes cells.
 *
 * Every experiment's axes are multiplied out in file order (the last axis varies fastest),
 * then with its case list when it has one (the cases vary fastest of all),
 * excluded combinations are dropped, and each remaining cell gets its log file name (a pure
 * function of the cell) and its place in a group: one group per (experiment, device), which
 * becomes one job array. Filters and the cluster only mark cells unselected; indices stay
 * stable, so a cell's array task id is the same in every run. The ad-hoc values an --only
 * adds to a ranged axis (filters_add_values) give cells after all the listed ones, so the
 * listed cells keep their places. */
#ifndef RUNNER_EXPAND_H
#define RUNNER_EXPAND_H

#include "config.h"

typedef enum {
  CELL_SELECTED = 0,
  CELL_FILTERED,  /* not matched by --only, or matched by --exclude */
  CELL_ABSENT,    /* its system is declared absent (plots as NS) */
  CELL_NO_DEVICE, /* its device is not in the cluster file */
} cell_selection;

typedef struct {
  int exp;
  int *vals; /* value index per axis of the experiment, then the case index (if cases) */
  char *log;
  int group;
  int task; /* index within the group */
  cell_selection sel;
} cell;

typedef struct {
  int exp;
  const char *device;
  char *name; /* experiment.device */
  int ncells;
  int *cells; /* cell indices, task order */
} group;

/* One --only or --exclude argument: key=value (or key!=value) pairs that must all hold. A cell
 * is selected when it matches some --only filter (or there is none) and no --exclude filter. */
typedef struct {
  int n;
  char **keys, **vals;
  char *neg;   /* per pair: 1 for key!=value */
  int exclude; /* an --exclude filter: the cells it matches are dropped */
} filter;

typedef struct {
  const char *bin, *root, *python, *run_dir;
} runtime_vars;

typedef struct {
  const expfile *file;
  int ncells;
  cell *cells;
  int ngroups;
  group *groups;
  int *val_pool;
} cellset;

/* --only K=V[,K!=V...]; exclude_parse: --exclude K=V[,K!=V...] (f->exclude set). */
int filter_parse(const char *arg, filter *f, char **err);
int exclude_parse(const char *arg, filter *f, char **err);
void filter_free(filter *f);
/* The values the positive pairs of the --only filters name (K=V, not K!=V nor --exclude) join
 * their axes as ad-hoc values where a range allows them (expfile_add_value); call it before
 * expand. */
void filters_add_values(expfile *file, const filter *filters, int nfilters);
/* Does a positive --only pair of these filters name each ad-hoc value of cell c? (A run's
 * select record holds the ad-hoc cells its --only filters named, no others.) */
int filters_name_adhoc(const cellset *cs, const cell *c, const filter *filters, int nfilters);

/* --set NAME=VALUE: set in *sets (a later one of the same name wins; name and value point
 * into a copy of arg that store owns); -1 with *err when arg
 * is not a variable name, '=', and a value as a YAML param's (no control characters, at most
 * 1024 bytes). check_sets: each name must be a param (defaults:/params:) of some experiment
 * where it is not an axis or case key (a cell's coordinates are never overridden). A set
 * value wins over the cluster file's vars, the params and the defaults. */
int set_parse(const char *arg, paramlist *sets, strvec *store, char **err);
int check_sets(const expfile *file, char **err);

/* Expands every experiment of file. cluster may be NULL (no device filtering). On error the
 * cellset is left empty (nothing to free). */
int expand(const expfile *file, const clusterfile *cluster, const filter *filters, int nfilters,
           cellset *out, char **err);
void cellset_free(cellset *cs);

const char *cell_value(const cellset *cs, const cell *c, const char *axis_name);

/* Everything a template of this cell may use: axes, cluster vars, params, builtins. */
typedef struct {
  const cellset *cs;
  const cell *c;
  const device_def *dev; /* may be NULL */
  const runtime_vars *rt;
} cell_env;
const char *cell_lookup(void *cell_env_ptr, const char *name);

/* The cell's command line (shell text) or -1 with *err. Absent systems have none. */
int cell_command(const cell_env *env, sbuf *out, char **err);

#endif
