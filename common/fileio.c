#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
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

/* ---- writing a file whole: a unique temporary beside it, then one rename ---- */

/* -1 with errno = err and why = "what: strerror(err)" (why may be NULL). */
static int say(char *why, size_t why_cap, int err, const char *what) {
  if (why && why_cap) snprintf(why, why_cap, "%s: %s", what, strerror(err));
  errno = err;
  return -1;
}

char *repro_temp_template(const char *path) {
  const char *slash = strrchr(path, '/');
  size_t dir = slash ? (size_t)(slash - path) + 1 : 0;
  size_t base = strlen(path + dir);
  if (base > 200) base = 200; /* the random suffix makes it unique; NAME_MAX is 255 */
  size_t cap = dir + base + 9;
  char *t = malloc(cap);
  if (!t) {
    errno = ENOMEM;
    return NULL;
  }
  snprintf(t, cap, "%.*s.%.*s.XXXXXX", (int)dir, path, (int)base, path + dir);
  return t;
}

/* Six random characters of [A-Za-z0-9] over the XXXXXX at x. */
static void fill_random(char *x) {
  static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  static unsigned long long counter;
  unsigned char r[6];
  if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    unsigned long long v = (unsigned long long)ts.tv_nsec ^ (unsigned long long)ts.tv_sec << 30 ^
                           (unsigned long long)getpid() << 40 ^ ++counter * 0x9E3779B97F4A7C15ULL;
    for (int i = 0; i < 6; i++) r[i] = (unsigned char)(v >> (8 * i) ^ v >> (40 + i));
  }
  for (int i = 0; i < 6; i++) x[i] = chars[r[i] % (sizeof chars - 1)];
}

/* Creates the file of template tmpl (its XXXXXX replaced) exclusively: the descriptor, or -1
 * with errno set. An existing name (another writer's) is never opened: a new one is drawn. */
static int create_temp(char *tmpl, int mode) {
  size_t n = strlen(tmpl);
  for (int attempt = 0; attempt < 100; attempt++) {
    fill_random(tmpl + n - 6);
    int fd = open(tmpl, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, (mode_t)mode);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

static void afile_release(afile *a) {
  free(a->path);
  free(a->tmp);
  memset(a, 0, sizeof *a);
}

int afile_open(afile *a, const char *path, int mode, int flags, char *why, size_t why_cap) {
  memset(a, 0, sizeof *a);
  char *tmp = repro_temp_template(path), *own = tmp ? strdup(path) : NULL;
  if (!own) {
    free(tmp);
    return say(why, why_cap, ENOMEM, "out of memory");
  }
  int fd = create_temp(tmp, mode);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!f) {
    int e = errno;
    if (fd >= 0) {
      close(fd);
      unlink(tmp);
    }
    free(tmp);
    free(own);
    return say(why, why_cap, e, "cannot create a temporary file in its folder");
  }
  *a = (afile){.path = own, .tmp = tmp, .f = f, .flags = flags};
  return 0;
}

/* fsync of the folder that holds path, so that a rename in it is on disk. */
static void sync_folder(const char *path) {
  const char *slash = strrchr(path, '/');
  char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
  int fd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
  if (fd >= 0) {
    fsync(fd);
    close(fd);
  }
  free(dir);
}

int afile_commit(afile *a, char *why, size_t why_cap) {
  if (!a->f) return say(why, why_cap, EINVAL, "no file open");
  const char *what = NULL;
  errno = 0;
  int e = 0;
  if (fflush(a->f) != 0 || ferror(a->f)) {
    what = "writing failed";
    e = errno ? errno : EIO;
  } else if ((a->flags & AFILE_SYNC) && fsync(fileno(a->f)) != 0) {
    what = "fsync failed";
    e = errno;
  }
  if (fclose(a->f) != 0 && !what) {
    what = "closing failed";
    e = errno;
  }
  a->f = NULL;
  if (!what && rename(a->tmp, a->path) != 0) {
    what = "renaming it into place failed";
    e = errno;
  }
  if (what) {
    unlink(a->tmp);
    afile_release(a);
    return say(why, why_cap, e, what);
  }
  if (a->flags & AFILE_SYNC) sync_folder(a->path);
  afile_release(a);
  return 0;
}

void afile_abort(afile *a) {
  if (a->f) {
    fclose(a->f);
    unlink(a->tmp);
  }
  afile_release(a);
}

int repro_write_file(const char *path, const void *data, size_t len, int mode, int flags, char *why,
                     size_t why_cap) {
  afile a;
  if (afile_open(&a, path, mode, flags, why, why_cap) != 0) return -1;
  errno = 0;
  if (len && fwrite(data, 1, len, a.f) != len) {
    int e = errno ? errno : EIO;
    afile_abort(&a);
    return say(why, why_cap, e, "writing failed");
  }
  return afile_commit(&a, why, why_cap);
}

int write_file_atomic(const char *path, const char *data, size_t len) {
  return repro_write_file(path, data, len, 0644, AFILE_SYNC, NULL, 0);
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
