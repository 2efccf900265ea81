/* The Slurm executor: one job array per (experiment, device) and submission, throttled by
 * the array's %N; progress from one squeue call per poll (plus one sacct call, or one scontrol
 * call per array job when there is no accounting, for cells that need their final state),
 * whatever the number of cells. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cellog.h"
#include "executor.h"
#include "jobscript.h"

/* The variable an sbatch of the runner carries in its environment: "<run folder>/<job name>",
 * so that a resumed runner finds an sbatch its killed predecessor left running. */
#define SBATCH_TAG "REPRO_SBATCH_OF"

/* Runs argv and collects its stdout; stderr is shown unless quiet. tag: the SBATCH_TAG
 * value for an sbatch, or NULL. Returns the exit status (0..255), or -1 when it could not
 * run or was killed. */
static int capture_tagged(char *const argv[], sbuf *out, int quiet, const char *tag) {
  int fds[2];
  if (!out->s) sb_add(out, "");
  if (pipe(fds) != 0) return -1;
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    if (quiet) {
      int null = open("/dev/null", O_WRONLY);
      if (null >= 0) dup2(null, 2);
    }
    if (tag) setenv(SBATCH_TAG, tag, 1);
    execvp(argv[0], argv);
    fprintf(stderr, "repro-run: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  close(fds[1]);
  if (tag) test_kill_point("sbatch-started");
  char buf[65536];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) != 0) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    sb_addn(out, buf, (size_t)n);
  }
  close(fds[0]);
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int capture(char *const argv[], sbuf *out, int quiet) {
  return capture_tagged(argv, out, quiet, NULL);
}

int slurm_available(void) {
  const char *path = getenv("PATH");
  if (!path) return 0;
  char *copy = xstrdup(path), *save = NULL;
  int found = 0;
  for (char *dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
    char *p = xasprintf("%s/sbatch", dir);
    found = access(p, X_OK) == 0;
    free(p);
  }
  free(copy);
  return found;
}

/* MaxArraySize from scontrol (array task ids must stay below it); Slurm's default when
 * unknown. REPRO_MAX_ARRAY_SIZE overrides it (tests). */
static int max_array_size(void) {
  static int cached;
  if (cached) return cached;
  cached = 1001;
  const char *env = getenv("REPRO_MAX_ARRAY_SIZE");
  if (env && atoi(env) > 1) return cached = atoi(env);
  sbuf out = {0};
  char *argv[] = {"scontrol", "show", "config", NULL};
  if (slurm_available() && capture(argv, &out, 1) == 0) {
    const char *p = strstr(out.s, "MaxArraySize");
    if (p && (p = strchr(p, '=')) && atoi(p + 1) > 1) cached = atoi(p + 1);
  }
  sb_free(&out);
  return cached;
}

static const cellset *sort_cs; /* qsort has no context argument in C11 */
static int by_group_task(const void *a, const void *b) {
  const cell *x = &sort_cs->cells[*(const int *)a], *y = &sort_cs->cells[*(const int *)b];
  return x->group != y->group ? x->group - y->group : x->task - y->task;
}

/* Does REPRO_SBATCH_ARGS hold the jobs itself (--hold, -H)? Then the user releases them. */
static int user_holds(void) {
  const char *extra = getenv("REPRO_SBATCH_ARGS");
  char *copy = xstrdup(extra ? extra : ""), *save = NULL;
  int holds = 0;
  for (char *w = strtok_r(copy, " ", &save); w && !holds; w = strtok_r(NULL, " ", &save))
    holds = strcmp(w, "--hold") == 0 || strcmp(w, "-H") == 0;
  free(copy);
  return holds;
}

/* The comment every job of run r carries, "repro-run:<marker>" (caller frees), or NULL in a run
 * made before runs had markers. */
static char *run_comment(const run *r) {
  return r->marker ? xasprintf("repro-run:%s", r->marker) : NULL;
}

/* The name of submission sub: "repro-<figure>-<run id>-<marker's first 8 digits>-<sub>". The
 * figure and run id say whose job it is in squeue; the marker's digits keep two figures' runs
 * made in one second apart. Which jobs are the run's is decided by their comment, never by this
 * name alone (job_is_ours). */
static char *run_jobname(const run *r, int sub) {
  if (!r->marker) return xasprintf("repro-%s-%d", r->id, sub);
  return xasprintf("repro-%s-%s-%.8s-%d", r->figure ? r->figure : "run", r->id, r->marker, sub);
}

/* Is a job whose comment squeue or sacct printed one of run r's? Only a run with a marker
 * claims jobs; sacct prints an empty comment when accounting does not keep comments
 * (AccountingStoreFlags without job_comment), and then the name, which holds the marker's
 * digits, stands (empty_ok). */
static int job_is_ours(const run *r, const char *comment, int empty_ok) {
  char *want = run_comment(r);
  int ours = want && (strcmp(comment, want) == 0 || (empty_ok && !*comment));
  free(want);
  return ours;
}

/* Submits script (held: with --hold) and sets *jobid. The sbatch carries SBATCH_TAG, so that
 * a resume finds it when this runner is killed while it blocks. */
static int sbatch(exec_ctx *x, const char *script, const char *jobname, const char *after, int held,
                  char **jobid) {
  char *chdir_arg = xasprintf("--chdir=%s", x->r->dir);
  char *dep = after ? xasprintf("--dependency=afterany:%s", after) : NULL;
  /* REPRO_SBATCH_ARGS: extra sbatch options, split on spaces (--reservation=x, --hold, ...) */
  char *extra = xstrdup(getenv("REPRO_SBATCH_ARGS") ? getenv("REPRO_SBATCH_ARGS") : "");
  char *argv[40], *save = NULL;
  int a = 0;
  argv[a++] = "sbatch";
  argv[a++] = "--parsable";
  argv[a++] = chdir_arg;
  if (held) argv[a++] = "--hold";
  if (dep) argv[a++] = dep;
  for (char *w = strtok_r(extra, " ", &save); w && a < 35; w = strtok_r(NULL, " ", &save))
    argv[a++] = w;
  /* after REPRO_SBATCH_ARGS: the last --comment wins, and the run's must */
  char *comment = run_comment(x->r);
  char *comment_arg = comment ? xasprintf("--comment=%s", comment) : NULL;
  if (comment_arg) argv[a++] = comment_arg;
  argv[a++] = (char *)script;
  argv[a] = NULL;
  sbuf out = {0};
  char *tag = xasprintf("%s/%s", x->r->dir, jobname);
  int rc = capture_tagged(argv, &out, 0, tag);
  free(tag);
  free(comment);
  free(comment_arg);
  free(chdir_arg);
  free(dep);
  free(extra);
  size_t n = strspn(out.s, "0123456789"); /* --parsable: "jobid" or "jobid;cluster" */
  if (rc != 0 || n == 0) {
    fprintf(stderr, "repro-run: sbatch %s failed (exit %d)\n", script, rc);
    sb_free(&out);
    return -1;
  }
  *jobid = xstrndup(out.s, n);
  sb_free(&out);
  return 0;
}

/* Lets the tasks of a held submission run, once its job id is journaled (`release`). A
 * failure leaves them held (the progress line counts them) and the next resume tries again. */
static int release_sub(run *r, const submission *s) {
  sbuf out = {0};
  char *argv[] = {"scontrol", "release", s->jobid, NULL};
  int rc = capture(argv, &out, 0);
  sb_free(&out);
  if (rc != 0) {
    fprintf(stderr, "repro-run: cannot release job %s (scontrol release %s): its tasks stay held\n",
            s->jobid, s->jobid);
    return 0;
  }
  return run_note_release(r, s->id);
}

/* Announces, then submits, one array in two phases: cells journaled, `submit` record (the job
 * name) synced, sbatch --hold, `job` record, then scontrol release and `release` record. A
 * runner killed before the `job` record leaves a submission that slurm_recover settles by
 * its job name before anything is submitted again; its job, held, runs no cell until then. */
static int submit_chunk(exec_ctx *x, int sub, const group *g, const char *jobname,
                        const char *script, const int *cells, const int *tasks, int n,
                        const char *after, char **jobid) {
  for (int i = 0; i < n; i++) {
    const char *log = x->cs->cells[cells[i]].log;
    /* a rerun must not mistake the previous log for its result: move it to attempts/ */
    if (cellog_retire(x->r->dir, log) != 0) {
      fprintf(stderr, "repro-run: cannot move the previous log of %s aside: %s\n", log,
              strerror(errno));
      return -1;
    }
    if (run_note_cell(x->r, sub, tasks[i], log) != 0) return -1;
  }
  int held = !user_holds();
  if (run_note_submitting(x->r, sub, g->name, jobname, held) != 0) return -1;
  test_kill_point("before-sbatch");
  if (sbatch(x, script, jobname, after, held, jobid) != 0) return -1;
  test_kill_point("after-sbatch");
  if (run_note_job(x->r, sub, *jobid) != 0) return -1;
  if (held && release_sub(x->r, run_sub(x->r, sub)) != 0) return -1;
  if (!x->quiet) fprintf(stderr, "submitted %s: job %s, %d cells\n", g->name, *jobid, n);
  return 0;
}

int slurm_write_scripts(exec_ctx *x, const int *cells_in, int n, int submit) {
  int *cells = xmalloc((size_t)(n ? n : 1) * sizeof *cells);
  memcpy(cells, cells_in, (size_t)n * sizeof *cells);
  sort_cs = x->cs;
  qsort(cells, (size_t)n, sizeof *cells, by_group_task);
  int max = max_array_size(), rc = 0, next_sub = run_next_sub(x->r);
  int *tasks = xmalloc((size_t)(n ? n : 1) * sizeof *tasks);
  sbuf text = {0};
  char *prev_job = NULL;
  for (int i = 0; i < n && rc == 0;) {
    /* one chunk: same group, task ids within one window of MaxArraySize */
    const cell *first = &x->cs->cells[cells[i]];
    int chunk = first->task / max, j = i;
    while (j < n && x->cs->cells[cells[j]].group == first->group &&
           x->cs->cells[cells[j]].task / max == chunk) {
      tasks[j] = x->cs->cells[cells[j]].task - chunk * max;
      j++;
    }
    const group *g = &x->cs->groups[first->group];
    const experiment *e = &x->file->exps[g->exp];
    int sub = next_sub++;
    char *jobname = run_jobname(x->r, sub);
    char *script = xasprintf("%s/jobs/%s.%d.sbatch", x->r->dir, g->name, sub);
    jobscript_spec spec = {.run_dir = x->r->dir,
                           .runner = x->runner_path,
                           .jobname = jobname,
                           .dev = x->cluster ? cluster_device(x->cluster, g->device) : NULL,
                           .time_limit_s = e->time_limit_s,
                           .ncells = j - i,
                           .cells = cells + i,
                           .tasks = tasks + i};
    char *err = NULL;
    sb_clear(&text);
    if (jobscript_render(&spec, x->cs, &x->rt, &text, &err) != 0) {
      fprintf(stderr, "repro-run: %s\n", err);
      free(err);
      rc = -1;
    } else if (write_file_atomic(script, text.s, text.len) != 0) {
      fprintf(stderr, "repro-run: cannot write %s: %s\n", script, strerror(errno));
      rc = -1;
    } else if (submit) {
      /* chunks of one group run one after the other, so %N still bounds the group */
      const char *after =
          prev_job && i > 0 && x->cs->cells[cells[i - 1]].group == first->group ? prev_job : NULL;
      char *jobid = NULL;
      rc = submit_chunk(x, sub, g, jobname, script, cells + i, tasks + i, j - i, after, &jobid);
      free(prev_job);
      prev_job = jobid;
    } else if (!x->quiet) {
      fprintf(stderr, "wrote %s (%d cells)\n", script, j - i);
    }
    free(jobname);
    free(script);
    i = j;
  }
  free(prev_job);
  sb_free(&text);
  free(tasks);
  free(cells);
  return rc;
}

/* ---- recovery ------------------------------------------------------------------------- */

/* A job id a task of this submission wrote when it started, or NULL. */
static char *marker_jobid(const run *r, const char *jobname) {
  char *pattern = xasprintf("%s/jobs/%s.jobid.*", r->dir, jobname);
  glob_t g;
  char *jobid = NULL;
  if (glob(pattern, 0, NULL, &g) == 0) {
    char *data = NULL;
    const char *why;
    if (g.gl_pathc > 0 && state_read(g.gl_pathv[0], 64, &data, NULL, &why) == 0) {
      size_t n = strspn(data, "0123456789");
      if (n) jobid = xstrndup(data, n);
    }
    free(data);
    globfree(&g);
  }
  free(pattern);
  return jobid;
}

/* Seconds a resume waits for an sbatch its killed predecessor left running (default 120). */
static double sbatch_wait_s(void) {
  const char *env = getenv("REPRO_SBATCH_WAIT_S");
  return env && atof(env) >= 0 ? atof(env) : 120.0;
}

/* A process of this machine that carries SBATCH_TAG=<run>/<jobname> (an sbatch of a killed
 * runner, or what it runs), or 0. */
static long orphan_sbatch(const run *r, const char *jobname) {
  char *entry = xasprintf("%s=%s/%s", SBATCH_TAG, r->dir, jobname);
  DIR *d = opendir("/proc");
  long found = 0;
  struct dirent *e;
  while (d && !found && (e = readdir(d))) {
    long pid = atol(e->d_name);
    if (pid > 1 && pid != (long)getpid() && proc_env_has(pid, entry)) found = pid;
  }
  if (d) closedir(d);
  free(entry);
  return found;
}

/* Waits (up to sbatch_wait_s) while an sbatch of submission s left by a killed runner still
 * runs here, so that its job, once in Slurm, is found by name and adopted. */
static void wait_orphan_sbatch(const run *r, const submission *s) {
  long pid = orphan_sbatch(r, s->jobname);
  if (!pid) return;
  double limit = sbatch_wait_s(), start = now_seconds();
  fprintf(stderr,
          "repro-run: waiting for the sbatch of submission %d (%s, pid %ld), left running by the "
          "runner that was killed, before asking Slurm about it\n",
          s->id, s->jobname, pid);
  while ((pid = orphan_sbatch(r, s->jobname)) && now_seconds() - start < limit &&
         !exec_interrupted) {
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  if (pid)
    fprintf(stderr,
            "repro-run: the sbatch of submission %d (pid %ld) still runs after %.0f s: not "
            "waiting longer (REPRO_SBATCH_WAIT_S); should its job reach Slurm later, it arrives "
            "held and is cancelled\n",
            s->id, pid, now_seconds() - start);
}

/* The jobs named in names (comma-separated) whose comment is run r's, by squeue: the first
 * field of each (fmt: "%F" job ids, "%i" array tasks) into *ids. states: squeue's -t (NULL:
 * the live states); tasks: one line per array task (-r). In a run made before markers every job
 * of those names is taken: only slurm_live_tasks asks then. 0, or -1 when squeue cannot answer. */
static int squeue_ours(const run *r, const char *names, const char *states, int tasks,
                       const char *fmt, strvec *ids) {
  char *format = xasprintf("%s|%%k", fmt);
  char *argv[12];
  int a = 0;
  argv[a++] = "squeue";
  argv[a++] = "-h";
  if (tasks) argv[a++] = "-r";
  if (states) {
    argv[a++] = "-t";
    argv[a++] = (char *)states;
  }
  argv[a++] = "-n";
  argv[a++] = (char *)names;
  argv[a++] = "-o";
  argv[a++] = format;
  argv[a] = NULL;
  sbuf out = {0};
  int rc = capture(argv, &out, 1);
  char *save = NULL;
  for (char *line = strtok_r(rc == 0 ? out.s : NULL, "\n", &save); rc == 0 && line;
       line = strtok_r(NULL, "\n", &save)) {
    char *bar = strchr(line, '|');
    if (!bar || bar == line) continue;
    *bar = '\0';
    /* a run made before markers: its names are all it has (only counted, never acted on) */
    if ((!r->marker || job_is_ours(r, bar + 1, 0)) && sv_find(ids, line) < 0) sv_push(ids, line);
  }
  sb_free(&out);
  free(format);
  return rc == 0 ? 0 : -1;
}

/* The job of submission s, one of run r's (its comment is r's), from sacct's accounting by
 * name (older jobs than squeue keeps): its id, or NULL when there is none or no accounting. */
static char *sacct_ours(const run *r, const submission *s) {
  char *name = xasprintf("--name=%s", s->jobname), *jobid = NULL;
  char *acct[] = {"sacct",         "-n", "-X", "-P", name, "--starttime=now-90days", "-o",
                  "JobID,Comment", NULL};
  sbuf out = {0};
  char *save = NULL;
  if (capture(acct, &out, 1) == 0) {
    for (char *line = strtok_r(out.s, "\n", &save); line && !jobid;
         line = strtok_r(NULL, "\n", &save)) {
      size_t n = strspn(line, "0123456789");
      if (n && line[n] == '|' && job_is_ours(r, line + n + 1, 1)) jobid = xstrndup(line, n);
    }
  }
  sb_free(&out);
  free(name);
  return jobid;
}

/* The job of a submission whose job id was never journaled: a task's marker file in the run's
 * own jobs/ folder, else a job of that name whose comment is the run's (squeue: pending,
 * running and recently ended jobs; then sacct: older ones, where Slurm keeps accounting). A
 * job that shares the name but not the comment (another run's, or the user's) is never taken.
 * 0 with *jobid (NULL: Slurm has no such job of this run), -1 when squeue cannot answer. */
static int job_by_name(const run *r, const submission *s, char **jobid) {
  if ((*jobid = marker_jobid(r, s->jobname))) return 0;
  if (!r->marker) {
    fprintf(stderr,
            "repro-run: submission %d (%s) has no job id in the journal, and this run was made "
            "before runs marked their jobs: not looking for it by name (a job of that name may be "
            "another run's); its cells will be submitted again\n",
            s->id, s->jobname);
    return 0;
  }
  strvec ids = {0};
  if (squeue_ours(r, s->jobname, "all", 0, "%F", &ids) != 0) {
    fprintf(stderr,
            "repro-run: cannot ask Slurm whether submission %d (%s) exists; not resubmitting\n",
            s->id, s->jobname);
    sv_free(&ids);
    return -1;
  }
  *jobid = ids.n ? xstrdup(ids.v[0]) : sacct_ours(r, s);
  sv_free(&ids);
  return 0;
}

/* Jobs of this run that reached Slurm for a submission already given up (an sbatch that
 * returned after the resume stopped waiting for it): held, they have run nothing; cancelled
 * here, since their cells were submitted again. Only jobs whose comment is the run's. */
static void cancel_late_jobs(const run *r) {
  static strvec done; /* job ids cancelled by this runner */
  sbuf names = {0};
  for (int i = 0; i < r->nsubs; i++) {
    const submission *s = &r->subs[i];
    if (s->executor && strcmp(s->executor, "slurm") == 0 && s->cancelled && !s->jobid && s->jobname)
      sb_addf(&names, "%s%s", names.len ? "," : "", s->jobname);
  }
  strvec ids = {0};
  if (names.len && r->marker && squeue_ours(r, names.s, NULL, 0, "%F", &ids) == 0) {
    for (int i = 0; i < ids.n; i++) {
      if (sv_find(&done, ids.v[i]) >= 0) continue;
      sbuf sc = {0};
      char *cancel[] = {"scancel", ids.v[i], NULL};
      if (capture(cancel, &sc, 0) == 0) {
        fprintf(stderr,
                "repro-run: job %s of this run reached Slurm after its submission was given up; "
                "cancelled it (its cells were submitted again)\n",
                ids.v[i]);
        sv_push(&done, ids.v[i]);
      }
      sb_free(&sc);
    }
  }
  sv_free(&ids);
  sb_free(&names);
}

int slurm_recover(exec_ctx *x) {
  run *r = x->r;
  for (int i = 0; i < r->nsubs; i++) {
    submission *s = &r->subs[i];
    if (!s->executor || strcmp(s->executor, "slurm") != 0 || s->cancelled) continue;
    if (!s->jobid) {
      wait_orphan_sbatch(r, s);
      char *jobid = NULL;
      if (job_by_name(r, s, &jobid) != 0) return -1;
      if (jobid) {
        fprintf(stderr,
                "repro-run: submission %d reached Slurm as job %s before the runner stopped: "
                "adopted\n",
                s->id, jobid);
        int rc = run_note_job(r, s->id, jobid);
        free(jobid);
        if (rc != 0) return -1;
      } else {
        fprintf(stderr,
                "repro-run: submission %d never reached Slurm; its cells will be submitted "
                "again\n",
                s->id);
        if (run_note_cancel(r, s->id) != 0) return -1;
      }
    }
    if (s->jobid && s->held && !s->released && release_sub(r, s) != 0) return -1;
  }
  cancel_late_jobs(r);
  return 0;
}

/* ---- polling -------------------------------------------------------------------------- */

/* Final and live job states, as squeue/sacct/scontrol print them. */
static int state_is_final(const char *s) {
  static const char *const final[] = {"COMPLETED", "FAILED",    "TIMEOUT",   "OUT_OF_MEMORY",
                                      "NODE_FAIL", "CANCELLED", "PREEMPTED", "BOOT_FAIL",
                                      "DEADLINE",  NULL};
  for (const char *const *f = final; *f; f++)
    if (strncmp(s, *f, strlen(*f)) == 0) return 1;
  return 0;
}

static int state_is_running(const char *s) {
  return strcmp(s, "RUNNING") == 0 || strcmp(s, "COMPLETING") == 0 || strcmp(s, "SIGNALING") == 0 ||
         strcmp(s, "STAGE_OUT") == 0;
}

/* States of the tasks of the polled submissions, indexed [sub slot][task]. */
typedef struct {
  int n;
  submission **subs;
  int *ntasks;
  char ***state; /* owned strings */
  char ***exitcode;
} taskstates;

static int ts_slot(const taskstates *t, const char *jobid) {
  for (int i = 0; i < t->n; i++)
    if (strcmp(t->subs[i]->jobid, jobid) == 0) return i;
  return -1;
}

static void ts_set(taskstates *t, int slot, int task, const char *state, const char *exitcode) {
  if (task < 0 || task >= t->ntasks[slot]) return;
  if (state) {
    free(t->state[slot][task]);
    t->state[slot][task] = xstrdup(state);
  }
  if (exitcode) {
    free(t->exitcode[slot][task]);
    t->exitcode[slot][task] = xstrdup(exitcode);
  }
}

static void ts_free(taskstates *t) {
  for (int i = 0; i < t->n; i++) {
    for (int k = 0; k < t->ntasks[i]; k++) {
      free(t->state[i][k]);
      free(t->exitcode[i][k]);
    }
    free(t->state[i]);
    free(t->exitcode[i]);
  }
  free(t->subs);
  free(t->ntasks);
  free(t->state);
  free(t->exitcode);
}

/* Parses "1234_5", "1234_[5-9,11]" (state applies to each) from squeue/sacct. */
static void ts_apply_id(taskstates *t, const char *id, const char *state, const char *exitcode) {
  const char *us = strchr(id, '_');
  if (!us) return;
  char *jobid = xstrndup(id, (size_t)(us - id));
  int slot = ts_slot(t, jobid);
  free(jobid);
  if (slot < 0) return;
  const char *p = us + 1;
  if (*p != '[') {
    ts_set(t, slot, atoi(p), state, exitcode);
    return;
  }
  for (p++; *p && *p != ']';) {
    char *end;
    long a = strtol(p, &end, 10), b = a;
    if (end == p) break;
    p = end;
    if (*p == '-') b = strtol(p + 1, (char **)&p, 10);
    for (long k = a; k <= b && k - a < 1000000; k++) ts_set(t, slot, (int)k, state, exitcode);
    if (*p == '%') break;
    if (*p == ',') p++;
  }
}

static void join_jobids(const taskstates *t, sbuf *ids) {
  for (int i = 0; i < t->n; i++) sb_addf(ids, "%s%s", i ? "," : "", t->subs[i]->jobid);
}

static void query_squeue(taskstates *t) {
  sbuf ids = {0}, out = {0};
  join_jobids(t, &ids);
  char *argv[] = {"squeue", "-h", "-r", "-t", "all", "-j", ids.s, "-o", "%i|%T|%r", NULL};
  capture(argv, &out, 1); /* fails when no job is known any more: nothing to apply */
  char *save = NULL;
  for (char *line = strtok_r(out.s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char *bar = strchr(line, '|');
    if (!bar) continue;
    *bar = '\0';
    char *state = bar + 1, *reason = strchr(state, '|');
    if (reason) *reason++ = '\0';
    /* a held task (e.g. "launch failed requeued held") waits for `scontrol release` */
    if (reason && strstr(reason, "held") && strcmp(state, "PENDING") == 0) state = "HELD";
    ts_apply_id(t, line, state, NULL);
  }
  sb_free(&ids);
  sb_free(&out);
}

/* Final states and exit codes: sacct when accounting exists, else scontrol per array job. */
static void query_final(taskstates *t, const int *need_slot) {
  sbuf ids = {0}, out = {0};
  join_jobids(t, &ids);
  char *argv[] = {"sacct", "-n", "-P", "-X", "-j", ids.s, "-o", "JobID,State,ExitCode", NULL};
  int found = 0;
  if (capture(argv, &out, 1) == 0) {
    char *save = NULL;
    for (char *line = strtok_r(out.s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
      char *f[3] = {line, NULL, NULL};
      for (int k = 1; k < 3 && f[k - 1]; k++)
        if ((f[k] = strchr(f[k - 1], '|'))) *f[k]++ = '\0';
      if (!f[2]) continue;
      char *sp = strchr(f[1], ' '); /* "CANCELLED by 0" */
      if (sp) *sp = '\0';
      ts_apply_id(t, f[0], f[1], f[2]);
      found++;
    }
  }
  sb_free(&ids);
  if (found) {
    sb_free(&out);
    return;
  }
  for (int i = 0; i < t->n; i++) {
    if (!need_slot[i]) continue;
    sb_clear(&out);
    char *sc[] = {"scontrol", "show", "job", "-o", t->subs[i]->jobid, NULL};
    if (capture(sc, &out, 1) != 0) continue;
    char *save = NULL;
    for (char *line = strtok_r(out.s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
      char *task = strstr(line, " ArrayTaskId="), *st = strstr(line, " JobState="),
           *ex = strstr(line, " ExitCode=");
      if (!task || !st) continue;
      char state[64] = "", code[32] = "";
      sscanf(st + 10, "%63[^ ]", state);
      if (ex) sscanf(ex + 10, "%31[^ ]", code);
      char id[96];
      snprintf(id, sizeof id, "%s_%.*s", t->subs[i]->jobid, (int)strcspn(task + 13, " "),
               task + 13);
      ts_apply_id(t, id, state, code[0] ? code : NULL);
    }
  }
  sb_free(&out);
}

static void count_log(const run *r, cellrec *c) {
  char *path = run_log_path(r, c->log);
  char status[64];
  if (cellog_status(path, status, sizeof status) == 0)
    c->seen = cellog_status_good(status) ? SEEN_OK : SEEN_FAILED;
  free(path);
}

/* One look at every cell of the run: logs first, then one squeue for the rest. Cells whose
 * job ended without a log get one (the runner's result line says how it ended). */
static int poll_once(exec_ctx *x, int finalize_unknown, progress *p) {
  run *r = x->r;
  taskstates t = {0};
  memset(p, 0, sizeof *p);
  for (int i = 0; i < r->cap; i++) {
    cellrec *c = &r->cells[i];
    if (!c->log) continue;
    submission *s = run_sub(r, c->sub);
    if (!s || !s->executor || strcmp(s->executor, "slurm") != 0) continue;
    p->total++;
    if (c->seen != SEEN_OK && c->seen != SEEN_FAILED) count_log(r, c);
    if (c->seen == SEEN_OK || c->seen == SEEN_FAILED || !s->jobid || s->cancelled) continue;
    if (ts_slot(&t, s->jobid) >= 0) continue;
    int maxtask = 0;
    for (int k = 0; k < s->ncells; k++) maxtask = s->tasks[k] > maxtask ? s->tasks[k] : maxtask;
    t.subs = xrealloc(t.subs, (size_t)(t.n + 1) * sizeof *t.subs);
    t.ntasks = xrealloc(t.ntasks, (size_t)(t.n + 1) * sizeof *t.ntasks);
    t.state = xrealloc(t.state, (size_t)(t.n + 1) * sizeof *t.state);
    t.exitcode = xrealloc(t.exitcode, (size_t)(t.n + 1) * sizeof *t.exitcode);
    t.subs[t.n] = s;
    t.ntasks[t.n] = maxtask + 1;
    t.state[t.n] = xcalloc((size_t)maxtask + 1, sizeof(char *));
    t.exitcode[t.n] = xcalloc((size_t)maxtask + 1, sizeof(char *));
    t.n++;
  }
  if (t.n) query_squeue(&t);
  /* which arrays have cells that ended (or vanished) without a log */
  int *need = xcalloc((size_t)(t.n ? t.n : 1), sizeof *need), any = 0;
  for (int i = 0; i < r->cap; i++) {
    cellrec *c = &r->cells[i];
    submission *s = c->log ? run_sub(r, c->sub) : NULL;
    if (!s || !s->jobid || c->seen == SEEN_OK || c->seen == SEEN_FAILED) continue;
    int slot = ts_slot(&t, s->jobid);
    if (slot < 0) continue;
    const char *st = t.state[slot][c->task];
    if (!st || state_is_final(st)) need[slot] = any = 1;
  }
  if (any) query_final(&t, need);
  for (int i = 0; i < r->cap; i++) {
    cellrec *c = &r->cells[i];
    submission *s = c->log ? run_sub(r, c->sub) : NULL;
    if (!s || !s->executor || strcmp(s->executor, "slurm") != 0) continue;
    if (c->seen != SEEN_OK && c->seen != SEEN_FAILED && s->jobid && !s->cancelled) {
      int slot = ts_slot(&t, s->jobid);
      const char *st = slot >= 0 ? t.state[slot][c->task] : NULL;
      const char *code = slot >= 0 ? t.exitcode[slot][c->task] : NULL;
      c->seen = SEEN_PENDING;
      if (st && state_is_final(st)) {
        count_log(r, c); /* the task may have finished its log since we looked */
        if (c->seen != SEEN_OK && c->seen != SEEN_FAILED && x->readonly) {
          c->seen = SEEN_FAILED; /* ended without a log: the next runner writes it */
          snprintf(c->ended, sizeof c->ended, "%s", st);
        } else if (c->seen != SEEN_OK && c->seen != SEEN_FAILED) {
          cellog_finish(r->dir, c->log, NULL, -1, st, code, NULL);
          count_log(r, c);
        }
      } else if (st) {
        c->misses = 0;
        c->seen = state_is_running(st) ? SEEN_RUNNING : SEEN_PENDING;
        if (strcmp(st, "HELD") == 0 || strcmp(st, "REQUEUE_HOLD") == 0) p->held++;
      } else if (++c->misses >= 3 && finalize_unknown && !x->readonly) {
        count_log(r, c);
        if (c->seen != SEEN_OK && c->seen != SEEN_FAILED) {
          cellog_finish(
              r->dir, c->log, NULL, -1, "UNKNOWN", NULL,
              "the job left the queue without a log and Slurm keeps no record of how it ended");
          count_log(r, c);
        }
      } else {
        p->unknown++;
      }
    } else if (c->seen != SEEN_OK && c->seen != SEEN_FAILED) {
      c->seen = SEEN_NONE; /* submitted but never reached Slurm, or cancelled before */
    }
    switch (c->seen) {
    case SEEN_OK: p->ok++; break;
    case SEEN_FAILED: p->failed++; break;
    case SEEN_RUNNING: p->running++; break;
    case SEEN_PENDING: p->pending++; break;
    default: break;
    }
  }
  free(need);
  ts_free(&t);
  return 0;
}

int slurm_live_tasks(const run *r) {
  sbuf names = {0};
  for (int i = 0; i < r->nsubs; i++) {
    const submission *s = &r->subs[i];
    if (!s->executor || strcmp(s->executor, "slurm") != 0 || s->cancelled || !s->jobname) continue;
    /* only submissions with a cell still without a log can have tasks in the queue */
    int open = 0;
    for (int k = 0; k < s->ncells && !open; k++) {
      char *path = run_log_path(r, s->logs[k]);
      open = !file_exists(path);
      free(path);
    }
    if (open) sb_addf(&names, "%s%s", names.len ? "," : "", s->jobname);
  }
  if (!names.len) {
    sb_free(&names);
    return 0;
  }
  /* by name: unlike -j, unknown names are no error; the default states are the live ones */
  strvec tasks = {0};
  int rc = squeue_ours(r, names.s, NULL, 1, "%i", &tasks), n = tasks.n;
  sv_free(&tasks);
  sb_free(&names);
  return rc == 0 ? n : -1;
}

/* ---- requeues -------------------------------------------------------------------------- */

enum { ENDED_UNKNOWN, ENDED_NODE_FAILURE, ENDED_PREEMPTED };

/* What ended an attempt, from the words srun and slurmstepd leave at the end of its stderr or
 * of the task's Slurm output ("srun: error: Node failure on NODE", "*** JOB 3 ON NODE
 * CANCELLED AT ... DUE TO NODE FAILURE ***", "... DUE TO PREEMPTION ***"), with the node.
 * Only the file's last 16 KiB are read. */
static int attempt_cause(const char *path, char *node, size_t cap) {
  const char *why;
  int fd = state_open(path, O_RDONLY, 0, STATE_FILE, &why), cause = ENDED_UNKNOWN;
  if (fd < 0) return cause;
  char buf[16384];
  off_t size = lseek(fd, 0, SEEK_END),
        from = size > (off_t)sizeof buf - 1 ? size - (off_t)sizeof buf + 1 : 0;
  ssize_t n = pread(fd, buf, sizeof buf - 1, from);
  close(fd);
  buf[n > 0 ? n : 0] = '\0';
  char *save = NULL, name[128];
  for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    const char *p = strstr(line, "Node failure on "), *on = strstr(line, " ON ");
    if (p && sscanf(p + 16, "%127[A-Za-z0-9._-]", name) == 1) {
      cause = ENDED_NODE_FAILURE;
    } else if (on && strstr(line, "CANCELLED AT") &&
               sscanf(on + 4, "%127[A-Za-z0-9._-]", name) == 1) {
      if (strstr(line, "DUE TO NODE FAILURE"))
        cause = ENDED_NODE_FAILURE;
      else if (strstr(line, "DUE TO PREEMPTION"))
        cause = ENDED_PREEMPTED;
      else
        continue;
    } else {
      continue;
    }
    snprintf(node, cap, "%s", name);
  }
  return cause;
}

/* How the killed attempts of a requeued cell ended: its attempts' stderr, then the task's
 * Slurm output. */
static int requeue_cause(const run *r, const cellrec *c, const submission *s, int restarts,
                         char *node, size_t cap) {
  int cause = ENDED_UNKNOWN;
  for (int k = 0; k < restarts && cause == ENDED_UNKNOWN; k++) {
    char *err = xasprintf("%s/err/%s.%s_%d.r%d", r->dir, c->log, s->jobid, c->task, k);
    cause = attempt_cause(err, node, cap);
    free(err);
  }
  if (cause == ENDED_UNKNOWN) {
    char *out = xasprintf("%s/slurm/%s_%d.out", r->dir, s->jobid, c->task);
    cause = attempt_cause(out, node, cap);
    free(out);
  }
  return cause;
}

/* The highest restart count among a cell's attempts under its job: each attempt leaves
 * err/<log>.<job>_<task>.r<restart>. */
static int cell_restarts(const run *r, const cellrec *c, const submission *s) {
  char *prefix = xasprintf("%s/err/%s.%s_%d.r", r->dir, c->log, s->jobid, c->task);
  char *pattern = xasprintf("%s*", prefix);
  size_t plen = strlen(prefix);
  glob_t g;
  int restarts = 0;
  if (glob(pattern, 0, NULL, &g) == 0) {
    for (size_t k = 0; k < g.gl_pathc; k++) {
      int rk = atoi(g.gl_pathv[k] + plen);
      if (rk > restarts) restarts = rk;
    }
    globfree(&g);
  }
  free(prefix);
  free(pattern);
  return restarts;
}

int slurm_report_requeued(FILE *out, const run *r) {
  int n = 0;
  strvec down = {0};
  for (int i = 0; i < r->cap; i++) {
    const cellrec *c = &r->cells[i];
    const submission *s = c->log ? run_sub((run *)r, c->sub) : NULL;
    if (!s || !s->jobid || !s->executor || strcmp(s->executor, "slurm") != 0) continue;
    int restarts = cell_restarts(r, c, s);
    if (restarts == 0) continue;
    char node[128] = "";
    int cause = requeue_cause(r, c, s, restarts, node, sizeof node);
    if (cause == ENDED_NODE_FAILURE && sv_find(&down, node) < 0) sv_push(&down, node);
    if (n++ >= 30) continue;
    fprintf(out, "  requeued   %d time%s  %s: ", restarts, restarts > 1 ? "s" : "", c->log);
    if (cause == ENDED_NODE_FAILURE)
      fprintf(out, "node failure: %s went DOWN; ", node);
    else if (cause == ENDED_PREEMPTED)
      fprintf(out, "preempted on %s; ", node);
    else
      fprintf(out, "a node failure or a preemption; ");
    fprintf(out, "Slurm ran it again under job %s_%d (the killed attempt%s in tmp/)\n", s->jobid,
            c->task, restarts > 1 ? "s are" : " is");
  }
  if (n > 30) fprintf(out, "  ... and %d more requeued\n", n - 30);
  if (n) {
    fprintf(out, "%d cell%s requeued by Slurm", n, n > 1 ? "s" : "");
    if (down.n) {
      fprintf(out, "; nodes that went DOWN:");
      for (int k = 0; k < down.n; k++) fprintf(out, " %s", down.v[k]);
      fputc('\n', out);
    } else {
      fprintf(out, " (node failure or preemption)\n");
    }
  }
  sv_free(&down);
  return n;
}

int slurm_cell_in_flight(exec_ctx *x, const char *log) {
  const cellrec *c = run_cell(x->r, log);
  return c && (c->seen == SEEN_PENDING || c->seen == SEEN_RUNNING);
}

static int ask_yes(const char *question) {
  fprintf(stderr, "%s [y/N] ", question);
  fflush(stderr);
  char line[16];
  if (!fgets(line, sizeof line, stdin)) return 0;
  return line[0] == 'y' || line[0] == 'Y';
}

int slurm_cancel(exec_ctx *x) {
  run *r = x->r;
  sbuf ids = {0};
  for (int i = 0; i < r->nsubs; i++) {
    submission *s = &r->subs[i];
    if (!s->jobid || s->cancelled || !s->executor || strcmp(s->executor, "slurm") != 0) continue;
    sb_addf(&ids, "%s ", s->jobid);
  }
  if (!ids.len) {
    sb_free(&ids);
    return 0;
  }
  char *argv[64] = {"scancel"};
  int a = 1, rc = 0;
  char *save = NULL;
  for (char *id = strtok_r(ids.s, " ", &save); id; id = strtok_r(NULL, " ", &save)) {
    argv[a++] = id;
    if (a == 63 || !save || !*save) {
      argv[a] = NULL;
      sbuf out = {0};
      if (capture(argv, &out, 0) != 0) rc = -1;
      sb_free(&out);
      a = 1;
    }
  }
  sb_free(&ids);
  fprintf(stderr, "repro-run: cancelled the run's jobs; waiting for Slurm to record it\n");
  /* give Slurm a few polls to move the cells to CANCELLED, so their logs say so */
  for (int k = 0; k < 20; k++) {
    progress p;
    poll_once(x, 1, &p);
    if (p.running + p.pending + p.unknown == 0) break;
    sleep(1);
  }
  return rc;
}

static void sleep_poll(double seconds) {
  double until = now_seconds() + seconds;
  while (!exec_interrupted && now_seconds() < until) {
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
}

int slurm_wait(exec_ctx *x, int once, progress *out) {
  double started = now_seconds();
  for (int first = 1;; first = 0) {
    progress p;
    poll_once(x, !once, &p);
    if (once && first) x->base_done = p.ok + p.failed; /* a look, not a pace */
    int open = p.running + p.pending + p.unknown;
    if (once || open == 0) {
      progress_print(x, &p, started, 1);
      *out = p;
      return 0;
    }
    progress_print(x, &p, started, 0);
    if (!x->readonly) cancel_late_jobs(x->r);
    sleep_poll(x->poll_s);
    if (!exec_interrupted) continue;
    if (!x->detach && isatty(0) && ask_yes("\nCancel the submitted jobs?")) {
      slurm_cancel(x);
    } else {
      fprintf(stderr,
              "\nrepro-run: the jobs keep running; `repro-run status %s` shows them later\n",
              x->r->dir);
    }
    *out = p;
    return 130;
  }
}
