/* reporoot: the repository root, the nearest folder that holds the marker file .repro-root,
 * found once for the kit's C programs (the runner's {root}, the plotter's registry); the shell
 * scripts' twin is scripts/lib/root.sh. */
#ifndef REPRO_REPOROOT_H
#define REPRO_REPOROOT_H

#define REPRO_ROOT_MARKER ".repro-root"

/* The nearest folder at or above path (a folder or a file, symbolic links resolved) that holds
 * REPRO_ROOT_MARKER: its absolute path (the caller frees it), or NULL when there is none or
 * path does not exist. Out of memory exits (strbuf.h). */
char *repro_root_find(const char *path);

#endif
