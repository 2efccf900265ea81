/* render: runs gnuplot on the generated scripts (see render.h). */
#include "render.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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
  char script[64], log[80];
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

int render_all(const char *dir, char names[][48], int n, int jobs) {
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
      }
      pids[i] = pids[running - 1];
      which[i] = which[running - 1];
      running--;
      break;
    }
  }
  return failed;
}
