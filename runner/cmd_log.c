/* cmd_log: the commands about one log: `verdict` (is each log good? the one rule status,
 * --resume and repro-plot hold logs to) and `finish` (a job script completes a cell's log). */
#include <stdio.h>
#include <stdlib.h>

#include "cellog.h"
#include "cli.h"

/* `finish RUNDIR LOG TMP RC` (argv: those four). */
int cmd_finish(char **argv) {
  char *end;
  long rc = strtol(argv[3], &end, 10);
  if (*end || rc < 0 || rc > 255) {
    fprintf(stderr, "repro-run finish: RC must be an exit code, got '%s'\n", argv[3]);
    return 2;
  }
  if (cellog_finish(argv[0], argv[1], argv[2], (int)rc, NULL, NULL, NULL) != 0) return 2;
  /* The log says how the cell ended. A final answer it keeps (ok, unsupported: exit 4, oom:
   * exit 3) ends the task with 0, so sacct shows COMPLETED, not FAILED; a failed cell keeps
   * its code, so Slurm records FAILED. */
  char *path = xasprintf("%s/logs/%s", argv[0], argv[1]);
  char status[64];
  int good = cellog_status(path, status, sizeof status) == 0 && cellog_status_good(status);
  free(path);
  return good ? 0 : rc ? (int)rc : 1;
}

/* `verdict LOG...`: each log good or not, by cellog_read_result's rule; 0 all good, 1 not. */
int cmd_verdict(int argc, char **argv) {
  int bad = 0;
  for (int i = 0; i < argc; i++) {
    cellog_result res;
    if (cellog_read_result(argv[i], &res) != 0) {
      printf("bad - %s: cannot be read as a log (missing, a link, a FIFO or a read error)\n",
             argv[i]);
      bad++;
      continue;
    }
    const char *status = res.status[0] ? res.status : "-";
    if (cellog_status_good(res.status)) {
      printf("good %s %s\n", status, argv[i]);
    } else {
      printf("bad %s %s: %s\n", status, argv[i],
             res.reason[0]   ? res.reason
             : res.status[0] ? "not a final answer"
                             : "no usable result line");
      bad++;
    }
  }
  return bad ? 1 : 0;
}
