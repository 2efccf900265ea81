/* figure: where a number becomes a bar.
 *
 * Builds a figure's model from the table and its plot: config (rows = devices present, in
 * the YAML's order, or the one device of a per-device figure; columns = workloads, the values
 * of a sweep's key (its seqlens:), or the cases named by the figure's x: template; one bar per
 * system of the figure, ours last): a cell per device, column and system holding the row its
 * bar is drawn from. fg_print_table prints the terminal table with ours' speedup and its
 * geometric mean; fg_emit (emit.h) writes the figure's gnuplot files. Comparison and speedup
 * figures are drawn once per device (<name>_<device>: the seed's {kernel}_comparison_{GPU} and
 * speedup_comparison_{GPU}).
 *
 * figure.c holds the model, tables.c prints the tables; emit.c picks the emitter of a figure's
 * kind (emit_grid.c, emit_sweep.c, emit_bars.c), which read the model, above it. */
#ifndef PLOT_FIGURE_H
#define PLOT_FIGURE_H

#include <stdio.h>

#include "config.h"
#include "table.h"

#define FG_MAX_COLUMNS 64 /* x: columns of one figure (more are cut, with a message) */

typedef struct {
  pt_status status; /* ST_MISSING when no log */
  const pt_row *row;
  int stale; /* the plot: stale: entry naming row's log (drawn, marked, in no ratio), or -1 */
} fg_cell;

typedef struct {
  const pc_config *cfg;
  const pc_figure *fig;
  char name[2 * PT_NAME + 2]; /* output base name: the figure's, or <figure>_<device> */
  int dev[PC_MAX_ITEMS];      /* config indices of the devices shown, in YAML order */
  int ndev;
  int nx; /* columns: workloads (grid), sequence lengths (sweep) or the x: cases */
  /* workload columns (grid and comparison figures without x:): column x draws plot workload
   * xw[x] (config index): every plot workload, or the figure's workload: alone */
  int xw[PC_MAX_ITEMS];
  /* x: columns: a log of each column (its keys fill the column's file names) and the label */
  const pt_row **xrow;
  char (*xlab)[PC_XLABEL];
  const int *sys; /* the bars: indices into cfg->systems (the figure's systems) */
  int nsys;
  int ours;       /* index into sys of the ours system, -1 when none */
  fg_cell *cells; /* [ndev][nx][nsys] */
  /* [ndev][nx]: the best time of a system with a log there but no bar in the figure (NAN: none);
   * fg_speedup counts it, so a figure never calls ours fastest over a faster undrawn system */
  double *unlisted_ms;
  int nlogs;  /* logs of our format the figure draws */
  int nrows;  /* logs of any format the figure draws (0: an empty figure, fg_note says so) */
  int ncpu;   /* of which CPU-mode runs (they measure nothing; the figure says so) */
  int nstale; /* cells drawn from a log plot: stale: names (hatched; the note says so) */
} fg_model;

/* Returns 0, or -1 when out of memory. fg_build shows every device with logs of the figure;
 * fg_build_device the one device dev (a config index). */
int fg_build(fg_model *m, const pc_config *cfg, const pc_figure *fig, const pt_table *t);
int fg_build_device(fg_model *m, const pc_config *cfg, const pc_figure *fig, const pt_table *t,
                    int dev);
void fg_free(fg_model *m);

/* 1 for the kinds drawn once per device (comparison, speedup). */
int fg_per_device(const pc_figure *fig);
/* The devices (config indices, YAML order) with logs the figure draws (for a speedup figure:
 * its panels' figures); every device when there are none. Returns their number. */
int fg_devices(const pc_config *cfg, const pc_figure *fig, const pt_table *t, int *dev);

/* A speedup figure on one device: a model per panel (fg_build_device of the panel's figure).
 * fg_print_speedup prints its terminal table (fg_emit_speedup, emit.h, writes its files). */
void fg_print_speedup(const fg_model *panels, const pc_figure *fig, const char *name, FILE *out);

/* 1 when the log at path comes from a CPU-mode run: `config ... device=cpu` or
 * `meta gpu=none` in its first lines (our format; the artifact's logs are GPU runs). */
int fg_log_is_cpu(const char *path);

fg_cell *fg_at(const fg_model *m, int d, int x, int s);

/* Why no figure of cfg draws row r, a log read but in no cell (its experiment, system, device
 * or column is in no figure, or another log of its cell is drawn), into why. Every log read is
 * drawn or listed with this reason. A speedup figure draws what its panels' figures do. */
void fg_why_not_drawn(const pc_config *cfg, const pt_row *r, char *why, size_t cap);

/* Ours' speedup over the best (fastest) other system in column x of device row d, drawn or
 * not, or NAN (fg_ours_ratio of time). */
double fg_speedup(const fg_model *m, int d, int x);
/* The stale cells of device row d (every row: d < 0), and 1 when column x of row d has one. */
int fg_stale_cells(const fg_model *m, int d);
int fg_column_stale(const fg_model *m, int d, int x);

/* The terminal table (ms per cell, speedup column, geometric mean). */
void fg_print_table(const fg_model *m, FILE *out);

/* The same tables in Markdown, for a document: for each device row (dev >= 0: only the device of
 * that config index), per metric an italic title line and a table whose columns are the
 * systems (those nobody can run here only where they have a log), ours' ratio to the best
 * other and, for time, the paper's time and paper / ours (plot: paper:); a last row holds the
 * geometric means. *printed counts the tables written so far (of every call): each one after
 * the first starts with a blank line. */
void fg_print_markdown(const fg_model *m, int dev, int *printed, FILE *out);

/* Lists the cells of expected systems that have no log, as the file names they would have.
 * Prints at most limit names (0 = all). Returns the number of missing cells. */
int fg_print_missing(const fg_model *m, FILE *out, int limit);

#endif
