#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cellog.h"
#include "executor.h"

volatile sig_atomic_t exec_interrupted;

int run_failed_cells(const run *r) {
  int failed = 0;
  for (int i = 0; i < r->cap; i++) {
    const cellrec *c = &r->cells[i];
    if (!c->log) continue;
    char *path = run_log_path(r, c->log);
    cellog_result res;
    if (cellog_read_result(path, &res) == 0)
      failed += !cellog_status_good(res.status);
    else
      failed += c->seen == SEEN_FAILED; /* its job ended without a log */
    free(path);
  }
  return failed;
}

static void fmt_duration(char *buf, size_t n, double s) {
  long t = (long)(s + 0.5);
  if (t >= 3600)
    snprintf(buf, n, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
  else
    snprintf(buf, n, "%ld:%02ld", t / 60, t % 60);
}

void progress_format(sbuf *out, const char *figure, const progress *p, double elapsed,
                     int base_done) {
  int done = p->ok + p->failed, since = done - base_done;
  char el[32], eta[32] = "unknown";
  fmt_duration(el, sizeof el, elapsed);
  /* cells done before this runner began say nothing about its pace */
  if (since > 0 && done < p->total)
    fmt_duration(eta, sizeof eta, elapsed / since * (p->total - done));
  if (done == p->total) snprintf(eta, sizeof eta, "0:00");
  char held[64] = "";
  if (p->held) snprintf(held, sizeof held, " (%d held: scontrol release)", p->held);
  sb_addf(out,
          "[%s] done %d/%d (ok %d, failed %d)  running %d  pending %d%s%s  elapsed %s  eta %s\n",
          figure, done, p->total, p->ok, p->failed, p->running, p->pending, held,
          p->unknown ? "  (state unknown for some)" : "", el, eta);
}

void progress_print(const exec_ctx *x, const progress *p, double started, int final) {
  static progress last;
  static int printed;
  static double last_at;
  if (x->silent || (x->quiet && !final)) return;
  double now = now_seconds();
  /* the same counts again: only as a heartbeat, once a minute, and never as the last line */
  if (printed && memcmp(p, &last, sizeof *p) == 0 && (final || now - last_at < 60)) return;
  sbuf line = {0};
  progress_format(&line, x->file->figure, p, now - started, x->base_done);
  fputs(line.s, stderr);
  sb_free(&line);
  last = *p;
  printed = 1;
  last_at = now;
}

/* N when the test-hook variable env is "point:N", else -1. */
static long test_hook_value(const char *env, const char *point) {
  const char *spec = getenv(env);
  size_t n = strlen(point);
  if (!spec || strncmp(spec, point, n) != 0 || spec[n] != ':') return -1;
  return atol(spec + n + 1);
}

void test_delay_point(const char *point) {
  long ms = test_hook_value("REPRO_RUN_TEST_DELAY", point);
  if (ms <= 0) return;
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

void test_kill_point(const char *point) {
  static int count;
  long at = test_hook_value("REPRO_RUN_TEST_KILL", point);
  if (at < 0) return;
  if (++count == at) {
    fprintf(stderr, "repro-run: test hook: SIGKILL at %s #%d\n", point, count);
    fflush(stderr);
    raise(SIGKILL);
  }
}
