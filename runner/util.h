/* Small helpers of the runner's files: file and path helpers on top of common/ (checked
 * allocation, strings and string arrays in strbuf.h, slurp and mkdir_p in fileio.h). */
#ifndef RUNNER_UTIL_H
#define RUNNER_UTIL_H

#include <stdarg.h>
#include <stddef.h>

#include "fileio.h"
#include "strbuf.h"

/* Files. Return 0 on success, -1 with errno set. */
/* Whole file, no size limit beyond memory (journals, markers); see repro_slurp. */
int read_file(const char *path, char **out, size_t *len);
/* Write the whole content to path via path.tmp.<pid> + fsync + rename. */
int write_file_atomic(const char *path, const char *data, size_t len);
int file_exists(const char *path);

/* Directory part of path ("." when none) and absolute form of a path; caller frees. */
char *path_dirname(const char *path);
char *path_absolute(const char *path);
const char *path_basename(const char *path);

/* The file that marks the repository root. */
#define REPO_ROOT_MARKER ".repro-root"
/* The repository root of an experiment folder: dir itself or the nearest folder above it
 * holding REPO_ROOT_MARKER (absolute; caller frees), or NULL when there is none. */
char *repo_root_find(const char *dir);

double now_seconds(void); /* monotonic clock */

/* A value for a message: single-quoted, newlines, tabs, quotes and other control bytes
 * escaped (\n, \t, \', \xNN), cut after 80 bytes with "...". Caller frees. */
char *quote_value(const char *s);

#endif
