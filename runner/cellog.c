#include "cellog.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "kvline.h"
#include "logverdict.h"
#include "util.h"

/* The verdict of the log at path (common/logverdict.c, the plotter's rule): 0, or -1 when it
 * cannot be read (missing, a link, a FIFO, larger than a log may be). */
static int read_verdict(const char *path, lv_verdict *v) {
  char *buf;
  size_t len;
  const char *why;
  if (state_read(path, REPRO_MAX_LOG_BYTES, &buf, &len, &why) != 0) return -1;
  log_verdict(buf, len, v);
  free(buf);
  return 0;
}

/* A verdict as the runner reports it: the log's own status, state and reason when its last
 * result line stands; CELLOG_CUT or CELLOG_BAD with the verdict's why when the log spoils it;
 * "" when it has no usable result line (with why for a binary or foreign file). */
static void result_of(const lv_verdict *v, cellog_result *out) {
  memset(out, 0, sizeof *out);
  if (v->cause == LV_GOOD || v->cause == LV_FAILED) {
    snprintf(out->status, sizeof out->status, "%s", v->status);
    snprintf(out->state, sizeof out->state, "%s", v->state);
    snprintf(out->reason, sizeof out->reason, "%s", v->reason);
  } else if (lv_cause_refused(v->cause)) {
    snprintf(out->status, sizeof out->status, "%s", v->cause == LV_CUT ? CELLOG_CUT : CELLOG_BAD);
    snprintf(out->state, sizeof out->state, "%s", v->state);
    snprintf(out->reason, sizeof out->reason, "%s", v->why);
  } else if (v->cause == LV_BINARY || v->cause == LV_FOREIGN) {
    snprintf(out->reason, sizeof out->reason, "%s", v->why);
  }
}

int cellog_read_result(const char *path, cellog_result *out) {
  lv_verdict v;
  memset(out, 0, sizeof *out);
  if (read_verdict(path, &v) != 0) return -1;
  result_of(&v, out);
  return 0;
}

int cellog_status(const char *path, char *buf, int size) {
  cellog_result res;
  if (cellog_read_result(path, &res) != 0) return -1;
  snprintf(buf, (size_t)size, "%s", res.status);
  return 0;
}

int cellog_status_good(const char *status) { return lv_status_final(status); }

const char *cellog_status_for_state(const char *state) {
  if (!state) return "error";
  if (strcmp(state, "TIMEOUT") == 0 || strcmp(state, "DEADLINE") == 0) return "timeout";
  if (strcmp(state, "OUT_OF_MEMORY") == 0) return "oom";
  return "error";
}

/* The run's folders a finished attempt moves through must be real folders when they exist (a
 * link would move the logs elsewhere): 0, or -1 with the path named on stderr. */
static int check_dirs(const char *run_dir) {
  static const char *const dirs[] = {"logs", "attempts", "tmp", NULL};
  for (const char *const *d = dirs; *d; d++) {
    char *p = xasprintf("%s/%s", run_dir, *d);
    const char *why;
    int rc = state_dir_ok(p, 1, &why);
    if (rc != 0) fprintf(stderr, "repro-run: %s %s: not writing the cell's log there\n", p, why);
    free(p);
    if (rc != 0) return -1;
  }
  return 0;
}

/* Newest run/tmp/<log>.* by modification time: the last attempt that did not finish. */
static char *newest_tmp(const char *run_dir, const char *log) {
  char *pattern = xasprintf("%s/tmp/%s.*", run_dir, log);
  glob_t g;
  char *best = NULL;
  struct timespec best_t = {0};
  if (glob(pattern, 0, NULL, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; i++) {
      struct stat st;
      const char *p = g.gl_pathv[i];
      size_t n = strlen(p);
      if (n > 4 && strcmp(p + n - 4, ".err") == 0) continue;
      if (lstat(p, &st) != 0 || !S_ISREG(st.st_mode)) continue;
      if (!best || st.st_mtim.tv_sec > best_t.tv_sec ||
          (st.st_mtim.tv_sec == best_t.tv_sec && st.st_mtim.tv_nsec > best_t.tv_nsec)) {
        free(best);
        best = xstrdup(p);
        best_t = st.st_mtim;
      }
    }
    globfree(&g);
  }
  free(pattern);
  return best;
}

int cellog_retire(const char *run_dir, const char *log) {
  char *final = xasprintf("%s/logs/%s", run_dir, log);
  struct stat st;
  if (lstat(final, &st) != 0) {
    free(final);
    return 0;
  }
  if (check_dirs(run_dir) != 0) {
    free(final);
    errno = ELOOP;
    return -1;
  }
  char *dir = xasprintf("%s/attempts", run_dir);
  mkdir(dir, 0755); /* a real folder or missing (check_dirs): EEXIST is fine */
  int rc = -1;
  for (int n = 1; n < 100000; n++) {
    char *dest = xasprintf("%s/%s.%d", dir, path_basename(final), n);
    /* link() fails when dest exists, so two finishers never pick the same name */
    if (link(final, dest) == 0) {
      rc = unlink(final);
      free(dest);
      break;
    }
    int e = errno;
    free(dest);
    if (e != EEXIST) break;
  }
  free(dir);
  free(final);
  return rc;
}

/* Why the runner writes its own line (rc, state: as cellog_finish's; v: the program's log). */
static void runner_reason(char *why, size_t n, int by_itself, const char *st, int rc,
                          const lv_verdict *v, const char *reason) {
  if (reason)
    snprintf(why, n, "%s", reason);
  else if (!by_itself)
    snprintf(why, n, "ended by %s", st);
  else if (v->cause == LV_CUT)
    snprintf(why, n, "exit code %d and the log's last line is cut (no newline): a write failed",
             rc);
  else if (v->status[0] == '\0' && v->cause == LV_BINARY)
    snprintf(why, n, "exit code %d and no usable result line (%s)", rc, v->why);
  else if (v->status[0] == '\0')
    snprintf(why, n, "exit code %d and no usable result line", rc);
  else if (lv_cause_refused(v->cause))
    snprintf(why, n, "exit code %d after result status=%s (%s)", rc, v->status, v->why);
  else
    snprintf(why, n, "exit code %d after result status=%s", rc, v->status);
}

/* Whether the runner writes its own line: the program's own result line stands when it exited
 * by itself, its log has a usable result line and is whole, and its exit code agrees. */
static int runner_line_needed(int by_itself, int rc, const lv_verdict *v) {
  return !by_itself || v->status[0] == '\0' || v->cause == LV_CUT ||
         (rc != 0 && strcmp(v->status, "ok") == 0);
}

/* The runner's result line, on a line of its own (the log's last line may be cut): a
 * malloc'd string. */
static char *runner_line(int newline_first, const char *status, const char *st,
                         const char *exitcode, const char *why) {
  char *text = NULL;
  size_t n = 0;
  FILE *m = open_memstream(&text, &n);
  if (!m) return NULL;
  fputs(newline_first ? "\nresult" : "result", m);
  kv_put(m, "status", status);
  kv_put(m, "source", "runner");
  kv_put(m, "state", st);
  kv_put(m, "exit", exitcode);
  kv_put(m, "reason", why);
  fputc('\n', m);
  if (fclose(m) != 0) {
    free(text);
    return NULL;
  }
  return text;
}

/* Appends the runner's line (runner_line's fields) to path, whole or not at all: a write
 * that fails (a full disk) is cut off again, so the log reads as it did. 0, or -1 with a
 * message naming path on stderr. */
static int append_runner_line(const char *path, const char *status, const char *st,
                              const char *exitcode, const char *why) {
  const char *bad;
  int fd = state_open(path, O_RDWR | O_APPEND | O_CREAT, 0644, STATE_FILE, &bad);
  if (fd < 0) {
    fprintf(stderr, "repro-run: cannot append to %s: %s\n", path, bad);
    return -1;
  }
  struct stat sb;
  char last = '\n';
  int rc = fstat(fd, &sb);
  if (rc == 0 && sb.st_size > 0 && pread(fd, &last, 1, sb.st_size - 1) != 1) rc = -1;
  char *text = rc == 0 ? runner_line(last != '\n', status, st, exitcode, why) : NULL;
  size_t len = text ? strlen(text) : 0, done = 0;
  if (!text) rc = -1;
  while (rc == 0 && done < len) {
    ssize_t w = write(fd, text + done, len - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0)
      rc = -1;
    else
      done += (size_t)w;
  }
  if (rc == 0 && fsync(fd) != 0 && errno != EINVAL) rc = -1;
  int e = errno;
  if (rc != 0 && done > 0 && ftruncate(fd, sb.st_size) != 0)
    fprintf(stderr, "repro-run: %s: cannot cut the runner's partial line off again: %s\n", path,
            strerror(errno));
  if (close(fd) != 0 && rc == 0) {
    rc = -1;
    e = errno;
  }
  if (rc != 0)
    fprintf(stderr, "repro-run: cannot append the runner's result line to %s: %s\n", path,
            strerror(e));
  free(text);
  return rc;
}

/* Moves the finished attempt at path to run/logs/<log> (an old log there to attempts/). */
static int install_log(const char *run_dir, const char *log, const char *path) {
  char *logs = xasprintf("%s/logs", run_dir);
  char *final = xasprintf("%s/%s", logs, log);
  mkdir(logs, 0755); /* as in cellog_retire */
  int result = 0;
  if (cellog_retire(run_dir, log) != 0) {
    fprintf(stderr, "repro-run: cannot move the old %s aside: %s\n", final, strerror(errno));
    result = -1;
  }
  if (result == 0 && rename(path, final) != 0) {
    fprintf(stderr, "repro-run: cannot rename %s to %s: %s\n", path, final, strerror(errno));
    result = -1;
  }
  free(logs);
  free(final);
  return result;
}

int cellog_finish(const char *run_dir, const char *log, const char *tmp, int rc, const char *state,
                  const char *exitcode, const char *reason) {
  if (check_dirs(run_dir) != 0) return -1;
  char *found = tmp ? xstrdup(tmp) : newest_tmp(run_dir, log);
  char *path = found ? found : xasprintf("%s/tmp/%s.none", run_dir, log);
  lv_verdict v;
  if (read_verdict(path, &v) != 0) log_verdict("", 0, &v); /* missing: an empty log */

  int by_itself =
      rc >= 0 && (!state || strcmp(state, "COMPLETED") == 0 || strcmp(state, "FAILED") == 0);
  int result = 0;
  if (runner_line_needed(by_itself, rc, &v)) {
    char exitbuf[32], why[512];
    if (!exitcode) {
      snprintf(exitbuf, sizeof exitbuf, "%d:0", rc < 0 ? 0 : rc);
      exitcode = exitbuf;
    }
    const char *st = state ? state : (rc == 0 ? "COMPLETED" : "FAILED");
    runner_reason(why, sizeof why, by_itself, st, rc, &v, reason);
    result = append_runner_line(path, by_itself ? "error" : cellog_status_for_state(st), st,
                                exitcode, why);
  }
  /* A log without the runner's line still goes to logs/ when it reads as not good (cut, no
   * result, an error, a failed check): every reader takes it so. One that reads good but
   * needed the line stays in tmp/, so the cell has no log and --resume runs it again. */
  char status[64];
  if (result != 0 &&
      (cellog_status(path, status, sizeof status) != 0 || cellog_status_good(status))) {
    free(path);
    return -1;
  }
  if (install_log(run_dir, log, path) != 0) result = -1;
  free(path);
  return result;
}
