/* provenance: which GPU and commit each log comes from, and what it records.
 *
 *   repro-plot provenance [--device NAME] [--exclude GLOB]... [--one-commit] DIR...
 *
 * Reads every *.log under each DIR (reader.c's rd_walk_files, walk.c) with logmeta.c and prints, tab-separated,
 * one row per folder, GPU and commit: the logs, their first and last meta date, the checks
 * passed and failed, and the results by status. The GPU is the model in the meta line's gpu=
 * ("NVIDIA H200" is h200, "unknown" when it names none), so a log is placed by what ran it,
 * not by its file name; a log without a meta line is GPU "none", commit "no-meta". A full
 * 40-digit commit counts as its 7-digit prefix, the form the builds write. --device keeps one
 * GPU's logs (and those without a meta line). --exclude leaves out the logs whose file name
 * matches GLOB (fnmatch), counted on stderr. --one-commit exits 1 unless every log kept names
 * one and the same commit, not -dirty, no check failed and every log could be read. */
#include "provenance.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "logmeta.h"
#include "reader.h"
#include "table.h"

#define PV_MAX_STATUSES 16 /* distinct statuses counted per group */
#define PV_MAX_EXCLUDES 8  /* --exclude patterns */

/* One log, as the table groups it. */
typedef struct {
  const char *folder;
  char gpu[16], commit[48], date[40];
  int passed, failed;
  char status[LM_MAX_STATUSES][PT_NAME];
  int nstatus;
} pv_log;

typedef struct {
  pv_log *v;
  size_t n, cap;
  const char *folder;                   /* the DIR being walked */
  const char *device;                   /* --device, or NULL */
  const char *exclude[PV_MAX_EXCLUDES]; /* --exclude globs */
  int nexclude, excluded;
  int oom;
} pv_logs;

/* "NVIDIA H200" -> "h200": the first capital letter followed by two or three digits. */
static void gpu_label(const lm_meta *m, char *out, size_t cap) {
  if (!m->has_meta) {
    snprintf(out, cap, "none");
    return;
  }
  for (const char *p = m->gpu; *p; p++) {
    size_t d = 0;
    while (d < 3 && isdigit((unsigned char)p[1 + d])) d++;
    if (isupper((unsigned char)*p) && d >= 2) {
      size_t k = 0;
      for (; k <= d && k + 1 < cap; k++) out[k] = (char)tolower((unsigned char)p[k]);
      out[k] = '\0';
      return;
    }
  }
  snprintf(out, cap, "unknown");
}

/* The commit as the builds write it: a hash of 8 or more hex digits cut to 7, -dirty kept. */
static void commit_label(const lm_meta *m, char *out, size_t cap) {
  if (!m->has_meta) {
    snprintf(out, cap, "no-meta");
    return;
  }
  if (!m->commit[0]) {
    snprintf(out, cap, "none");
    return;
  }
  size_t hex = strspn(m->commit, "0123456789abcdef");
  const char *rest = m->commit + hex;
  if (hex >= 8 && (!*rest || !strcmp(rest, "-dirty")))
    snprintf(out, cap, "%.7s%s", m->commit, rest);
  else
    snprintf(out, cap, "%s", m->commit);
}

/* Whether the file name of path matches an --exclude glob. */
static int excluded(const pv_logs *logs, const char *path) {
  const char *name = strrchr(path, '/');
  name = name ? name + 1 : path;
  for (int k = 0; k < logs->nexclude; k++)
    if (fnmatch(logs->exclude[k], name, 0) == 0) return 1;
  return 0;
}

static void on_log(void *ctx, const char *path, const char *buf, size_t len) {
  pv_logs *logs = ctx;
  if (excluded(logs, path)) {
    logs->excluded++;
    return;
  }
  lm_meta m;
  lm_parse(buf, len, &m);
  pv_log one = {.folder = logs->folder};
  gpu_label(&m, one.gpu, sizeof one.gpu);
  if (logs->device && strcmp(one.gpu, logs->device) != 0 && strcmp(one.gpu, "none") != 0) return;
  commit_label(&m, one.commit, sizeof one.commit);
  snprintf(one.date, sizeof one.date, "%s", m.has_meta ? m.date : "-");
  one.passed = m.npassed;
  one.failed = m.nfailed;
  one.nstatus = m.nstatus;
  memcpy(one.status, m.status, sizeof one.status);
  if (logs->n == logs->cap) {
    size_t cap = logs->cap ? 2 * logs->cap : 256;
    pv_log *v = realloc(logs->v, cap * sizeof *v);
    if (!v) {
      logs->oom = 1;
      return;
    }
    logs->v = v;
    logs->cap = cap;
  }
  logs->v[logs->n++] = one;
}

/* One row of the table: the logs of one folder, GPU and commit. */
typedef struct {
  const pv_log *key; /* its first log */
  int n, passed, failed;
  const char *first, *last;
  char status[PV_MAX_STATUSES][PT_NAME];
  int count[PV_MAX_STATUSES], nstatus;
} pv_group;

static int same_group(const pv_log *a, const pv_log *b) {
  return !strcmp(a->folder, b->folder) && !strcmp(a->gpu, b->gpu) && !strcmp(a->commit, b->commit);
}

static void count_status(pv_group *g, const char *status) {
  int k = 0;
  while (k < g->nstatus && strcmp(g->status[k], status) != 0) k++;
  if (k == g->nstatus) {
    if (k == PV_MAX_STATUSES) return;
    snprintf(g->status[g->nstatus++], sizeof g->status[0], "%s", status);
  }
  g->count[k]++;
}

static void add_to_group(pv_group *g, const pv_log *l) {
  g->n++;
  g->passed += l->passed;
  g->failed += l->failed;
  if (!g->first || strcmp(l->date, g->first) < 0) g->first = l->date;
  if (!g->last || strcmp(l->date, g->last) > 0) g->last = l->date;
  for (int s = 0; s < l->nstatus; s++) count_status(g, l->status[s]);
}

static void print_group(const pv_group *g) {
  printf("%s\t%s\t%s\t%d\t%s\t%s\t%d\t%d\t", g->key->folder, g->key->gpu, g->key->commit, g->n,
         g->first, g->last, g->passed, g->failed);
  for (int k = 0; k < g->nstatus; k++) printf("%s%s=%d", k ? " " : "", g->status[k], g->count[k]);
  putchar('\n');
}

/* The table, groups in the order their first log was read. 0, or -1 when out of memory. */
static int print_table(const pv_logs *logs) {
  pv_group *g = calloc(logs->n, sizeof *g);
  if (!g) return -1;
  size_t ng = 0;
  for (size_t i = 0; i < logs->n; i++) {
    size_t k = 0;
    while (k < ng && !same_group(g[k].key, &logs->v[i])) k++;
    if (k == ng) g[ng++].key = &logs->v[i];
    add_to_group(&g[k], &logs->v[i]);
  }
  printf("folder\tgpu\tcommit\tlogs\tfirst\tlast\tchecks_ok\tchecks_failed\tresults\n");
  for (size_t k = 0; k < ng; k++) print_group(&g[k]);
  free(g);
  return 0;
}

/* --one-commit: 0 when every log names one clean commit and no check failed, else 1 with
 * what is wrong on stderr. */
static int one_commit(const pv_logs *logs, const char *device, int unreadable) {
  int status = 0, failed = 0, clean = 1;
  const char *other = NULL;
  for (size_t i = 0; i < logs->n; i++) {
    const pv_log *l = &logs->v[i];
    failed += l->failed > 0;
    if (strstr(l->commit, "-dirty") || !strcmp(l->commit, "no-meta") || !strcmp(l->commit, "none"))
      clean = 0;
    if (!other && strcmp(l->commit, logs->v[0].commit) != 0) other = l->commit;
  }
  if (other) {
    fprintf(stderr, "repro-plot provenance: the logs%s%s name more than one commit: %s %s ...\n",
            device ? " of " : "", device ? device : "", logs->v[0].commit, other);
    status = 1;
  }
  if (!clean) {
    fprintf(stderr, "repro-plot provenance: a log names no clean commit (-dirty, none or no "
                    "meta line)\n");
    status = 1;
  }
  if (failed) {
    fprintf(stderr, "repro-plot provenance: %d log(s) with a failed check (ok=0)\n", failed);
    status = 1;
  }
  if (unreadable) {
    fprintf(stderr, "repro-plot provenance: %d log(s) could not be read\n", unreadable);
    status = 1;
  }
  return status;
}

static int valid_device(const char *s) {
  if (!islower((unsigned char)s[0]) || strlen(s) > 15) return 0;
  for (const char *p = s; *p; p++)
    if (!islower((unsigned char)*p) && !isdigit((unsigned char)*p)) return 0;
  return 1;
}

static int usage(void) {
  fprintf(
      stderr,
      "usage: repro-plot provenance [--device NAME] [--exclude GLOB]... [--one-commit] DIR...\n");
  return 2;
}

int pv_main(int argc, char **argv) {
  const char *device = NULL;
  int want_one = 0, first_dir = argc;
  pv_logs logs = {0};
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--device") && i + 1 < argc) {
      device = argv[++i];
    } else if (!strcmp(argv[i], "--exclude") && i + 1 < argc) {
      if (logs.nexclude == PV_MAX_EXCLUDES) {
        fprintf(stderr, "repro-plot provenance: --exclude: at most %d patterns\n", PV_MAX_EXCLUDES);
        return 2;
      }
      logs.exclude[logs.nexclude++] = argv[++i];
    } else if (!strcmp(argv[i], "--one-commit")) {
      want_one = 1;
    } else if (argv[i][0] == '-') {
      fprintf(stderr, "repro-plot provenance: unknown option '%s'\n", argv[i]);
      return usage();
    } else {
      first_dir = i;
      break;
    }
  }
  if (first_dir == argc) return usage();
  if (device && !valid_device(device)) {
    fprintf(stderr, "repro-plot provenance: --device: expected a name like h200, got '%s'\n",
            device);
    return 2;
  }
  logs.device = device;
  rd_issues is = {0};
  int rc = 0;
  for (int i = first_dir; i < argc && rc == 0; i++) {
    size_t n = strlen(argv[i]);
    while (n > 1 && argv[i][n - 1] == '/') argv[i][--n] = '\0'; /* "dir/" is shown as "dir" */
    logs.folder = argv[i];
    if (rd_walk_files(argv[i], ".log", on_log, &logs, &is) < 0) {
      fprintf(stderr, "repro-plot provenance: %s: not a folder that can be read\n", argv[i]);
      rc = 2;
    }
  }
  if (logs.excluded)
    fprintf(stderr, "repro-plot provenance: %d log(s) left out by --exclude\n", logs.excluded);
  int unreadable = 0;
  for (size_t k = 0; k < is.n; k++) {
    fprintf(stderr, "repro-plot provenance: %s: %s\n", is.v[k].path, is.v[k].msg);
    unreadable += is.v[k].kind == ISSUE_SKIPPED;
  }
  if (rc == 0 && logs.oom) {
    fprintf(stderr, "repro-plot provenance: out of memory\n");
    rc = 1;
  }
  if (rc == 0 && logs.n == 0) {
    fprintf(stderr, "repro-plot provenance: no logs%s%s in the folders given\n",
            device ? " of " : "", device ? device : "");
    rc = 1;
  }
  if (rc == 0 && print_table(&logs) != 0) rc = 1;
  if (rc == 0 && want_one) rc = one_commit(&logs, device, unreadable);
  free(logs.v);
  rd_issues_free(&is);
  return rc;
}
