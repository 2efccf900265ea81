/* report: `repro-plot report`, one self-contained HTML file of figures, tables and the logs
 * behind them, which a browser opens from disk (no network, no other file).
 *
 *   repro-plot report [-o report.html] [--compare ROOT] [--paper ROOT] [--tolerance 0.10]
 *                     [--latest] --config F (--logs DIR | --table FILE...) [--figures DIR]
 *                     [--config F ...]
 *
 * Each --config starts a section (a figure folder or a study); the --logs and --figures after
 * it are that section's log folder and the folder its figures were drawn into (their .svg is
 * inlined; without --figures the section has its tables only). --table FILE... in place of
 * --logs: the section's rows from tables (table_input.h; a row's log is not read, so its
 * checks and meta are not shown). --compare ROOT and --paper ROOT
 * read ROOT/<figure> (the plot's figure name, e.g. fig12, h2o-diag) for every section: the
 * logs to compare with (each cell's time / the compared time, outside +-tolerance marked, cells
 * of one side only listed), and the original artifact's logs, shown as the paper's column.
 * Without --paper (or where ROOT lacks a section's folder) that column holds the paper's own
 * times of ours from the config's plot: paper: (config.h), with paper / ours among the
 * geometric means; a section with neither has no paper column.
 * The page opens with the verdict: per figure with plot: claims: (config.h) and GPU, the paper's
 * claim as the artifact's logs give it, this run's ratio of the claims' system (FlashTensor
 * (artifact)) and of ours (CUDA C) to the best baseline, and whether the claim is reproduced
 * (the rule is on the page). Logs plot: stale: names are marked stale and left out of every
 * geometric mean the report shows. Figures take the content's width (a click enlarges one);
 * the tables of cells are folded; a section's --figures folder's other .svg files (a study's
 * own script's figures) follow its figures.
 * --latest reads the logs as `repro-plot draw --latest` does (tables have one row per cell).
 * Exit: 0, 1 (a config, a log folder or the output failed), 2 (usage). */
#ifndef PLOT_REPORT_H
#define PLOT_REPORT_H

/* argv[0] is "report"; rd_init() has run. */
int rp_main(int argc, char **argv);

#endif
