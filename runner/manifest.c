#include "manifest.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fileio.h"
#include "kvline.h"
#include "names.h"

#define MANIFEST_HEADER "# repro-manifest 1"
/* What a writer puts after a torn last record: the line above it is skipped on replay. */
#define TORN_NOTE          "# the line above is torn"
#define MANIFEST_MAX_BYTES ((size_t)256 << 20)

static unsigned long hash_str(const char *s) {
  unsigned long h = 1469598103934665603UL; /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211UL;
  return h;
}

static cellrec *cell_slot(run *r, const char *log, int create) {
  if (create && 2 * (r->count + 1) > r->cap) {
    int old_cap = r->cap;
    cellrec *old = r->cells;
    r->cap = r->cap ? 2 * r->cap : 1024;
    r->cells = xcalloc((size_t)r->cap, sizeof *r->cells);
    r->count = 0;
    for (int i = 0; i < old_cap; i++)
      if (old[i].log) {
        cellrec *s = cell_slot(r, old[i].log, 1);
        *s = old[i];
        r->count++;
      }
    free(old);
  }
  if (!r->cap) return NULL;
  unsigned long i = hash_str(log) & (unsigned long)(r->cap - 1);
  while (r->cells[i].log && strcmp(r->cells[i].log, log) != 0)
    i = (i + 1) & (unsigned long)(r->cap - 1);
  if (!r->cells[i].log && !create) return NULL;
  return &r->cells[i];
}

cellrec *run_cell(const run *r, const char *log) { return cell_slot((run *)r, log, 0); }

submission *run_sub(run *r, int id) {
  for (int i = 0; i < r->nsubs; i++)
    if (r->subs[i].id == id) return &r->subs[i];
  return NULL;
}

static submission *add_sub(run *r, int id) {
  submission *s = run_sub(r, id);
  if (s) return s;
  r->subs = xrealloc(r->subs, (size_t)(r->nsubs + 1) * sizeof *r->subs);
  s = &r->subs[r->nsubs++];
  memset(s, 0, sizeof *s);
  s->id = id;
  return s;
}

static void sub_add_cell(submission *s, const char *log, int task) {
  s->logs = xrealloc(s->logs, (size_t)(s->ncells + 1) * sizeof *s->logs);
  s->tasks = xrealloc(s->tasks, (size_t)(s->ncells + 1) * sizeof *s->tasks);
  s->logs[s->ncells] = xstrdup(log);
  s->tasks[s->ncells] = task;
  s->ncells++;
}

static int is_digits(const char *s) {
  if (!*s) return 0;
  for (; *s; s++)
    if (*s < '0' || *s > '9') return 0;
  return 1;
}

/* Every value of the journal that becomes part of a path or of a command (log names, job
 * names, the run id, job ids, process groups) must be a plain name or number, so that an
 * edited manifest cannot lead the runner outside its run folder. Returns NULL or what is
 * wrong (a static string naming the key; *bad is the offending value). */
static const char *check_record(const kv_record *rec, const char **bad) {
  static const struct {
    const char *tag, *key;
    int digits;
  } rules[] = {{"run", "id", 0},       {"run", "marker", 0},     {"cell", "log", 0},
               {"cell", "sub", 1},     {"cell", "task", 1},      {"submit", "sub", 1},
               {"submit", "group", 0}, {"submit", "jobname", 0}, {"submit", "held", 1},
               {"job", "sub", 1},      {"job", "jobid", 1},      {"release", "sub", 1},
               {"start", "sub", 1},    {"start", "log", 0},      {"start", "pgid", 1},
               {"cancel", "sub", 1},   {"select", "device", 0},  {"select", "cases", 0}};
  for (size_t i = 0; i < sizeof rules / sizeof *rules; i++) {
    if (strcmp(rec->tag, rules[i].tag) != 0) continue;
    const char *v = kv_get(rec, rules[i].key);
    if (!v) continue;
    if (rules[i].digits ? !is_digits(v) : !repro_is_name(v)) {
      *bad = v;
      return rules[i].digits ? "is not a valid number" : "is not a valid name";
    }
  }
  const char *ex = kv_get(rec, "executor");
  if (strcmp(rec->tag, "submit") == 0 && ex && strcmp(ex, "slurm") != 0 &&
      strcmp(ex, "local") != 0) {
    *bad = ex;
    return "is not a valid executor (slurm or local)";
  }
  /* the files a run was made with: absolute paths (the cluster file is read on resume) */
  const char *file = kv_get(rec, "file"), *cluster = kv_get(rec, "cluster");
  if (strcmp(rec->tag, "run") == 0 &&
      ((file && file[0] != '/') || (cluster && cluster[0] && cluster[0] != '/'))) {
    *bad = file && file[0] != '/' ? file : cluster;
    return "is not an absolute path";
  }
  return NULL;
}

/* The records of a journal and the keys each must have; NULL when rec's are all there, else
 * the first one missing (*unknown: the tag is none of the runner's). */
static const char *missing_key(const kv_record *rec, int *unknown) {
  static const struct {
    const char *tag, *keys[5];
  } records[] = {{"run", {"id", "figure", "file", NULL}},
                 {"select", {NULL}},
                 {"cell", {"sub", "task", "log", NULL}},
                 {"submit", {"sub", "executor", "group", "jobname", NULL}},
                 {"job", {"sub", "jobid", NULL}},
                 {"release", {"sub", NULL}},
                 {"start", {"sub", "log", "pgid", NULL}},
                 {"cancel", {"sub", NULL}}};
  *unknown = 0;
  for (size_t i = 0; i < sizeof records / sizeof *records; i++) {
    if (strcmp(rec->tag, records[i].tag) != 0) continue;
    for (const char *const *k = records[i].keys; *k; k++)
      if (!kv_get(rec, *k)) return *k;
    return NULL;
  }
  *unknown = 1;
  return rec->tag;
}

/* *dst := a copy of the record's value of key, when the record has one (a later record of
 * the same kind replaces the earlier value). */
static void take_value(char **dst, const kv_record *rec, const char *key) {
  const char *v = kv_get(rec, key);
  if (!v) return;
  free(*dst);
  *dst = xstrdup(v);
}

/* Applies one journal record to the in-memory state. Unknown tags are skipped. */
static void apply(run *r, const kv_record *rec) {
  const char *v;
  int sub = (v = kv_get(rec, "sub")) ? atoi(v) : -1;
  if (strcmp(rec->tag, "run") == 0) {
    take_value(&r->id, rec, "id");
    take_value(&r->marker, rec, "marker");
    take_value(&r->file, rec, "file");
    take_value(&r->cluster, rec, "cluster");
    take_value(&r->figure, rec, "figure");
  } else if (strcmp(rec->tag, "cell") == 0 && sub >= 0 && (v = kv_get(rec, "log"))) {
    /* cells belong to their submission only once its `submit` record seals them */
    submission *s = add_sub(r, sub);
    const char *task = kv_get(rec, "task");
    sub_add_cell(s, v, task ? atoi(task) : 0);
  } else if (strcmp(rec->tag, "submit") == 0 && sub >= 0) {
    submission *s = add_sub(r, sub);
    take_value(&s->executor, rec, "executor");
    take_value(&s->group, rec, "group");
    take_value(&s->jobname, rec, "jobname");
    s->held = (v = kv_get(rec, "held")) && strcmp(v, "1") == 0;
    for (int i = 0; i < s->ncells; i++) {
      cellrec *c = cell_slot(r, s->logs[i], 1);
      if (!c->log) {
        c->log = xstrdup(s->logs[i]);
        r->count++;
      }
      c->sub = sub;
      c->task = s->tasks[i];
      c->pgid = 0;
      c->seen = SEEN_NONE;
      c->misses = 0;
      c->ended[0] = '\0';
    }
  } else if (strcmp(rec->tag, "job") == 0 && sub >= 0 && kv_get(rec, "jobid")) {
    take_value(&add_sub(r, sub)->jobid, rec, "jobid");
  } else if (strcmp(rec->tag, "start") == 0 && (v = kv_get(rec, "log"))) {
    cellrec *c = cell_slot(r, v, 0);
    const char *pg = kv_get(rec, "pgid");
    if (c && c->sub == sub && pg) c->pgid = atol(pg);
  } else if (strcmp(rec->tag, "release") == 0 && sub >= 0) {
    add_sub(r, sub)->released = 1;
  } else if (strcmp(rec->tag, "cancel") == 0 && sub >= 0) {
    add_sub(r, sub)->cancelled = 1;
  } else if (strcmp(rec->tag, "select") == 0) {
    r->selects = xrealloc(r->selects, (size_t)(r->nselects + 1) * sizeof *r->selects);
    selection *sel = &r->selects[r->nselects++];
    memset(sel, 0, sizeof *sel);
    take_value(&sel->device, rec, "device");
    take_value(&sel->cases, rec, "cases");
    for (int i = 0; i < rec->npairs; i++)
      if (strcmp(rec->pairs[i].key, "only") == 0)
        sv_push(&sel->only, rec->pairs[i].val);
      else if (strcmp(rec->pairs[i].key, "exclude") == 0)
        sv_push(&sel->exclude, rec->pairs[i].val);
      else if (strcmp(rec->pairs[i].key, "set") == 0)
        sv_push(&sel->set, rec->pairs[i].val);
  }
}

/* A journal write or fsync that failed (errno set): says so, naming the journal; -1. A record
 * cut short by it is a torn last line, which the next writer ends. */
static int journal_failed(const run *r, const char *what) {
  int err = errno;
  fprintf(stderr,
          "repro-run: cannot %s the run's journal %s/manifest: %s (the run stops here; "
          "--resume continues it)\n",
          what, r->dir ? r->dir : ".", strerror(err));
  errno = err;
  return -1;
}

/* Appends one record (already formatted, newline included) and fsyncs it. */
static int journal_write(run *r, const char *line, size_t len) {
  kv_record rec = {0};
  const char *err;
  if (kv_parse(&rec, line, len, &err) == 0) apply(r, &rec);
  kv_record_free(&rec);
  size_t off = 0;
  while (off < len) {
    ssize_t w = write(r->fd, line + off, len - off);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return journal_failed(r, "write");
    off += (size_t)w;
  }
  return fsync(r->fd) == 0 ? 0 : journal_failed(r, "fsync");
}

static int journal_record(run *r, const char *tag, const char *const *kv) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return -1;
  fputs(tag, f);
  for (; kv[0]; kv += 2) kv_put(f, kv[0], kv[1]);
  fputc('\n', f);
  fclose(f);
  int rc = journal_write(r, buf, len);
  free(buf);
  return rc;
}

static const char *const run_subdirs[] = {"logs", "tmp", "err", "attempts", "jobs", "slurm", NULL};

/* Makes the run's folders that are missing (after check_run_dirs). */
static int make_run_dirs(const char *dir) {
  for (const char *const *s = run_subdirs; *s; s++) {
    char *p = xasprintf("%s/%s", dir, *s);
    int rc = mkdir(p, 0755) == 0 || errno == EEXIST ? 0 : -1;
    free(p);
    if (rc != 0) return -1;
  }
  return 0;
}

/* The run folder and its folders (those that exist) must be real folders: a link would lead
 * the cells' logs, the attempts or Slurm's output elsewhere. 0, or -1 with the path named. */
static int check_run_dirs(const char *given, const char *dir) {
  const char *why;
  if (state_dir_ok(given, 0, &why) != 0) {
    fprintf(stderr, "repro-run: %s %s: not a run folder (nothing written)\n", given, why);
    return -1;
  }
  for (const char *const *s = run_subdirs; *s; s++) {
    char *p = xasprintf("%s/%s", dir, *s);
    int rc = state_dir_ok(p, 1, &why);
    if (rc != 0)
      fprintf(stderr,
              "repro-run: %s %s: a run's files stay in its own folder; not using this run "
              "(nothing written)\n",
              p, why);
    free(p);
    if (rc != 0) return -1;
  }
  return 0;
}

/* RUN_MARKER_LEN random hex digits into out (NUL-terminated): 0, or -1 (errno set). */
static int draw_marker(char *out) {
  unsigned char bytes[RUN_MARKER_LEN / 2];
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    got += (size_t)n;
  }
  for (size_t i = 0; i < sizeof bytes; i++) snprintf(out + 2 * i, 3, "%02x", bytes[i]);
  return 0;
}

int run_create(run *r, const char *figdir, const char *prefix, const char *figure, const char *file,
               const char *cluster) {
  memset(r, 0, sizeof *r);
  r->fd = -1;
  char stamp[64];
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  char when[32];
  strftime(when, sizeof when, "%Y%m%dT%H%M%SZ", &tm);
  snprintf(stamp, sizeof stamp, "%s%s", prefix ? prefix : "", when);
  char *runs = xasprintf("%s/runs", figdir);
  if (mkdir_p(runs, 0755) != 0) {
    fprintf(stderr, "repro-run: cannot create %s: %s\n", runs, strerror(errno));
    free(runs);
    return -1;
  }
  /* Two runs in one second get -2, -3, ...: mkdir is the lock. */
  for (int n = 1; n < 1000 && !r->dir; n++) {
    char *id = n == 1 ? xstrdup(stamp) : xasprintf("%s-%d", stamp, n);
    char *dir = xasprintf("%s/%s", runs, id);
    if (mkdir(dir, 0755) == 0) {
      r->dir = path_absolute(dir);
      r->id = id;
    } else {
      free(id);
    }
    free(dir);
  }
  free(runs);
  if (!r->dir || make_run_dirs(r->dir) != 0) {
    fprintf(stderr, "repro-run: cannot create a run folder under %s/runs: %s\n", figdir,
            strerror(errno));
    return -1;
  }
  char *path = xasprintf("%s/manifest", r->dir);
  r->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (r->fd < 0) fprintf(stderr, "repro-run: cannot create %s: %s\n", path, strerror(errno));
  free(path);
  if (r->fd < 0) return -1;
  const char *hdr = MANIFEST_HEADER "\n";
  if (journal_write(r, hdr, strlen(hdr)) != 0) return -1;
  char marker[RUN_MARKER_LEN + 1];
  if (draw_marker(marker) != 0) {
    fprintf(stderr, "repro-run: cannot draw the run's marker (getrandom): %s\n", strerror(errno));
    return -1;
  }
  r->marker = xstrdup(marker);
  const char *kv[] = {"id",     r->id,     "figure",  figure,
                      "file",   file,      "cluster", cluster ? cluster : "",
                      "marker", r->marker, NULL};
  return journal_record(r, "run", kv);
}

/* One refusal of a journal: "path:line: what" (lineno 0: the whole journal; bad: the
 * offending text, quoted). */
static void journal_refuse(const char *path, int lineno, const char *what, const char *bad) {
  char *q = bad ? quote_value(bad) : NULL, at[32] = "";
  if (lineno > 0) snprintf(at, sizeof at, ":%d", lineno);
  fprintf(stderr,
          "repro-run: %s%s: %s%s%s: the journal was edited or is damaged; not using this run "
          "(nothing written)\n",
          path, at, q ? q : "", q ? " " : "", what);
  free(q);
}

/* Checks one complete journal line (not the header) and applies it; -1 when it is not a
 * record of the runner's (the refusal printed). */
static int replay_line(run *r, const char *path, int lineno, const char *line, size_t n) {
  if (n == 0 || line[0] == '#') return 0;
  kv_record rec = {0};
  const char *err = NULL, *bad = NULL, *problem = NULL;
  char *text = NULL;
  int unknown = 0;
  if (kv_parse(&rec, line, n, &err) != 0) {
    problem = text = xasprintf("the line is not a journal record (%s)", err ? err : "unreadable");
  } else if (!(problem = check_record(&rec, &bad)) && (bad = missing_key(&rec, &unknown))) {
    problem = text = unknown ? xstrdup("is not a record of the journal (run, select, cell, "
                                       "submit, job, release, start, cancel)")
                             : xasprintf("record lacks its %s= value", bad);
    bad = rec.tag;
  }
  if (problem)
    journal_refuse(path, lineno, problem, bad);
  else
    apply(r, &rec);
  free(text);
  kv_record_free(&rec);
  return problem ? -1 : 0;
}

/* Replays the journal text: the header, then records; a line followed by the torn-record
 * note, and a last line without its newline, are skipped. *end: where the complete lines end.
 * -1 (the refusal printed) when a line is not a record, or the run or its selection is
 * missing. */
static int replay(run *r, const char *path, const char *data, size_t len, size_t *end) {
  size_t hl = strlen(MANIFEST_HEADER);
  if (len < hl + 1 || memcmp(data, MANIFEST_HEADER "\n", hl + 1) != 0) {
    journal_refuse(path, 1,
                   len ? "expected the header '" MANIFEST_HEADER "'"
                       : "is empty: expected the header '" MANIFEST_HEADER "'",
                   NULL);
    return -1;
  }
  size_t at = hl + 1;
  int lineno = 1;
  while (at < len) {
    const char *nl = memchr(data + at, '\n', len - at);
    if (!nl) break; /* torn: the runner was killed mid-write */
    size_t n = (size_t)(nl - (data + at)), next = at + n + 1;
    lineno++;
    size_t tl = strlen(TORN_NOTE);
    int torn = len - next >= tl && memcmp(data + next, TORN_NOTE, tl) == 0;
    if (!torn && replay_line(r, path, lineno, data + at, n) != 0) return -1;
    at = next;
  }
  *end = at;
  if (!r->id) {
    journal_refuse(path, 0, "has no run record: not a run's journal", NULL);
    return -1;
  }
  if (r->nselects == 0) {
    journal_refuse(path, 0,
                   "has no select record: which cells belong to the run is unknown (a line "
                   "'select' after the run record makes it the whole matrix)",
                   NULL);
    return -1;
  }
  return 0;
}

int run_open(run *r, const char *dir, run_mode mode) {
  memset(r, 0, sizeof *r);
  r->fd = -1;
  r->dir = path_absolute(dir);
  if (check_run_dirs(dir, r->dir) != 0) {
    run_close(r);
    return -1;
  }
  char *path = xasprintf("%s/manifest", r->dir), *data = NULL;
  const char *why;
  size_t len = 0, end = 0;
  int fd = state_open(path, mode == RUN_WRITE ? O_RDWR | O_APPEND : O_RDONLY, 0, STATE_FILE, &why);
  if (fd < 0 || read_fd_bounded(fd, MANIFEST_MAX_BYTES, &data, &len) != 0) {
    if (fd >= 0) why = errno == EFBIG ? "is larger than a journal may be" : strerror(errno);
    fprintf(stderr, "repro-run: %s %s: not using this run (nothing written)\n", path, why);
    if (fd >= 0) close(fd);
    free(path);
    run_close(r);
    return -1;
  }
  int rc = replay(r, path, data, len, &end);
  free(data);
  free(path);
  if (rc == 0 && mode == RUN_WRITE) {
    r->fd = fd;
    if (make_run_dirs(r->dir) != 0) rc = -1;
    /* a torn last record: end it, and say so, so the next record starts on a line of its own
     * and readers skip the torn one */
    if (rc == 0 && end < len) {
      const char *note = "\n" TORN_NOTE ": the runner stopped mid-write; ignored\n";
      if (write(fd, note, strlen(note)) != (ssize_t)strlen(note)) rc = -1;
    }
  } else {
    close(fd);
  }
  if (rc != 0) {
    run_close(r);
    return -1;
  }
  return 0;
}

void run_close(run *r) {
  if (r->fd >= 0) close(r->fd);
  for (int i = 0; i < r->nsubs; i++) {
    submission *s = &r->subs[i];
    for (int j = 0; j < s->ncells; j++) free(s->logs[j]);
    free(s->logs);
    free(s->tasks);
    free(s->executor);
    free(s->group);
    free(s->jobname);
    free(s->jobid);
  }
  free(r->subs);
  for (int i = 0; i < r->nselects; i++) {
    free(r->selects[i].device);
    free(r->selects[i].cases);
    sv_free(&r->selects[i].only);
    sv_free(&r->selects[i].exclude);
    sv_free(&r->selects[i].set);
  }
  free(r->selects);
  for (int i = 0; i < r->cap; i++) free(r->cells[i].log);
  free(r->cells);
  free(r->dir);
  free(r->id);
  free(r->marker);
  free(r->file);
  free(r->cluster);
  free(r->figure);
  memset(r, 0, sizeof *r);
  r->fd = -1;
}

int run_current(const char *figdir, char **dir) {
  *dir = NULL;
  char *link = xasprintf("%s/ae_logs", figdir), target[4096];
  struct stat st;
  int rc = 0;
  ssize_t n = -1;
  if (lstat(link, &st) != 0) {
    if (errno != ENOENT) {
      fprintf(stderr, "repro-run: %s: %s\n", link, strerror(errno));
      rc = -1;
    }
  } else if (!S_ISLNK(st.st_mode) || (n = readlink(link, target, sizeof target - 1)) < 0) {
    fprintf(stderr, "repro-run: %s is not the link to the current run's logs the runner makes\n",
            link);
    rc = -1;
  } else {
    /* the runner's own link: runs/<run>/logs, relative, inside this folder */
    target[n] = '\0';
    char *slash = strncmp(target, "runs/", 5) == 0 ? strchr(target + 5, '/') : NULL;
    if (slash) *slash = '\0';
    if (!slash || strcmp(slash + 1, "logs") != 0 || !repro_is_name(target + 5)) {
      if (slash) *slash = '/';
      char *q = quote_value(target);
      fprintf(stderr,
              "repro-run: %s points to %s, not to runs/<run>/logs of its own folder: not "
              "following it (nothing written)\n",
              link, q);
      free(q);
      rc = -1;
    } else {
      char *fig = path_absolute(figdir);
      *dir = xasprintf("%s/runs/%s", fig, target + 5);
      free(fig);
    }
  }
  free(link);
  return rc;
}

int run_locate(const char *given, const char *figdir, char **dir) {
  *dir = NULL;
  char *found = NULL;
  if (given)
    found = xstrdup(given);
  else if (run_current(figdir, &found) != 0)
    return -1;
  if (!found) return 0;
  const char *why;
  if (state_dir_ok(found, 0, &why) != 0) {
    fprintf(stderr, "repro-run: run folder %s %s: not using it (nothing written)\n", found, why);
    free(found);
    return -1;
  }
  *dir = path_absolute(found);
  free(found);
  return 0;
}

int run_find(const char *arg, char **dir) {
  const char *where = arg ? arg : ".";
  char *manifest = xasprintf("%s/manifest", where);
  struct stat st;
  int is_run = lstat(manifest, &st) == 0;
  free(manifest);
  *dir = NULL;
  if (is_run) {
    *dir = xstrdup(where);
    return 0;
  }
  if (run_current(where, dir) != 0) return -1;
  if (!*dir) {
    fprintf(stderr, "repro-run: %s is neither a run folder nor a figure folder with ae_logs\n",
            where);
    return -1;
  }
  return 0;
}

/* 1 when r's folder is figdir/runs/<its id> (both resolved), the only place ae_logs can name. */
static int run_in_figure(const run *r, const char *figdir) {
  char *fig = path_absolute(figdir), *want = xasprintf("%s/runs/%s", fig, r->id);
  char *have = path_absolute(r->dir), *want_real = path_absolute(want);
  int inside = strcmp(have, want_real) == 0;
  free(fig);
  free(want);
  free(have);
  free(want_real);
  return inside;
}

int run_make_current(const run *r, const char *figdir) {
  if (!run_in_figure(r, figdir)) return 1;
  /* the new link is made in a private folder beside ae_logs (mkdtemp: never another runner's,
   * whichever machine it runs on), then renamed over ae_logs in one step */
  char *link = xasprintf("%s/ae_logs", figdir), *dir = repro_temp_template(link);
  char *target = xasprintf("runs/%s/logs", r->id), *tmp = NULL;
  int rc = -1;
  if (mkdtemp(dir)) {
    tmp = xasprintf("%s/ae_logs", dir);
    rc = symlink(target, tmp) == 0 && rename(tmp, link) == 0 ? 0 : -1;
  }
  if (rc != 0)
    fprintf(stderr, "repro-run: cannot point %s at %s: %s\n", link, target, strerror(errno));
  if (tmp) unlink(tmp);
  rmdir(dir);
  free(tmp);
  free(dir);
  free(link);
  free(target);
  return rc;
}

int run_next_sub(const run *r) {
  int next = 1;
  for (int i = 0; i < r->nsubs; i++)
    if (r->subs[i].id >= next) next = r->subs[i].id + 1;
  return next;
}

int run_note_cell(run *r, int sub, int task, const char *log) {
  char s[16], t[16];
  snprintf(s, sizeof s, "%d", sub);
  snprintf(t, sizeof t, "%d", task);
  /* cells are many: written without fsync, the `submit` record that seals them syncs all */
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return -1;
  fputs("cell", f);
  kv_put(f, "sub", s);
  kv_put(f, "task", t);
  kv_put(f, "log", log);
  fputc('\n', f);
  fclose(f);
  kv_record rec = {0};
  const char *err;
  if (kv_parse(&rec, buf, len, &err) == 0) apply(r, &rec);
  kv_record_free(&rec);
  ssize_t w = write(r->fd, buf, len);
  free(buf);
  return w == (ssize_t)len ? 0 : -1;
}

int run_note_submit(run *r, int sub, const char *executor, const char *group, const char *jobname) {
  char s[16];
  snprintf(s, sizeof s, "%d", sub);
  const char *kv[] = {"sub", s, "executor", executor, "group", group, "jobname", jobname, NULL};
  return journal_record(r, "submit", kv);
}

int run_note_submitting(run *r, int sub, const char *group, const char *jobname, int held) {
  char s[16];
  snprintf(s, sizeof s, "%d", sub);
  const char *kv[] = {"sub",     s,       "executor", "slurm",          "group", group,
                      "jobname", jobname, "held",     held ? "1" : "0", NULL};
  return journal_record(r, "submit", kv);
}

int run_note_release(run *r, int sub) {
  char s[16];
  snprintf(s, sizeof s, "%d", sub);
  const char *kv[] = {"sub", s, NULL};
  return journal_record(r, "release", kv);
}

int run_note_job(run *r, int sub, const char *jobid) {
  char s[16];
  snprintf(s, sizeof s, "%d", sub);
  const char *kv[] = {"sub", s, "jobid", jobid, NULL};
  return journal_record(r, "job", kv);
}

int run_note_start(run *r, int sub, const char *log, long pgid) {
  char s[16], p[32];
  snprintf(s, sizeof s, "%d", sub);
  snprintf(p, sizeof p, "%ld", pgid);
  const char *kv[] = {"sub", s, "log", log, "pgid", p, NULL};
  return journal_record(r, "start", kv);
}

int run_note_cancel(run *r, int sub) {
  char s[16];
  snprintf(s, sizeof s, "%d", sub);
  const char *kv[] = {"sub", s, NULL};
  return journal_record(r, "cancel", kv);
}

int run_note_select(run *r, const char *device, const strvec *only, const strvec *exclude,
                    const strvec *set, const char *cases) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return -1;
  fputs("select", f);
  if (device) kv_put(f, "device", device);
  if (cases) kv_put(f, "cases", cases);
  for (int i = 0; i < only->n; i++) kv_put(f, "only", only->v[i]);
  for (int i = 0; i < exclude->n; i++) kv_put(f, "exclude", exclude->v[i]);
  for (int i = 0; i < set->n; i++) kv_put(f, "set", set->v[i]);
  fputc('\n', f);
  fclose(f);
  int rc = journal_write(r, buf, len);
  free(buf);
  return rc;
}

char *run_log_path(const run *r, const char *log) { return xasprintf("%s/logs/%s", r->dir, log); }
