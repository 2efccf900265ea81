/* slurm_submit: cells become submitted job arrays: a chunk per group and window of
 * MaxArraySize, its script written, then two-phase submission (`submit` record, sbatch --hold,
 * `job` record, scontrol release, `release` record). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cellog.h"
#include "jobscript.h"
#include "slurm_impl.h"

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
  if (slurm_available() && slurm_capture(argv, &out, 1) == 0) {
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

/* The name of submission sub: "repro-<figure>-<run id>-<marker's first 8 digits>-<sub>". The
 * figure and run id say whose job it is in squeue; the marker's digits keep two figures' runs
 * made in one second apart. Which jobs are the run's is decided by their comment, never by this
 * name alone (slurm_job_is_ours). */
static char *run_jobname(const run *r, int sub) {
  if (!r->marker) return xasprintf("repro-%s-%d", r->id, sub);
  return xasprintf("repro-%s-%s-%.8s-%d", r->figure ? r->figure : "run", r->id, r->marker, sub);
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
  char *comment = slurm_run_comment(x->r);
  char *comment_arg = comment ? xasprintf("--comment=%s", comment) : NULL;
  if (comment_arg) argv[a++] = comment_arg;
  argv[a++] = (char *)script;
  argv[a] = NULL;
  sbuf out = {0};
  char *tag = xasprintf("%s/%s", x->r->dir, jobname);
  int rc = slurm_capture_tagged(argv, &out, 0, tag);
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
int slurm_release(run *r, const submission *s) {
  sbuf out = {0};
  char *argv[] = {"scontrol", "release", s->jobid, NULL};
  int rc = slurm_capture(argv, &out, 0);
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
  if (held && slurm_release(x->r, run_sub(x->r, sub)) != 0) return -1;
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
