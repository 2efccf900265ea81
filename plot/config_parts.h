/* config_parts: the parts of the plot: section that config_load.c reads through
 * (config_figures.c, config_systems.c, config_extras.c); not part of config.h. Each returns 0,
 * or -1 with the first error kept in y. */
#ifndef PLOT_CONFIG_PARTS_H
#define PLOT_CONFIG_PARTS_H

#include "config.h"
#include "config_nodes.h"
#include "expmodel.h"

/* ---- config_figures.c: plot: figures: ---- */

/* One figure's own keys into f. */
int pcy_figure(ycx *y, const ynode *n, pc_figure *f);
/* Once every system and figure is loaded (n: the figure's node): its bars' systems, then a
 * speedup figure's panels. */
int pcy_resolve_systems(ycx *y, const ynode *n, const pc_config *c, pc_figure *f);
int pcy_resolve_panels(ycx *y, const ynode *n, const pc_config *c, pc_figure *f);

/* ---- config_systems.c: the rows, columns and bars, dressed from common/registry.yaml ---- */

/* A list of names (devices, workloads or systems: no mapping) appended to items[*count]. */
int pcy_names(ycx *y, const ynode *n, pc_item *items, int *count, const char *what);
/* The devices, workloads and systems the plot: section does not list: the file's (m). */
int pcy_default_names(ycx *y, const xm_model *m, pc_config *c);
/* Every item's label and aliases from the registry of the experiment file at path, a system's
 * colour too, and its ours and expected from m (at: where an error points). */
int pcy_dress(ycx *y, const char *path, const xm_model *m, const ynode *at, pc_config *c);

/* ---- config_extras.c: plot: paper:, stale: and claims: (n: NULL when absent) ---- */

/* paper: once devices, workloads, systems and figures are loaded; stale: as it is read;
 * claims: once the figures are loaded. */
int pcy_paper(ycx *y, const ynode *n, pc_config *c);
int pcy_stale(ycx *y, const ynode *n, pc_config *c);
int pcy_claims(ycx *y, const ynode *n, pc_config *c);

#endif
