/* manifest: where a run remembers what it did.
 *
 * A run is a folder figNN/runs/<UTC timestamp>/ with logs/ (one file per finished cell),
 * tmp/ (attempts in progress or killed), err/ (stderr of attempts), attempts/ (replaced
 * logs), jobs/ (array scripts) and `manifest`, an append-only journal of kvline records:
 *
 *   run id=20261121T100000Z figure=fig12 file=/abs/experiment.yaml cluster=/abs/c.yaml
 *   cell sub=3 task=5 log=kernel.h100.roco.fused.log   cells of submission 3 ...
 *   submit sub=3 executor=slurm group=kernel.h100 jobname=repro-...-3 ncells=7
 *   job sub=3 jobid=1234                                 ... after sbatch answered
 *   start sub=4 log=... pgid=4242                        local executor: a started cell
 *   cancel sub=3
 *   select device=h100 only="system=fused" cases=test    the cells that belong to the run
 *
 * `select` records say which cells belong to the run: the union of the records, each the
 * --device, --only and --cases of the command line that created (or, with --widen, widened)
 * the run (a resume must name the same --cases); a run without one (older runs) is the whole matrix.
 *
 * Every record is written with one write() and fsync()ed before the action it announces
 * (the `submit` record before sbatch), so a runner killed at any moment leaves a journal that
 * says which submissions may exist; a last line without its newline is ignored. */
#ifndef RUNNER_MANIFEST_H
#define RUNNER_MANIFEST_H

#include "util.h"

typedef struct {
  int id;
  char *executor; /* "slurm" or "local" */
  char *group;
  char *jobname;
  char *jobid; /* NULL until the `job` record */
  int cancelled;
  int ncells;
  char **logs; /* the cells of this submission */
  int *tasks;  /* their array task ids */
} submission;

typedef struct {
  char *log;
  int sub; /* latest submission that ran this cell, -1 none */
  int task;
  long pgid; /* local executor: process group of its latest start, 0 none */
  /* what the last poll saw (not journaled) */
  int seen;   /* SEEN_* */
  int misses; /* polls in a row the job system did not know the cell */
} cellrec;

enum { SEEN_NONE, SEEN_PENDING, SEEN_RUNNING, SEEN_OK, SEEN_FAILED };

/* One `select` record: cells of this device (NULL: any) matching any of the filters (none:
 * every cell). */
typedef struct {
  char *device;
  strvec only; /* --only arguments as given */
  char *cases; /* --cases NAME (NULL: the default lists) */
} selection;

typedef struct {
  char *dir; /* absolute run folder */
  char *id;
  char *file, *cluster, *figure;
  int fd; /* journal, O_APPEND */
  int nsubs;
  submission *subs;
  /* log name -> cellrec, open addressing */
  int cap, count;
  cellrec *cells;
  /* cells of the submission being announced, not yet sealed by its `submit` record */
  int pending_sub;
  int nselects; /* 0: the run was made before runs remembered their selection */
  selection *selects;
} run;

/* Creates figdir/runs/<prefix><timestamp>/ with its folders and journal. */
int run_create(run *r, const char *figdir, const char *prefix, const char *figure, const char *file,
               const char *cluster);
/* Opens an existing run and replays its journal. */
int run_open(run *r, const char *dir);
void run_close(run *r);

/* The run figdir/ae_logs points to (absolute folder), or NULL. */
char *run_current(const char *figdir);
/* Points figdir/ae_logs at r's logs (replacing the link atomically). */
int run_make_current(const run *r, const char *figdir);

/* Journal writers (each fsynced); -1 on I/O error. */
int run_next_sub(const run *r);
int run_note_cell(run *r, int sub, int task, const char *log);
int run_note_submit(run *r, int sub, const char *executor, const char *group, const char *jobname);
int run_note_job(run *r, int sub, const char *jobid);
int run_note_start(run *r, int sub, const char *log, long pgid);
int run_note_cancel(run *r, int sub);
int run_note_select(run *r, const char *device, const strvec *only, const char *cases);

submission *run_sub(run *r, int id);
cellrec *run_cell(const run *r, const char *log);

/* run/logs/<log> path (caller frees). */
char *run_log_path(const run *r, const char *log);

#endif
