/* Small helpers shared by the runner's files: checked allocation, a growable string, a
 * growable array of strings, file and path helpers. Out of memory is fatal (the runner
 * cannot do anything useful without memory); every other error is returned. */
#ifndef RUNNER_UTIL_H
#define RUNNER_UTIL_H

#include <stdarg.h>
#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Growable NUL-terminated string. */
typedef struct {
  char *s;
  size_t len, cap;
} sbuf;
void sb_addn(sbuf *b, const char *s, size_t n);
void sb_add(sbuf *b, const char *s);
void sb_addc(sbuf *b, char c);
void sb_addf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_clear(sbuf *b);
void sb_free(sbuf *b);
char *sb_take(sbuf *b); /* hands the string to the caller, leaves b empty */

/* Growable array of owned strings. */
typedef struct {
  char **v;
  int n, cap;
} strvec;
void sv_push(strvec *sv, const char *s);     /* copies s */
void sv_push_own(strvec *sv, char *s);        /* takes s */
int sv_find(const strvec *sv, const char *s); /* index or -1 */
void sv_free(strvec *sv);

/* Files. Return 0 on success, -1 with errno set. */
int read_file(const char *path, char **out, size_t *len);
/* Write the whole content to path via path.tmp.<pid> + fsync + rename. */
int write_file_atomic(const char *path, const char *data, size_t len);
int mkdir_p(const char *path, int mode);
int file_exists(const char *path);

/* Directory part of path ("." when none) and absolute form of a path; caller frees. */
char *path_dirname(const char *path);
char *path_absolute(const char *path);
const char *path_basename(const char *path);

double now_seconds(void); /* monotonic clock */

#endif
