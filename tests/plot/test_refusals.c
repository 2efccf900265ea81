/* Unit tests of what the log readers refuse to draw: a log whose own check failed, numbers that
 * are not finite decimal numbers, a key twice on one line, two logs of one cell (an error,
 * unless --latest picks the newest), control characters in what is printed, and symlinks that
 * lead out of the log folder. The logs are written here; they are test data, not measurements. */
#define _GNU_SOURCE /* mkdtemp, symlink, utimes */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "../check.h"
#include "config.h"
#include "reader.h"
#include "table.h"

#ifndef SRC_DIR
#define SRC_DIR "."
#endif

/* Parses a string as test.log; returns rd_parse_buffer's result and leaves the row and issues. */
static int parse(const char *text, pt_row *row, rd_issues *is) {
  pt_row_init(row);
  return rd_parse_buffer(text, strlen(text), "test.log", row, is);
}

/* The first issue whose message holds needle, or NULL. */
static const rd_issue *issue_with(const rd_issues *is, const char *needle) {
  for (size_t i = 0; i < is->n; i++)
    if (strstr(is->v[i].msg, needle)) return &is->v[i];
  return NULL;
}

/* 1 when s holds a byte below 0x20 or 0x7f (n bytes; newlines allowed when lines is 1). */
static int has_control(const char *s, size_t n, int lines) {
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if ((c < 0x20 || c == 0x7f) && !(lines && c == '\n')) return 1;
  }
  return 0;
}

/* Writes text to dir/name (name may hold a folder that exists). */
static void write_file(const char *dir, const char *name, const char *text) {
  char p[700];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  FILE *f = fopen(p, "w");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

/* Sets dir/name's modification time to t seconds since 1970. */
static void set_mtime(const char *dir, const char *name, long t) {
  char p[700];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  struct timeval tv[2] = {{t, 0}, {t, 0}};
  utimes(p, tv);
}

/* The row whose source ends in /tail, or NULL. */
static const pt_row *row_ending(const pt_table *t, const char *tail) {
  size_t n = strlen(tail);
  for (size_t i = 0; i < t->n; i++) {
    size_t m = strlen(t->rows[i].source);
    if (m > n && t->rows[i].source[m - n - 1] == '/' && !strcmp(t->rows[i].source + m - n, tail))
      return &t->rows[i];
  }
  return NULL;
}

/* Removes a folder tree this test made (rm -r). */
static void remove_tree(const char *dir) {
  char cmd[800];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

/* ---- a log whose own check failed ---- */

static void test_failed_check(void) {
  pt_row r;
  rd_issues is = {0};
  int rc = parse("# repro-log 1\nconfig workload=attn system=fused\n"
                 "check output=out rel_l2=3.1e-04 max_abs=1.9e-03 ok=1\n"
                 "check output=lse rel_l2=2.5e-01 max_abs=4.0e+00 tol_rel_l2=1.0e-02 ok=0\n"
                 "result status=ok avg_ms=1.5 min_ms=1.4 max_ms=1.6 gflops_s=10.0\n",
                 &r, &is);
  CHECKF(rc == 0 && r.status == ST_ERROR && isnan(r.avg_ms) && isnan(r.gflops_s),
         "check ok=0 under result status=ok: ERR, no time: rc=%d status=%s avg=%g", rc,
         pt_status_name(r.status), r.avg_ms);
  CHECKF(strstr(r.reason, "check output=lse failed") && strstr(r.reason, "rel_l2=2.5e-01") &&
             strstr(r.reason, "line 4"),
         "the reason names the output, its rel_l2 and the line: %s", r.reason);
  const rd_issue *it = issue_with(&is, "check output=lse failed");
  CHECKF(it && it->line == 4 && it->kind == ISSUE_WARNING, "a warning at line 4 (--strict fails)");
  rd_issues_free(&is);

  rc = parse("# repro-log 1\ncheck output=kv_select reference=fused heads=4 kept=8 differing=3 "
             "near_tie=0 unjudged=0 hard=3 malformed=0 tie_rel=4.0e-02 ok=0\n"
             "result status=ok avg_ms=2\n",
             &r, &is);
  CHECKF(rc == 0 && r.status == ST_ERROR && strstr(r.reason, "kv_select") &&
             strstr(r.reason, "hard=3"),
         "a selection check names its counts: %s", r.reason);
  rd_issues_free(&is);

  rc = parse("# repro-log 1\ncheck output=out rel_l2=1e-3 ok=maybe\nresult status=ok avg_ms=2\n",
             &r, &is);
  CHECKF(rc == 0 && r.status == ST_ERROR && strstr(r.reason, "ok=maybe"),
         "ok= other than 0 or 1 passes nothing: %s", r.reason);
  rd_issues_free(&is);

  rc = parse("# repro-log 1\ncheck output=out rel_l2=0.5 ok=0\n"
             "result status=error reason=\"check failed: out\"\n",
             &r, &is);
  CHECKF(rc == 0 && r.status == ST_ERROR && !strcmp(r.reason, "check failed: out") && is.n == 0,
         "a run that reports its failure keeps its reason: %s (%zu issues)", r.reason, is.n);
  rd_issues_free(&is);

  rc = parse("# repro-log 1\ncheck output=out rel_l2=3.1e-04 ok=1\nresult status=ok avg_ms=2\n", &r,
             &is);
  CHECKF(rc == 0 && r.status == ST_OK && r.avg_ms == 2 && is.n == 0, "passed checks: the time");
  rd_issues_free(&is);
}

/* ---- numbers: finite decimal numbers only ---- */

static void test_decimal_numbers(void) {
  const char *good[] = {"1.25", "1e3", "-0.5", ".5", "5.", "+2", "7E-2", "0"};
  const double want[] = {1.25, 1000, -0.5, 0.5, 5, 2, 0.07, 0};
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    double v = NAN;
    CHECKF(pt_parse_decimal(good[i], strlen(good[i]), &v) == 0 && v == want[i], "\"%s\" -> %g",
           good[i], v);
  }
  const char *bad[] = {"0x10", "0X1p3", "inf", "-inf", "infinity", "nan", "NAN", "",     " 1",
                       "1 ",   "1e",    "e3",  "1,5",  "--1",      "+",   ".",   "1.2.3"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    double v = 42;
    CHECKF(pt_parse_decimal(bad[i], strlen(bad[i]), &v) < 0 && v == 42, "\"%s\" is refused (%g)",
           bad[i], v);
  }
  double v = 42;
  CHECKF(pt_parse_decimal("1e999", 5, &v) == PT_NUM_RANGE && v == 42, "1e999 overflows: refused");
  CHECKF(pt_parse_decimal("1.5xyz", 3, &v) == 0 && v == 1.5, "only [s, s+len) is read");

  pt_row r;
  rd_issues is = {0};
  const char *times[] = {"0x10", "nan", "1e999", "inf", "-inf", "0X1P4"};
  for (size_t i = 0; i < sizeof times / sizeof *times; i++) {
    char log[200];
    snprintf(log, sizeof log, "# repro-log 1\nresult status=ok avg_ms=%s\n", times[i]);
    int rc = parse(log, &r, &is);
    CHECKF(rc == 0 && r.status == ST_ERROR && isnan(r.avg_ms) &&
               !strcmp(r.reason, "avg_ms must be a positive number"),
           "avg_ms=%s: ERR, not NS or a time: rc=%d status=%s avg=%g", times[i], rc,
           pt_status_name(r.status), r.avg_ms);
    char needle[64];
    snprintf(needle, sizeof needle, "avg_ms=\"%s\"", times[i]);
    const rd_issue *it = issue_with(&is, needle);
    CHECKF(it && it->line == 2, "avg_ms=%s: the issue names the value and line 2", times[i]);
    rd_issues_free(&is);
  }
  /* another number that is no finite decimal never counts, and never as its hex value */
  int rc =
      parse("# repro-log 1\nresult status=ok avg_ms=2 gflops_s=0x10 peak_mib=1e999\n", &r, &is);
  CHECKF(rc == 0 && r.status == ST_OK && r.avg_ms == 2 && isnan(r.gflops_s) && isnan(r.peak_mib),
         "gflops_s=0x10 is not 16: rc=%d gflops=%g mib=%g", rc, r.gflops_s, r.peak_mib);
  CHECKF(issue_with(&is, "gflops_s=\"0x10\" is not a decimal number") &&
             issue_with(&is, "peak_mib=\"1e999\""),
         "both are reported");
  rd_issues_free(&is);
  /* the AE format: its time line is read with the same rule */
  rc = parse("[a] avg 1e999 ms, min 1 ms, max 2 ms (1 runs, 1 warmups)\n", &r, &is);
  CHECKF(rc == 0 && r.status == ST_ERROR, "AE time 1e999: ERR (%s)", pt_status_name(r.status));
  rd_issues_free(&is);
}

/* ---- a key twice on one line ---- */

static void test_duplicate_keys(void) {
  pt_row r;
  rd_issues is = {0};
  int rc = parse("# repro-log 1\nconfig workload=attn system=fused\n"
                 "result status=ok avg_ms=1.5 min_ms=1 avg_ms=16\n",
                 &r, &is);
  CHECKF(rc == 0 && r.status == ST_ERROR && isnan(r.avg_ms), "avg_ms twice: ERR, status=%s avg=%g",
         pt_status_name(r.status), r.avg_ms);
  CHECKF(strstr(r.reason, "avg_ms") && strstr(r.reason, "line 3"),
         "the reason names the key and the line: %s", r.reason);
  const rd_issue *it = issue_with(&is, "avg_ms");
  CHECKF(it && it->line == 3 && it->kind == ISSUE_WARNING, "the issue is at line 3");
  rd_issues_free(&is);
  rc = parse("# repro-log 1\nmeta gpu=\"NVIDIA H100\" gpu=\"NVIDIA H200\"\nresult status=ok "
             "avg_ms=1\n",
             &r, &is);
  CHECKF(rc == 0 && r.status == ST_ERROR && strstr(r.reason, "gpu") && strstr(r.reason, "line 2"),
         "a meta key twice: ERR: %s", r.reason);
  rd_issues_free(&is);
  rc = parse("# repro-log 1\ncheck output=a output=b ok=1\nresult status=ok avg_ms=1\n", &r, &is);
  CHECKF(rc == 0 && r.status == ST_ERROR && strstr(r.reason, "output"), "a check key twice: %s",
         r.reason);
  rd_issues_free(&is);
}

/* ---- control characters are escaped wherever text is printed ---- */

static void test_control_characters(void) {
  char buf[64];
  pt_safe_copy(buf, sizeof buf, "a\x1b[31mred\x7f\tb\nc");
  CHECKF(!strcmp(buf, "a\\x1b[31mred\\x7f\\x09b\\x0ac"), "escaped: %s", buf);
  pt_safe_copy(buf, 6, "ab\x1b");
  CHECKF(!strcmp(buf, "ab"), "an escape is never cut: [%s]", buf);
  pt_safe_copy(buf, sizeof buf, "na\xc3\xafve \xff");
  CHECKF(!strcmp(buf, "na\xc3\xafve \xef\xbf\xbd"), "UTF-8 kept, invalid bytes U+FFFD: %s", buf);

  rd_issues is = {0};
  rd_issue_add(&is, ISSUE_WARNING, "dir\x1b[2J/x.log", 3, "value \"%s\"", "\x1b]0;title\x07");
  CHECKF(
      is.n == 1 && !has_control(is.v[0].path, strlen(is.v[0].path), 0) &&
          !has_control(is.v[0].msg, strlen(is.v[0].msg), 0) &&
          !strcmp(is.v[0].path, "dir\\x1b[2J/x.log") && strstr(is.v[0].msg, "\\x1b]0;title\\x07"),
      "issue path and message escaped: %s: %s", is.n ? is.v[0].path : "", is.n ? is.v[0].msg : "");
  rd_issues_free(&is);

  /* a reason and a source with control characters: csv and json hold none (but newlines
   * between records), and the csv reads back to what it shows */
  pt_row r;
  parse("# repro-log 1\nresult status=error reason=\"bad \x1b[31mred\x1b[0m\\nnext\"\n", &r, &is);
  rd_issues_free(&is);
  snprintf(r.source, sizeof r.source, "logs\x1b[1m/\x07x.log");
  strcpy(r.device, "h100");
  strcpy(r.system, "s");
  snprintf(r.gpu, sizeof r.gpu, "GPU\x1b[5m");
  pt_table t = {0};
  pt_append(&t, &r);
  for (int fmt = 0; fmt < 2; fmt++) {
    char *out = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&out, &n);
    if (fmt)
      pt_write_json(f, &t);
    else
      pt_write_csv(f, &t);
    fclose(f);
    /* csv shows \x1b; json writes that text, its backslash escaped */
    const char *reason =
        fmt ? "bad \\\\x1b[31mred\\\\x1b[0m\\\\x0anext" : "bad \\x1b[31mred\\x1b[0m\\x0anext";
    const char *source = fmt ? "logs\\\\x1b[1m/\\\\x07x.log" : "logs\\x1b[1m/\\x07x.log";
    const char *gpu = fmt ? "GPU\\\\x1b[5m" : "GPU\\x1b[5m";
    CHECKF(!has_control(out, n, 1) && strstr(out, reason) && strstr(out, source) &&
               strstr(out, gpu),
           "%s: control characters escaped:\n%s", fmt ? "json" : "csv", out);
    free(out);
  }
  char path[] = "/tmp/test_plot_refusals_csv_XXXXXX";
  FILE *f = fdopen(mkstemp(path), "w");
  pt_write_csv(f, &t);
  fclose(f);
  pt_table back = {0};
  CHECKF(pt_read_csv(path, &back, NULL, NULL) == 0 && back.n == 1 &&
             !strcmp(back.rows[0].reason, "bad \\x1b[31mred\\x1b[0m\\x0anext") &&
             !strcmp(back.rows[0].source, "logs\\x1b[1m/\\x07x.log"),
         "the csv reads back as it shows: [%s] [%s]", back.n ? back.rows[0].reason : "",
         back.n ? back.rows[0].source : "");
  unlink(path);
  pt_free(&back);
  pt_free(&t);
}

/* ---- two logs of one cell ---- */

static const char *ours_log(const char *date, const char *avg) {
  static char buf[4][256];
  static int k;
  k = (k + 1) % 4;
  snprintf(buf[k], sizeof buf[k], "# repro-log 1\n%s%s%sresult status=ok avg_ms=%s\n",
           date ? "meta gpu=\"NVIDIA H100\" date=" : "", date ? date : "", date ? "\n" : "", avg);
  return buf[k];
}

static void test_duplicate_logs(void) {
  pc_config cfg;
  CHECKF(pc_load(SRC_DIR "/fig12/experiment.yaml", &cfg) == 0, "fig12 config loads");
  rd_opts o = pc_reader_opts(&cfg);
  char dir[] = "/tmp/test_plot_dups_XXXXXX";
  CHECKF(mkdtemp(dir) != NULL, "mkdtemp");
  char sub[600];
  snprintf(sub, sizeof sub, "%s/sub", dir);
  mkdir(sub, 0777);
  write_file(dir, "kernel.h100.h2o.fused.log", ours_log("2026-01-02T00:00:00Z", "1"));
  write_file(dir, "sub/kernel.h100.h2o.fused.log", ours_log("2026-03-01T12:00:00Z", "2"));
  write_file(dir, "kernel.h200.h2o.fused.log", ours_log("2026-01-02T00:00:00Z", "3"));
  write_file(dir, "sub/kernel.h200.h2o.torch.log", ours_log(NULL, "4"));

  pt_table t = {0};
  rd_issues is = {0};
  int n = rd_read_path(&o, dir, &t, &is);
  const pt_row *a = row_ending(&t, "kernel.h100.h2o.fused.log");
  CHECKF(n == 3 && t.n == 3, "one row per cell: n=%d rows=%zu", n, t.n);
  CHECKF(a && a->status == ST_ERROR && isnan(a->avg_ms) &&
             strstr(a->reason, "kernel.h100.h2o.fused.log") &&
             strstr(a->reason, "sub/kernel.h100.h2o.fused.log") && strstr(a->reason, "--latest"),
         "two logs of one cell: ERR naming both: %s", a ? a->reason : "(no row)");
  const rd_issue *it = issue_with(&is, "sub/kernel.h100.h2o.fused.log");
  CHECKF(it && strstr(it->msg, "--latest"), "the issue names both files: %s", it ? it->msg : "");
  const pt_row *h200 = row_ending(&t, "kernel.h200.h2o.fused.log");
  CHECKF(h200 && h200->status == ST_OK && h200->avg_ms == 3,
         "another device's log of the workload is another cell");
  pt_free(&t);
  rd_issues_free(&is);

  o.latest = 1;
  n = rd_read_path(&o, dir, &t, &is);
  a = row_ending(&t, "sub/kernel.h100.h2o.fused.log");
  CHECKF(n == 3 && a && a->status == ST_OK && a->avg_ms == 2,
         "--latest: the newest by its meta date is drawn: n=%d avg=%g", n, a ? a->avg_ms : NAN);
  it = issue_with(&is, "sub/kernel.h100.h2o.fused.log");
  CHECKF(it && it->kind == ISSUE_NOT_DRAWN && strstr(it->path, "/kernel.h100.h2o.fused.log") &&
             !strstr(it->path, "/sub/") && strstr(it->msg, "2026-03-01T12:00:00Z"),
         "the older file is listed as not drawn, naming the drawn one and its date: %s: %s",
         it ? it->path : "", it ? it->msg : "");
  pt_free(&t);
  rd_issues_free(&is);

  /* the artifact's our.log beside ours (our -> flashtensor): the AE log has no meta date, so its
   * file time counts */
  char ae[] = "/tmp/test_plot_dups_ae_XXXXXX";
  CHECKF(mkdtemp(ae) != NULL, "mkdtemp");
  write_file(ae, "kernel.h100.kf.our.log",
             "[our] avg 5 ms, min 5 ms, max 5 ms (1 runs, 1 warmups)\n");
  write_file(ae, "kernel.h100.kf.flashtensor.log", ours_log("2026-02-01T00:00:00Z", "6"));
  set_mtime(ae, "kernel.h100.kf.our.log", 1767225600L + 86400L * 60); /* 2026-03-02 */
  o.latest = 0;
  n = rd_read_path(&o, ae, &t, &is);
  CHECKF(n == 1 && t.n == 1 && t.rows[0].status == ST_ERROR &&
             strstr(t.rows[0].reason, "kernel.h100.kf.our.log"),
         "our.log and flashtensor.log are one cell: ERR: n=%d %s", n, t.n ? t.rows[0].reason : "");
  pt_free(&t);
  rd_issues_free(&is);
  o.latest = 1;
  n = rd_read_path(&o, ae, &t, &is);
  CHECKF(n == 1 && t.n == 1 && t.rows[0].avg_ms == 5 && !strcmp(t.rows[0].format, "ae"),
         "--latest: the AE log's file time (March) beats the meta date (February): %g",
         t.n ? t.rows[0].avg_ms : NAN);
  pt_free(&t);
  rd_issues_free(&is);
  set_mtime(ae, "kernel.h100.kf.our.log", 1767225600L); /* 2026-01-01 */
  n = rd_read_path(&o, ae, &t, &is);
  CHECKF(n == 1 && t.n == 1 && t.rows[0].avg_ms == 6 && !strcmp(t.rows[0].format, "ours"),
         "--latest: the meta date (February) beats the file time (January): %g",
         t.n ? t.rows[0].avg_ms : NAN);
  pt_free(&t);
  rd_issues_free(&is);
  /* two logs of the same date: --latest cannot choose, the cell stays ERR */
  write_file(ae, "kernel.h100.kf.our.log", ours_log("2026-02-01T00:00:00Z", "7"));
  set_mtime(ae, "kernel.h100.kf.our.log", 1767225600L);
  set_mtime(ae, "kernel.h100.kf.flashtensor.log", 1767225600L);
  n = rd_read_path(&o, ae, &t, &is);
  CHECKF(n == 1 && t.n == 1 && t.rows[0].status == ST_ERROR && strstr(t.rows[0].reason, "date"),
         "--latest with a tie: ERR: %s", t.n ? t.rows[0].reason : "");
  pt_free(&t);
  rd_issues_free(&is);
  remove_tree(dir);
  remove_tree(ae);
}

/* ---- symlinks that lead out of the log folder ---- */

static void test_symlinks_out(void) {
  pc_config cfg;
  CHECKF(pc_load(SRC_DIR "/fig12/experiment.yaml", &cfg) == 0, "fig12 config loads");
  rd_opts o = pc_reader_opts(&cfg);
  char root[] = "/tmp/test_plot_root_XXXXXX", out[] = "/tmp/test_plot_outside_XXXXXX";
  CHECKF(mkdtemp(root) && mkdtemp(out), "mkdtemp");
  char p[700], q[700];
  snprintf(p, sizeof p, "%s/sub", out);
  mkdir(p, 0777);
  snprintf(p, sizeof p, "%s/.hidden", root);
  mkdir(p, 0777);
  write_file(out, "kernel.h100.kf.fused.log", ours_log(NULL, "1"));
  write_file(out, "sub/kernel.h100.corm.fused.log", ours_log(NULL, "2"));
  write_file(root, "kernel.h100.h2o.fused.log", ours_log(NULL, "3"));
  write_file(root, ".hidden/kernel.h100.snapkv.fused.log", ours_log(NULL, "4"));
  snprintf(p, sizeof p, "%s/kernel.h100.kf.fused.log", out);
  snprintf(q, sizeof q, "%s/kernel.h100.kf.fused.log", root);
  CHECKF(symlink(p, q) == 0, "a link to a file outside");
  snprintf(p, sizeof p, "%s/sub", out);
  snprintf(q, sizeof q, "%s/elsewhere", root);
  CHECKF(symlink(p, q) == 0, "a link to a folder outside");
  snprintf(q, sizeof q, "%s/kernel.h100.snapkv.fused.log", root);
  CHECKF(symlink(".hidden/kernel.h100.snapkv.fused.log", q) == 0, "a link inside");
  pt_table t = {0};
  rd_issues is = {0};
  int n = rd_read_path(&o, root, &t, &is);
  CHECKF(n == 2 && row_ending(&t, "kernel.h100.h2o.fused.log") &&
             row_ending(&t, "kernel.h100.snapkv.fused.log") &&
             !row_ending(&t, "kernel.h100.kf.fused.log") &&
             !row_ending(&t, "kernel.h100.corm.fused.log"),
         "only the logs inside the folder are read: n=%d", n);
  int file_warned = 0, dir_warned = 0;
  for (size_t i = 0; i < is.n; i++) {
    if (!strstr(is.v[i].msg, "leads out of")) continue;
    file_warned += strstr(is.v[i].path, "/kernel.h100.kf.fused.log") != NULL;
    dir_warned += strstr(is.v[i].path, "/elsewhere") != NULL;
  }
  CHECKF(file_warned == 1 && dir_warned == 1, "each link warned once, by its name: %d %d",
         file_warned, dir_warned);
  pt_free(&t);
  rd_issues_free(&is);
  /* the folder given through a link (fig12/backup_logs -> ../backup_logs/fig12): its real path
   * is the root */
  char via[720];
  snprintf(via, sizeof via, "%s.link", root);
  CHECKF(symlink(root, via) == 0, "a link to the root");
  n = rd_read_path(&o, via, &t, &is);
  CHECKF(n == 2 && issue_with(&is, "leads out of"), "through a link to the root: n=%d", n);
  pt_free(&t);
  rd_issues_free(&is);
  unlink(via);
  remove_tree(root);
  remove_tree(out);
}

int main(void) {
  if (rd_init()) return 1;
  test_failed_check();
  test_decimal_numbers();
  test_duplicate_keys();
  test_control_characters();
  test_duplicate_logs();
  test_symlinks_out();
  rd_cleanup();
  return check_report();
}
