/* executor: the two ways cells run (Slurm job arrays, local processes) and what they share:
 * the context of one invocation and the progress line. */
#ifndef RUNNER_EXECUTOR_H
#define RUNNER_EXECUTOR_H

#include <signal.h>
#include <stdio.h>

#include "config.h"
#include "expand.h"
#include "gpus.h"
#include "manifest.h"

typedef struct {
  const expfile *file;
  const clusterfile *cluster; /* may be NULL */
  cellset *cs;
  run *r;
  runtime_vars rt;
  const char *runner_path; /* absolute path of this binary */
  int jobs;                /* local: cells at once */
  const gpu_list *gpus;    /* local: one cell per GPU, pinned; NULL or empty: unpinned */
  double poll_s;           /* slurm: seconds between polls */
  int detach;              /* Ctrl-C leaves submitted jobs running */
  int quiet;
  int silent;    /* not even the final progress line (a poll only to learn the state) */
  int base_done; /* cells of the run already done when this runner began (for the ETA) */
  int readonly;  /* status: a look that writes nothing (cells that ended without a log keep none) */
} exec_ctx;

typedef struct {
  int total, ok, failed, running, pending, unknown;
  int held; /* of pending: held by Slurm (scontrol release) */
} progress;

/* Set by the SIGINT/SIGTERM handler; executors check it between steps. */
extern volatile sig_atomic_t exec_interrupted;

/* "[fig] done D/T (ok, failed) running pending elapsed eta": the ETA is "unknown" until a
 * cell finished under this runner (done > base_done). */
void progress_format(sbuf *out, const char *figure, const progress *p, double elapsed,
                     int base_done);
/* Prints the line when the counts changed since the last one printed, or a minute passed;
 * final: also with --quiet (once). */
void progress_print(const exec_ctx *x, const progress *p, double started, int final);

/* Test hook: REPRO_RUN_TEST_KILL=<point>:<n> makes the runner SIGKILL itself the n-th time
 * it passes <point> (before-sbatch, sbatch-started: while sbatch runs, after-sbatch,
 * local-start), to test resuming. */
void test_kill_point(const char *point);
/* Test hook: with REPRO_RUN_TEST_DELAY=POINT:MS, sleeps MS milliseconds at POINT (a forked
 * cell before its exec: the window in which a runner's kill must not leave its locks held). */
void test_delay_point(const char *point);

/* Local executor. */
int local_recover(exec_ctx *x); /* kills orphans of a killed runner of this run */
int local_run(exec_ctx *x, const int *cells, int n);

/* Slurm executor. */
int slurm_available(void);
/* Has the run submitted cells with the Slurm executor? */
int slurm_has_subs(const run *r);
int slurm_recover(exec_ctx *x); /* settles submissions whose job id was never recorded */
int slurm_write_scripts(exec_ctx *x, const int *cells, int n, int submit);
int slurm_wait(exec_ctx *x, int once, progress *out);
int slurm_cancel(exec_ctx *x);
/* 1 when a cell of the run is queued or running under a live submission (resume skips it). */
int slurm_cell_in_flight(exec_ctx *x, const char *log);
/* Tasks of the run's Slurm submissions still queued or running (one squeue by job name;
 * nothing is written), or -1 when squeue fails. */
int slurm_live_tasks(const run *r);
/* Lists the cells Slurm requeued (node failure, preemption) with the node that went DOWN, and
 * a line naming those nodes; returns their count. */
int slurm_report_requeued(FILE *out, const run *r);

/* Cells of the run that failed: a log that is not ok/unsupported/oom, or (after a read-only
 * poll) a job that ended without one. */
int run_failed_cells(const run *r);

#endif
