/* manifest: where a run remembers what it did.
 *
 * A run is a folder figNN/runs/<UTC timestamp>/ with logs/ (one file per finished cell),
 * tmp/ (attempts in progress or killed), err/ (stderr of attempts), attempts/ (replaced
 * logs), jobs/ (array scripts) and `manifest`, an append-only journal of kvline records:
 *
 *   # repro-manifest 1                                   the header, always the first line
 *   run id=20261121T100000Z figure=fig12 file=/abs/experiment.yaml cluster=/abs/c.yaml marker=9f0c...
 *   select device=h100 only="system=fused" exclude="dtype=fp32" set="warmup=5" cases=test
 *                                                        the cells that belong to the run
 *   cell sub=3 task=5 log=kernel.h100.roco.fused.log   cells of submission 3 ...
 *   submit sub=3 executor=slurm group=kernel.h100 jobname=repro-fig12-...-3 held=1   ... submitting
 *   job sub=3 jobid=1234                                 ... its job: sbatch answered, or adopted
 *   release sub=3                                        ... and released (submitted held)
 *   start sub=4 log=... pgid=4242                        local executor: a started cell
 *   cancel sub=3
 *
 * `select` records say which cells belong to the run: the union of the records, each the
 * --device, --only, --exclude, --set and --cases of the command line that created (or, with
 * --widen or an ad-hoc value it named, widened) the run (a resume must name the same --cases
 * and --set). The ad-hoc values an --only names (a ranged axis's) are in its text: a resume
 * adds them again, and a record holds only the ad-hoc cells it named. A journal without one, or with a line that is
 * not one of these records, is refused naming the line: its cells are unknown.
 *
 * Every record is written with one write() and fsync()ed before the action it announces
 * (the `submit` record before sbatch), so a runner killed at any moment leaves a journal that
 * says which submissions may exist; a last line without its newline (a torn record) is
 * ignored, and a writer ends it with a note that the line above is torn.
 *
 * The run's state is its folder's alone: the run folder, manifest, logs/, attempts/ and the
 * other folders are opened without following links (util.h, state_open) and must be a real
 * folder or regular file; otherwise the run is refused, naming the path, before anything is
 * written. */
#ifndef RUNNER_MANIFEST_H
#define RUNNER_MANIFEST_H

#include "util.h"

typedef struct {
  int id;
  char *executor; /* "slurm" or "local" */
  char *group;
  char *jobname;
  char *jobid;  /* NULL until the `job` record */
  int held;     /* submitted held (sbatch --hold): released once its job id is journaled */
  int released; /* the `release` record */
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
  int seen;       /* SEEN_* */
  int misses;     /* polls in a row the job system did not know the cell */
  char ended[24]; /* a read-only poll: the job state of a cell that ended without a log */
} cellrec;

enum { SEEN_NONE, SEEN_PENDING, SEEN_RUNNING, SEEN_OK, SEEN_FAILED };

/* One `select` record: cells of this device (NULL: any) matching any of the filters (none:
 * every cell). */
typedef struct {
  char *device;
  strvec only;    /* --only arguments as given */
  strvec exclude; /* --exclude arguments as given */
  strvec set;     /* --set NAME=VALUE arguments as given (the first record's hold for the run) */
  char *cases;    /* --cases NAME (NULL: the default lists) */
} selection;

/* The length of a run's marker (hex digits). */
#define RUN_MARKER_LEN 32

typedef struct {
  char *dir; /* absolute run folder */
  char *id;
  /* 32 random hex digits drawn when the run is made: its Slurm jobs carry it (--comment, and
   * its first 8 digits in their names), so a job is this run's only when its comment is this
   * marker. NULL in a run made before runs had markers: none of its jobs is adopted by name. */
  char *marker;
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
/* RUN_READ: replay the journal, write nothing (status, looks); RUN_WRITE: also append to it
 * (missing folders are made, a torn last record is ended). */
typedef enum { RUN_READ, RUN_WRITE } run_mode;
/* Opens an existing run and replays its journal; -1 with the reason on stderr (a link, a FIFO,
 * a journal that is not one, naming the path and line), nothing written. */
int run_open(run *r, const char *dir, run_mode mode);
void run_close(run *r);

/* The run figdir/ae_logs points to: 0 with *dir its absolute folder, or NULL when there is
 * no ae_logs; -1 (the reason on stderr) when ae_logs is not a link to runs/<run>/logs. */
int run_current(const char *figdir, char **dir);
/* The run of --run DIR (given, when not NULL) or of figdir's ae_logs: 0 with *dir absolute
 * (NULL: no current run), -1 (the reason on stderr) when it is a link or not a folder. */
int run_locate(const char *given, const char *figdir, char **dir);
/* The run of a `status` argument, a run folder or a figure folder (NULL: "."): 0 with *dir,
 * -1 with the reason on stderr. */
int run_find(const char *arg, char **dir);
/* Points figdir/ae_logs at r's logs (replacing the link atomically): 0; 1 (nothing changed)
 * when r is not in figdir/runs/, a folder ae_logs cannot name; -1 (reason on stderr). */
int run_make_current(const run *r, const char *figdir);

/* Journal writers (each fsynced); -1 on I/O error. */
int run_next_sub(const run *r);
int run_note_cell(run *r, int sub, int task, const char *log);
int run_note_submit(run *r, int sub, const char *executor, const char *group, const char *jobname);
/* A Slurm submission about to be made (held: with sbatch --hold, released after its `job`). */
int run_note_submitting(run *r, int sub, const char *group, const char *jobname, int held);
int run_note_job(run *r, int sub, const char *jobid);
int run_note_release(run *r, int sub);
int run_note_start(run *r, int sub, const char *log, long pgid);
int run_note_cancel(run *r, int sub);
int run_note_select(run *r, const char *device, const strvec *only, const strvec *exclude,
                    const strvec *set, const char *cases);

submission *run_sub(run *r, int id);
cellrec *run_cell(const run *r, const char *log);

/* run/logs/<log> path (caller frees). */
char *run_log_path(const run *r, const char *log);

#endif
