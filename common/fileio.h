/* fileio: reading a whole file and creating folders, for the runner, the plotter and the
 * YAML loader. Plain malloc: these return errors instead of exiting. */
#ifndef REPRO_FILEIO_H
#define REPRO_FILEIO_H

#include <stddef.h>

/* Limits for repro_slurp callers. */
#define REPRO_MAX_YAML_BYTES ((size_t)16 << 20) /* experiment and cluster files */
#define REPRO_MAX_LOG_BYTES  ((size_t)1 << 30)  /* one cell's log */

/* Reads the regular file path whole into a NUL-terminated buffer (the caller frees it) and
 * sets *len (NUL excluded). On failure returns NULL with errno set and, when why is not
 * NULL, why[0..why_cap) holding the reason without the path, e.g. "No such file or
 * directory", "not a regular file", "larger than 16777216 bytes (the limit)". */
char *repro_slurp(const char *path, size_t max_bytes, size_t *len, char *why, size_t why_cap);

/* mkdir -p: creates path and its missing parents with mode. 0, or -1 with errno set. */
int mkdir_p(const char *path, int mode);

#endif
