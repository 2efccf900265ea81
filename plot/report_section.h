/* report_section: a section of the report (report.h): one config, its logs or tables, their
 * records besides the numbers, and the logs compared with; the report's options (report.c
 * parses them) and each of a section's figures' models. Internal to the report. */
#ifndef PLOT_REPORT_SECTION_H
#define PLOT_REPORT_SECTION_H

#include "config.h"
#include "figure.h"
#include "logmeta.h"
#include "reader.h"
#include "table.h"

#define RP_MAX_SECTIONS 32
#define RP_MAX_TABLES   16 /* --table files of one section */

typedef struct {
  const char *config, *logs, *figures; /* figures: NULL when the section has none */
  const char *tables[RP_MAX_TABLES];   /* --table files, in place of logs (table_input.h) */
  int ntables;
} rp_entry;

typedef struct {
  rp_entry sec[RP_MAX_SECTIONS];
  int nsec;
  const char *output, *compare, *paper;
  double tol;
  int latest; /* of several logs of one cell, the newest is read (draw's --latest) */
} rp_opts;

typedef struct {
  const rp_entry *e;
  pc_config cfg;
  pt_table t;     /* the logs, in the reader's order (the one draw builds its models from) */
  rd_issues is;   /* what reading them found broken or odd */
  int logs_exist; /* the log folder exists */
  lm_meta *meta;  /* per row of t */
  int *home;      /* per row: the figure whose table lists it, -1 when none draws its experiment */
  unsigned char *drawn; /* per row: a figure places it in a cell */
  const pt_row **order; /* t's rows in cell order (pt_cmp_cell), as `repro-plot table` writes */
  pt_table cmp, paper;  /* --compare and --paper logs of this section */
  int has_cmp, has_paper;
  /* per row: the paper's time of its cell (plot: paper:: ours' rows a grid figure draws), NAN
   * when none, and its digits after the point */
  double *paper_ms;
  int *paper_dec;
  int *stale; /* per row: its plot: stale: entry (drawn, marked, left out of the means), or -1 */
} rp_section;

/* A visitor of a figure's models: panels[0..n) (n > 1: a speedup figure's panels on one
 * device) and the name of the figure's file. */
typedef void (*rp_model_fn)(const rp_section *s, int f, const fg_model *panels, int n,
                            const char *name, void *ctx);

/* Builds figure f's models as `repro-plot draw` does and hands each to fn: one per device for
 * the per-device kinds (a speedup figure: its panels' models on that device), else one.
 * Returns 0, or -1 when out of memory. */
int rp_each_model(const rp_section *s, int f, rp_model_fn fn, void *ctx);
/* Loads a section: its config, logs, the logs' records, and the compared logs. Returns 0, or
 * -1 with a message. */
int rp_load_section(rp_section *s, const rp_entry *e, const rp_opts *o);
void rp_free_section(rp_section *s);

#endif
