/* test_cellog.c: when a cell's log is good (runner/cellog.c) and that the plotter's reader
 * (plot/reader.c) agrees, both asking common/logverdict.c. A log is good only when it is whole:
 * a last line cut short (no newline) is not good whatever it says, nor is a status=ok from a
 * program that exited non-zero, under a failed check, without a positive finite avg_ms, with a
 * key twice on a line, nor a binary file; the runner's own line goes on a line of its own, and
 * when it cannot be written (a full disk, here RLIMIT_FSIZE) nothing of it stays and the log
 * still reads as not good.
 *   test_cellog WORK_DIR */
#include "../check.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cellog.h"
#include "fileio.h"
#include "reader.h"
#include "util.h"

static const char *work_dir;

static void write_bytes(const char *path, const char *data, size_t len) {
  FILE *fp = fopen(path, "w");
  CHECKF(fp != NULL, "cannot write %s", path);
  if (!fp) return;
  CHECKF(fwrite(data, 1, len, fp) == len, "cannot write %s", path);
  fclose(fp);
}

static void write_text(const char *path, const char *text) {
  write_bytes(path, text, strlen(text));
}

static char *read_text(const char *path) {
  char *data = NULL;
  if (read_file(path, &data, NULL) != 0) return NULL;
  return data;
}

static int exists(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0;
}

/* A fresh run folder with tmp/ and logs/: malloc'd path. */
static char *fresh_run(const char *name) {
  char *run = xasprintf("%s/%s", work_dir, name);
  char *cmd = xasprintf("rm -rf '%s' && mkdir -p '%s/tmp' '%s/logs'", run, run, run);
  CHECK(system(cmd) == 0);
  free(cmd);
  return run;
}

/* The plotter's verdict on a log's bytes: 1 when it draws a value (ok, oom, unsupported); its
 * reason copied to reason ("(skipped)" when the file gives no row). */
static int plot_good_len(const char *text, size_t len, char *reason, size_t n) {
  pt_row row;
  pt_row_init(&row);
  rd_issues is = {0};
  int rc = rd_parse_buffer(text, len, "x.log", &row, &is);
  rd_issues_free(&is);
  snprintf(reason, n, "%s", rc == 0 ? row.reason : "(skipped)");
  return rc == 0 && (row.status == ST_OK || row.status == ST_OOM || row.status == ST_UNSUPPORTED);
}

static int plot_good(const char *text) {
  char reason[PT_REASON];
  return plot_good_len(text, strlen(text), reason, sizeof reason);
}

/* The runner's verdict on the same bytes (status and reason as cellog_read_result says). */
static int runner_good_len(const char *text, size_t len, cellog_result *res) {
  char *path = xasprintf("%s/one.log", work_dir);
  write_bytes(path, text, len);
  int rc = cellog_read_result(path, res);
  if (rc != 0) snprintf(res->status, sizeof res->status, "(unreadable file)");
  free(path);
  return rc == 0 && cellog_status_good(res->status);
}

static int runner_good(const char *text, char *status, size_t n) {
  cellog_result res;
  int good = runner_good_len(text, strlen(text), &res);
  snprintf(status, n, "%s", res.status);
  return good;
}

#define HEAD "# repro-log 1\nconfig workload=h2o system=fused\n"

/* Logs as they end, and whether each is good: the runner and the plotter must say the same. */
static void test_agreement(void) {
  static const struct {
    const char *text, *status;
    int good;
  } cases[] = {
      {HEAD "result status=ok avg_ms=12.5\n", "ok", 1},
      {HEAD "result status=ok avg_ms=12", "cut", 0}, /* the result line lacks its newline */
      {HEAD "result status=ok avg_ms=12.5\ncheck output=out rel_l2=1e-3 o", "cut", 0},
      {HEAD "result status=ok avg_ms=12.5\n# done", "ok", 1}, /* a comment is no record */
      {HEAD "result status=ok avg_ms=12.5\n  \t", "ok", 1},   /* nor are blanks */
      {HEAD "  result status=ok avg_ms=12.5\n", "ok", 1},     /* blanks before a record */
      {HEAD "result status=unsupported reason=\"no GPU\"\n", "unsupported", 1},
      {HEAD "result status=unsupported reason=\"no GP", "cut", 0},
      /* the runner's line after a cut one, as cellog_finish writes it */
      {HEAD "result status=ok avg_ms=12\nresult status=error source=runner state=COMPLETED "
            "exit=0:0 reason=\"cut\"\n",
       "error", 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char status[64];
    int rg = runner_good(cases[i].text, status, sizeof status);
    CHECKF(strcmp(status, cases[i].status) == 0, "case %zu: status '%s', want '%s'", i, status,
           cases[i].status);
    CHECKF(rg == cases[i].good, "case %zu: the runner says good=%d, want %d", i, rg, cases[i].good);
    CHECKF(plot_good(cases[i].text) == cases[i].good, "case %zu: the plotter says good=%d, want %d",
           i, !cases[i].good, cases[i].good);
  }
  /* a cut log's reason says where, in the plotter's words */
  char *path = xasprintf("%s/one.log", work_dir);
  write_text(path, HEAD "result status=ok avg_ms=12");
  cellog_result res;
  CHECK(cellog_read_result(path, &res) == 0);
  CHECK_STR(res.reason, "torn log: line 3 is cut (no newline)");
  free(path);
}

/* Logs whose last result line says ok, unsupported or oom but that the plotter marks ERR (or
 * skips): not good for the runner either (status CELLOG_BAD, or "" without a usable result
 * line), with the plotter's reason; and the final answers that stay good for both. */
static void test_verdict_agreement(void) {
  static const char bin[] = HEAD "result status=ok avg_ms=12.5\n\0\n";
  static const struct {
    const char *text;
    size_t len;                  /* 0: strlen(text) */
    const char *status, *reason; /* the runner's; reason NULL: not compared */
    int good;
  } cases[] = {
      {HEAD "meta gpu=none commit=abc1234\ncheck output=out rel_l2=1.0e-04 ok=1\n"
            "result status=ok avg_ms=12.5 min_ms=12 max_ms=13\n",
       0, "ok", "", 1},
      {HEAD "result status=unsupported reason=\"no GPU\"\n", 0, "unsupported", "no GPU", 1},
      {HEAD "result status=oom reason=\"out of memory\"\n", 0, "oom", "out of memory", 1},
      /* a check only matters under status=ok */
      {HEAD "check output=out ok=0\nresult status=unsupported\n", 0, "unsupported", "", 1},
      {HEAD "check output=out rel_l2=3.2e-01 max_abs=4.0e+00 ok=0\nresult status=ok avg_ms=12.5\n",
       0, CELLOG_BAD, "check output=out failed (line 3: rel_l2=3.2e-01 max_abs=4.0e+00)", 0},
      {HEAD "check output=out ok=yes\nresult status=ok avg_ms=12.5\n", 0, CELLOG_BAD,
       "check output=out failed (line 3: ok=yes is not 0 or 1)", 0},
      {HEAD "result status=ok\n", 0, "", NULL, 0}, /* no avg_ms: no usable result line */
      {HEAD "result status=ok avg_ms=0\n", 0, CELLOG_BAD, "avg_ms must be a positive number", 0},
      {HEAD "result status=ok avg_ms=-1\n", 0, CELLOG_BAD, "avg_ms must be a positive number", 0},
      {HEAD "result status=ok avg_ms=nan\n", 0, CELLOG_BAD, "avg_ms must be a positive number", 0},
      {HEAD "result status=ok avg_ms=1e999\n", 0, CELLOG_BAD, "avg_ms must be a positive number",
       0},
      {HEAD "result status=ok avg_ms=1.5 avg_ms=16\n", 0, CELLOG_BAD,
       "line 3: avg_ms appears twice (each key once per line)", 0},
      {HEAD "meta gpu=a gpu=b\nresult status=unsupported\n", 0, CELLOG_BAD,
       "line 3: gpu appears twice (each key once per line)", 0},
      /* a second meta or config line: which GPU or shape the time belongs to is unknown */
      {HEAD "meta gpu=\"NVIDIA H200\"\nmeta gpu=\"NVIDIA B200\"\nresult status=ok avg_ms=1.5\n", 0,
       CELLOG_BAD, "line 4: a second meta line (the first is line 3): a log has one", 0},
      {HEAD
       "check output=out ok=1\nconfig workload=attn system=fused\nresult status=ok avg_ms=1.5\n",
       0, CELLOG_BAD, "line 4: a second config line (the first is line 2): a log has one", 0},
      {bin, sizeof bin - 1, "", "binary file (NUL or control bytes), not a log", 0},
      /* a malformed result line after the usable one */
      {HEAD "result status=ok avg_ms=12.5\nresult status=fine\n", 0, CELLOG_BAD,
       "the last result line (line 4) is malformed", 0},
      {HEAD "result status=error reason=\"exit 1\"\n", 0, "error", "exit 1", 0},
      {HEAD "result status=timeout\n", 0, "timeout", "", 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    size_t len = cases[i].len ? cases[i].len : strlen(cases[i].text);
    cellog_result res;
    char preason[PT_REASON];
    int rg = runner_good_len(cases[i].text, len, &res);
    int pg = plot_good_len(cases[i].text, len, preason, sizeof preason);
    CHECKF(strcmp(res.status, cases[i].status) == 0, "case %zu: status '%s', want '%s'", i,
           res.status, cases[i].status);
    CHECKF(rg == cases[i].good, "case %zu: the runner says good=%d, want %d", i, rg, cases[i].good);
    CHECKF(pg == cases[i].good, "case %zu: the plotter says good=%d, want %d", i, pg,
           cases[i].good);
    if (cases[i].reason)
      CHECKF(strcmp(res.reason, cases[i].reason) == 0, "case %zu: reason '%s', want '%s'", i,
             res.reason, cases[i].reason);
    /* where the plotter draws the cell ERR, its reason is the runner's */
    if (!strcmp(res.status, CELLOG_BAD))
      CHECKF(strcmp(preason, res.reason) == 0,
             "case %zu: the plotter's reason '%s', the runner's '%s'", i, preason, res.reason);
  }
}

/* cellog_finish of one attempt whose output is text; the final log's text (NULL: none). */
static char *finish_one(const char *run, const char *text, int rc, int *finish_rc) {
  char *tmp = xasprintf("%s/tmp/a.log.L1", run);
  char *final = xasprintf("%s/logs/a.log", run);
  write_text(tmp, text);
  *finish_rc = cellog_finish(run, "a.log", tmp, rc, NULL, NULL, NULL);
  char *out = read_text(final);
  free(tmp);
  free(final);
  return out;
}

static void test_finish(void) {
  char *run = fresh_run("finish");
  char *final = xasprintf("%s/logs/a.log", run);
  char status[64];
  int frc;

  /* a whole log of a program that exited 0: good, kept byte for byte */
  char *text = finish_one(run, HEAD "result status=ok avg_ms=1.5\n", 0, &frc);
  CHECK(frc == 0);
  CHECK(text && strcmp(text, HEAD "result status=ok avg_ms=1.5\n") == 0);
  CHECK(cellog_status(final, status, sizeof status) == 0 && cellog_status_good(status));
  free(text);

  /* cut at exit 0 (a writer that did not check its writes): the runner's line, on a line of
   * its own after the cut one, says so */
  text = finish_one(run, HEAD "result status=ok avg_ms=12", 0, &frc);
  CHECK(frc == 0);
  CHECKF(text && strstr(text, "avg_ms=12\nresult status=error source=runner state=COMPLETED "
                              "exit=0:0 reason="),
         "cut log at exit 0: %s", text ? text : "(no log)");
  CHECK(text && strstr(text, "cut (no newline)"));
  CHECK(cellog_status(final, status, sizeof status) == 0);
  CHECK_STR(status, "error");
  CHECK(plot_good(text ? text : "") == 0);
  free(text);

  /* cut and exit 1 (a writer that saw its write fail) */
  text = finish_one(run, HEAD "result status=ok avg_ms=12", 1, &frc);
  CHECK(frc == 0);
  CHECK(text && strstr(text, "avg_ms=12\nresult status=error source=runner state=FAILED exit=1:0"));
  free(text);

  /* whole, status=ok, but the writer exited non-zero (its flush or close failed): not good */
  text = finish_one(run, HEAD "result status=ok avg_ms=1.5\n", 1, &frc);
  CHECK(frc == 0);
  CHECK(text && strstr(text, "avg_ms=1.5\nresult status=error source=runner state=FAILED"));
  CHECK(cellog_status(final, status, sizeof status) == 0 && !cellog_status_good(status));
  free(text);
  free(final);
  free(run);
}

/* A log that is not good at exit 0 keeps the program's line (its verdict says why); after
 * status=ok and a non-zero exit the runner's line names the verdict too; a log without a usable
 * result line gets the runner's line. */
static void test_finish_verdict(void) {
  char *run = fresh_run("finish-verdict");
  char *final = xasprintf("%s/logs/a.log", run);
  char status[64];
  int frc;
  static const char failed[] = HEAD "check output=out rel_l2=3.2e-01 ok=0\n"
                                    "result status=ok avg_ms=1.5\n";
  char *text = finish_one(run, failed, 0, &frc);
  CHECK(frc == 0 && text && strcmp(text, failed) == 0);
  CHECK(cellog_status(final, status, sizeof status) == 0);
  CHECK_STR(status, CELLOG_BAD);
  free(text);

  text = finish_one(run, failed, 5, &frc);
  CHECK(frc == 0);
  CHECKF(text && strstr(text, "avg_ms=1.5\nresult status=error source=runner state=FAILED "
                              "exit=5:0 reason=\"exit code 5 after result status=ok (check "
                              "output=out failed (line 3: rel_l2=3.2e-01))\"\n"),
         "failed check, exit 5: %s", text ? text : "(no log)");
  CHECK(cellog_status(final, status, sizeof status) == 0);
  CHECK_STR(status, "error");
  free(text);

  text = finish_one(run, HEAD "result status=ok\n", 0, &frc);
  CHECK(frc == 0);
  CHECKF(text && strstr(text, "result status=ok\nresult status=error source=runner "
                              "state=COMPLETED exit=0:0 reason=\"exit code 0 and no usable "
                              "result line\""),
         "ok without avg_ms, exit 0: %s", text ? text : "(no log)");
  CHECK(text && !plot_good(text));
  free(text);
  free(final);
  free(run);
}

/* The disk is full when the runner appends its line: RLIMIT_FSIZE stops the append at limit
 * bytes of the file (0: at its current size). */
static int set_fsize_limit(rlim_t limit, struct rlimit *saved) {
  if (getrlimit(RLIMIT_FSIZE, saved) != 0) return -1;
  struct rlimit lim = *saved;
  lim.rlim_cur = limit;
  return setrlimit(RLIMIT_FSIZE, &lim);
}

static void test_finish_full_disk(void) {
  signal(SIGXFSZ, SIG_IGN); /* the write fails with EFBIG instead */
  char *run = fresh_run("full");
  char *tmp = xasprintf("%s/tmp/a.log.L1", run);
  char *final = xasprintf("%s/logs/a.log", run);
  char status[64];
  struct rlimit saved;
  static const char cut[] = HEAD "result status=ok avg_ms=12";

  /* the cut log, and room for one byte only: the runner's "\n" would make the cut line look
   * whole (and ok). Nothing of its line stays: the log reads cut and goes to logs/ as it is */
  write_text(tmp, cut);
  CHECK(set_fsize_limit(sizeof cut - 1 + 1, &saved) == 0);
  int frc = cellog_finish(run, "a.log", tmp, 1, NULL, NULL, NULL);
  CHECK(setrlimit(RLIMIT_FSIZE, &saved) == 0);
  CHECK(frc == -1);
  char *text = read_text(final);
  CHECKF(text && strcmp(text, cut) == 0, "full disk, cut log: logs/a.log is '%s'",
         text ? text : "(none)");
  CHECK(cellog_status(final, status, sizeof status) == 0);
  CHECK_STR(status, "cut");
  CHECK(!cellog_status_good(status) && !plot_good(text ? text : ""));
  free(text);

  /* a whole ok log of a program that exited 1, and no room at all: it would read good
   * without the runner's line, so it stays in tmp/ and the cell has no log */
  CHECK(unlink(final) == 0);
  write_text(tmp, HEAD "result status=ok avg_ms=1.5\n");
  CHECK(set_fsize_limit(sizeof HEAD - 1 + strlen("result status=ok avg_ms=1.5\n"), &saved) == 0);
  frc = cellog_finish(run, "a.log", tmp, 1, NULL, NULL, NULL);
  CHECK(setrlimit(RLIMIT_FSIZE, &saved) == 0);
  CHECK(frc == -1);
  CHECK(!exists(final));
  text = read_text(tmp);
  CHECK(text && strcmp(text, HEAD "result status=ok avg_ms=1.5\n") == 0);
  free(text);
  signal(SIGXFSZ, SIG_DFL);
  free(tmp);
  free(final);
  free(run);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_cellog WORK_DIR\n");
    return 2;
  }
  work_dir = argv[1];
  mkdir_p(work_dir, 0755);
  test_agreement();
  test_verdict_agreement();
  test_finish();
  test_finish_verdict();
  test_finish_full_disk();
  return check_report();
}
