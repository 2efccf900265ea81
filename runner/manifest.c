#include "manifest.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kvline.h"
#include "names.h"

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
  } rules[] = {{"run", "id", 0},         {"cell", "log", 0},      {"cell", "sub", 1},
               {"cell", "task", 1},      {"submit", "sub", 1},    {"submit", "group", 0},
               {"submit", "jobname", 0}, {"job", "sub", 1},       {"job", "jobid", 1},
               {"start", "sub", 1},      {"start", "log", 0},     {"start", "pgid", 1},
               {"cancel", "sub", 1},     {"select", "device", 0}, {"select", "cases", 0}};
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
  return NULL;
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
    }
  } else if (strcmp(rec->tag, "job") == 0 && sub >= 0 && kv_get(rec, "jobid")) {
    take_value(&add_sub(r, sub)->jobid, rec, "jobid");
  } else if (strcmp(rec->tag, "start") == 0 && (v = kv_get(rec, "log"))) {
    cellrec *c = cell_slot(r, v, 0);
    const char *pg = kv_get(rec, "pgid");
    if (c && c->sub == sub && pg) c->pgid = atol(pg);
  } else if (strcmp(rec->tag, "cancel") == 0 && sub >= 0) {
    add_sub(r, sub)->cancelled = 1;
  } else if (strcmp(rec->tag, "select") == 0) {
    r->selects = xrealloc(r->selects, (size_t)(r->nselects + 1) * sizeof *r->selects);
    selection *sel = &r->selects[r->nselects++];
    memset(sel, 0, sizeof *sel);
    take_value(&sel->device, rec, "device");
    take_value(&sel->cases, rec, "cases");
    for (int i = 0; i < rec->npairs; i++)
      if (strcmp(rec->pairs[i].key, "only") == 0) sv_push(&sel->only, rec->pairs[i].val);
  }
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
    if (w < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    off += (size_t)w;
  }
  return fsync(r->fd);
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

static int make_run_dirs(const char *dir) {
  static const char *const subdirs[] = {"logs", "tmp", "err", "attempts", "jobs", "slurm", NULL};
  for (const char *const *s = subdirs; *s; s++) {
    char *p = xasprintf("%s/%s", dir, *s);
    int rc = mkdir_p(p, 0755);
    free(p);
    if (rc != 0) return -1;
  }
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
  r->fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  free(path);
  if (r->fd < 0) return -1;
  const char *hdr = "# repro-manifest 1\n";
  if (journal_write(r, hdr, strlen(hdr)) != 0) return -1;
  const char *kv[] = {
      "id", r->id, "figure", figure, "file", file, "cluster", cluster ? cluster : "", NULL};
  return journal_record(r, "run", kv);
}

int run_open(run *r, const char *dir) {
  memset(r, 0, sizeof *r);
  r->fd = -1;
  r->dir = path_absolute(dir);
  char *path = xasprintf("%s/manifest", r->dir);
  char *data;
  size_t len;
  if (read_file(path, &data, &len) != 0) {
    fprintf(stderr, "repro-run: %s: cannot read: %s\n", path, strerror(errno));
    free(path);
    run_close(r);
    return -1;
  }
  kv_record rec = {0};
  const char *err;
  size_t start = 0;
  int lineno = 0;
  for (size_t i = 0; i < len; i++) {
    if (data[i] != '\n') continue;
    const char *line = data + start;
    size_t n = i - start;
    start = i + 1;
    lineno++;
    if (n == 0 || line[0] == '#') continue;
    if (kv_parse(&rec, line, n, &err) != 0) continue;
    const char *bad = NULL, *problem = check_record(&rec, &bad);
    if (problem) {
      char *q = quote_value(bad);
      fprintf(stderr,
              "repro-run: %s:%d: %s %s: the journal was edited or is damaged; not using this "
              "run\n",
              path, lineno, q, problem);
      free(q);
      kv_record_free(&rec);
      free(data);
      free(path);
      run_close(r);
      return -1;
    }
    apply(r, &rec);
  }
  kv_record_free(&rec);
  free(data);
  make_run_dirs(r->dir);
  r->fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
  if (r->fd >= 0 && start < len) {
    /* a torn last record (the runner was killed mid-write): end it so the next record
     * starts on a line of its own; readers skip the torn line */
    if (write(r->fd, "\n", 1) != 1) { /* reported by the next record's write */
    }
  }
  free(path);
  if (!r->id) r->id = xstrdup(path_basename(r->dir));
  return r->fd < 0 ? -1 : 0;
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
  }
  free(r->selects);
  for (int i = 0; i < r->cap; i++) free(r->cells[i].log);
  free(r->cells);
  free(r->dir);
  free(r->id);
  free(r->file);
  free(r->cluster);
  free(r->figure);
  memset(r, 0, sizeof *r);
  r->fd = -1;
}

char *run_current(const char *figdir) {
  char *link = xasprintf("%s/ae_logs", figdir);
  char *target = NULL;
  if (file_exists(link)) {
    char *logs = path_absolute(link);
    target = path_dirname(logs);
    free(logs);
  }
  free(link);
  return target;
}

int run_make_current(const run *r, const char *figdir) {
  char *tmp = xasprintf("%s/.ae_logs.%ld", figdir, (long)getpid());
  char *link = xasprintf("%s/ae_logs", figdir);
  char *target = xasprintf("runs/%s/logs", r->id);
  unlink(tmp);
  int rc = symlink(target, tmp) == 0 && rename(tmp, link) == 0 ? 0 : -1;
  if (rc != 0) {
    fprintf(stderr, "repro-run: cannot point %s at %s: %s\n", link, target, strerror(errno));
    unlink(tmp);
  }
  free(tmp);
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

int run_note_select(run *r, const char *device, const strvec *only, const char *cases) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return -1;
  fputs("select", f);
  if (device) kv_put(f, "device", device);
  if (cases) kv_put(f, "cases", cases);
  for (int i = 0; i < only->n; i++) kv_put(f, "only", only->v[i]);
  fputc('\n', f);
  fclose(f);
  int rc = journal_write(r, buf, len);
  free(buf);
  return rc;
}

char *run_log_path(const run *r, const char *log) { return xasprintf("%s/logs/%s", r->dir, log); }
