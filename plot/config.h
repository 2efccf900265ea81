/* config: the `plot:` section of a figure's experiment.yaml, read with the kit's one YAML
 * loader (common/yamlnode.h) over the file's shared model (common/expmodel.h: its registered
 * devices, workloads and systems, a system's ours and expected, the experiments' log:).
 *
 *   plot:
 *     figure: fig12      # name stored in the table (default: the file's figure:, else the folder name)
 *     defaults: {experiment: kernel, workload: h2o, seqlen: 4096}  # other keys: cell keys
 *     devices:   [a100, h100, h200]   # row order (default: the file's devices:)
 *     workloads: [h2o, kf]            # column order (default: the file's workloads:)
 *     systems:   [torch, fused]       # bar order, ours last (default: the file's systems:)
 *     # names only: labels, aliases and colours are common/registry.yaml's (registry.h)
 *     figures:
 *       - {name: fig12_kernel, kind: grid, experiment: kernel, ymax: 30, ytics: 10,
 *          ylabel: "Execution Time (ms)"}
 *       - {name: fig13, kind: sweep, experiment: h2o, workload: h2o, seqlens: [1024, 2048]}
 *       - {name: gemm_comparison, kind: comparison, experiment: gemm,
 *          x: "{m}x{n}x{k} {dtype}",          # columns: the case keys of the logs, as labels
 *          systems: [pytorch, cublas, wgmma], # the bars (default: every plot system)
 *          metrics: [ms, tflops], logy: [ms]} # one panel each; one file per device
 *       - {name: speedup_comparison, kind: speedup, logy: [speedup],
 *          panels: [{figure: gemm_comparison, baseline: pytorch}, ...]}
 *     paper:             # the paper's own times of the ours system, ms: EXPERIMENT: DEVICE: WORKLOAD
 *       kernel:
 *         h100: {h2o: 1.300, attn: 0.615}
 *     claims:            # the paper's claim as the artifact's logs give it: FIGURE: METRIC: DEVICE
 *       system: flashtensor  # whose claims; device: the paper's GPU, standing for the others
 *       device: h100
 *       fig12_kernel: {ms: {h100: 3.03}}
 *     stale:             # logs drawn but marked stale and left out of report.html's means
 *       - {log: "nsa.h100.*", reason: "run under the old meaning of --groups"}
 *
 * The log file name pattern is not repeated here: it is the `log:` template of the experiments
 * the figures draw (experiments.NAME.log); experiments drawn from one log folder share it, or
 * each holds {experiment} (then a log is read with its own experiment's template).
 * Everything the plotter shows is data here; a new system or workload is a YAML edit.
 * Errors name file:line:column and what was expected. */
#ifndef PLOT_CONFIG_H
#define PLOT_CONFIG_H

#include "reader.h"
#include "table.h"

#define PC_LABEL       64
#define PC_MAX_ALIASES 8
#define PC_MAX_ITEMS   32
#define PC_MAX_FIGURES 16
#define PC_MAX_SWEEP   16 /* a sweep's columns */
#define PC_MAX_PAPER   8  /* plot: paper: entries (experiment and device) */

typedef struct {
  char name[PT_NAME];
  char label[PC_LABEL];
  char aliases[PC_MAX_ALIASES][PT_NAME];
  int naliases;
  /* systems only: the colour, 0xRRGGBB: the system's row in common/registry.yaml, or a
   * fallback colour no other system of the plot has; never the plot's own */
  unsigned color;
  int has_color;
  int ours;     /* systems only: the hatched bar the speedup is computed for */
  int expected; /* systems only: 0 = nobody can run it here, do not list it as missing */
} pc_item;

/* grid: rows devices, columns workloads (or x: cases), bars systems (Fig 12, 14).
 * sweep: rows devices, panels TFLOP/s and MiB, groups sequence lengths (Fig 13): the values of
 *   the rows' PT_LENGTH_KEY key that its seqlens: lists.
 * comparison: one file per device, a panel per metric, groups x: cases (the seed's
 *   {kernel}_comparison_{GPU}).
 * speedup: one file per device, a panel per comparison figure, each system's speedup over that
 *   panel's baseline (the seed's speedup_comparison_{GPU}). */
typedef enum { FIG_GRID, FIG_SWEEP, FIG_COMPARISON, FIG_SPEEDUP } pc_kind;

/* What a panel plots: time, throughput, peak memory (each from the log), or the speedup over
 * a baseline system (baseline's time / the system's). */
typedef enum { MET_MS, MET_TFLOPS, MET_MIB, MET_SPEEDUP, MET_COUNT } pc_metric;

#define PC_XLABEL 128

typedef struct {
  char name[PT_NAME]; /* output file base name, e.g. fig12_kernel */
  pc_kind kind;
  char experiment[PT_NAME];
  /* sweep: the one workload; grid and comparison without x: the one workload column (else a
   * column per plot workload) */
  char workload[PT_NAME];
  char title[PC_LABEL * 2];
  char ylabel[PC_LABEL];
  double ymax, ytics; /* grid: fixed y range; 0 = automatic per panel */
  /* sweep: its columns, the values of cell key sweep_key (seqlens: [1024, 2048] are the
   * values 1024 and 2048 of seqlen) */
  char sweep_key[PT_KEY];
  char sweep[PC_MAX_SWEEP][PT_NAME];
  int nsweep;
  /* x: a label template over cell keys ("{m}x{n}x{k} {dtype}"): the columns are the distinct
   * labels of the figure's logs; "" = the plot's workloads (grid, comparison) */
  char x[PC_XLABEL];
  int sys[PC_MAX_ITEMS]; /* the bars: indices into the plot's systems, in order */
  int nsys;
  pc_metric metrics[MET_COUNT]; /* comparison: one panel each (default ms, tflops) */
  int nmetrics;
  unsigned logy; /* bit (1 << metric): that panel has a log y axis */
  /* speedup: one panel per comparison figure (index into figures) with its baseline system
   * (index into the plot's systems) */
  int panel_fig[PC_MAX_FIGURES], panel_base[PC_MAX_FIGURES];
  int npanels;
} pc_figure;

/* plot: paper: the paper's own times of the ours system in one experiment on one device, in ms,
 * per workload (NAN where the paper gives none). The grid figures' tables show them beside
 * ours: the terminal's, `table --format markdown`'s and report.html's. */
typedef struct {
  char experiment[PT_NAME];
  int device;                 /* index into devices */
  double ms[PC_MAX_ITEMS];    /* per workload: index into workloads */
  int decimals[PC_MAX_ITEMS]; /* digits after the point as written (1.300: 3), to print so */
} pc_paper;

/* plot: stale: logs the study's README calls stale (run under an older meaning of an option):
 * drawn, marked stale in report.html and left out of its geometric means. */
#define PC_MAX_STALE 16
typedef struct {
  char log[128];    /* an fnmatch pattern on the log's file name: "nsa.h100.*" */
  char reason[256]; /* why, as the README says it */
} pc_stale;

/* plot: claims: the paper's claim per figure, metric and device, as the original artifact's own
 * logs give it (its system's geometric mean over the best other system: best / it for time and
 * memory, it / best for throughput); report.html's verdict holds this run's beside it. */
#define PC_MAX_CLAIMS 16
typedef struct {
  int figure;       /* index into figures */
  pc_metric metric; /* MET_MS (speedup), MET_TFLOPS (throughput), MET_MIB (memory saving) */
  int device;       /* index into devices */
  double ratio;
  int decimals; /* digits after the point as written */
} pc_claim;

typedef struct {
  char path[PT_PATH];
  char figure[PT_NAME];
  char log_name[128]; /* the drawn experiments' log template (the first one's when several) */
  /* several templates: one per drawn experiment, each holding {experiment}; 0 when shared */
  char log_names[RD_MAX_TEMPLATES][128], log_exps[RD_MAX_TEMPLATES][PT_NAME];
  int nlog_names;
  char default_experiment[PT_NAME], default_workload[PT_NAME];
  /* the defaults' other keys (seqlen: 4096): cell keys every row has (rd_opts.default_keys) */
  pt_kv default_keys[PT_MAXKEYS];
  int ndefault_keys;
  pc_item devices[PC_MAX_ITEMS], workloads[PC_MAX_ITEMS], systems[PC_MAX_ITEMS];
  int ndevices, nworkloads, nsystems;
  pc_figure figures[PC_MAX_FIGURES];
  int nfigures;
  pc_paper paper[PC_MAX_PAPER];
  int npaper;
  pc_stale stale[PC_MAX_STALE];
  int nstale;
  pc_claim claims[PC_MAX_CLAIMS];
  int nclaims;
  int claim_system; /* index into systems of the system the claims are of, -1 when none */
  int claim_device; /* the paper's GPU (index into devices): its claims stand for the others */
} pc_config;

/* Loads path's plot: section and the log name of the experiments it draws. Returns 0, or -1
 * after printing "file:line:column: message" (pc_load_msg: hands it over in *msg instead,
 * the caller frees it). */
int pc_load(const char *path, pc_config *c);
int pc_load_msg(const char *path, pc_config *c, char **msg);

/* Reader options for this config (canonical names through the aliases). */
rd_opts pc_reader_opts(const pc_config *c);
/* Reads dir's logs with c's reader options into t (latest: of several logs of one cell, the
 * newest). Returns 1 when read, 0 when dir does not exist, -1 (said on stderr) when it cannot be
 * read. */
int pc_read_logs(const pc_config *c, const char *dir, int latest, pt_table *t, rd_issues *is);

/* Index of name (or of an item aliasing it) in a list, or -1. */
int pc_find(const pc_item *items, int n, const char *name);

/* The log template of experiment exp (c->log_name when they share one, or exp is unknown). */
const char *pc_log_name(const pc_config *c, const char *exp);

/* The paper's time of the ours system in experiment exp on device dev for workload w (config
 * indices), or NAN when plot: paper: gives none; *decimals (when not NULL): the digits after
 * the point as the YAML writes it. */
double pc_paper_ms(const pc_config *c, const char *exp, int dev, int w, int *decimals);

/* The plot: stale: entry whose pattern matches the file name of the log at path, or -1. */
int pc_stale_index(const pc_config *c, const char *path);

/* Renders a figure's x: template for row r into out. Returns 0, or -1 when r lacks a key the
 * template names. */
int pc_render_x(const char *tmpl, const pt_row *r, char *out, size_t cap);

#endif
