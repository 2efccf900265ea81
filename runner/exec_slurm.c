/* The Slurm executor: one job array per (experiment, device) and submission, throttled by
 * the array's %N; progress from one squeue call per poll (plus one sacct call, or one scontrol
 * call per array job when there is no accounting, for cells that need their final state),
 * whatever the number of cells. */
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

/* Runs argv and collects its stdout; stderr is shown unless quiet. Returns the exit status
 * (0..255), or -1 when it could not run or was killed. */
static int capture(char *const argv[], sbuf *out, int quiet) {
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
    execvp(argv[0], argv);
    fprintf(stderr, "repro-run: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  close(fds[1]);
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

static int sbatch(exec_ctx *x, const char *script, const char *after, char **jobid) {
  char *chdir_arg = xasprintf("--chdir=%s", x->r->dir);
  char *dep = after ? xasprintf("--dependency=afterany:%s", after) : NULL;
  /* REPRO_SBATCH_ARGS: extra sbatch options, split on spaces (--reservation=x, --hold, ...) */
  char *extra = xstrdup(getenv("REPRO_SBATCH_ARGS") ? getenv("REPRO_SBATCH_ARGS") : "");
  char *argv[40], *save = NULL;
  int a = 0;
  argv[a++] = "sbatch";
  argv[a++] = "--parsable";
  argv[a++] = chdir_arg;
  if (dep) argv[a++] = dep;
  for (char *w = strtok_r(extra, " ", &save); w && a < 36; w = strtok_r(NULL, " ", &save))
    argv[a++] = w;
  argv[a++] = (char *)script;
  argv[a] = NULL;
  sbuf out = {0};
  int rc = capture(argv, &out, 0);
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

/* Announces, then submits, one array: cells journaled, `submit` record synced, sbatch, `job`
 * record. A runner killed between the last two leaves a submission without a job id, which
 * slurm_recover settles from the job name before anything is submitted again. */
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
  if (run_note_submit(x->r, sub, "slurm", g->name, jobname) != 0) return -1;
  test_kill_point("before-sbatch");
  if (sbatch(x, script, after, jobid) != 0) return -1;
  test_kill_point("after-sbatch");
  if (run_note_job(x->r, sub, *jobid) != 0) return -1;
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
    char *jobname = xasprintf("repro-%s-%d", x->r->id, sub);
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
    if (g.gl_pathc > 0 && read_file(g.gl_pathv[0], &data, NULL) == 0) {
      size_t n = strspn(data, "0123456789");
      if (n) jobid = xstrndup(data, n);
    }
    free(data);
    globfree(&g);
  }
  free(pattern);
  return jobid;
}

int slurm_recover(exec_ctx *x) {
  run *r = x->r;
  for (int i = 0; i < r->nsubs; i++) {
    submission *s = &r->subs[i];
    if (!s->executor || strcmp(s->executor, "slurm") != 0 || s->jobid || s->cancelled) continue;
    char *jobid = marker_jobid(r, s->jobname);
    if (!jobid) {
      /* squeue -t all lists pending, running and recently finished jobs by name */
      sbuf out = {0};
      char *argv[] = {"squeue", "-h", "-t", "all", "-n", s->jobname, "-o", "%F", NULL};
      int rc = capture(argv, &out, 1);
      if (rc != 0) {
        fprintf(stderr,
                "repro-run: cannot ask Slurm whether submission %d (%s) exists; not resubmitting\n",
                s->id, s->jobname);
        sb_free(&out);
        return -1;
      }
      size_t n = strspn(out.s, "0123456789");
      if (n) jobid = xstrndup(out.s, n);
      sb_free(&out);
    }
    if (jobid) {
      fprintf(stderr,
              "repro-run: submission %d reached Slurm as job %s before the runner stopped\n", s->id,
              jobid);
      if (run_note_job(r, s->id, jobid) != 0) {
        free(jobid);
        return -1;
      }
      free(jobid);
    } else {
      fprintf(stderr,
              "repro-run: submission %d never reached Slurm; its cells will be submitted again\n",
              s->id);
      if (run_note_cancel(r, s->id) != 0) return -1;
    }
  }
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
        if (c->seen != SEEN_OK && c->seen != SEEN_FAILED) {
          cellog_finish(r->dir, c->log, NULL, -1, st, code, NULL);
          count_log(r, c);
        }
      } else if (st) {
        c->misses = 0;
        c->seen = state_is_running(st) ? SEEN_RUNNING : SEEN_PENDING;
        if (strcmp(st, "HELD") == 0 || strcmp(st, "REQUEUE_HOLD") == 0) p->held++;
      } else if (++c->misses >= 3 && finalize_unknown) {
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
  sbuf names = {0}, out = {0};
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
  char *argv[] = {"squeue", "-h", "-r", "-n", names.s, "-o", "%i", NULL};
  int rc = capture(argv, &out, 1), n = 0;
  for (char *p = out.s; rc == 0 && p && *p; p++) n += *p == '\n';
  sb_free(&names);
  sb_free(&out);
  return rc == 0 ? n : -1;
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
