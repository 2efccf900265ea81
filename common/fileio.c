#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *fail(int fd, char *buf, int err, char *why, size_t why_cap, const char *text) {
  if (fd >= 0) close(fd);
  free(buf);
  if (why && why_cap) snprintf(why, why_cap, "%s", text ? text : strerror(err));
  errno = err;
  return NULL;
}

/* Reads fd to its end into buf (capacity *cap, grown up to max_bytes + 1). */
static char *read_all(int fd, char *buf, size_t *cap, size_t max_bytes, size_t *len, int *err) {
  size_t n = 0;
  for (;;) {
    if (n + 1 >= *cap) { /* the file grew while we read it */
      char *nb = *cap <= max_bytes ? realloc(buf, *cap * 2) : NULL;
      if (!nb) {
        *err = *cap <= max_bytes ? ENOMEM : EFBIG;
        return buf;
      }
      buf = nb;
      *cap *= 2;
    }
    ssize_t r = read(fd, buf + n, *cap - n - 1);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      *err = errno;
      return buf;
    }
    if (r == 0) break;
    n += (size_t)r;
  }
  if (n > max_bytes) *err = EFBIG;
  buf[n] = '\0';
  *len = n;
  return buf;
}

char *repro_slurp(const char *path, size_t max_bytes, size_t *len, char *why, size_t why_cap) {
  char limit[96];
  snprintf(limit, sizeof limit, "larger than %zu bytes (the limit)", max_bytes);
  int fd = open(path, O_RDONLY);
  if (fd < 0) return fail(-1, NULL, errno, why, why_cap, NULL);
  struct stat st;
  if (fstat(fd, &st) != 0) return fail(fd, NULL, errno, why, why_cap, NULL);
  if (!S_ISREG(st.st_mode)) return fail(fd, NULL, EINVAL, why, why_cap, "not a regular file");
  if ((size_t)st.st_size > max_bytes) return fail(fd, NULL, EFBIG, why, why_cap, limit);
  size_t cap = (size_t)st.st_size + 2, n = 0;
  char *buf = malloc(cap);
  if (!buf) return fail(fd, NULL, ENOMEM, why, why_cap, "out of memory");
  int err = 0;
  buf = read_all(fd, buf, &cap, max_bytes, &n, &err);
  if (err) return fail(fd, buf, err, why, why_cap, err == EFBIG ? limit : NULL);
  close(fd);
  if (len) *len = n;
  return buf;
}

int mkdir_p(const char *path, int mode) {
  size_t n = strlen(path);
  char *p = malloc(n + 1);
  if (!p) {
    errno = ENOMEM;
    return -1;
  }
  memcpy(p, path, n + 1);
  for (char *s = p + 1; *s; s++) {
    if (*s != '/') continue;
    *s = '\0';
    if (mkdir(p, (mode_t)mode) != 0 && errno != EEXIST) {
      int saved = errno;
      free(p);
      errno = saved;
      return -1;
    }
    *s = '/';
  }
  int rc = mkdir(p, (mode_t)mode) != 0 && errno != EEXIST ? -1 : 0;
  int saved = errno;
  free(p);
  errno = saved;
  return rc;
}
