/* registry: common/registry.yaml, the one home of how every system, workload and device is
 * shown: its label, a system's colour, and the other names (aliases) its logs may carry, the
 * same in every figure, table and study. The plotter reads it for its labels, colours and the
 * names it reads logs by; an experiment file (expmodel.h) names systems, workloads and devices
 * only, and says nothing of how they look.
 *
 *   systems:   NAME: {label: "ours (CUDA C)", color: "#rrggbb", aliases: [OTHER, ...]}
 *   workloads: NAME: {label: KeyFormer, aliases: [keyformer]}
 *   devices:   NAME: {label: H100}
 *
 * A label reaches gnuplot inside double quotes: printable, without quotes, apostrophes,
 * backslashes or backticks. No name or alias is listed twice in a section, and no two systems
 * share a colour (two bars of one legend never look alike). A name without a row is shown as
 * itself (a test's stand-in; the test plot.colors holds every committed figure to rows). */
#ifndef REPRO_REGISTRY_H
#define REPRO_REGISTRY_H

#include <stddef.h>

#include "yamlnode.h"

#define RG_MAX_ALIASES 8

typedef struct {
  const char *name, *label; /* point into the registry's tree */
  const char *aliases[RG_MAX_ALIASES];
  int naliases;
  unsigned color; /* systems: 0xRRGGBB */
  const ynode *at;
} rg_row;

typedef struct {
  int n;
  rg_row *v;
} rg_section;

typedef struct {
  char *path;
  rg_section systems, workloads, devices;
  ynode *tree;
} rg_registry;

/* Loads the registry at path. Returns 0, or -1 with *err (the caller frees) set to
 * "file:line:col: what was expected". */
int rg_load(const char *path, rg_registry *r, char **err);
void rg_free(rg_registry *r);

/* The row of name in a section, by its name or one of its aliases, or NULL. */
const rg_row *rg_find(const rg_section *s, const char *name);

/* The registry for the experiment file at config: common/registry.yaml of the repository that
 * holds it (the nearest folder above with .repro-root), else the one of the source tree the
 * program was built from. Returns 0 with its path in out, or -1 when there is none. */
int rg_path_for(const char *config, char *out, size_t cap);

#endif
