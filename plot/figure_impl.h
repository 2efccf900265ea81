/* figure_impl: what the model's readers share (figure.c, tables.c, bpanel.c, the emitters,
 * report.c); not part of repro-plot's interface (figure.h).
 *
 * figure.c owns the model and everything read from it: a bar's system and colour, a cell's
 * value, mark and ratio, the columns' labels, the note (CPU logs, no logs). tables.c computes
 * what the terminal tables and the report both show. */
#ifndef PLOT_FIGURE_IMPL_H
#define PLOT_FIGURE_IMPL_H

#include <stdio.h>

#include "figure.h"

/* ---- figure.c: the model's systems, values and labels ---- */

/* A system's colour: its row in common/registry.yaml (config_systems.c looks it up), so a system has one
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

/* Ours' ratio to the best other system in column x of device row d for metric k: best / ours
 * for time and memory, ours / best for throughput; NAN when either is missing. A stale cell
 * (plot: stale:) counts as missing; for time, a system with a log there but no bar counts too. */
double fg_ours_ratio(const fg_model *m, int d, int x, pc_metric k);
/* Cell (d, x, s)'s value of metric k as a ratio reads it: fg_cell_value, NAN when stale. */
double fg_fresh_value(const fg_model *m, int d, int x, int s, pc_metric k);
/* The best value of metric k in column x of device row d (lowest time or memory, highest
 * throughput) over the systems other than ours, and with skip_ours_marked over those not marked
 * ours; stale cells left out; for time, a system with a log there but no bar counts too. NAN
 * when none has one. */
double fg_best_other(const fg_model *m, int d, int x, pc_metric k, int skip_ours_marked);
/* v against best as every ratio reads: best / v for time and memory, v / best for throughput
 * (> 1: v is the better); NAN when either is missing. */
double fg_ratio_to(pc_metric k, double v, double best);

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

#endif
