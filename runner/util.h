/* Small helpers of the runner's files: file and path helpers on top of common/ (checked
 * allocation, strings and string arrays in strbuf.h, slurp and mkdir_p in fileio.h). */
#ifndef RUNNER_UTIL_H
#define RUNNER_UTIL_H

#include <stdarg.h>
#include <stddef.h>

#include "fileio.h"
#include "strbuf.h"

/* Run state (a run's journal, logs and folders) is opened without following a link
 * (O_NOFOLLOW) and without blocking on a FIFO (O_NONBLOCK, cleared once open), then checked
 * with fstat: a regular file or a real folder, nothing else. */
typedef enum { STATE_FILE, STATE_DIR } state_kind;
/* open(2) of path with flags (and mode, with O_CREAT) when it is a kind; the descriptor, or -1
 * with errno set and *why saying what path is instead ("is a symbolic link", "is a FIFO", ...,
 * or strerror's text). */
int state_open(const char *path, int flags, int mode, state_kind kind, const char **why);
/* 0 when path is a real folder, not a link (missing: 0 when may_miss); -1 with errno and *why. */
int state_dir_ok(const char *path, int may_miss, const char **why);
/* The rest of fd, at most max bytes, NUL-terminated (caller frees); 0, or -1 with errno
 * (EFBIG: larger than max). */
int read_fd_bounded(int fd, size_t max, char **out, size_t *len);

/* Files. Return 0 on success, -1 with errno set. */
/* A regular file whole (not through a link, never blocking on a FIFO), at most max bytes. */
int state_read(const char *path, size_t max, char **out, size_t *len, const char **why);
/* state_read with no size limit beyond memory (markers, /proc files). */
int read_file(const char *path, char **out, size_t *len);
/* Writing a file whole (a unique temporary beside it, fsync, rename): write_file_atomic and
 * the afile API of fileio.h. */
int file_exists(const char *path);

/* Directory part of path ("." when none) and absolute form of a path; caller frees. */
char *path_dirname(const char *path);
char *path_absolute(const char *path);
const char *path_basename(const char *path);

double now_seconds(void); /* monotonic clock */

/* Does process pid's environment (/proc/<pid>/environ) hold entry ("NAME=value")? */
int proc_env_has(long pid, const char *entry);

/* A value for a message: single-quoted, newlines, tabs, quotes and other control bytes
 * escaped (\n, \t, \', \xNN), cut after 80 bytes with "...". Caller frees. */
char *quote_value(const char *s);

#endif
