/* figure_impl: what the figure files share (figure.c, emit_common.c, emit_grid.c,
 * emit_sweep.c, emit_bars.c, tables.c, report.c); not part of repro-plot's interface (figure.h).
 *
 * figure.c owns the model and everything read from it: a bar's system and colour, a cell's
 * value and mark, the columns' labels, the note (CPU logs, no logs). Each emitter writes one kind's .dat and
 * the variables of its .gp; figure.c opens the files and appends the template. */
#ifndef PLOT_FIGURE_IMPL_H
#define PLOT_FIGURE_IMPL_H

#include <stdio.h>

#include "figure.h"
#include "layout.h"

/* ---- figure.c: the model's systems, values and labels ---- */

/* A system's colour: its row in plot/systems.yaml (config.c looks it up), so a system has one
 * colour in every figure and study. */
unsigned fg_system_color(const pc_item *s);
/* The s-th bar's system and its colour. */
const pc_item *fg_sys_item(const fg_model *m, int s);
unsigned fg_sys_color(const fg_model *m, int s);
/* The index into m->sys of the plot system named name (or aliased so), or -1. */
int fg_bar_of(const fg_model *m, const char *name);

/* A cell's time (NAN unless ok with a positive time), its value of metric k (MET_MS,
 * MET_TFLOPS, MET_MIB; NAN when it has none), and the mark shown instead of a bar when v is
 * NAN (NS/OOM/TLE/ERR, or n/a for an ok cell without the metric). */
double fg_cell_ms(const fg_cell *c);
double fg_cell_value(const fg_cell *c, pc_metric k);
const char *fg_cell_mark(const fg_cell *c, double v);

/* The note on a figure drawn from CPU-mode logs, or on one without any log ("no logs of
 * experiment E yet"), else "" (cap: 160 holds it). */
void fg_note(const fg_model *m, char *out, size_t cap);

/* Columns: column i's label in the figure; what the columns are ("workloads", "lengths",
 * "cases"); column x's label in the tables; the width of the tables' first column. */
const char *fg_col_label(const fg_model *m, int i);
const char *fg_cols_name(const fg_model *m);
void fg_col_text(const fg_model *m, int x, char *buf, size_t cap);
int fg_col_width(const fg_model *m);
/* A speedup panel's name: its figure's title, else its experiment. */
const char *fg_panel_label(const fg_model *m);

/* ---- tables.c: what the terminal tables and the HTML report both show ---- */

/* Ours' ratio to the best other system in column x of device row d for metric k: best / ours
 * for time and memory, ours / best for throughput; NAN when either is missing. A stale cell
 * (plot: stale:) counts as missing; for time, a system with a log there but no bar counts too. */
double fg_ours_ratio(const fg_model *m, int d, int x, pc_metric k);
/* Cell (d, x, s)'s value of metric k as a ratio reads it: fg_cell_value, NAN when stale. */
double fg_fresh_value(const fg_model *m, int d, int x, int s, pc_metric k);
/* The file name the log of cell (d, x, s) would have (its experiment's log template). */
void fg_cell_file_name(const fg_model *m, int d, int x, int s, char *out, size_t cap);
/* The metrics a figure's tables show, in order: time (grid), throughput and memory (sweep),
 * the panels' metrics (comparison); none for a speedup figure. Returns their number. */
int fg_table_metrics(const pc_figure *fig, pc_metric *k);
/* The geometric mean of ratio(m, d, x, k) over the columns x where it is a number (NAN when
 * none is); *n: the columns counted. */
double fg_geomean(const fg_model *m, int d, double (*ratio)(const fg_model *, int, int, pc_metric),
                  pc_metric k, int *n);
/* The paper's time of ours in column x of device row d (plot: paper:; grid figures of
 * workloads only), or NAN, with its digits after the point (decimals may be NULL); 1 when
 * device row d has any; the paper's time over ours' (NAN when either is missing), and the same
 * as fg_geomean takes it (k unused). */
double fg_paper_ms(const fg_model *m, int d, int x, int *decimals);
int fg_has_paper(const fg_model *m, int d);
double fg_paper_ratio(const fg_model *m, int d, int x);
double fg_paper_ratio_k(const fg_model *m, int d, int x, pc_metric k);

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

/* ---- emit_bars.c: a panel of grouped bars, as its figure and its table read it ---- */

/* The cells of device row d of model m: groups = its columns, one bar per system but the
 * baseline. Values: metric k from the logs, or (MET_SPEEDUP) the speedup over the baseline. */
typedef struct {
  const fg_model *m;
  int d;
  pc_metric k;
  int base; /* speedup: index into m->sys of the baseline, which has no bar; else -1 */
  int logy;
  double lo, hi, step; /* step 0: a log axis */
  char title[PC_LABEL * 3];
  /* the figure's group labels: bit i set leaves out word i, which every group label of the
   * panel shares (when they are too wide for their groups); the x label names those words */
  unsigned drop;
  char xlabel[PC_XLABEL + 32];
} fg_bpanel;

/* Its bars per group; the system (index into m->sys) of a group's j-th bar; the value of
 * system s in column x (NAN: no bar); the mark of a bar that has none. */
int fg_bp_nbars(const fg_bpanel *b);
int fg_bp_sys(const fg_bpanel *b, int j);
double fg_bp_value(const fg_bpanel *b, int x, int s);
const char *fg_bp_mark(const fg_bpanel *b, int x, int s);

#endif
