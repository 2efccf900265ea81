/* The local executor: cells run on this machine, one per GPU at a time (each process pinned
 * to its GPU with CUDA_VISIBLE_DEVICES) or, without GPUs, -j N at a time; each in its own
 * process group with the experiment's time limit (SIGTERM, then SIGKILL after a grace period),
 * the same logs and the same journal as under Slurm. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cellog.h"
#include "executor.h"

/* Seconds between SIGTERM and SIGKILL for a cell past its limit (Slurm's KillWait is 30). */
static double kill_grace(void) {
  const char *env = getenv("REPRO_KILL_GRACE_S");
  return env ? atof(env) : 10.0;
}

/* Every process the local executor starts carries this variable, so a resumed runner can
 * find (and end) the orphans of one that was killed. */
#define LOCAL_TAG "REPRO_LOCAL_RUN"

typedef struct {
  int cell;
  pid_t pid;
  double started, term_sent;
  char *tmp;
} slot;

/* The cell's GPU in its environment: CUDA_VISIBLE_DEVICES pins it; REPRO_GPU_INDEX and
 * REPRO_GPU_UUID let the program's meta line name it. */
static void pin_gpu(const gpu_info *gpu) {
  if (!gpu) return;
  setenv("CUDA_VISIBLE_DEVICES", gpu_pin_value(gpu), 1);
  if (gpu->index[0]) setenv("REPRO_GPU_INDEX", gpu->index, 1);
  if (gpu->uuid[0]) setenv("REPRO_GPU_UUID", gpu->uuid, 1);
}

static pid_t start_cell(exec_ctx *x, const cell *c, const char *cmd, const device_def *dev,
                        const gpu_info *gpu, char **tmp_out, int sub) {
  char *tmp = xasprintf("%s/tmp/%s.L%d", x->r->dir, c->log, sub);
  char *err = xasprintf("%s/err/%s.L%d", x->r->dir, c->log, sub);
  sbuf script = {0};
  if (dev)
    for (int i = 0; i < dev->setup.n; i++) sb_addf(&script, "%s\n", dev->setup.v[i]);
  sb_add(&script, cmd);
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    int out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644);
    int er = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644);
    int in = open("/dev/null", O_RDONLY);
    if (out < 0 || er < 0 || in < 0) _exit(126);
    dup2(in, 0);
    dup2(out, 1);
    dup2(er, 2);
    setenv(LOCAL_TAG, x->r->dir, 1);
    setenv("REPRO_CELL", c->log, 1);
    pin_gpu(gpu);
    test_delay_point("local-child");
    execl("/bin/bash", "bash", "-c", script.s, (char *)NULL);
    _exit(127);
  }
  if (pid > 0) setpgid(pid, pid); /* both sides, so no race with an early kill */
  sb_free(&script);
  free(err);
  *tmp_out = tmp;
  return pid;
}

int local_recover(exec_ctx *x) {
  DIR *d = opendir("/proc");
  if (!d) return 0;
  struct dirent *e;
  int killed = 0;
  char *tag = xasprintf("%s=%s", LOCAL_TAG, x->r->dir); /* in the environment of its cells */
  while ((e = readdir(d))) {
    pid_t pid = (pid_t)atol(e->d_name);
    if (pid <= 1 || pid == getpid()) continue;
    if (proc_env_has((long)pid, tag) && kill(pid, SIGKILL) == 0) killed++;
  }
  free(tag);
  closedir(d);
  if (killed)
    fprintf(
        stderr,
        "repro-run: ended %d process(es) left running by a runner of this run that was killed\n",
        killed);
  return 0;
}

static void finish_slot(exec_ctx *x, slot *s, int status) {
  const cell *c = &x->cs->cells[s->cell];
  if (s->term_sent > 0) {
    char reason[128];
    snprintf(reason, sizeof reason, "time limit of %lds reached",
             x->file->exps[c->exp].time_limit_s);
    cellog_finish(x->r->dir, c->log, s->tmp, -1, "TIMEOUT", "0:15", reason);
  } else if (exec_interrupted) {
    cellog_finish(x->r->dir, c->log, s->tmp, -1, "CANCELLED", "0:15", "the runner was interrupted");
  } else if (WIFEXITED(status)) {
    cellog_finish(x->r->dir, c->log, s->tmp, WEXITSTATUS(status), NULL, NULL, NULL);
  } else {
    char code[32], reason[64];
    snprintf(code, sizeof code, "0:%d", WTERMSIG(status));
    snprintf(reason, sizeof reason, "killed by signal %d", WTERMSIG(status));
    cellog_finish(x->r->dir, c->log, s->tmp, -1, "FAILED", code, reason);
  }
  free(s->tmp);
  s->pid = 0;
}

static void count_finished(exec_ctx *x, int cell, progress *p) {
  char *path = run_log_path(x->r, x->cs->cells[cell].log);
  char status[64];
  if (cellog_status(path, status, sizeof status) == 0 && cellog_status_good(status))
    p->ok++;
  else
    p->failed++;
  free(path);
}

/* Cells at once: one per GPU (at most -j of them), else -j. */
static int local_slots(const exec_ctx *x) {
  int jobs = x->jobs > 0 ? x->jobs : 1;
  if (!x->gpus || x->gpus->n == 0) return jobs;
  return x->jobs > 0 && x->jobs < x->gpus->n ? x->jobs : x->gpus->n;
}

static const gpu_info *slot_gpu(const exec_ctx *x, int k) {
  return x->gpus && k < x->gpus->n ? &x->gpus->gpus[k] : NULL;
}

int local_run(exec_ctx *x, const int *cells, int n) {
  int sub = run_next_sub(x->r);
  for (int i = 0; i < n; i++) {
    const char *log = x->cs->cells[cells[i]].log;
    if (cellog_retire(x->r->dir, log) != 0 ||
        run_note_cell(x->r, sub, x->cs->cells[cells[i]].task, log) != 0)
      return -1;
  }
  if (run_note_submit(x->r, sub, "local", "local", "-") != 0) return -1;
  int jobs = local_slots(x);
  slot *slots = xcalloc((size_t)jobs, sizeof *slots);
  progress p = {.total = n, .pending = n};
  double started = now_seconds(), grace = kill_grace();
  int next = 0, active = 0, rc = 0;
  sbuf cmd = {0};
  while (next < n || active > 0) {
    /* start cells while there is room */
    while (!exec_interrupted && next < n && active < jobs) {
      const cell *c = &x->cs->cells[cells[next]];
      const device_def *dev =
          x->cluster ? cluster_device(x->cluster,
                                      x->file->exps[c->exp]
                                          .axes[x->file->exps[c->exp].device_axis]
                                          .values.v[c->vals[x->file->exps[c->exp].device_axis]])
                     : NULL;
      cell_env env = {x->cs, c, dev, &x->rt};
      char *err = NULL;
      sb_clear(&cmd);
      int k = 0;
      while (slots[k].pid) k++;
      if (cell_command(&env, &cmd, &err) != 0) {
        fprintf(stderr, "repro-run: %s\n", err);
        free(err);
        next++;
        rc = -1;
        continue;
      }
      pid_t pid = start_cell(x, c, cmd.s, dev, slot_gpu(x, k), &slots[k].tmp, sub);
      if (pid < 0) {
        fprintf(stderr, "repro-run: cannot start %s: %s\n", c->log, strerror(errno));
        free(slots[k].tmp);
        next++;
        rc = -1;
        continue;
      }
      slots[k] =
          (slot){.cell = cells[next], .pid = pid, .started = now_seconds(), .tmp = slots[k].tmp};
      run_note_start(x->r, sub, c->log, (long)pid);
      test_kill_point("local-start");
      next++;
      active++;
      p.running++;
      p.pending--;
      progress_print(x, &p, started, 0);
    }
    if (exec_interrupted && next < n) {
      p.pending -= n - next; /* never started: no log, --resume runs them */
      next = n;
    }
    /* reap finished cells */
    int status;
    pid_t done;
    while ((done = waitpid(-1, &status, WNOHANG)) > 0) {
      for (int k = 0; k < jobs; k++) {
        if (slots[k].pid != done) continue;
        int cell = slots[k].cell;
        kill(-done, SIGKILL); /* whatever the cell left behind in its group */
        finish_slot(x, &slots[k], status);
        active--;
        p.running--;
        count_finished(x, cell, &p);
        progress_print(x, &p, started, 0);
      }
    }
    /* enforce time limits (and Ctrl-C) */
    double now = now_seconds();
    for (int k = 0; k < jobs; k++) {
      slot *s = &slots[k];
      if (!s->pid) continue;
      long limit = x->file->exps[x->cs->cells[s->cell].exp].time_limit_s;
      if (s->term_sent == 0 && (now - s->started > (double)limit || exec_interrupted)) {
        if (!exec_interrupted) s->term_sent = now;
        kill(-s->pid, SIGTERM);
        if (exec_interrupted) s->term_sent = -now; /* remember when, but not as a timeout */
      } else if (s->term_sent != 0 &&
                 now - (s->term_sent > 0 ? s->term_sent : -s->term_sent) > grace) {
        kill(-s->pid, SIGKILL);
      }
    }
    struct timespec ts = {0, 20 * 1000 * 1000};
    if (active > 0) nanosleep(&ts, NULL);
  }
  sb_free(&cmd);
  free(slots);
  progress_print(x, &p, started, 1);
  if (exec_interrupted) return 130;
  return rc;
}
