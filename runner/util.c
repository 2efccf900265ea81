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

int read_file(const char *path, char **out, size_t *len) {
  char *data = repro_slurp(path, (size_t)-1 / 2, len, NULL, 0);
  if (!data) return -1;
  *out = data;
  return 0;
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

char *repo_root_find(const char *dir) {
  char *at = path_absolute(dir);
  for (;;) {
    char *marker = xasprintf("%s/%s", at, REPO_ROOT_MARKER);
    int found = file_exists(marker);
    free(marker);
    if (found) return at;
    if (strcmp(at, "/") == 0) break;
    char *up = path_dirname(at);
    free(at);
    at = up;
  }
  free(at);
  return NULL;
}

double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

char *quote_value(const char *s) {
  sbuf b = {0};
  sb_addc(&b, '\'');
  size_t n = 0;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++, n++) {
    if (n == 80) {
      sb_add(&b, "...");
      break;
    }
    if (*p == '\n')
      sb_add(&b, "\\n");
    else if (*p == '\t')
      sb_add(&b, "\\t");
    else if (*p == '\r')
      sb_add(&b, "\\r");
    else if (*p == '\'' || *p == '\\')
      sb_addf(&b, "\\%c", *p);
    else if (*p < 0x20 || *p == 0x7f)
      sb_addf(&b, "\\x%02x", *p);
    else
      sb_addc(&b, (char)*p);
  }
  sb_addc(&b, '\'');
  return sb_take(&b);
}
