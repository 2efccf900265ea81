/* expmodel: the experiment file's model that the runner and the plotter share, read once here:
 * the names it registers and what the plot takes from them.
 *
 *   figure: fig12
 *   devices: [h100, a100, h200]          # the registered devices (an axis `device: all`)
 *   workloads: [h2o, roco, kf]           # the registered workloads (`workload: all`)
 *   systems:                             # the registered systems, in order (`system: all`)
 *     torch:    {family: peers}          # how it runs: exactly one of command, family, absent
 *     tvm-ms:   {family: tuned, expected: false}  # expected: false: often has no log
 *     tensorrt: {absent: "why it cannot run"}     # never expected
 *     fused:    {family: ours, ours: true}        # ours: the hatched bar, the speedups' own
 *   experiments:
 *     kernel: {log: "...", axes: {device: all, workload: all, system: all}, ...}
 *
 * An axis device, workload or system written `all` takes every registered name in order. How a
 * name is shown (label, colour, aliases) is common/registry.yaml's (registry.h), never the
 * file's. The runner reads the rest of each experiment (runner/config_experiment.c), the plotter
 * its plot: section (plot/config_load.c). Strings and nodes point into the caller's tree. */
#ifndef REPRO_EXPMODEL_H
#define REPRO_EXPMODEL_H

#include "yamlnode.h"

typedef struct {
  const char *name;
  const ynode *at;                       /* its key */
  const char *command, *family, *absent; /* exactly one is set */
  const ynode *run;                      /* the node of that one */
  int ours;                              /* the figures' own system (hatched, speedups) */
  int expected;                          /* 0: absent, or expected: false */
} xm_system;

typedef struct {
  int n;
  const ynode **v; /* scalars: names */
} xm_names;

typedef struct {
  const char *name;
  const ynode *at, *node; /* its key and its mapping */
  const ynode *log;       /* its log: template, a scalar, or NULL */
} xm_experiment;

typedef struct {
  const char *figure; /* figure:, or NULL */
  xm_names devices, workloads;
  xm_names system_names; /* the systems' keys, in order */
  int nsystems;
  xm_system *systems;
  int nexps;
  xm_experiment *exps;
} xm_model;

/* Reads root's figure:, devices:, workloads:, systems: and the names and log: of its
 * experiments: into m. Returns 0, or -1 with the error in err (m is freed). */
int xm_load(ydoc_err *err, const ynode *root, xm_model *m);
void xm_free(xm_model *m);

/* One systems: row (an experiment's own systems: too). Returns 0 or -1 (the error in err). */
int xm_parse_system(ydoc_err *err, const ynode *k, const ynode *v, xm_system *out);

const xm_system *xm_find_system(const xm_model *m, const char *name);
const xm_experiment *xm_find_experiment(const xm_model *m, const char *name);

/* Is v an axis written `all`? */
int xm_is_all(const ynode *v);
/* The registered names of axis (device, workload or system) for `all`, or NULL (the error in
 * err, at v) when axis is none of the three or the file registers none. */
const xm_names *xm_registered(ydoc_err *err, const xm_model *m, const char *axis, const ynode *v);

#endif
