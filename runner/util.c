#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void oom(void) {
  fputs("repro-run: out of memory\n", stderr);
  exit(70);
}

void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) oom();
  return p;
}

void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (!p) oom();
  return p;
}

void *xrealloc(void *p, size_t n) {
  p = realloc(p, n ? n : 1);
  if (!p) oom();
  return p;
}

char *xstrdup(const char *s) { return xstrndup(s, strlen(s)); }

char *xstrndup(const char *s, size_t n) {
  char *d = xmalloc(n + 1);
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

char *xasprintf(const char *fmt, ...) {
  sbuf b = {0};
  va_list ap;
  va_start(ap, fmt);
  char tmp[256];
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0) oom();
  if ((size_t)n < sizeof tmp) {
    va_end(ap2);
    return xstrdup(tmp);
  }
  b.s = xmalloc((size_t)n + 1);
  vsnprintf(b.s, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  return b.s;
}

static void sb_reserve(sbuf *b, size_t extra) {
  if (b->len + extra + 1 <= b->cap) return;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < b->len + extra + 1) cap *= 2;
  b->s = xrealloc(b->s, cap);
  b->cap = cap;
}

void sb_addn(sbuf *b, const char *s, size_t n) {
  sb_reserve(b, n);
  memcpy(b->s + b->len, s, n);
  b->len += n;
  b->s[b->len] = '\0';
}

void sb_add(sbuf *b, const char *s) { sb_addn(b, s, strlen(s)); }
void sb_addc(sbuf *b, char c) { sb_addn(b, &c, 1); }

void sb_addf(sbuf *b, const char *fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) oom();
  sb_reserve(b, (size_t)n);
  vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  b->len += (size_t)n;
}

void sb_clear(sbuf *b) {
  b->len = 0;
  if (b->s) b->s[0] = '\0';
}

void sb_free(sbuf *b) {
  free(b->s);
  b->s = NULL;
  b->len = b->cap = 0;
}

char *sb_take(sbuf *b) {
  char *s = b->s ? b->s : xstrdup("");
  b->s = NULL;
  b->len = b->cap = 0;
  return s;
}

void sv_push_own(strvec *sv, char *s) {
  if (sv->n == sv->cap) {
    sv->cap = sv->cap ? sv->cap * 2 : 8;
    sv->v = xrealloc(sv->v, (size_t)sv->cap * sizeof *sv->v);
  }
  sv->v[sv->n++] = s;
}

void sv_push(strvec *sv, const char *s) { sv_push_own(sv, xstrdup(s)); }

int sv_find(const strvec *sv, const char *s) {
  for (int i = 0; i < sv->n; i++)
    if (strcmp(sv->v[i], s) == 0) return i;
  return -1;
}

void sv_free(strvec *sv) {
  for (int i = 0; i < sv->n; i++) free(sv->v[i]);
  free(sv->v);
  sv->v = NULL;
  sv->n = sv->cap = 0;
}

int read_file(const char *path, char **out, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  sbuf b = {0};
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) sb_addn(&b, chunk, n);
  int err = ferror(f);
  fclose(f);
  if (err) {
    sb_free(&b);
    errno = EIO;
    return -1;
  }
  if (len) *len = b.len;
  *out = sb_take(&b);
  return 0;
}

int write_file_atomic(const char *path, const char *data, size_t len) {
  char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    free(tmp);
    return -1;
  }
  size_t off = 0;
  while (off < len) {
    ssize_t w = write(fd, data + off, len - off);
    if (w < 0) {
      if (errno == EINTR) continue;
      goto fail;
    }
    off += (size_t)w;
  }
  if (fsync(fd) != 0) goto fail;
  if (close(fd) != 0) {
    fd = -1;
    goto fail;
  }
  if (rename(tmp, path) != 0) {
    fd = -1;
    goto fail;
  }
  free(tmp);
  return 0;
fail:;
  int saved = errno;
  if (fd >= 0) close(fd);
  unlink(tmp);
  free(tmp);
  errno = saved;
  return -1;
}

int mkdir_p(const char *path, int mode) {
  char *p = xstrdup(path);
  for (char *s = p + 1; *s; s++) {
    if (*s != '/') continue;
    *s = '\0';
    if (mkdir(p, (mode_t)mode) != 0 && errno != EEXIST) {
      free(p);
      return -1;
    }
    *s = '/';
  }
  int rc = mkdir(p, (mode_t)mode);
  free(p);
  return rc != 0 && errno != EEXIST ? -1 : 0;
}

int file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

char *path_dirname(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return xstrdup(".");
  if (slash == path) return xstrdup("/");
  return xstrndup(path, (size_t)(slash - path));
}

const char *path_basename(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

char *path_absolute(const char *path) {
  char buf[PATH_MAX];
  if (realpath(path, buf)) return xstrdup(buf);
  if (path[0] == '/') return xstrdup(path);
  if (!getcwd(buf, sizeof buf)) return xstrdup(path);
  return xasprintf("%s/%s", buf, path);
}

double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
