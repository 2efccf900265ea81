/* expand: where a matrix becomes cells.
 *
 * Every experiment's axes are multiplied out in file order (the last axis varies fastest),
 * then with its case list when it has one (the cases vary fastest of all),
 * excluded combinations are dropped, and each remaining cell gets its log file name (a pure
 * function of the cell) and its place in a group: one group per (experiment, device), which
 * becomes one job array. Filters and the cluster only mark cells unselected; indices stay
 * stable, so a cell's array task id is the same in every run. */
#ifndef RUNNER_EXPAND_H
#define RUNNER_EXPAND_H

#include "config.h"

typedef enum {
  CELL_SELECTED = 0,
  CELL_FILTERED,  /* not matched by --only */
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

/* One --only argument: key=value pairs that must all hold. */
typedef struct {
  int n;
  char **keys, **vals;
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

int filter_parse(const char *arg, filter *f, char **err);
void filter_free(filter *f);

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
