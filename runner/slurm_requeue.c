/* slurm_requeue: the cells Slurm requeued (node failure, preemption), how many times, and the
 * node that went DOWN under them, read from what srun and slurmstepd left in their output. */
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "executor.h"

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
