#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "executor.h"

volatile sig_atomic_t exec_interrupted;

static void fmt_duration(char *buf, size_t n, double s) {
  long t = (long)(s + 0.5);
  if (t >= 3600)
    snprintf(buf, n, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
  else
    snprintf(buf, n, "%ld:%02ld", t / 60, t % 60);
}

void progress_print(const exec_ctx *x, const progress *p, double started, int final) {
  if (x->quiet && !final) return;
  double elapsed = now_seconds() - started;
  int done = p->ok + p->failed;
  char el[32], eta[32] = "?";
  fmt_duration(el, sizeof el, elapsed);
  if (done > 0 && done < p->total)
    fmt_duration(eta, sizeof eta, elapsed / done * (p->total - done));
  if (done == p->total) snprintf(eta, sizeof eta, "0:00");
  char held[64] = "";
  if (p->held) snprintf(held, sizeof held, " (%d held: scontrol release)", p->held);
  fprintf(stderr,
          "[%s] done %d/%d (ok %d, failed %d)  running %d  pending %d%s%s  elapsed %s  eta %s\n",
          x->file->figure, done, p->total, p->ok, p->failed, p->running, p->pending, held,
          p->unknown ? "  (state unknown for some)" : "", el, eta);
}

void test_kill_point(const char *point) {
  static int count;
  const char *spec = getenv("REPRO_RUN_TEST_KILL");
  if (!spec) return;
  size_t n = strlen(point);
  if (strncmp(spec, point, n) != 0 || spec[n] != ':') return;
  if (++count == atoi(spec + n + 1)) {
    fprintf(stderr, "repro-run: test hook: SIGKILL at %s #%d\n", point, count);
    fflush(stderr);
    raise(SIGKILL);
  }
}
