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

/* What a file of this mode is, for a message. */
static const char *describe_mode(mode_t m) {
  if (S_ISLNK(m)) return "is a symbolic link";
  if (S_ISFIFO(m)) return "is a FIFO";
  if (S_ISSOCK(m)) return "is a socket";
  if (S_ISCHR(m) || S_ISBLK(m)) return "is a device";
  if (S_ISDIR(m)) return "is a folder, not a file";
  if (S_ISREG(m)) return "is a file, not a folder";
  return "is not a regular file";
}

int state_open(const char *path, int flags, int mode, state_kind kind, const char **why) {
  int fd = open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, (mode_t)mode);
  if (fd < 0) {
    int e = errno;
    *why = e == ELOOP ? "is a symbolic link" : e == ENXIO ? "is a FIFO or a socket" : strerror(e);
    errno = e;
    return -1;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    *why = strerror(e);
    close(fd);
    errno = e;
    return -1;
  }
  if (kind == STATE_FILE ? !S_ISREG(st.st_mode) : !S_ISDIR(st.st_mode)) {
    *why = describe_mode(st.st_mode);
    close(fd);
    errno = EINVAL;
    return -1;
  }
  int fl = fcntl(fd, F_GETFL);
  if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  return fd;
}

int state_dir_ok(const char *path, int may_miss, const char **why) {
  struct stat st;
  if (lstat(path, &st) != 0) {
    int e = errno;
    if (e == ENOENT && may_miss) return 0;
    *why = strerror(e);
    errno = e;
    return -1;
  }
  if (!S_ISDIR(st.st_mode)) {
    *why = describe_mode(st.st_mode);
    errno = S_ISLNK(st.st_mode) ? ELOOP : ENOTDIR;
    return -1;
  }
  return 0;
}

int read_fd_bounded(int fd, size_t max, char **out, size_t *len) {
  size_t cap = 4096, n = 0;
  char *buf = xmalloc(cap);
  for (;;) {
    if (n + 1 >= cap) {
      if (cap > max) {
        free(buf);
        errno = EFBIG;
        return -1;
      }
      cap *= 2;
      buf = xrealloc(buf, cap);
    }
    ssize_t r = read(fd, buf + n, cap - n - 1);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      int e = errno;
      free(buf);
      errno = e;
      return -1;
    }
    if (r == 0) break;
    n += (size_t)r;
  }
  if (n > max) {
    free(buf);
    errno = EFBIG;
    return -1;
  }
  buf[n] = '\0';
  *out = buf;
  if (len) *len = n;
  return 0;
}

int state_read(const char *path, size_t max, char **out, size_t *len, const char **why) {
  int fd = state_open(path, O_RDONLY, 0, STATE_FILE, why);
  if (fd < 0) return -1;
  int rc = read_fd_bounded(fd, max, out, len);
  int e = errno;
  close(fd);
  if (rc != 0) {
    *why = e == EFBIG ? "is larger than the runner reads" : strerror(e);
    errno = e;
  }
  return rc;
}

int read_file(const char *path, char **out, size_t *len) {
  const char *why;
  return state_read(path, (size_t)-1 / 4, out, len, &why);
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

int proc_env_has(long pid, const char *entry) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%ld/environ", pid);
  char *data;
  size_t len;
  if (read_file(path, &data, &len) != 0) return 0;
  int hit = 0;
  for (size_t off = 0; off < len && !hit; off += strlen(data + off) + 1)
    hit = strcmp(data + off, entry) == 0;
  free(data);
  return hit;
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
