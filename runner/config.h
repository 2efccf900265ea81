/* config: where YAML trees become experiments and clusters (the schema lives here, and is
 * documented in runner/README.md). Strings point into the parsed trees, which the structs own. */
#ifndef RUNNER_CONFIG_H
#define RUNNER_CONFIG_H

#include "expmodel.h"
#include "util.h"
#include "yamlnode.h"

typedef struct {
  const char *name, *value;
  const ynode *at;
} param;

typedef struct {
  int n;
  param *v;
} paramlist;

const char *params_get(const paramlist *p, const char *name);
/* Sets or overrides name (later definitions win). */
void params_set(paramlist *p, const char *name, const char *value, const ynode *at);

typedef struct {
  const char *name;
  const char *command; /* template (its own or its family's), or NULL for an absent system */
  const char *absent;  /* why it cannot run here (absent systems), or NULL */
  const ynode *at;
} system_def;

/* An axis: its listed values (the matrix), then the ad-hoc values a command line named
 * (expfile_add_value). An axis with a range (`{values: [...], range: [LO, HI]}`) takes any
 * integer in [lo, hi] as an ad-hoc value; its listed values are integers in it. */
typedef struct {
  const char *name;
  strvec values; /* names; copies: values.v[0..nlisted) listed, the rest ad-hoc */
  int nlisted;
  int ranged; /* a range was declared: lo, hi */
  long lo, hi;
  const ynode *at;
} axis;

/* cases: an explicit list of parameter sets, one more dimension of the matrix after the axes
 * (it varies fastest); its values are whole mappings. n == 0: the experiment has no cases.
 * none: --cases named a list this experiment lacks (another experiment has it): the experiment
 * has no cells; its first list is loaded all the same, so its keys are known (exclude, --only). */
typedef struct {
  const char *list; /* the selected named list, or NULL for a plain list */
  int none;
  int nkeys;
  const char **keys; /* in the order of the first case */
  const ynode **key_at;
  int n;
  const char **vals; /* n * nkeys, case-major */
  strvec known;      /* "key=value" of every named list (exclusions may name any) */
  const ynode *at;
} caselist;

typedef struct {
  int naxes;
  int *axis;      /* key index per condition: an axis, or naxes + a case key */
  strvec *values; /* accepted values per condition */
} exclusion;

typedef struct {
  const char *name;
  const char *log_tpl;
  const ynode *log_at;
  long time_limit_s;
  int naxes;
  axis *axes;
  int device_axis, system_axis;
  caselist cases;
  int nexcl;
  exclusion *excl;
  paramlist params; /* file defaults merged with the experiment's params */
  int nsystems;
  system_def *systems; /* file systems merged with the experiment's */
} experiment;

typedef struct {
  char *path; /* absolute path of the file */
  char *dir;  /* its directory (the figure folder) */
  const char *figure;
  int nexps;
  experiment *exps;
  const char *cases;     /* --cases NAME, or NULL (the 'default' list of named ones) */
  const paramlist *sets; /* repro-run --set NAME=VALUE (not owned; NULL: none) */
  xm_model model;        /* the shared model: registered names, systems (common/expmodel.h) */
  ynode *tree;
} expfile;

typedef struct {
  const char *name;
  const char *partition, *gres, *account, *qos, *mem;
  long max_concurrent; /* 0: no throttle */
  long cpus_per_task;  /* 0: Slurm's default */
  strvec setup;        /* verbatim shell lines */
  paramlist vars;      /* cluster-wide vars merged with the device's */
  const ynode *at;
} device_def;

typedef enum { EXEC_AUTO, EXEC_SLURM, EXEC_LOCAL } executor_kind;

typedef struct {
  char *path;
  const char *name;
  executor_kind executor;
  int ndevices;
  device_def *devices;
  ynode *tree;
} clusterfile;

/* Load and validate; on error return -1 and set *err (caller frees) to
 * "file:line:col: what was expected". */
int expfile_load(const char *path, expfile *out, char **err);
int expfile_load_buffer(const char *path, const char *data, size_t len, expfile *out, char **err);
/* The same, selecting the named case lists `cases` (NULL: 'default'). */
int expfile_load_cases(const char *path, const char *cases, expfile *out, char **err);
int expfile_load_buffer_cases(const char *path, const char *cases, const char *data, size_t len,
                              expfile *out, char **err);
void expfile_free(expfile *f);
int cluster_load(const char *path, clusterfile *out, char **err);
int cluster_load_buffer(const char *path, const char *data, size_t len, clusterfile *out,
                        char **err);
void cluster_free(clusterfile *c);

const system_def *experiment_system(const experiment *e, const char *name);
int experiment_axis(const experiment *e, const char *name);
/* An axis (its index), a case key (naxes + its index) or -1. */
int experiment_key(const experiment *e, const char *name);
/* Dimensions of the matrix: the axes, then the case list when there is one. */
int experiment_dims(const experiment *e);
/* The value of key k (experiment_key) in the cell whose value indices are vals. */
const char *experiment_value(const experiment *e, const int *vals, int k);
/* Does key k (experiment_key) take value v in some cell? */
int experiment_has_value(const experiment *e, int k, const char *v);
/* Is v an integer in a's range, written as printf's %ld writes it (3, not 03 or +3)? */
int axis_in_range(const axis *a, const char *v);
/* Does key k (experiment_key) take v, a value of a cell or one its range allows? */
int experiment_accepts(const experiment *e, int k, const char *v);
/* Adds v as an ad-hoc value to axis `key` of every experiment whose range holds it and whose
 * list lacks it (after the listed values, the ad-hoc ones in numeric order). Call it before
 * expand: a cellset's value indices are the axes' at its expansion. Returns how many
 * experiments' axis `key` now takes v. */
int expfile_add_value(expfile *f, const char *key, const char *v);
/* The first axis on which the cell whose value indices are vals holds an ad-hoc value, or -1. */
int experiment_adhoc_axis(const experiment *e, const int *vals);
const device_def *cluster_device(const clusterfile *c, const char *name);

/* Names every template may use besides axes and params. */
extern const char *const builtin_vars[];

#endif
