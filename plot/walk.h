/* walk: the reader's walk of a log folder (reader.c: rd_read_path's logs, rd_walk_files' files
 * of one suffix). Sorted by name, dot files left out; each entry is lstat'ed first: a FIFO,
 * socket or device is listed and never opened, a dangling symlink is listed, a symlink whose
 * real path lies outside the root is listed and not followed, and no directory or file is read
 * twice (their (st_dev, st_ino) are remembered: directory links to . loop no more). What cannot
 * be read is an issue (reader.h). Internal to the reader. */
#ifndef PLOT_WALK_H
#define PLOT_WALK_H

#include <stddef.h>
#include <sys/stat.h>

#include "issues.h"

/* What the walk has seen: (st_dev, st_ino) of every directory walked and file read, so
 * directory links to . or .. and second names of one file never read anything twice. */
typedef struct {
  dev_t dev;
  ino_t ino;
  char *path; /* where it was first seen */
} wk_seen_entry;

typedef struct {
  wk_seen_entry *v; /* open addressing, cap a power of two */
  size_t n, cap;
} wk_seen;

typedef struct wk_walk wk_walk;

/* Called with each regular file the walk reaches; returns the rows (or files) it added. */
typedef int (*wk_visit_fn)(void *ctx, wk_walk *w, const char *path);

struct wk_walk {
  rd_issues *is;
  wk_seen dirs, files;
  char *root_real; /* the root's real path (owned); NULL: no root, every link is followed */
  wk_visit_fn visit;
  void *ctx;
};

void wk_init(wk_walk *w, rd_issues *is, wk_visit_fn visit, void *ctx);
/* Walks the directory path (stat'ed as st; the caller checked it can be read) as the root.
 * Returns the sum of the visits' counts, or -1 when path cannot be opened. */
int wk_walk_root(wk_walk *w, const char *path, const struct stat *st);
/* A file of the walk read whole (at most REPRO_MAX_LOG_BYTES: a 1 GiB "log" is not a log),
 * NUL-terminated, or NULL with the issue added: it cannot be read, or the walk read it already
 * (a second link to the same file). The caller frees the buffer. */
char *wk_read_once(wk_walk *w, const char *path, size_t *len, struct stat *st);
/* "a FIFO", "a socket", ...: what a file that is no regular file is. */
const char *wk_file_kind(mode_t m);
void wk_free(wk_walk *w);

#endif
