/* render: runs gnuplot on the generated scripts in a stage, then renames its files into place
 * (see render.h). */
#define _GNU_SOURCE /* memmem */
#include "render.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fileio.h"

int render_have_gnuplot(void) {
  const char *path = getenv("PATH");
  if (!path) return 0;
  char *copy = strdup(path);
  if (!copy) return 0;
  int found = 0;
  for (char *save = NULL, *dir = strtok_r(copy, ":", &save); dir && !found;
       dir = strtok_r(NULL, ":", &save)) {
    char full[1024];
    snprintf(full, sizeof full, "%s/gnuplot", dir);
    found = access(full, X_OK) == 0;
  }
  free(copy);
  return found;
}

static pid_t spawn_gnuplot(const char *dir, const char *name) {
  pid_t pid = fork();
  if (pid != 0) return pid; /* parent, or -1 */
  if (chdir(dir) != 0) {
    fprintf(stderr, "%s: cannot enter: %s\n", dir, strerror(errno));
    _exit(127);
  }
  char script[RENDER_NAME + 8], log[RENDER_NAME + 16];
  snprintf(script, sizeof script, "%s.gp", name);
  /* gnuplot warns once per empty panel ("no valid points"): keep that out of the terminal,
   * in <name>.gnuplot.log, shown when gnuplot fails */
  snprintf(log, sizeof log, "%s.gnuplot.log", name);
  int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0666);
  if (fd >= 0) {
    dup2(fd, 2);
    close(fd);
  }
  execlp("gnuplot", "gnuplot", script, (char *)NULL);
  fprintf(stderr, "gnuplot: cannot run: %s\n", strerror(errno));
  _exit(127);
}

static const char *const figure_ext[] = {"pdf", "png", "svg"};

/* A file of a folder: "<dir>/<name>.<ext>" (dir shorter than RENDER_PATH, name than
 * RENDER_NAME, ext than 16). */
#define RENDER_FILE (RENDER_PATH + RENDER_NAME + 16)
static void file_of(char buf[RENDER_FILE], const char *dir, const char *name, const char *ext) {
  snprintf(buf, RENDER_FILE, "%s/%s.%s", dir, name, ext);
}

static int outputs_ok(const render_stage *s, const char *name) {
  int ok = 1;
  for (int i = 0; i < 3; i++) {
    char path[RENDER_FILE], shown[RENDER_FILE];
    struct stat st;
    file_of(path, s->stage, name, figure_ext[i]);
    if (stat(path, &st) != 0 || st.st_size == 0) {
      file_of(shown, s->dir, name, figure_ext[i]);
      fprintf(stderr, "%s: gnuplot did not write it\n", shown);
      ok = 0;
    }
  }
  return ok;
}

/* The PDF date: SOURCE_DATE_EPOCH when set (reproducible-builds.org), else the epoch. */
static void pdf_date(char out[15]) {
  const char *e = getenv("SOURCE_DATE_EPOCH");
  char *end = NULL;
  long long v = e && *e ? strtoll(e, &end, 10) : 0;
  if (!end || *end || v < 0 || v > 253402300799LL) v = 0; /* up to 9999-12-31 */
  time_t t = (time_t)v;
  struct tm tm;
  gmtime_r(&t, &tm);
  char buf[32];
  snprintf(buf, sizeof buf, "%04d%02d%02d%02d%02d%02d", tm.tm_year + 1900, tm.tm_mon + 1,
           tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  memcpy(out, buf, 15);
}

/* Overwrites every /CreationDate (D:...) of buf[0, len) with date, keeping each string's
 * length, so the xref table's byte offsets stay right. 1 when one was found. */
static int set_pdf_dates(char *buf, size_t len, const char date[15]) {
  static const char key[] = "/CreationDate (D:";
  char *p = buf, *end = buf + len;
  int changed = 0;
  while ((p = memmem(p, (size_t)(end - p), key, sizeof key - 1)) != NULL) {
    char *d = p + sizeof key - 1, *close = memchr(d, ')', (size_t)(end - d));
    p = d;
    if (!close || close - d < 14) continue;
    for (int i = 0; i < 14; i++)
      if (d[i] < '0' || d[i] > '9') close = NULL;
    if (!close) continue;
    memcpy(d, date, 14);
    size_t tail = (size_t)(close - d) - 14; /* Z, +HH'mm', or nothing */
    if (tail == 1)
      d[14] = 'Z';
    else if (tail == 7)
      memcpy(d + 14, "+00'00'", 7);
    changed = 1;
  }
  return changed;
}

/* render_fix_pdf_date of path, its messages naming shown. */
static int fix_pdf_date(const char *path, const char *shown) {
  size_t len = 0;
  char why[256];
  char *buf = repro_slurp(path, (size_t)256 << 20, &len, why, sizeof why);
  if (!buf) {
    fprintf(stderr, "%s: cannot read: %s\n", shown, why);
    return -1;
  }
  char date[15];
  pdf_date(date);
  int rc = 0;
  if (set_pdf_dates(buf, len, date) && repro_write_file(path, buf, len, 0666, 0, why, sizeof why)) {
    fprintf(stderr, "%s: cannot rewrite its date: %s\n", shown, why);
    rc = -1;
  }
  free(buf);
  return rc;
}

int render_fix_pdf_date(const char *path) { return fix_pdf_date(path, path); }

static void show_log(const char *dir, const char *name) {
  char path[RENDER_FILE], line[512];
  file_of(path, dir, name, "gnuplot.log");
  FILE *f = fopen(path, "r");
  if (!f) return;
  int shown = 0;
  while (fgets(line, sizeof line, f) && shown < 20) {
    if (strstr(line, "no valid points")) continue;
    fprintf(stderr, "  %s", line);
    shown++;
  }
  fclose(f);
}

/* What became of the gnuplot of name that ended with status: 1 a good figure, 0 a failed one
 * (said on stderr). */
static int judge(const render_stage *s, const char *name, int status) {
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "%s/%s.gp: gnuplot failed (exit %d); its messages, from %s/%s.gnuplot.log:\n",
            s->dir, name, WIFEXITED(status) ? WEXITSTATUS(status) : -1, s->dir, name);
    show_log(s->stage, name);
    return 0;
  }
  if (!outputs_ok(s, name)) return 0;
  char pdf[RENDER_FILE], shown[RENDER_FILE];
  file_of(pdf, s->stage, name, "pdf");
  file_of(shown, s->dir, name, "pdf");
  return fix_pdf_date(pdf, shown) == 0;
}

int render_run(const render_stage *s, char names[][RENDER_NAME], int n, int jobs,
               unsigned char *ok) {
  int failed = 0, next = 0, running = 0;
  pid_t pids[64];
  int which[64];
  if (jobs < 1) jobs = 1;
  if (jobs > 64) jobs = 64;
  for (int i = 0; ok && i < n; i++) ok[i] = 0;
  while (next < n || running > 0) {
    while (next < n && running < jobs) {
      pid_t pid = spawn_gnuplot(s->stage, names[next]);
      if (pid < 0) {
        fprintf(stderr, "%s/%s.gp: cannot start gnuplot: %s\n", s->dir, names[next],
                strerror(errno));
        failed++;
        next++;
        continue;
      }
      pids[running] = pid;
      which[running++] = next++;
    }
    if (running == 0) break;
    int status;
    pid_t done = waitpid(-1, &status, 0);
    if (done < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < running; i++) {
      if (pids[i] != done) continue;
      int good = judge(s, names[which[i]], status);
      if (ok) ok[which[i]] = (unsigned char)good;
      failed += !good;
      pids[i] = pids[running - 1];
      which[i] = which[running - 1];
      running--;
      break;
    }
  }
  return failed;
}

/* The index of the name among names[0..n) whose figure file (NAME.pdf, .png, .svg; with_log:
 * NAME.gnuplot.log too) file is, or -1. */
static int output_of(const char *file, char names[][RENDER_NAME], int n, int with_log) {
  const char *dot = strchr(file, '.');
  for (; dot; dot = strchr(dot + 1, '.')) {
    const char *ext = dot + 1;
    int fig = !strcmp(ext, "pdf") || !strcmp(ext, "png") || !strcmp(ext, "svg");
    if (!fig && !(with_log && !strcmp(ext, "gnuplot.log"))) continue;
    for (int i = 0; i < n; i++)
      if (strlen(names[i]) == (size_t)(dot - file) &&
          !strncmp(names[i], file, (size_t)(dot - file)))
        return i;
  }
  return -1;
}

/* Links stage/E to ../E for each entry E of dir but hidden ones and the outputs of names. */
static int mirror_dir(const render_stage *s, char names[][RENDER_NAME], int n) {
  DIR *d = opendir(s->dir);
  if (!d) {
    fprintf(stderr, "%s: cannot list: %s\n", s->dir, strerror(errno));
    return -1;
  }
  int rc = 0;
  for (struct dirent *e; rc == 0 && (e = readdir(d)) != NULL;) {
    if (e->d_name[0] == '.' || output_of(e->d_name, names, n, 1) >= 0) continue;
    char link[RENDER_PATH * 2], target[RENDER_PATH];
    snprintf(link, sizeof link, "%s/%s", s->stage, e->d_name);
    snprintf(target, sizeof target, "../%s", e->d_name);
    if (symlink(target, link) != 0) {
      fprintf(stderr, "%s: cannot link %s there: %s\n", s->stage, e->d_name, strerror(errno));
      rc = -1;
    }
  }
  closedir(d);
  return rc;
}

int render_stage_open(render_stage *s, const char *dir, int mirror, char names[][RENDER_NAME],
                      int n) {
  memset(s, 0, sizeof *s);
  char base[RENDER_PATH];
  if (strlen(dir) + 32 >= RENDER_PATH) {
    fprintf(stderr, "%s: the folder's name is too long (at most %d bytes)\n", dir,
            RENDER_PATH - 32);
    return -1;
  }
  snprintf(s->dir, sizeof s->dir, "%s", dir);
  snprintf(base, sizeof base, "%s/repro-plot", dir);
  char *tmpl = repro_temp_template(base);
  if (!tmpl || !mkdtemp(tmpl)) {
    fprintf(stderr, "%s: cannot make a private folder to draw in: %s\n", dir, strerror(errno));
    free(tmpl);
    return -1;
  }
  snprintf(s->stage, sizeof s->stage, "%s", tmpl);
  free(tmpl);
  if (mirror && mirror_dir(s, names, n) != 0) {
    render_stage_close(s);
    return -1;
  }
  return 0;
}

int render_publish(const render_stage *s, char names[][RENDER_NAME], int n,
                   const unsigned char *ok) {
  DIR *d = opendir(s->stage);
  if (!d) {
    fprintf(stderr, "%s: cannot list: %s\n", s->stage, strerror(errno));
    return -1;
  }
  int rc = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    char from[RENDER_PATH * 2], to[RENDER_PATH * 2];
    struct stat st;
    snprintf(from, sizeof from, "%s/%s", s->stage, e->d_name);
    snprintf(to, sizeof to, "%s/%s", s->dir, e->d_name);
    if (lstat(from, &st) != 0 || !S_ISREG(st.st_mode)) continue; /* ., .., a mirror's links */
    int i = output_of(e->d_name, names, n, 0);
    if (e->d_name[0] == '.' || (ok && i >= 0 && !ok[i])) { /* a failed figure's, or a temporary */
      unlink(from);
    } else if (rename(from, to) != 0) {
      fprintf(stderr, "%s: cannot put it in place: %s\n", to, strerror(errno));
      rc = -1;
    }
  }
  closedir(d);
  return rc;
}

void render_stage_close(render_stage *s) {
  if (!s->stage[0]) return;
  DIR *d = opendir(s->stage);
  for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char path[RENDER_PATH * 2];
    snprintf(path, sizeof path, "%s/%s", s->stage, e->d_name);
    unlink(path);
  }
  if (d) closedir(d);
  if (rmdir(s->stage) != 0)
    fprintf(stderr, "%s: cannot remove this private folder: %s\n", s->stage, strerror(errno));
  s->stage[0] = '\0';
}

int render_all(const char *dir, char names[][RENDER_NAME], int n, int jobs) {
  render_stage s;
  if (render_stage_open(&s, dir, 1, names, n) != 0) return n;
  unsigned char *ok = calloc((size_t)n + 1, 1);
  int failed = n;
  if (ok) {
    failed = render_run(&s, names, n, jobs, ok);
    if (render_publish(&s, names, n, ok) != 0 && failed == 0) failed = 1;
  } else {
    fprintf(stderr, "repro-plot render: out of memory\n");
  }
  free(ok);
  render_stage_close(&s);
  return failed;
}

/* A NAME of `repro-plot render`: a file name in DIR, short enough for RENDER_NAME with its
 * extensions, whose NAME.gp exists. */
static int render_name_ok(const char *dir, const char *name) {
  size_t len = strlen(name);
  if (len == 0 || len >= RENDER_NAME - 16 || strchr(name, '/') || name[0] == '.') {
    fprintf(stderr,
            "repro-plot render: \"%s\": expected the name of a script NAME.gp in %s "
            "(no '/', not starting with '.', under %d characters)\n",
            name, dir, RENDER_NAME - 16);
    return 0;
  }
  char path[1024];
  struct stat st;
  snprintf(path, sizeof path, "%s/%s.gp", dir, name);
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
    fprintf(stderr, "%s: no such gnuplot script (repro-plot render DIR NAME runs DIR/NAME.gp)\n",
            path);
    return 0;
  }
  return 1;
}

int render_main(int argc, char **argv) {
  if (argc < 3) {
    fputs("usage: repro-plot render DIR NAME...   (gnuplot DIR/NAME.gp, writing NAME.pdf/.png/"
          ".svg)\n",
          stderr);
    return 2;
  }
  const char *dir = argv[1];
  int n = argc - 2;
  char(*names)[RENDER_NAME] = calloc((size_t)n, sizeof *names);
  if (!names) {
    fprintf(stderr, "repro-plot render: out of memory\n");
    return 1;
  }
  int rc = 0;
  for (int i = 0; i < n; i++) {
    if (!render_name_ok(dir, argv[i + 2]))
      rc = 2;
    else
      snprintf(names[i], RENDER_NAME, "%s", argv[i + 2]);
  }
  if (rc == 0 && !render_have_gnuplot()) {
    fprintf(stderr, "repro-plot render: gnuplot is not on PATH (scripts/install.sh installs it)\n");
    rc = 1;
  }
  /* as draw: one gnuplot per CPU at most (render_all bounds the jobs and runs no more than n) */
  if (rc == 0 && render_all(dir, names, n, (int)sysconf(_SC_NPROCESSORS_ONLN)) > 0) rc = 1;
  free(names);
  return rc;
}
