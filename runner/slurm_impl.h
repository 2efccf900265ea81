/* slurm_impl: what the Slurm executor's files share (exec_slurm.c, slurm_query.c,
 * slurm_submit.c, slurm_adopt.c); not part of the runner's interface (executor.h). */
#ifndef RUNNER_SLURM_IMPL_H
#define RUNNER_SLURM_IMPL_H

#include "executor.h"

/* The variable an sbatch of the runner carries in its environment: "<run folder>/<job name>",
 * so that a resumed runner finds an sbatch its killed predecessor left running. */
#define SBATCH_TAG "REPRO_SBATCH_OF"

/* ---- slurm_query.c: Slurm's commands and their answers ---- */

/* Runs argv and collects its stdout (stderr shown unless quiet); tag: the SBATCH_TAG value of
 * an sbatch, or NULL. The exit status (0..255), or -1 when it could not run or was killed. */
int slurm_capture_tagged(char *const argv[], sbuf *out, int quiet, const char *tag);
int slurm_capture(char *const argv[], sbuf *out, int quiet);
/* "repro-run:<marker>", the comment of every job of run r (caller frees), or NULL (no marker). */
char *slurm_run_comment(const run *r);
/* Is a job whose comment squeue or sacct printed one of run r's? (empty_ok: sacct's empty
 * comment, where accounting keeps none, lets the name stand.) */
int slurm_job_is_ours(const run *r, const char *comment, int empty_ok);
/* The run's jobs among those named in names (comma-separated), by squeue (-t states, NULL: the
 * live ones; tasks: -r), the first field of fmt into *ids; 0, or -1 when squeue cannot answer. */
int slurm_squeue_ours(const run *r, const char *names, const char *states, int tasks,
                      const char *fmt, strvec *ids);
/* The job of submission s by name from sacct, one of run r's, or NULL. */
char *slurm_sacct_ours(const run *r, const submission *s);
/* Final (COMPLETED, FAILED, TIMEOUT, ...) and running job states. */
int slurm_state_final(const char *s);
int slurm_state_running(const char *s);

/* States of the tasks of the polled submissions, indexed [sub slot][task]. */
typedef struct {
  int n;
  submission **subs;
  int *ntasks;
  char ***state; /* owned strings */
  char ***exitcode;
} taskstates;

/* The slot of job jobid, or -1. */
int ts_slot(const taskstates *t, const char *jobid);
/* A slot for submission s (its tasks' states unknown). */
void ts_add(taskstates *t, submission *s);
void ts_free(taskstates *t);
/* The states of every task of t's jobs: one squeue (a held task: "HELD"). */
void ts_query_squeue(taskstates *t);
/* Final states and exit codes: sacct when accounting exists, else scontrol per array job of
 * need_slot. */
void ts_query_final(taskstates *t, const int *need_slot);

/* ---- slurm_submit.c ---- */

/* scontrol release of a held submission, then its `release` record; a failure is said and
 * leaves the tasks held (0). */
int slurm_release(run *r, const submission *s);

/* ---- slurm_adopt.c ---- */

/* Cancels the run's jobs that reached Slurm for a submission already given up. */
void slurm_cancel_late_jobs(const run *r);

#endif
