/* runlock: one runner per run (run/lock) and per figure folder (runs/.lock), and the check that
 * a returned runner's Slurm jobs no longer wait before a new run of the figure starts. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* Takes run/lock for this process's lifetime: one runner per run at a time. */
int lock_run(const run *r) {
  char *path = xasprintf("%s/lock", r->dir);
  int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    fprintf(stderr, "repro-run: %s: %s\n", path, strerror(errno));
    free(path);
    return -1;
  }
  free(path);
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    fprintf(stderr, "repro-run: another repro-run is working on %s; wait for it or stop it first\n",
            r->dir);
    close(fd);
    return -1;
  }
  return 0; /* fd stays open on purpose: the lock lives as long as the process */
}

/* Does a runner hold run/lock (lock_run) now? Looks only: takes no lock it keeps. */
int run_is_held(const run *r) {
  char *path = xasprintf("%s/lock", r->dir);
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), held = 0;
  free(path);
  if (fd < 0) return 0; /* no lock file: no runner ever held it */
  if (flock(fd, LOCK_SH | LOCK_NB) != 0)
    held = errno == EWOULDBLOCK;
  else
    flock(fd, LOCK_UN);
  close(fd);
  return held;
}

/* The pid in a figure lock's "pid N, ..." text, or 0. */
static long lock_holder_pid(int fd) {
  char text[64];
  ssize_t n = pread(fd, text, sizeof text - 1, 0);
  text[n > 0 ? n : 0] = '\0';
  long pid = 0;
  return sscanf(text, "pid %ld", &pid) == 1 ? pid : 0;
}

/* flock(fd) now, or, while the holder named in the file is dead, within a few seconds: a cell
 * its runner forked just before being killed shares the runner's descriptors until its exec
 * closes them (close-on-exec), so for that moment the dead runner's lock is still held, and
 * the cell is not yet visible as the run's (its tag is set for the exec). Waiting for the exec
 * lets a resume right after a kill start (and see the cell) instead of being refused. */
static int flock_after_dead_holder(int fd) {
  for (int tries = 0;; tries++) {
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) return 0;
    long pid = lock_holder_pid(fd);
    if (tries >= 100 || pid <= 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH) return -1;
    struct timespec ts = {0, 50 * 1000000L}; /* 100 x 50 ms */
    nanosleep(&ts, NULL);
  }
}

/* One runner per figure folder: FIGDIR/runs/.lock, flock()ed for the runner's whole life and
 * close-on-exec (cells never hold it once they run), holding "pid N, run ID" of its holder.
 * Returns 0 with *fd the lock (or -1 when --allow-concurrent goes on beside another runner),
 * -1 refused. */
int lock_figure(const char *figdir, int allow, int *fd) {
  *fd = -1;
  char *runs = xasprintf("%s/runs", figdir), *path = xasprintf("%s/.lock", runs);
  mkdir_p(runs, 0755);
  int lfd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644), rc = 0;
  if (lfd < 0) {
    fprintf(stderr, "repro-run: cannot open %s: %s\n", path, strerror(errno));
    rc = -1;
  } else if (flock_after_dead_holder(lfd) == 0) {
    char text[64];
    int n = snprintf(text, sizeof text, "pid %ld, run (starting)\n", (long)getpid());
    if (ftruncate(lfd, 0) != 0 || pwrite(lfd, text, (size_t)n, 0) != n) { /* only a message */
    }
    *fd = lfd;
  } else {
    char holder[512];
    ssize_t n = pread(lfd, holder, sizeof holder - 1, 0);
    holder[n > 0 ? n : 0] = '\0';
    holder[strcspn(holder, "\n")] = '\0';
    close(lfd);
    if (!holder[0]) snprintf(holder, sizeof holder, "pid unknown");
    if (allow) {
      fprintf(stderr,
              "repro-run: another runner works on %s (%s): starting beside it "
              "(--allow-concurrent)\n",
              figdir, holder);
    } else {
      fprintf(stderr,
              "repro-run: another runner works on %s (%s): two runners of one figure submit "
              "its cells twice and, on one GPU, spoil each other's timings. Wait for it, stop it, "
              "or pass --allow-concurrent for a deliberate second run\n",
              figdir, holder);
      rc = -1;
    }
  }
  free(runs);
  free(path);
  return rc;
}

/* Says in the figure lock which run its holder works on. */
void lock_figure_note(int fd, const run *r) {
  if (fd < 0) return;
  char *text = xasprintf("pid %ld, run %s\n", (long)getpid(), r->dir);
  size_t n = strlen(text);
  if (ftruncate(fd, 0) != 0 || pwrite(fd, text, n, 0) != (ssize_t)n) { /* only a message */
  }
  free(text);
}

/* A runner returns while its Slurm jobs wait in the queue (--no-wait, Ctrl-C, a killed
 * runner): the figure lock is free then, but the cells are not. Refuses (unless allow) while
 * a run of this figure other than `self` still has tasks queued or running. */
int check_queued_runs(const char *figdir, const char *self, int allow) {
  if (!slurm_available()) return 0;
  char *runs = xasprintf("%s/runs", figdir);
  DIR *d = opendir(runs);
  int rc = 0;
  struct dirent *e;
  while (d && (e = readdir(d))) {
    if (e->d_name[0] == '.' || strncmp(e->d_name, "dry-run-", 8) == 0) continue;
    char *dir = xasprintf("%s/%s", runs, e->d_name), *manifest = xasprintf("%s/manifest", dir);
    char *abs = path_absolute(dir);
    run r;
    if (file_exists(manifest) && !(self && strcmp(abs, self) == 0) &&
        run_open(&r, dir, RUN_READ) == 0) {
      int live = slurm_has_subs(&r) ? slurm_live_tasks(&r) : 0;
      if (live > 0 && allow) {
        fprintf(stderr,
                "repro-run: run %s still has %d cells queued or running under Slurm: "
                "starting beside it (--allow-concurrent)\n",
                r.dir, live);
      } else if (live > 0) {
        fprintf(stderr,
                "repro-run: run %s still has %d cells queued or running under Slurm (its runner "
                "has returned): a new run would submit them again. `repro-run status %s` shows "
                "them, `--resume` continues that run, `repro-run cancel %s` ends it; "
                "--allow-concurrent starts a second run anyway\n",
                r.dir, live, r.dir, r.dir);
        rc = -1;
      }
      run_close(&r);
    }
    free(abs);
    free(manifest);
    free(dir);
  }
  if (d) closedir(d);
  free(runs);
  return rc;
}
