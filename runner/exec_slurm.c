/* exec_slurm: the Slurm executor's loop: the run's cells polled (one squeue a poll, whatever
 * their number; sacct or scontrol only for cells that need their final state), waited for and
 * cancelled. One job array per (experiment, device) and submission, throttled by its %N, is
 * slurm_submit.c's; Slurm's answers: slurm_query.c; adopting a killed runner's submissions:
 * slurm_adopt.c; the cells Slurm requeued: slurm_requeue.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cellog.h"
#include "slurm_impl.h"

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
    if (ts_slot(&t, s->jobid) < 0) ts_add(&t, s);
  }
  if (t.n) ts_query_squeue(&t);
  /* which arrays have cells that ended (or vanished) without a log */
  int *need = xcalloc((size_t)(t.n ? t.n : 1), sizeof *need), any = 0;
  for (int i = 0; i < r->cap; i++) {
    cellrec *c = &r->cells[i];
    submission *s = c->log ? run_sub(r, c->sub) : NULL;
    if (!s || !s->jobid || c->seen == SEEN_OK || c->seen == SEEN_FAILED) continue;
    int slot = ts_slot(&t, s->jobid);
    if (slot < 0) continue;
    const char *st = t.state[slot][c->task];
    if (!st || slurm_state_final(st)) need[slot] = any = 1;
  }
  if (any) ts_query_final(&t, need);
  for (int i = 0; i < r->cap; i++) {
    cellrec *c = &r->cells[i];
    submission *s = c->log ? run_sub(r, c->sub) : NULL;
    if (!s || !s->executor || strcmp(s->executor, "slurm") != 0) continue;
    if (c->seen != SEEN_OK && c->seen != SEEN_FAILED && s->jobid && !s->cancelled) {
      int slot = ts_slot(&t, s->jobid);
      const char *st = slot >= 0 ? t.state[slot][c->task] : NULL;
      const char *code = slot >= 0 ? t.exitcode[slot][c->task] : NULL;
      c->seen = SEEN_PENDING;
      if (st && slurm_state_final(st)) {
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
        c->seen = slurm_state_running(st) ? SEEN_RUNNING : SEEN_PENDING;
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

int slurm_has_subs(const run *r) {
  for (int i = 0; i < r->nsubs; i++)
    if (r->subs[i].executor && strcmp(r->subs[i].executor, "slurm") == 0) return 1;
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
  int rc = slurm_squeue_ours(r, names.s, NULL, 1, "%i", &tasks), n = tasks.n;
  sv_free(&tasks);
  sb_free(&names);
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
      if (slurm_capture(argv, &out, 0) != 0) rc = -1;
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
    if (!x->readonly) slurm_cancel_late_jobs(x->r);
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
