/* figure: where a number becomes a bar.
 *
 * Builds a figure's model from the table and its plot: config (rows = devices present, in
 * the YAML's order; columns = workloads or sequence lengths; one bar per system, ours last),
 * writes its gnuplot data file (.dat) and script (.gp, the template in plot/gnuplot/ with a
 * generated header), and prints the terminal table with ours' speedup and its geometric mean. */
#ifndef PLOT_FIGURE_H
#define PLOT_FIGURE_H

#include <stdio.h>

#include "config.h"
#include "table.h"

typedef struct {
  pt_status status; /* ST_MISSING when no log */
  const pt_row *row;
} fg_cell;

typedef struct {
  const pc_config *cfg;
  const pc_figure *fig;
  int dev[PC_MAX_ITEMS]; /* config indices of the devices shown, in YAML order */
  int ndev;
  int nx;         /* columns: workloads (grid) or sequence lengths (sweep) */
  int ours;       /* index of the ours system, -1 when none */
  fg_cell *cells; /* [ndev][nx][nsystems] */
  int nlogs;      /* logs of our format the figure draws */
  int ncpu;       /* of which CPU-mode runs (they measure nothing; the figure says so) */
} fg_model;

/* Returns 0, or -1 when out of memory. */
int fg_build(fg_model *m, const pc_config *cfg, const pc_figure *fig, const pt_table *t);
void fg_free(fg_model *m);

/* 1 when the log at path comes from a CPU-mode run: `config ... device=cpu` or
 * `meta gpu=none` in its first lines (our format; the artifact's logs are GPU runs). */
int fg_log_is_cpu(const char *path);

fg_cell *fg_at(const fg_model *m, int d, int x, int s);

/* Ours' speedup over the best (fastest) other system in column x of device row d, or NAN. */
double fg_speedup(const fg_model *m, int d, int x);

/* Writes <dir>/<name>.dat and <dir>/<name>.gp from the template in template_dir.
 * Returns 0, or -1 with a message on stderr. */
int fg_emit(const fg_model *m, const char *dir, const char *template_dir);

/* The terminal table (ms per cell, speedup column, geometric mean). */
void fg_print_table(const fg_model *m, FILE *out);

/* Lists the cells of expected systems that have no log, as the file names they would have.
 * Prints at most limit names (0 = all). Returns the number of missing cells. */
int fg_print_missing(const fg_model *m, FILE *out, int limit);

#endif
