/* emit_parts: the emitters below emit.c (emit_common.c, emit_grid.c, emit_sweep.c,
 * emit_bars.c): the .gp header of grid and sweep figures and each kind's emitter, which emit.c
 * calls. Each emitter writes one kind's .dat and the variables of its .gp from the model. */
#ifndef PLOT_EMIT_PARTS_H
#define PLOT_EMIT_PARTS_H

#include <stdio.h>

#include "figure_impl.h"
#include "layout.h"

/* ---- emit_common.c: the .gp header of grid and sweep figures ---- */

/* `array NAME[n] = ["...", ...]` of get(m, i). */
void fg_gp_strings(FILE *f, const char *name, int n, const char *(*get)(const fg_model *, int),
                   const fg_model *m);
/* Row (device) i's label and bar (system) i's label, as fg_gp_strings takes them. */
const char *fg_row_label(const fg_model *m, int i);
const char *fg_sys_label(const fg_model *m, int i);
/* The variables grid.gp and sweep.gp read: names, titles, the layout L, rows, systems,
 * colours and legend (ncols: panel columns). */
void fg_gp_header(FILE *f, const fg_model *m, int ncols, const layout *L);

/* ---- the emitters: a figure's .dat and the variables of its .gp; 0, or -1 ---- */

int fg_emit_grid(const fg_model *m, FILE *dat, FILE *gp);  /* emit_grid.c */
int fg_emit_sweep(const fg_model *m, FILE *dat, FILE *gp); /* emit_sweep.c */
/* emit_bars.c: a comparison figure, and a speedup figure from its panels' models. */
int fg_emit_comparison(const fg_model *m, FILE *dat, FILE *gp);
int fg_emit_speedup_bars(const fg_model *panels, const pc_figure *fig, const char *name, FILE *dat,
                         FILE *gp);

#endif
