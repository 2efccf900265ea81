/* config_parts: the parts of the plot: section that config_load.c reads through
 * (config_figures.c, config_systems.c, config_extras.c); not part of config.h. Each returns 0,
 * or -1 with the first error kept in y. */
#ifndef PLOT_CONFIG_PARTS_H
#define PLOT_CONFIG_PARTS_H

#include "config.h"
#include "config_nodes.h"

/* ---- config_figures.c: plot: figures: ---- */

/* One figure's own keys into f. */
int pcy_figure(ycx *y, const ynode *n, pc_figure *f);
/* Once every system and figure is loaded (n: the figure's node): its bars' systems, then a
 * speedup figure's panels. */
int pcy_resolve_systems(ycx *y, const ynode *n, const pc_config *c, pc_figure *f);
int pcy_resolve_panels(ycx *y, const ynode *n, const pc_config *c, pc_figure *f);

/* ---- config_systems.c: plot/systems.yaml ---- */

/* The systems' colours: their rows in the palette of the experiment file at path. */
int pcy_colors(ycx *y, const char *path, pc_config *c);

/* ---- config_extras.c: plot: paper:, stale: and claims: (n: NULL when absent) ---- */

/* paper: once devices, workloads, systems and figures are loaded; stale: as it is read;
 * claims: once the figures are loaded. */
int pcy_paper(ycx *y, const ynode *n, pc_config *c);
int pcy_stale(ycx *y, const ynode *n, pc_config *c);
int pcy_claims(ycx *y, const ynode *n, pc_config *c);

#endif
