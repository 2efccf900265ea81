/* cmd_status: `status` (one read-only poll of a run: its cells, the failed and requeued ones
 * and why) and `cancel` (scancel the run's jobs); the failed cells' list a run ends with. */
#include <stdio.h>
#include <stdlib.h>

#include "cellog.h"
#include "cli.h"

/* Prints the run's cells (or, with cs, the selected ones) whose logs do not say
 * ok/unsupported/oom; returns their count. */
int report_failures(FILE *out, const run *r, const cellset *cs) {
  int bad = 0;
  for (int i = 0; i < (cs ? cs->ncells : r->cap); i++) {
    const char *log = cs ? cs->cells[i].log : r->cells[i].log;
    if (!log || (cs && cs->cells[i].sel != CELL_SELECTED)) continue;
    char *path = run_log_path(r, log);
    cellog_result res;
    int have = cellog_read_result(path, &res) == 0;
    if (!have || !cellog_status_good(res.status)) {
      if (bad < 30) {
        /* the reason first (TIMEOUT, CANCELLED, NODE_FAIL, OUT_OF_MEMORY or the program's
         * own words), then where the whole story is; a job that ended without a log (seen by
         * a read-only poll) shows its state */
        const cellrec *rec = have ? NULL : run_cell(r, log);
        const char *state = res.state[0] ? res.state : "-";
        char *why = res.reason[0] ? quote_value(res.reason) : NULL;
        if (rec && rec->ended[0]) {
          state = rec->ended;
          why = xstrdup("ended without a log (--resume writes it)");
        }
        fprintf(out, "  %-10s %-13s %s%s%s\n",
                have ? (res.status[0] ? res.status : "no-result") : "no-log", state, log,
                why ? ": " : "", why ? why : "");
        fprintf(out, "             %s\n", path);
        free(why);
      }
      bad++;
    }
    free(path);
  }
  if (bad > 30) fprintf(out, "  ... and %d more\n", bad - 30);
  return bad;
}

/* A figure folder (its ae_logs) or a run folder. */
static int open_run_arg(const char *arg, run *r, run_mode mode) {
  char *dir = NULL;
  int rc = run_find(arg, &dir) == 0 ? run_open(r, dir, mode) : -1;
  free(dir);
  return rc;
}

int cmd_status(const char *arg, int cancel) {
  run r;
  if (open_run_arg(arg, &r, cancel ? RUN_WRITE : RUN_READ) != 0) return 2;
  expfile dummy = {.figure = r.figure ? r.figure : r.id};
  /* status only looks: cells that ended without a log keep none (the next runner writes it) */
  exec_ctx x = {.file = &dummy, .r = &r, .poll_s = 1, .readonly = !cancel};
  int rc = 0, queued = 0;
  if (slurm_has_subs(&r) && slurm_available()) {
    if (cancel) {
      if (lock_run(&r) != 0) {
        run_close(&r);
        return 2;
      }
      rc = slurm_cancel(&x) == 0 ? 0 : 1;
    } else {
      progress p;
      slurm_wait(&x, 1, &p);
      queued = p.running + p.pending + p.unknown;
    }
  } else if (cancel) {
    fprintf(stderr, "repro-run: %s has no Slurm jobs to cancel\n", r.dir);
  }
  int total = 0;
  for (int i = 0; i < r.cap; i++) total += r.cells[i].log != NULL;
  printf("run %s: %d cells\n", r.dir, total);
  int bad = report_failures(stdout, &r, NULL);
  printf("%d cells without a good log (failed, timed out, still running or never run)\n", bad);
  slurm_report_requeued(stdout, &r);
  if (!cancel && run_failed_cells(&r) > 0) rc = 1; /* 1: cells failed, as a run's exit says */
  if (!cancel && rc == 0 && bad > 0 && !queued && !run_is_held(&r)) {
    /* nothing works on them: no runner holds the run and no job of it is queued or running */
    printf("no runner holds the run and none of its jobs is queued or running: `--resume` runs "
           "the %d cells\n",
           bad);
    rc = 1;
  }
  run_close(&r);
  return rc;
}
