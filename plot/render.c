/* render: runs gnuplot on the generated scripts (see render.h). */
#define _GNU_SOURCE /* memmem */
#include "render.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fileio.h"

int render_have_gnuplot(void) {
  const char *path = getenv("PATH");
  if (!path) return 0;
  char *copy = strdup(path);
  if (!copy) return 0;
  int found = 0;
  for (char *save = NULL, *dir = strtok_r(copy, ":", &save); dir && !found;
       dir = strtok_r(NULL, ":", &save)) {
    char full[1024];
    snprintf(full, sizeof full, "%s/gnuplot", dir);
    found = access(full, X_OK) == 0;
  }
  free(copy);
  return found;
}

static pid_t spawn_gnuplot(const char *dir, const char *name) {
  pid_t pid = fork();
  if (pid != 0) return pid; /* parent, or -1 */
  if (chdir(dir) != 0) {
    fprintf(stderr, "%s: cannot enter: %s\n", dir, strerror(errno));
    _exit(127);
  }
  char script[RENDER_NAME + 8], log[RENDER_NAME + 16];
  snprintf(script, sizeof script, "%s.gp", name);
  /* gnuplot warns once per empty panel ("no valid points"): keep that out of the terminal,
   * in <name>.gnuplot.log, shown when gnuplot fails */
  snprintf(log, sizeof log, "%s.gnuplot.log", name);
  int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0666);
  if (fd >= 0) {
    dup2(fd, 2);
    close(fd);
  }
  execlp("gnuplot", "gnuplot", script, (char *)NULL);
  fprintf(stderr, "gnuplot: cannot run: %s\n", strerror(errno));
  _exit(127);
}

static int outputs_ok(const char *dir, const char *name) {
  static const char *ext[] = {"pdf", "png", "svg"};
  int ok = 1;
  for (int i = 0; i < 3; i++) {
    char path[1024];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s.%s", dir, name, ext[i]);
    if (stat(path, &st) != 0 || st.st_size == 0) {
      fprintf(stderr, "%s: gnuplot did not write it\n", path);
      ok = 0;
    }
  }
  return ok;
}

/* The PDF date: SOURCE_DATE_EPOCH when set (reproducible-builds.org), else the epoch. */
static void pdf_date(char out[15]) {
  const char *e = getenv("SOURCE_DATE_EPOCH");
  char *end = NULL;
  long long v = e && *e ? strtoll(e, &end, 10) : 0;
  if (!end || *end || v < 0 || v > 253402300799LL) v = 0; /* up to 9999-12-31 */
  time_t t = (time_t)v;
  struct tm tm;
  gmtime_r(&t, &tm);
  char buf[32];
  snprintf(buf, sizeof buf, "%04d%02d%02d%02d%02d%02d", tm.tm_year + 1900, tm.tm_mon + 1,
           tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  memcpy(out, buf, 15);
}

int render_fix_pdf_date(const char *path) {
  size_t len = 0;
  char why[128];
  char *buf = repro_slurp(path, (size_t)256 << 20, &len, why, sizeof why);
  if (!buf) {
    fprintf(stderr, "%s: cannot read: %s\n", path, why);
    return -1;
  }
  static const char key[] = "/CreationDate (D:";
  char *p = buf, *end = buf + len;
  int changed = 0;
  char date[15];
  pdf_date(date);
  /* every date string, overwritten in place with one of the same length, so the xref
   * table's byte offsets stay right */
  while ((p = memmem(p, (size_t)(end - p), key, sizeof key - 1)) != NULL) {
    char *d = p + sizeof key - 1, *close = memchr(d, ')', (size_t)(end - d));
    p = d;
    if (!close || close - d < 14) continue;
    for (int i = 0; i < 14; i++)
      if (d[i] < '0' || d[i] > '9') close = NULL;
    if (!close) continue;
    memcpy(d, date, 14);
    size_t tail = (size_t)(close - d) - 14; /* Z, +HH'mm', or nothing */
    if (tail == 1)
      d[14] = 'Z';
    else if (tail == 7)
      memcpy(d + 14, "+00'00'", 7);
    changed = 1;
  }
  int rc = 0;
  if (changed) {
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f || fwrite(buf, 1, len, f) != len || fclose(f) != 0 || rename(tmp, path) != 0) {
      fprintf(stderr, "%s: cannot rewrite its date: %s\n", path, strerror(errno));
      if (f) remove(tmp);
      rc = -1;
    }
  }
  free(buf);
  return rc;
}

static void show_log(const char *dir, const char *name) {
  char path[1024], line[512];
  snprintf(path, sizeof path, "%s/%s.gnuplot.log", dir, name);
  FILE *f = fopen(path, "r");
  if (!f) return;
  int shown = 0;
  while (fgets(line, sizeof line, f) && shown < 20) {
    if (strstr(line, "no valid points")) continue;
    fprintf(stderr, "  %s", line);
    shown++;
  }
  fclose(f);
}

int render_all(const char *dir, char names[][RENDER_NAME], int n, int jobs) {
  int failed = 0, next = 0, running = 0;
  pid_t pids[64];
  int which[64];
  if (jobs < 1) jobs = 1;
  if (jobs > 64) jobs = 64;
  while (next < n || running > 0) {
    while (next < n && running < jobs) {
      pid_t pid = spawn_gnuplot(dir, names[next]);
      if (pid < 0) {
        fprintf(stderr, "%s/%s.gp: cannot start gnuplot: %s\n", dir, names[next], strerror(errno));
        failed++;
        next++;
        continue;
      }
      pids[running] = pid;
      which[running++] = next++;
    }
    if (running == 0) break;
    int status;
    pid_t done = waitpid(-1, &status, 0);
    if (done < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < running; i++) {
      if (pids[i] != done) continue;
      const char *name = names[which[i]];
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr,
                "%s/%s.gp: gnuplot failed (exit %d); its messages, from %s/%s.gnuplot.log:\n", dir,
                name, WIFEXITED(status) ? WEXITSTATUS(status) : -1, dir, name);
        show_log(dir, name);
        failed++;
      } else if (!outputs_ok(dir, name)) {
        failed++;
      } else {
        char pdf[1024];
        snprintf(pdf, sizeof pdf, "%s/%s.pdf", dir, name);
        if (render_fix_pdf_date(pdf)) failed++;
      }
      pids[i] = pids[running - 1];
      which[i] = which[running - 1];
      running--;
      break;
    }
  }
  return failed;
}

/* A NAME of `repro-plot render`: a file name in DIR, short enough for RENDER_NAME with its
 * extensions, whose NAME.gp exists. */
static int render_name_ok(const char *dir, const char *name) {
  size_t len = strlen(name);
  if (len == 0 || len >= RENDER_NAME - 16 || strchr(name, '/') || name[0] == '.') {
    fprintf(stderr,
            "repro-plot render: \"%s\": expected the name of a script NAME.gp in %s "
            "(no '/', not starting with '.', under %d characters)\n",
            name, dir, RENDER_NAME - 16);
    return 0;
  }
  char path[1024];
  struct stat st;
  snprintf(path, sizeof path, "%s/%s.gp", dir, name);
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
    fprintf(stderr, "%s: no such gnuplot script (repro-plot render DIR NAME runs DIR/NAME.gp)\n",
            path);
    return 0;
  }
  return 1;
}

int render_main(int argc, char **argv) {
  if (argc < 3) {
    fputs("usage: repro-plot render DIR NAME...   (gnuplot DIR/NAME.gp, writing NAME.pdf/.png/"
          ".svg)\n",
          stderr);
    return 2;
  }
  const char *dir = argv[1];
  int n = argc - 2;
  char(*names)[RENDER_NAME] = calloc((size_t)n, sizeof *names);
  if (!names) {
    fprintf(stderr, "repro-plot render: out of memory\n");
    return 1;
  }
  int rc = 0;
  for (int i = 0; i < n; i++) {
    if (!render_name_ok(dir, argv[i + 2]))
      rc = 2;
    else
      snprintf(names[i], RENDER_NAME, "%s", argv[i + 2]);
  }
  if (rc == 0 && !render_have_gnuplot()) {
    fprintf(stderr, "repro-plot render: gnuplot is not on PATH (scripts/install.sh installs it)\n");
    rc = 1;
  }
  /* as draw: one gnuplot per CPU at most (render_all bounds the jobs and runs no more than n) */
  if (rc == 0 && render_all(dir, names, n, (int)sysconf(_SC_NPROCESSORS_ONLN)) > 0) rc = 1;
  free(names);
  return rc;
}
