/* fileio: reading a whole file, writing one whole (a unique temporary, then one rename) and
 * creating folders, for the runner, the plotter and the YAML loader. Plain malloc: these
 * return errors instead of exiting. */
#ifndef REPRO_FILEIO_H
#define REPRO_FILEIO_H

#include <stddef.h>
#include <stdio.h>

/* Limits for repro_slurp callers. */
#define REPRO_MAX_YAML_BYTES ((size_t)16 << 20) /* experiment and cluster files */
#define REPRO_MAX_LOG_BYTES  ((size_t)1 << 30)  /* one cell's log */

/* Reads the regular file path whole into a NUL-terminated buffer (the caller frees it) and
 * sets *len (NUL excluded). On failure returns NULL with errno set and, when why is not
 * NULL, why[0..why_cap) holding the reason without the path, e.g. "No such file or
 * directory", "not a regular file", "larger than 16777216 bytes (the limit)". */
char *repro_slurp(const char *path, size_t max_bytes, size_t *len, char *why, size_t why_cap);

/* Writing a file whole. Every file the kit writes goes this way: the content goes to a new
 * temporary beside path, ".<name>.XXXXXX" in path's folder (six random characters, created
 * with O_CREAT | O_EXCL, so never shared with another writer and never opened through a link),
 * which is then renamed over path in one step. A reader of path sees the old content or the
 * new one, whole. Of several writers of one path each rename puts that writer's whole content
 * in place, and the last rename wins. On an error the temporary is removed and path keeps
 * what it held. */
typedef struct {
  char *path; /* the final name (owned) */
  char *tmp;  /* the temporary beside it (owned) */
  FILE *f;    /* the temporary, open for writing */
  int flags;  /* AFILE_SYNC */
} afile;

/* fsync the file before the rename and its folder after it: run state that must survive a
 * crash of the machine (the runner's array scripts). */
#define AFILE_SYNC 1

/* "<folder of path>/.<name of path>.XXXXXX" (caller frees): the template of path's temporary,
 * for afile_open and for a private folder made with mkdtemp(3). */
char *repro_temp_template(const char *path);
/* Creates path's temporary, mode as open(2)'s (the umask applies), and opens a->f on it.
 * 0, or -1 with errno set and why[0..why_cap) saying what failed ("cannot create a temporary
 * file in its folder: Permission denied"); a is then empty. */
int afile_open(afile *a, const char *path, int mode, int flags, char *why, size_t why_cap);
/* Flushes and closes the temporary (syncs with AFILE_SYNC) and renames it to a->path. 0, or
 * -1 with errno set and why saying which step failed ("writing failed: No space left on
 * device"): the temporary is removed and path is as it was. a is released either way. */
int afile_commit(afile *a, char *why, size_t why_cap);
/* Removes the temporary; path is as it was. a is released. Safe on an empty a. */
void afile_abort(afile *a);
/* data[0, len) as path's new content through afile_open / afile_commit (mode as there). */
int repro_write_file(const char *path, const void *data, size_t len, int mode, int flags, char *why,
                     size_t why_cap);
/* The runner's run state: repro_write_file with mode 0644 and AFILE_SYNC. 0, or -1 with errno
 * set. */
int write_file_atomic(const char *path, const char *data, size_t len);

/* mkdir -p: creates path and its missing parents with mode. 0, or -1 with errno set. */
int mkdir_p(const char *path, int mode);

#endif
