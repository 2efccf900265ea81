#include "cellog.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kvline.h"
#include "util.h"

int cellog_read_result(const char *path, cellog_result *out) {
  memset(out, 0, sizeof *out);
  const char *why;
  int fd = state_open(path, O_RDONLY, 0, STATE_FILE, &why); /* a link or a FIFO: no log */
  FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
  if (!f) {
    if (fd >= 0) close(fd);
    return -1;
  }
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  kv_record rec = {0};
  while ((len = getline(&line, &cap, f)) >= 0) {
    if (strncmp(line, "result", 6) != 0 || (line[6] != ' ' && line[6] != '\t')) continue;
    const char *err, *v;
    memset(out, 0, sizeof *out);
    if (kv_parse(&rec, line, (size_t)len, &err) == 0 && (v = kv_get(&rec, "status"))) {
      snprintf(out->status, sizeof out->status, "%s", v);
      if ((v = kv_get(&rec, "state"))) snprintf(out->state, sizeof out->state, "%s", v);
      if ((v = kv_get(&rec, "reason"))) snprintf(out->reason, sizeof out->reason, "%s", v);
    } else {
      snprintf(out->status, sizeof out->status, "unreadable");
    }
  }
  free(line);
  kv_record_free(&rec);
  fclose(f);
  return 0;
}

int cellog_status(const char *path, char *buf, int size) {
  cellog_result res;
  if (cellog_read_result(path, &res) != 0) return -1;
  snprintf(buf, (size_t)size, "%s", res.status);
  return 0;
}

int cellog_status_good(const char *status) {
  return strcmp(status, "ok") == 0 || strcmp(status, "unsupported") == 0 ||
         strcmp(status, "oom") == 0;
}

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

int cellog_finish(const char *run_dir, const char *log, const char *tmp, int rc, const char *state,
                  const char *exitcode, const char *reason) {
  if (check_dirs(run_dir) != 0) return -1;
  char *found = tmp ? xstrdup(tmp) : newest_tmp(run_dir, log);
  char *path = found ? found : xasprintf("%s/tmp/%s.none", run_dir, log);
  char status[64] = "";
  if (cellog_status(path, status, sizeof status) != 0) status[0] = '\0'; /* missing: empty log */

  /* The program's own result line stands when it exited by itself and agrees with its
   * exit code; otherwise the runner says what happened. */
  int by_itself =
      rc >= 0 && (!state || strcmp(state, "COMPLETED") == 0 || strcmp(state, "FAILED") == 0);
  int need_line = !by_itself || status[0] == '\0' || (rc != 0 && strcmp(status, "ok") == 0);
  int result = 0;
  if (need_line) {
    const char *bad;
    int fd = state_open(path, O_WRONLY | O_APPEND | O_CREAT, 0644, STATE_FILE, &bad);
    FILE *f = fd >= 0 ? fdopen(fd, "a") : NULL;
    if (!f) {
      fprintf(stderr, "repro-run: cannot append to %s: %s\n", path,
              fd >= 0 ? strerror(errno) : bad);
      if (fd >= 0) close(fd);
      free(path);
      return -1;
    }
    char exitbuf[32];
    if (!exitcode) {
      snprintf(exitbuf, sizeof exitbuf, "%d:0", rc < 0 ? 0 : rc);
      exitcode = exitbuf;
    }
    const char *st = state ? state : (rc == 0 ? "COMPLETED" : "FAILED");
    char why[512];
    if (reason)
      snprintf(why, sizeof why, "%s", reason);
    else if (!by_itself)
      snprintf(why, sizeof why, "ended by %s", st);
    else if (status[0] == '\0')
      snprintf(why, sizeof why, "exit code %d and no result line", rc);
    else
      snprintf(why, sizeof why, "exit code %d after result status=%s", rc, status);
    fputs("result", f);
    kv_put(f, "status", by_itself ? "error" : cellog_status_for_state(st));
    kv_put(f, "source", "runner");
    kv_put(f, "state", st);
    kv_put(f, "exit", exitcode);
    kv_put(f, "reason", why);
    fputc('\n', f);
    if (fflush(f) != 0 || fsync(fileno(f)) != 0) result = -1;
    if (fclose(f) != 0) result = -1;
    if (result != 0) fprintf(stderr, "repro-run: cannot write %s\n", path);
  }
  char *logs = xasprintf("%s/logs", run_dir);
  char *final = xasprintf("%s/%s", logs, log);
  mkdir(logs, 0755); /* as in cellog_retire */
  if (result == 0 && cellog_retire(run_dir, log) != 0) {
    fprintf(stderr, "repro-run: cannot move the old %s aside: %s\n", final, strerror(errno));
    result = -1;
  }
  if (result == 0 && rename(path, final) != 0) {
    fprintf(stderr, "repro-run: cannot rename %s to %s: %s\n", path, final, strerror(errno));
    result = -1;
  }
  free(logs);
  free(final);
  free(path);
  return result;
}
