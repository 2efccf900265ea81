/* walk: a folder of logs walked (see walk.h): sorted by name, each entry lstat'ed first, each
 * directory and file once (the set of (st_dev, st_ino) seen), links out of it not followed;
 * every regular file handed to the walk's visitor, which reads it whole at most once. */
#define _GNU_SOURCE /* realpath, strdup, O_CLOEXEC */
#include "walk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"

static size_t seen_hash(dev_t d, ino_t i, size_t cap) {
  unsigned long long h = (unsigned long long)i * 0x9E3779B97F4A7C15ull ^ (unsigned long long)d;
  return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

/* Returns the path first seen with (dev, ino), or NULL after adding it as path. */
static const char *seen_add(wk_seen *s, dev_t dev, ino_t ino, const char *path) {
  if (2 * (s->n + 1) > s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 64;
    wk_seen_entry *nv = calloc(cap, sizeof *nv);
    if (!nv) return NULL; /* out of memory: reading twice beats not reading */
    for (size_t i = 0; i < s->cap; i++) {
      if (!s->v[i].path) continue;
      size_t h = seen_hash(s->v[i].dev, s->v[i].ino, cap);
      while (nv[h].path) h = (h + 1) & (cap - 1);
      nv[h] = s->v[i];
    }
    free(s->v);
    s->v = nv;
    s->cap = cap;
  }
  size_t h = seen_hash(dev, ino, s->cap);
  for (; s->v[h].path; h = (h + 1) & (s->cap - 1))
    if (s->v[h].dev == dev && s->v[h].ino == ino) return s->v[h].path;
  char *copy = strdup(path);
  if (!copy) return NULL;
  s->v[h] = (wk_seen_entry){dev, ino, copy};
  s->n++;
  return NULL;
}

static void seen_free(wk_seen *s) {
  for (size_t i = 0; i < s->cap; i++) free(s->v[i].path);
  free(s->v);
}

const char *wk_file_kind(mode_t m) {
  return S_ISFIFO(m)   ? "a FIFO"
         : S_ISSOCK(m) ? "a socket"
         : S_ISCHR(m)  ? "a character device"
         : S_ISBLK(m)  ? "a block device"
                       : "not a regular file";
}

/* Reads a regular file whole; never blocks on a FIFO or device (opened O_NONBLOCK and
 * checked with fstat before any read). Returns the NUL-terminated buffer, or NULL with why. */
static char *slurp_regular(const char *path, size_t max, size_t *len, struct stat *st, char *why,
                           size_t cap) {
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    snprintf(why, cap, "%s", strerror(errno));
    return NULL;
  }
  char *buf = NULL;
  if (fstat(fd, st) != 0) {
    snprintf(why, cap, "%s", strerror(errno));
  } else if (!S_ISREG(st->st_mode)) {
    snprintf(why, cap, "%s, not a regular file", wk_file_kind(st->st_mode));
  } else if ((size_t)st->st_size > max) {
    snprintf(why, cap, "larger than %zu bytes (the limit)", max);
  } else if (!(buf = malloc((size_t)st->st_size + 1))) {
    snprintf(why, cap, "out of memory");
  } else {
    size_t n = 0, want = (size_t)st->st_size;
    while (n < want) { /* a file that shrinks while read ends early; one that grows is cut */
      ssize_t r = read(fd, buf + n, want - n);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) {
        snprintf(why, cap, "%s", strerror(errno));
        free(buf);
        buf = NULL;
        break;
      }
      if (r == 0) break;
      n += (size_t)r;
    }
    if (buf) {
      buf[n] = '\0';
      *len = n;
    }
  }
  close(fd);
  return buf;
}

/* A file of the walk read whole (at most REPRO_MAX_LOG_BYTES: a 1 GiB "log" is not a log), or
 * NULL with the issue added: it cannot be read, or the walk read it already (a second link to
 * the same file). The caller frees the buffer. */
char *wk_read_once(wk_walk *w, const char *path, size_t *len, struct stat *st) {
  char why[128];
  char *buf = slurp_regular(path, REPRO_MAX_LOG_BYTES, len, st, why, sizeof why);
  if (!buf) {
    rd_issue_add(w->is, ISSUE_SKIPPED, path, 0, "cannot read: %s", why);
    return NULL;
  }
  const char *first = seen_add(&w->files, st->st_dev, st->st_ino, path);
  if (first) {
    rd_issue_add(w->is, ISSUE_SKIPPED, path, 0,
                 "already read as %s (the same file): not read twice", first);
    free(buf);
    return NULL;
  }
  return buf;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int walk_dir(wk_walk *w, const char *path, const struct stat *dst);

/* 1 when the real path of link full lies inside the walk's root (or the root is unknown). */
static int link_inside_root(const wk_walk *w, const char *full) {
  if (!w->root_real) return 1;
  char *real = realpath(full, NULL);
  if (!real) return 0;
  size_t n = strlen(w->root_real);
  int inside = !strcmp(w->root_real, "/") ||
               (!strncmp(real, w->root_real, n) && (real[n] == '/' || real[n] == '\0'));
  free(real);
  return inside;
}

/* One directory entry: lstat first, so a dangling link is reported and a FIFO, socket or
 * device is listed without ever being opened; a link whose target lies outside the root is
 * listed once and not followed. */
static int walk_entry(wk_walk *w, const char *full) {
  struct stat lst, st;
  if (lstat(full, &lst) != 0) {
    rd_issue_add(w->is, ISSUE_SKIPPED, full, 0, "cannot stat: %s", strerror(errno));
    return 0;
  }
  st = lst;
  if (S_ISLNK(lst.st_mode)) {
    char target[PT_PATH];
    ssize_t n = readlink(full, target, sizeof target - 1);
    target[n > 0 ? n : 0] = '\0';
    if (stat(full, &st) != 0) {
      rd_issue_add(w->is, ISSUE_SKIPPED, full, 0, "dangling symlink (-> %s): %s", target,
                   strerror(errno));
      return 0;
    }
    if (!link_inside_root(w, full)) {
      rd_issue_add(w->is, ISSUE_SKIPPED, full, 0,
                   "symlink leads out of the log folder (-> %s): not followed", target);
      return 0;
    }
  }
  if (S_ISDIR(st.st_mode)) return walk_dir(w, full, &st);
  if (!S_ISREG(st.st_mode)) {
    rd_issue_add(w->is, ISSUE_SKIPPED, full, 0, "%s, not a regular file: not read",
                 wk_file_kind(st.st_mode));
    return 0;
  }
  return w->visit(w->ctx, w, full);
}

static int walk_dir(wk_walk *w, const char *path, const struct stat *dst) {
  const char *first = seen_add(&w->dirs, dst->st_dev, dst->st_ino, path);
  if (first) {
    rd_issue_add(w->is, ISSUE_SKIPPED, path, 0,
                 "directory already read as %s (a symlink loop?): not read twice", first);
    return 0;
  }
  DIR *d = opendir(path);
  if (!d) {
    rd_issue_add(w->is, ISSUE_SKIPPED, path, 0, "cannot open directory: %s", strerror(errno));
    return -1;
  }
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *de;
  while ((de = readdir(d))) {
    if (de->d_name[0] == '.') continue; /* ., .., .gitkeep */
    if (n == cap) {
      cap = cap ? cap * 2 : 64;
      char **nn = realloc(names, cap * sizeof *nn);
      if (!nn) break;
      names = nn;
    }
    if (!(names[n] = strdup(de->d_name))) break;
    n++;
  }
  closedir(d);
  if (n > 1) qsort(names, n, sizeof *names, cmp_str);
  int added = 0;
  for (size_t i = 0; i < n; i++) {
    char full[PT_PATH];
    int wr = snprintf(full, sizeof full, "%s/%s", path, names[i]);
    free(names[i]);
    if (wr < 0 || (size_t)wr >= sizeof full) {
      rd_issue_add(w->is, ISSUE_SKIPPED, path, 0, "path too long: %s/...", path);
      continue;
    }
    int r = walk_entry(w, full);
    if (r > 0) added += r;
  }
  free(names);
  return added;
}

/* What a walk owns. */
void wk_init(wk_walk *w, rd_issues *is, wk_visit_fn visit, void *ctx) {
  *w = (wk_walk){.is = is, .visit = visit, .ctx = ctx};
}

void wk_free(wk_walk *w) {
  seen_free(&w->dirs);
  seen_free(&w->files);
  free(w->root_real);
}

int wk_walk_root(wk_walk *w, const char *path, const struct stat *st) {
  w->root_real = realpath(path, NULL);
  return walk_dir(w, path, st);
}
