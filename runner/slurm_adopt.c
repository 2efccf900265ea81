/* slurm_adopt: a resume settles the submissions a killed runner left without a job id: it
 * waits for their sbatch, finds their job (its tasks' marker files, then by name and the run's
 * comment) and adopts it, or marks them lost; late jobs of lost submissions are cancelled. */
#include <dirent.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "slurm_impl.h"

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
  if (slurm_squeue_ours(r, s->jobname, "all", 0, "%F", &ids) != 0) {
    fprintf(stderr,
            "repro-run: cannot ask Slurm whether submission %d (%s) exists; not resubmitting\n",
            s->id, s->jobname);
    sv_free(&ids);
    return -1;
  }
  *jobid = ids.n ? xstrdup(ids.v[0]) : slurm_sacct_ours(r, s);
  sv_free(&ids);
  return 0;
}

/* Jobs of this run that reached Slurm for a submission already given up (an sbatch that
 * returned after the resume stopped waiting for it): held, they have run nothing; cancelled
 * here, since their cells were submitted again. Only jobs whose comment is the run's. */
void slurm_cancel_late_jobs(const run *r) {
  static strvec done; /* job ids cancelled by this runner */
  sbuf names = {0};
  for (int i = 0; i < r->nsubs; i++) {
    const submission *s = &r->subs[i];
    if (s->executor && strcmp(s->executor, "slurm") == 0 && s->cancelled && !s->jobid && s->jobname)
      sb_addf(&names, "%s%s", names.len ? "," : "", s->jobname);
  }
  strvec ids = {0};
  if (names.len && r->marker && slurm_squeue_ours(r, names.s, NULL, 0, "%F", &ids) == 0) {
    for (int i = 0; i < ids.n; i++) {
      if (sv_find(&done, ids.v[i]) >= 0) continue;
      sbuf sc = {0};
      char *cancel[] = {"scancel", ids.v[i], NULL};
      if (slurm_capture(cancel, &sc, 0) == 0) {
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
    if (s->jobid && s->held && !s->released && slurm_release(r, s) != 0) return -1;
  }
  slurm_cancel_late_jobs(r);
  return 0;
}
