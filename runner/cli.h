/* cli: what repro-run's command files share (main.c parses the options and dispatches to the
 * commands); not part of the runner's library. */
#ifndef RUNNER_CLI_H
#define RUNNER_CLI_H

#include <stdio.h>

#include "executor.h"

typedef struct {
  const char *file, *cluster, *run_dir, *bin, *python, *device, *cases, *gpus;
  int nfilters;
  filter *filters;
  strvec only_args;    /* the --only arguments as given (a run's `select` record) */
  strvec exclude_args; /* the --exclude arguments as given (the same record) */
  strvec set_args;     /* the --set arguments as given (the same record) */
  strvec set_store;    /* the --set values' storage */
  paramlist sets;      /* --set NAME=VALUE, the run's own on --resume/--rerun without --set */
  strvec run_only; /* --resume/--rerun: the --only of the run's select records (ad-hoc values) */
  int dry_run, resume, rerun, no_wait, detach, quiet, jobs, widen, allow_concurrent;
  int cluster_given; /* -c on the command line (not $REPRO_CLUSTER): it overrides a run's */
  executor_kind executor;
  double poll_s;
} options;

/* ---- the commands: their exit status ---- */

/* cmd_run.c: `run` (a new run, or --resume/--rerun of the current one) and `check`. */
int cmd_run(options *o);
int cmd_check(options *o);
/* cmd_status.c: `status` (one read-only poll) and `cancel` (scancel the run's jobs). */
int cmd_status(const char *arg, int cancel);
/* cmd_log.c: `finish RUNDIR LOG TMP RC` (argv: those 4) and `verdict LOG...` (argc >= 1). */
int cmd_finish(char **argv);
int cmd_verdict(int argc, char **argv);

/* cmd_status.c: prints the run's cells (or, with cs, the selected ones) whose logs do not say
 * ok/unsupported/oom; returns their count. */
int report_failures(FILE *out, const run *r, const cellset *cs);

/* ---- resume.c: --resume and --rerun continue a run as it was made ---- */

/* Its case lists, --set values and cluster file (*cases, *cluster: caller frees; NULL: nothing
 * to take), its records' --only in o->run_only; -1 when the run cannot be read. */
int run_recorded(options *o, char **cases, char **cluster);
/* The cluster file of a resume or rerun: -c, else the run's (recorded; "" for none). */
int use_run_cluster(options *o, const char *recorded);
/* Keeps the selected cells of cs to the run's (its `select` records), or widens the run. */
int apply_run_selection(const options *o, cellset *cs, const clusterfile *cluster, run *r);
/* The command line's selection as a `select` record of r; 0 or -1. */
int note_select(const options *o, run *r);
/* The executor a --resume/--rerun continues with (kind: the cluster file's or the machine's). */
executor_kind resumed_executor(const options *o, const run *r, executor_kind kind);

/* ---- runlock.c: one runner per run and per figure folder ---- */

/* Takes run/lock for this process's lifetime; 0 or -1 (said). */
int lock_run(const run *r);
/* Does a runner hold run/lock now? Looks only. */
int run_is_held(const run *r);
/* FIGDIR/runs/.lock: 0 with *fd (or -1 beside another runner when allow), -1 refused. */
int lock_figure(const char *figdir, int allow, int *fd);
/* Says in the figure lock which run its holder works on. */
void lock_figure_note(int fd, const run *r);
/* Refuses (unless allow) while a run of figdir other than `self` has Slurm tasks queued or
 * running; 0 or -1. */
int check_queued_runs(const char *figdir, const char *self, int allow);

#endif
