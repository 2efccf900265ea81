/* Unit tests of the runner: quoting (checked by a real shell), templates, names, YAML errors
 * with positions, expansion, the run journal, finishing logs, and golden job scripts.
 *   test_runner SOURCE_DIR WORK_DIR        (REPRO_UPDATE_GOLDEN=1 rewrites the golden files) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cellog.h"
#include "config.h"
#include "executor.h"
#include "expand.h"
#include "jobscript.h"
#include "manifest.h"
#include "template.h"
#include "util.h"

#include "../check.h"

static const char *src_dir, *work_dir;

/* The shell must read back exactly the value we quoted. */
static void quote_roundtrip(const char *val) {
  sbuf cmd = {0};
  sb_add(&cmd, "printf '%s' ");
  tpl_shell_quote(&cmd, val);
  FILE *p = popen(cmd.s, "r");
  sbuf out = {0};
  char buf[4096];
  size_t n;
  while (p && (n = fread(buf, 1, sizeof buf, p)) > 0) sb_addn(&out, buf, n);
  CHECK(p && pclose(p) == 0);
  CHECK_STR(out.s ? out.s : "", val);
  sb_free(&cmd);
  sb_free(&out);
}

static void test_quoting(void) {
  const char *vals[] = {"plain",     "",    "with space", "; rm -rf /tmp/x", "$(touch /tmp/x)",
                        "`id`",      "a'b", "'",          "\"dq\"",          "back\\slash",
                        "new\nline", "*",   "~root",      "$HOME",           "a;b|c&d>e<f",
                        "{bin}",     "-n",  "%s",         "tab\there"};
  for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) quote_roundtrip(vals[i]);
  char *long_val = xmalloc(5000);
  memset(long_val, 'x', 4999);
  long_val[4999] = '\0';
  long_val[100] = '\'';
  quote_roundtrip(long_val);
  free(long_val);
  CHECK(tpl_is_shell_safe("/usr/bin/x-1.2"));
  CHECK(!tpl_is_shell_safe("a b"));
  CHECK(!tpl_is_shell_safe(""));
  CHECK(!tpl_is_shell_safe("a=b"));
}

static void test_names(void) {
  CHECK(tpl_is_name("kernel.h100.h2o.fused.log"));
  CHECK(tpl_is_name("sdpa-flash"));
  CHECK(!tpl_is_name(""));
  CHECK(!tpl_is_name(".hidden"));
  CHECK(!tpl_is_name(".."));
  CHECK(!tpl_is_name("a/b"));
  CHECK(!tpl_is_name("a b"));
  CHECK(!tpl_is_name("a;b"));
  CHECK(tpl_value_problem("ok value") == NULL);
  CHECK(tpl_value_problem("new\nline") != NULL);
}

static const char *lookup_fixed(void *ctx, const char *name) {
  (void)ctx;
  if (strcmp(name, "a") == 0) return "x y";
  if (strcmp(name, "b") == 0) return "plain";
  return NULL;
}

static void test_templates(void) {
  sbuf out = {0};
  char *err = NULL;
  CHECK(tpl_render("run {a} {b} {{literal}}", TPL_SHELL, lookup_fixed, NULL, &out, &err) == 0);
  CHECK_STR(out.s, "run 'x y' plain {literal}");
  sb_clear(&out);
  CHECK(tpl_render("{b}.log", TPL_NAME, lookup_fixed, NULL, &out, &err) == 0);
  CHECK_STR(out.s, "plain.log");
  sb_clear(&out);
  CHECK(tpl_render("{a}.log", TPL_NAME, lookup_fixed, NULL, &out, &err) == -1);
  CHECK(err && strstr(err, "not a name"));
  free(err);
  err = NULL;
  sb_clear(&out);
  CHECK(tpl_render("{nope}", TPL_SHELL, lookup_fixed, NULL, &out, &err) == -1);
  CHECK(err && strstr(err, "unknown placeholder {nope}"));
  free(err);
  const char *msg;
  size_t off;
  CHECK(tpl_scan("a {b", NULL, NULL, &msg, &off) == -1 && off == 2);
  CHECK(tpl_scan("a }", NULL, NULL, &msg, &off) == -1);
  CHECK(tpl_scan("${HOME}", NULL, NULL, &msg, &off) == -1);
  CHECK(tpl_scan("{{x}} {y_1}", NULL, NULL, &msg, &off) == 0);
  sb_free(&out);
}

/* A YAML text must fail with a message containing `where` (file:line:col) and `what`. */
static void expect_yaml_error(const char *text, const char *where, const char *what, int cluster) {
  char *err = NULL;
  int rc;
  if (cluster) {
    clusterfile c;
    rc = cluster_load_buffer("c.yaml", text, strlen(text), &c, &err);
    if (rc == 0) cluster_free(&c);
  } else {
    expfile f;
    rc = expfile_load_buffer("e.yaml", text, strlen(text), &f, &err);
    if (rc == 0) expfile_free(&f);
  }
  CHECK(rc == -1);
  if (rc == -1) {
    if (!strstr(err, where) || !strstr(err, what))
      fprintf(stderr, "  expected '%s' ... '%s' in: %s\n", where, what, err);
    CHECK(strstr(err, where) != NULL);
    CHECK(strstr(err, what) != NULL);
    /* one line: values are quoted with their newlines escaped */
    if (strchr(err, '\n')) fprintf(stderr, "  a raw newline in: %s\n", err);
    CHECK(strchr(err, '\n') == NULL);
  }
  free(err);
}

#define EXP_HEAD "systems:\n  s: {command: \"run {workload}\"}\nexperiments:\n  k:\n"

static void test_yaml_errors(void) {
  expect_yaml_error("experiments: [\n", "e.yaml:", "YAML syntax error", 0);
  expect_yaml_error("- a\n", "e.yaml:1:1", "expected a mapping", 0);
  expect_yaml_error("bogus: 1\n", "e.yaml:1:1", "unknown key 'bogus'", 0);
  expect_yaml_error("figure: x\n", "e.yaml:1:1", "missing 'experiments'", 0);
  expect_yaml_error("experiments: {}\n", "e.yaml:1:14", "at least one experiment", 0);
  expect_yaml_error(EXP_HEAD "    log: \"{device}.log\"\n    time_limit: 10\n    axes: {device: "
                             "[a], system: [s]}\n    extra: 1\n",
                    "e.yaml:8:5", "unknown key 'extra' in an experiment", 0);
  expect_yaml_error(EXP_HEAD "    time_limit: 10\n    axes: {device: [a], system: [s]}\n",
                    "e.yaml:5:5", "missing 'log'", 0);
  expect_yaml_error(EXP_HEAD
                    "    log: x\n    time_limit: soon\n    axes: {device: [a], system: [s]}\n",
                    "e.yaml:6:17", "time_limit: expected seconds", 0);
  expect_yaml_error(EXP_HEAD "    log: x\n    time_limit: 10\n    axes: {device: [a], system: "
                             "[s]}\n    params: {p: [1]}\n",
                    "e.yaml:8:17", "expected a scalar", 0);
  expect_yaml_error(
      EXP_HEAD
      "    log: x\n    time_limit: 10\n    axes: {device: [a], workload: [w], system: [s, t]}\n",
      "e.yaml:7:52", "system 't' of experiment 'k' has no entry", 0);
  expect_yaml_error(EXP_HEAD
                    "    log: x\n    time_limit: 10\n    axes: {device: [a], system: [\"s;rm\"]}\n",
                    "e.yaml:7:34", "not a valid name", 0);
  expect_yaml_error(EXP_HEAD
                    "    log: x\n    time_limit: 10\n    axes: {device: [a], system: [s]}\n",
                    "e.yaml:2:16", "unknown placeholder {workload}", 0);
  expect_yaml_error(EXP_HEAD "    log: x\n    time_limit: 10\n    axes: {device: [a], workload: "
                             "[w], system: [s]}\n    exclude: [{system: t}]\n",
                    "e.yaml:8:24", "'t' is not a value of axis 'system'", 0);
  expect_yaml_error(EXP_HEAD "    log: x\n    time_limit: 10\n    axes: {device: [a], workload: "
                             "[w], system: [s]}\n    params: {p: \"a\\nb\"}\n",
                    "e.yaml:8:17", "control character", 0);
  expect_yaml_error(EXP_HEAD
                    "    log: x\n    time_limit: 10\n    axes: {workload: [w], system: [s]}\n",
                    "e.yaml:7:11", "expected a 'device' axis", 0);
  expect_yaml_error("a: &x 1\nb: *x\n", "e.yaml:1:4", "anchors", 0);
  expect_yaml_error("a: 1\na: 2\n", "e.yaml:2:1", "duplicate key 'a'", 0);
  expect_yaml_error("plot: [1]\nexperiments: {}\n", "e.yaml:1:7", "plot: expected a mapping", 0);
  expect_yaml_error("devices: {h100: {partition: \"a b\"}}\n", "c.yaml:1:29", "partition", 1);
  expect_yaml_error("devices: {h100: {max_concurrent: 0}}\n", "c.yaml:1:34", "expected an integer",
                    1);
  /* the key is named, the value quoted with its control characters escaped */
  expect_yaml_error("devices: {h100: {max_concurrent: many}}\n", "c.yaml:1:34",
                    "max_concurrent: expected an integer in [1, 100000], found 'many'", 1);
  expect_yaml_error("devices: {h100: {cpus_per_task: \"4\\n5\"}}\n", "c.yaml:1:33",
                    "cpus_per_task: expected an integer in [1, 100000], found '4\\n5'", 1);
  expect_yaml_error("devices: {h100: {gres: \"gpu\\n#SBATCH --uid=0\"}}\n", "c.yaml:1:24",
                    "gres: 'gpu\\n#SBATCH --uid=0' has character '\\n'", 1);
  expect_yaml_error(EXP_HEAD "    log: x\n    time_limit: \"1\\n0\"\n    axes: {device: [a], "
                             "system: [s]}\n",
                    "e.yaml:6:17",
                    "time_limit: expected seconds (e.g. 600) or H:MM:SS / MM:SS "
                    "greater than 0, found '1\\n0'",
                    0);
  expect_yaml_error("devices: {h100: {gpus: 1}}\n", "c.yaml:1:18", "unknown key 'gpus' in a device",
                    1);
  expect_yaml_error("executor: pbs\ndevices: {}\n", "c.yaml:1:11", "expected auto, slurm or local",
                    1);
  expect_yaml_error("name: x\n", "c.yaml:1:1", "missing 'devices'", 1);
}

static const char *matrix_yaml = "defaults: {n: 1}\n"
                                 "systems:\n"
                                 "  fast: {command: \"/bin/echo {workload} {n} {seqlen}\"}\n"
                                 "  slow: {command: \"/bin/echo slow {workload} {extra}\"}\n"
                                 "  gone: {absent: \"not here\"}\n"
                                 "experiments:\n"
                                 "  kernel:\n"
                                 "    log: \"{experiment}.{device}.{workload}.{system}.log\"\n"
                                 "    time_limit: \"1:30\"\n"
                                 "    axes:\n"
                                 "      device: [h100, a100]\n"
                                 "      workload: [w1, w2, w3]\n"
                                 "      system: [fast, slow, gone]\n"
                                 "    exclude:\n"
                                 "      - {system: slow, workload: [w2, w3]}\n"
                                 "    params: {extra: \"x y\", seqlen: 64}\n"
                                 "plot: {anything: [goes, here]}\n";

static const char *cluster_yaml = "vars: {n: 7}\n"
                                  "devices:\n"
                                  "  h100: {partition: gpu-h100, gres: \"gpu:h100:1\", account: "
                                  "proj, qos: normal, max_concurrent: 2,\n"
                                  "         cpus_per_task: 4, mem: 16G, setup: [\"module load "
                                  "cuda\"], vars: {extra: \"$(danger)\"}}\n";

static void test_expansion(void) {
  expfile f;
  clusterfile c;
  cellset cs;
  char *err = NULL;
  CHECK(expfile_load_buffer("m.yaml", matrix_yaml, strlen(matrix_yaml), &f, &err) == 0);
  if (err) {
    fprintf(stderr, "%s\n", err);
    free(err);
    return;
  }
  CHECK(cluster_load_buffer("c.yaml", cluster_yaml, strlen(cluster_yaml), &c, &err) == 0);
  if (err) {
    fprintf(stderr, "%s\n", err);
    free(err);
    expfile_free(&f);
    return;
  }
  CHECK(f.exps[0].time_limit_s == 90);
  CHECK(expand(&f, &c, NULL, 0, &cs, &err) == 0);
  /* 2 devices x (3 workloads x 3 systems - 2 excluded) */
  CHECK(cs.ncells == 14);
  CHECK(cs.ngroups == 2);
  CHECK_STR(cs.cells[0].log, "kernel.h100.w1.fast.log");
  CHECK_STR(cs.cells[1].log, "kernel.h100.w1.slow.log");
  CHECK_STR(cs.cells[2].log, "kernel.h100.w1.gone.log");
  CHECK_STR(cs.cells[3].log, "kernel.h100.w2.fast.log");
  CHECK(cs.cells[2].sel == CELL_ABSENT);
  CHECK(cs.cells[0].sel == CELL_SELECTED);
  CHECK(cs.cells[7].sel == CELL_NO_DEVICE); /* a100 is not in the cluster file */
  CHECK(cs.cells[3].task == 3 && cs.cells[7].task == 0);
  /* commands: cluster vars override params; values are quoted */
  runtime_vars rt = {.bin = "/b", .root = "/r", .run_dir = "/x"};
  cell_env env = {&cs, &cs.cells[1], cluster_device(&c, "h100"), &rt};
  sbuf cmd = {0};
  CHECK(cell_command(&env, &cmd, &err) == 0);
  CHECK_STR(cmd.s, "/bin/echo slow w1 '$(danger)'");
  sb_clear(&cmd);
  env.c = &cs.cells[0];
  CHECK(cell_command(&env, &cmd, &err) == 0);
  CHECK_STR(cmd.s, "/bin/echo w1 7 64");
  env.c = &cs.cells[2];
  CHECK(cell_command(&env, &cmd, &err) == -1);
  free(err);
  err = NULL;
  sb_free(&cmd);
  cellset_free(&cs);

  /* filters: AND inside one --only, OR across */
  filter flt[2];
  CHECK(filter_parse("workload=w2,device=h100", &flt[0], &err) == 0);
  CHECK(filter_parse("system=slow", &flt[1], &err) == 0);
  CHECK(expand(&f, NULL, flt, 2, &cs, &err) == 0);
  int sel = 0;
  for (int i = 0; i < cs.ncells; i++) sel += cs.cells[i].sel == CELL_SELECTED;
  CHECK(sel == 3); /* h100.w2.fast, h100.w1.slow, a100.w1.slow (h100.w2.gone is absent) */
  cellset_free(&cs);
  filter_free(&flt[0]);
  filter_free(&flt[1]);
  CHECK(filter_parse("workload=nope", &flt[0], &err) == 0);
  CHECK(expand(&f, NULL, flt, 1, &cs, &err) == -1 && err && strstr(err, "workload=nope"));
  free(err);
  err = NULL;
  filter_free(&flt[0]);
  CHECK(filter_parse("colour=red", &flt[0], &err) == 0);
  CHECK(expand(&f, NULL, flt, 1, &cs, &err) == -1 && err && strstr(err, "'colour' is not an axis"));
  free(err);
  err = NULL;
  filter_free(&flt[0]);
  CHECK(filter_parse("novalue", &flt[0], &err) == -1);
  free(err);
  cluster_free(&c);
  expfile_free(&f);

  /* a log template that does not separate cells is refused */
  const char *dup =
      "systems: {s: {command: x}, t: {command: y}}\nexperiments:\n  k:\n    log: \"{device}.log\"\n"
      "    time_limit: 5\n    axes: {device: [d], system: [s, t]}\n";
  CHECK(expfile_load_buffer("d.yaml", dup, strlen(dup), &f, &err) == 0);
  CHECK(expand(&f, NULL, NULL, 0, &cs, &err) == -1 && err &&
        strstr(err, "two cells get the log name 'd.log'"));
  free(err);
  expfile_free(&f);
}

static const char *cases_yaml = "systems:\n"
                                "  s: {command: \"/bin/echo {m} {n} {dtype}\"}\n"
                                "experiments:\n"
                                "  gemm:\n"
                                "    log: \"{device}.{dtype}.{m}x{n}.{system}.log\"\n"
                                "    time_limit: 10\n"
                                "    axes: {device: [d], dtype: [fp16, bf16], system: [s]}\n"
                                "    cases:\n"
                                "      default:\n"
                                "        - {m: 1024, n: 1024}\n"
                                "        - {m: 4096, n: 1024}\n"
                                "        - {m: 8192, n: 8192}\n"
                                "      test:\n"
                                "        - {m: 64, n: 32}\n"
                                "    exclude: [{dtype: bf16, m: 8192}]\n";

/* cases: a list of parameter sets, one more dimension after the axes (varying fastest). */
/* A case key that names a param (defaults, params) replaces it in that case's cells only. */
static void test_case_replaces_param(void) {
  const char *quick = "defaults: {runs: 30, warmup: 10}\n"
                      "systems: {s: {command: \"/bin/echo {m} {warmup} {runs}\"}}\n"
                      "experiments:\n  k:\n    log: \"{m}.log\"\n    time_limit: 10\n"
                      "    params: {runs: 20}\n    axes: {device: [d], system: [s]}\n"
                      "    cases: {default: [{m: 1, runs: 9}, {m: 2, runs: 20}], "
                      "test: [{m: 3, runs: 5}]}\n";
  const struct {
    const char *list;
    int ncells;
    const char *first_command;
  } lists[] = {{NULL, 2, "/bin/echo 1 10 9"}, {"test", 1, "/bin/echo 3 10 5"}};
  for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
    expfile f;
    cellset cs;
    char *err = NULL;
    CHECK(expfile_load_buffer_cases("q.yaml", lists[i].list, quick, strlen(quick), &f, &err) == 0);
    CHECK(expand(&f, NULL, NULL, 0, &cs, &err) == 0 && cs.ncells == lists[i].ncells);
    runtime_vars rt = {0};
    cell_env env = {&cs, &cs.cells[0], NULL, &rt};
    sbuf cmd = {0};
    CHECK(cell_command(&env, &cmd, &err) == 0);
    CHECK_STR(cmd.s, lists[i].first_command);
    sb_free(&cmd);
    cellset_free(&cs);
    expfile_free(&f);
    free(err);
  }
}

static void test_cases(void) {
  expfile f;
  cellset cs;
  char *err = NULL;
  CHECK(expfile_load_buffer("c.yaml", cases_yaml, strlen(cases_yaml), &f, &err) == 0);
  if (err) {
    fprintf(stderr, "%s\n", err);
    free(err);
    return;
  }
  CHECK(f.exps[0].cases.n == 3 && f.exps[0].cases.nkeys == 2);
  CHECK_STR(f.exps[0].cases.list, "default");
  CHECK(expand(&f, NULL, NULL, 0, &cs, &err) == 0);
  CHECK(cs.ncells == 5); /* 2 dtypes x 3 cases - bf16 at 8192 */
  CHECK_STR(cs.cells[0].log, "d.fp16.1024x1024.s.log");
  CHECK_STR(cs.cells[1].log, "d.fp16.4096x1024.s.log");
  CHECK_STR(cs.cells[2].log, "d.fp16.8192x8192.s.log");
  CHECK_STR(cs.cells[4].log, "d.bf16.4096x1024.s.log");
  CHECK(cs.cells[4].task == 4);
  CHECK_STR(cell_value(&cs, &cs.cells[1], "m"), "4096");
  runtime_vars rt = {0};
  cell_env env = {&cs, &cs.cells[3], NULL, &rt};
  sbuf cmd = {0};
  CHECK(cell_command(&env, &cmd, &err) == 0);
  CHECK_STR(cmd.s, "/bin/echo 1024 1024 bf16");
  sb_free(&cmd);
  cellset_free(&cs);
  /* filters on case keys, with axes, AND inside one --only */
  filter flt[2];
  CHECK(filter_parse("n=1024,dtype=bf16", &flt[0], &err) == 0);
  CHECK(filter_parse("m=8192", &flt[1], &err) == 0);
  CHECK(expand(&f, NULL, flt, 2, &cs, &err) == 0);
  int sel = 0;
  for (int i = 0; i < cs.ncells; i++) sel += cs.cells[i].sel == CELL_SELECTED;
  CHECK(sel == 3); /* bf16 1024x1024, bf16 4096x1024, fp16 8192x8192 */
  CHECK(cs.cells[2].sel == CELL_SELECTED && cs.cells[0].sel == CELL_FILTERED);
  cellset_free(&cs);
  filter_free(&flt[0]);
  filter_free(&flt[1]);
  CHECK(filter_parse("m=5", &flt[0], &err) == 0);
  CHECK(expand(&f, NULL, flt, 1, &cs, &err) == -1 && err && strstr(err, "has m=5"));
  free(err);
  err = NULL;
  filter_free(&flt[0]);
  expfile_free(&f);
  /* --cases NAME selects a named list */
  CHECK(expfile_load_buffer_cases("c.yaml", "test", cases_yaml, strlen(cases_yaml), &f, &err) == 0);
  CHECK(expand(&f, NULL, NULL, 0, &cs, &err) == 0);
  CHECK(cs.ncells == 2);
  CHECK_STR(cs.cells[1].log, "d.bf16.64x32.s.log");
  cellset_free(&cs);
  expfile_free(&f);
  CHECK(expfile_load_buffer_cases("c.yaml", "nope", cases_yaml, strlen(cases_yaml), &f, &err) ==
        -1);
  CHECK(err && strstr(err, "c.yaml:9:7") && strstr(err, "no list 'nope' (--cases)") &&
        strstr(err, "expected one of default, test"));
  free(err);
  err = NULL;
  /* a list only one experiment has (the seed's nsa_only): the others have no cells; their
   * keys stay known to --only and exclude: */
  const char *two = "systems: {s: {command: \"run\"}}\nexperiments:\n"
                    "  a:\n    log: \"a.{device}.{m}.log\"\n    time_limit: 10\n"
                    "    axes: {device: [d], system: [s]}\n"
                    "    cases: {default: [{m: 1}, {m: 2}], test: [{m: 3}]}\n"
                    "    exclude: [{m: 2}]\n"
                    "  b:\n    log: \"b.{device}.{s}.log\"\n    time_limit: 10\n"
                    "    axes: {device: [d], system: [s]}\n"
                    "    cases: {default: [{s: 5}], only_b: [{s: 6}, {s: 7}]}\n";
  CHECK(expfile_load_buffer_cases("t.yaml", "only_b", two, strlen(two), &f, &err) == 0);
  CHECK(f.exps[0].cases.none && !f.exps[1].cases.none);
  CHECK(expand(&f, NULL, NULL, 0, &cs, &err) == 0);
  CHECK(cs.ncells == 2);
  CHECK_STR(cs.cells[0].log, "b.d.6.log");
  cellset_free(&cs);
  CHECK(filter_parse("s=7", &flt[0], &err) == 0);
  CHECK(expand(&f, NULL, flt, 1, &cs, &err) == 0 && cs.cells[1].sel == CELL_SELECTED &&
        cs.cells[0].sel == CELL_FILTERED);
  cellset_free(&cs);
  filter_free(&flt[0]);
  expfile_free(&f);
  CHECK(expfile_load_buffer_cases("t.yaml", "nope", two, strlen(two), &f, &err) == -1);
  CHECK(err && strstr(err, "t.yaml:7:12") && strstr(err, "no list 'nope' (--cases)"));
  free(err);
  err = NULL;
  /* files without named lists refuse --cases */
  CHECK(expfile_load_buffer_cases("m.yaml", "test", matrix_yaml, strlen(matrix_yaml), &f, &err) ==
        -1);
  CHECK(err && strstr(err, "no experiment has named case lists"));
  free(err);

  /* validation, each error at its position */
#define CASE_HEAD                                                                    \
  "systems: {s: {command: \"run {m}\"}}\nexperiments:\n  k:\n    log: \"{m}.log\"\n" \
  "    time_limit: 10\n    axes: {device: [d], system: [s]}\n"
  expect_yaml_error(CASE_HEAD "    cases: [{m: 1, n: 2}, {m: 3}]\n", "e.yaml:7:27",
                    "cases[1]: expected the keys of cases[0] (m, n), found (m)", 0);
  expect_yaml_error(CASE_HEAD "    cases: [{m: 1}, {n: 3}]\n", "e.yaml:7:21",
                    "cases[1]: expected the keys of cases[0] (m), found (n)", 0);
  expect_yaml_error(CASE_HEAD "    cases: [{m: 1, device: e}]\n", "e.yaml:7:20",
                    "case key 'device' is also an axis of experiment 'k'", 0);
  expect_yaml_error(CASE_HEAD "    cases: [{m: \"1; rm -rf x\"}]\n", "e.yaml:7:17",
                    "not a valid name", 0);
  expect_yaml_error(CASE_HEAD "    cases: [{m: [1, 2]}]\n", "e.yaml:7:17",
                    "cases[0]: value of 'm': expected a scalar", 0);
  expect_yaml_error(CASE_HEAD "    cases: [1]\n", "e.yaml:7:13", "cases[0]: expected a mapping", 0);
  expect_yaml_error(CASE_HEAD "    cases: []\n", "e.yaml:7:12", "expected at least one case", 0);
  expect_yaml_error(CASE_HEAD "    cases: {test: [{m: 1}]}\n", "e.yaml:7:12",
                    "no list 'default' (choose one with --cases NAME): expected one of test", 0);
  expect_yaml_error(CASE_HEAD "    cases: {default: [{m: 1}], test: [{m: 1}, {x: 2}]}\n",
                    "e.yaml:7:47", "cases.test[1]: expected the keys", 0);
  expect_yaml_error(CASE_HEAD "    cases: [{m: 1}]\n    exclude: [{m: 2}]\n", "e.yaml:8:19",
                    "'2' is not a value of case key 'm'", 0);
  expect_yaml_error(CASE_HEAD "    cases: [{m: 1}]\n    exclude: [{q: 2}]\n", "e.yaml:8:16",
                    "'q' is not an axis or a case key", 0);
  expect_yaml_error(CASE_HEAD "    cases: [{M: 1}]\n", "e.yaml:7:14", "case key 'M'", 0);
  /* a log name must tell the cases apart */
  const char *dup = "systems: {s: {command: \"run {m}\"}}\nexperiments:\n  k:\n    log: "
                    "\"{device}.log\"\n    time_limit: 10\n    axes: {device: [d], system: [s]}\n"
                    "    cases: [{m: 1}, {m: 2}]\n";
  CHECK(expfile_load_buffer("d.yaml", dup, strlen(dup), &f, &err) == 0);
  CHECK(expand(&f, NULL, NULL, 0, &cs, &err) == -1 && err && strstr(err, "d.yaml:4:10") &&
        strstr(err, "two cells get the log name 'd.log'"));
  free(err);
  expfile_free(&f);
}

#define FAM_TAIL                                                                           \
  "experiments:\n  k:\n    log: \"{device}.{system}.log\"\n    time_limit: 10\n    axes: " \
  "{device: [a], system: [s]}\n"

/* families: one command template for several systems; {system} is each one's own name. */
static void test_families(void) {
  expect_yaml_error("families: {f: \"run {system}\"}\nsystems: {s: {family: g}}\n" FAM_TAIL,
                    "e.yaml:2:23", "system 's': unknown family 'g': expected one of f", 0);
  expect_yaml_error("systems: {s: {family: g}}\n" FAM_TAIL, "e.yaml:1:23", "no 'families:' defined",
                    0);
  expect_yaml_error("families: {f: \"run x\"}\nsystems: {s: {family: f}}\n" FAM_TAIL, "e.yaml:1:15",
                    "family 'f': expected {system} in the template", 0);
  expect_yaml_error("families: {f: [a]}\nsystems: {s: {family: f}}\n" FAM_TAIL, "e.yaml:1:15",
                    "family 'f': expected a command template", 0);
  expect_yaml_error("families: {\"f;x\": \"run {system}\"}\nsystems: {s: {family: f}}\n" FAM_TAIL,
                    "e.yaml:1:12", "family name", 0);
  expect_yaml_error(
      "families: {f: \"run {system}\"}\nsystems: {s: {family: f, command: x}}\n" FAM_TAIL,
      "e.yaml:2:14", "expected exactly one of 'command' (a template), 'family'", 0);
  expect_yaml_error("families: {f: \"run {system} {nope}\"}\nsystems: {s: {family: f}}\n" FAM_TAIL,
                    "e.yaml:1:15", "unknown placeholder {nope}", 0);
  expect_yaml_error("families: []\nsystems: {s: {command: x}}\n" FAM_TAIL, "e.yaml:1:11",
                    "families: expected a mapping", 0);

  /* the file's families, overridden by one experiment's; a system's own command beside them */
  const char *yaml =
      "families: {f: \"/bin/echo file {system} {w}\"}\n"
      "defaults: {w: \"a b\"}\n"
      "systems: {s: {family: f}, \"t-2\": {family: f}, own: {command: \"/bin/echo own\"}}\n"
      "experiments:\n"
      "  k: {log: \"{experiment}.{device}.{system}.log\", time_limit: 10, axes: {device: [d], "
      "system: [s, t-2, own]}}\n"
      "  e: {log: \"{experiment}.{device}.{system}.log\", time_limit: 10, axes: {device: [d], "
      "system: [s]},\n"
      "      families: {f: \"/bin/echo exp {system}\"}}\n";
  expfile f;
  cellset cs;
  char *err = NULL;
  CHECK(expfile_load_buffer("f.yaml", yaml, strlen(yaml), &f, &err) == 0);
  if (err) {
    fprintf(stderr, "%s\n", err);
    free(err);
    return;
  }
  CHECK(expand(&f, NULL, NULL, 0, &cs, &err) == 0);
  CHECK(cs.ncells == 4);
  const char *want[] = {"/bin/echo file s 'a b'", "/bin/echo file t-2 'a b'", "/bin/echo own",
                        "/bin/echo exp s"};
  runtime_vars rt = {.bin = "/b", .root = "/r", .run_dir = "/x"};
  for (int i = 0; i < cs.ncells && i < 4; i++) {
    cell_env env = {&cs, &cs.cells[i], NULL, &rt};
    sbuf cmd = {0};
    CHECK(cell_command(&env, &cmd, &err) == 0);
    CHECK_STR(cmd.s, want[i]);
    sb_free(&cmd);
  }
  cellset_free(&cs);
  expfile_free(&f);
}

/* Registered names: an axis written `all` takes the file's devices:, workloads: or systems:
 * in order; ours and expected are a system's own keys (the plot's), no other. */
static void test_registered_axes(void) {
  const char *yaml = "devices: [d2, d1]\n"
                     "workloads: [w1, w2]\n"
                     "systems:\n"
                     "  b: {command: \"/bin/echo b {workload}\", expected: false}\n"
                     "  a: {command: \"/bin/echo a {workload}\", ours: true}\n"
                     "  x: {absent: \"not here\"}\n"
                     "experiments:\n"
                     "  k: {log: \"{device}.{workload}.{system}.log\", time_limit: 10,\n"
                     "      axes: {device: all, workload: all, system: all}}\n"
                     "  e: {log: \"e.{device}.{workload}.{system}.log\", time_limit: 10,\n"
                     "      axes: {device: [d1], workload: all, system: [a]}}\n";
  expfile f;
  cellset cs;
  char *err = NULL;
  CHECK(expfile_load_buffer("r.yaml", yaml, strlen(yaml), &f, &err) == 0);
  if (err) {
    fprintf(stderr, "%s\n", err);
    free(err);
    return;
  }
  const experiment *k = &f.exps[0];
  CHECK(k->naxes == 3 && k->axes[0].values.n == 2 && k->axes[1].values.n == 2 &&
        k->axes[2].values.n == 3);
  CHECK_STR(k->axes[0].values.v[0], "d2");
  CHECK_STR(k->axes[2].values.v[0], "b");
  CHECK_STR(k->axes[2].values.v[2], "x");
  CHECK(f.model.nsystems == 3 && !f.model.systems[0].expected && f.model.systems[1].ours &&
        !f.model.systems[2].expected);
  CHECK(expand(&f, NULL, NULL, 0, &cs, &err) == 0);
  CHECK(cs.ncells == 2 * 2 * 3 + 2);
  CHECK_STR(cs.cells[0].log, "d2.w1.b.log");
  cellset_free(&cs);
  expfile_free(&f);

  const char *tail = "experiments:\n  k: {log: \"{device}.{system}.log\", time_limit: 10, ";
  char buf[512];
  snprintf(buf, sizeof buf, "systems: {s: {command: x}}\n%saxes: {device: all, system: [s]}}\n",
           tail);
  expect_yaml_error(buf, "e.yaml:3:68", "axis 'device': all: the file lists no devices", 0);
  snprintf(buf, sizeof buf,
           "devices: [d]\nsystems: {s: {command: x}}\n%saxes: {device: all, system: all, n: "
           "all}}\n",
           tail);
  expect_yaml_error(buf, "e.yaml:4:89", "axis 'n': all: only the device, workload and system", 0);
  snprintf(buf, sizeof buf, "devices: [d, d]\nsystems: {s: {command: x}}\n%saxes: {device: all}}\n",
           tail);
  expect_yaml_error(buf, "e.yaml:1:14", "devices: 'd' is listed twice", 0);
  snprintf(buf, sizeof buf,
           "devices: [d]\nsystems: {s: {command: x, ours: 1}}\n%saxes: {device: all, system: "
           "all}}\n",
           tail);
  expect_yaml_error(buf, "e.yaml:2:33", "ours: expected true or false", 0);
  snprintf(buf, sizeof buf,
           "devices: [d]\nsystems: {s: {command: x, label: S}}\n%saxes: {device: all, system: "
           "all}}\n",
           tail);
  expect_yaml_error(buf, "e.yaml:2:27", "unknown key 'label' in a system", 0);
}

static void write_text(const char *path, const char *text) {
  FILE *fp = fopen(path, "w");
  CHECK(fp != NULL);
  if (!fp) return;
  fputs(text, fp);
  fclose(fp);
}

static char *read_text(const char *path) {
  char *data = NULL;
  if (read_file(path, &data, NULL) != 0) return NULL;
  return data;
}

static void test_cellog(void) {
  char *run_dir = xasprintf("%s/cellog", work_dir);
  char *cmd = xasprintf("rm -rf '%s' && mkdir -p '%s/tmp' '%s/logs'", run_dir, run_dir, run_dir);
  CHECK(system(cmd) == 0);
  free(cmd);
  char *tmp = xasprintf("%s/tmp/a.log.1", run_dir);
  char *final = xasprintf("%s/logs/a.log", run_dir);
  char status[64];

  /* exited 0 with its own result line: kept as is */
  write_text(tmp, "config x=1\nresult status=ok avg_ms=1\n");
  CHECK(cellog_finish(run_dir, "a.log", tmp, 0, NULL, NULL, NULL) == 0);
  CHECK(!file_exists(tmp));
  CHECK(cellog_status(final, status, sizeof status) == 0);
  CHECK_STR(status, "ok");

  /* crashed without a result line: the runner's line, and the old log goes to attempts/ */
  write_text(tmp, "config x=1\n");
  CHECK(cellog_finish(run_dir, "a.log", tmp, 7, NULL, NULL, NULL) == 0);
  char *text = read_text(final);
  CHECK(text && strstr(text, "result status=error source=runner state=FAILED exit=7:0"));
  free(text);
  char *old = xasprintf("%s/attempts/a.log.1", run_dir);
  CHECK(cellog_status(old, status, sizeof status) == 0);
  CHECK_STR(status, "ok");
  free(old);

  /* result ok but a non-zero exit: not trusted */
  write_text(tmp, "result status=ok\n");
  CHECK(cellog_finish(run_dir, "a.log", tmp, 1, NULL, NULL, NULL) == 0);
  CHECK(cellog_status(final, status, sizeof status) == 0);
  CHECK_STR(status, "error");

  /* the program's own oom with exit 3 stands */
  write_text(tmp, "result status=oom\n");
  CHECK(cellog_finish(run_dir, "a.log", tmp, 3, NULL, NULL, NULL) == 0);
  CHECK(cellog_status(final, status, sizeof status) == 0);
  CHECK_STR(status, "oom");

  /* killed by Slurm: newest tmp found by itself, TIMEOUT recorded */
  char *tmp2 = xasprintf("%s/tmp/b.log.5_0.r0", run_dir);
  write_text(tmp2, "config partial=1\nresult status=ok\n");
  CHECK(cellog_finish(run_dir, "b.log", NULL, -1, "TIMEOUT", "0:15", NULL) == 0);
  char *fb = xasprintf("%s/logs/b.log", run_dir);
  text = read_text(fb);
  CHECK(text && strstr(text, "config partial=1"));
  CHECK(text && strstr(text, "result status=timeout source=runner state=TIMEOUT exit=0:15"));
  CHECK(cellog_status(fb, status, sizeof status) == 0);
  CHECK_STR(status, "timeout");
  free(text);
  /* never started (cancelled while pending): a log with only the runner's line */
  CHECK(cellog_finish(run_dir, "c.log", NULL, -1, "CANCELLED", "0:0", NULL) == 0);
  char *fc = xasprintf("%s/logs/c.log", run_dir);
  CHECK(cellog_status(fc, status, sizeof status) == 0);
  CHECK_STR(status, "error");
  CHECK(cellog_status_good("ok") && cellog_status_good("unsupported") && cellog_status_good("oom"));
  CHECK(!cellog_status_good("error") && !cellog_status_good("timeout") && !cellog_status_good(""));
  free(fb);
  free(fc);
  free(tmp2);
  free(tmp);
  free(final);
  free(run_dir);
}

static void test_journal(void) {
  char *fig = xasprintf("%s/journalfig", work_dir);
  char *cmd = xasprintf("rm -rf '%s' && mkdir -p '%s'", fig, fig);
  CHECK(system(cmd) == 0);
  free(cmd);
  run r;
  CHECK(run_create(&r, fig, NULL, "figx", "/e.yaml", NULL) == 0);
  strvec none = {0}, excl = {0}, set = {0};
  sv_push(&excl, "system=slow,workload!=w1");
  sv_push(&set, "warmup=5");
  CHECK(run_note_select(&r, NULL, &none, &excl, &set, NULL) == 0);
  sv_free(&excl);
  sv_free(&set);
  CHECK(run_next_sub(&r) == 1);
  CHECK(run_note_cell(&r, 1, 0, "a.log") == 0);
  CHECK(run_note_cell(&r, 1, 1, "b.log") == 0);
  CHECK(run_note_submit(&r, 1, "slurm", "k.h100", "repro-x-1") == 0);
  CHECK(run_note_job(&r, 1, "77") == 0);
  /* submission 2 announced, its sbatch never answered (runner killed) */
  CHECK(run_note_cell(&r, 2, 0, "c.log") == 0);
  CHECK(run_note_submit(&r, 2, "slurm", "k.a100", "repro-x-2") == 0);
  /* submission 3: cells written, killed before its submit record */
  CHECK(run_note_cell(&r, 3, 0, "d.log") == 0);
  CHECK(run_make_current(&r, fig) == 0);
  char *dir = xstrdup(r.dir);
  /* a torn record at the end, as a SIGKILL mid-write would leave */
  char *mpath = xasprintf("%s/manifest", dir);
  FILE *mf = fopen(mpath, "a");
  fputs("job sub=2 jobid=9", mf);
  fclose(mf);
  run_close(&r);

  char *cur = NULL;
  CHECK(run_current(fig, &cur) == 0);
  CHECK(cur && strcmp(cur, dir) == 0);
  CHECK(run_open(&r, cur, RUN_WRITE) == 0);
  CHECK_STR(r.figure, "figx");
  /* the select record keeps --exclude and --set as given */
  CHECK(r.nselects == 1 && r.selects[0].only.n == 0);
  CHECK(r.selects[0].exclude.n == 1 &&
        strcmp(r.selects[0].exclude.v[0], "system=slow,workload!=w1") == 0);
  CHECK(r.selects[0].set.n == 1 && strcmp(r.selects[0].set.v[0], "warmup=5") == 0);
  submission *s1 = run_sub(&r, 1), *s2 = run_sub(&r, 2);
  CHECK(s1 && s1->jobid && strcmp(s1->jobid, "77") == 0 && s1->ncells == 2);
  CHECK(s2 && s2->jobid == NULL); /* the torn job record does not count */
  const cellrec *a = run_cell(&r, "a.log"), *c = run_cell(&r, "c.log"), *d = run_cell(&r, "d.log");
  CHECK(a && a->sub == 1 && a->task == 0);
  CHECK(c && c->sub == 2);
  CHECK(d == NULL); /* never sealed by a submit record: never submitted */
  CHECK(run_next_sub(&r) == 4);
  /* after the torn line, new records still parse */
  CHECK(run_note_cancel(&r, 2) == 0);
  run_close(&r);
  CHECK(run_open(&r, cur, RUN_READ) == 0);
  CHECK(run_sub(&r, 2)->cancelled == 1);
  CHECK(run_sub(&r, 2)->jobid == NULL); /* the torn record stays ignored once ended */
  CHECK(r.fd < 0);
  run_close(&r);
  free(mpath);
  free(cur);
  free(dir);
  free(fig);
}

/* Selected cells of an expansion with these --only (o) and --exclude (x) arguments. */
static int count_selected(const expfile *f, const char *const *o, const char *const *x) {
  filter flt[8];
  int n = 0;
  char *err = NULL;
  for (; o && *o; o++) CHECK(filter_parse(*o, &flt[n++], &err) == 0);
  for (; x && *x; x++) CHECK(exclude_parse(*x, &flt[n++], &err) == 0);
  cellset cs;
  int sel = -1;
  if (expand(f, NULL, flt, n, &cs, &err) == 0) {
    sel = 0;
    for (int i = 0; i < cs.ncells; i++) sel += cs.cells[i].sel == CELL_SELECTED;
    cellset_free(&cs);
  }
  free(err);
  for (int i = 0; i < n; i++) filter_free(&flt[i]);
  return sel;
}

/* --exclude and --only K!=V: exclusions AND with the --only filters; --set overrides params
 * and cluster vars but is refused for axes and unknown names. */
static void test_exclusion_and_set(void) {
  expfile f;
  char *err = NULL;
  CHECK(expfile_load_buffer("m.yaml", matrix_yaml, strlen(matrix_yaml), &f, &err) == 0);
  /* 8 selected: per device fast x 3 workloads, slow w1 (gone is absent) */
  CHECK(count_selected(&f, NULL, NULL) == 8);
  CHECK(count_selected(&f, NULL, (const char *[]){"system=slow", NULL}) == 6);
  CHECK(count_selected(&f, NULL, (const char *[]){"system=slow", "device=a100", NULL}) == 3);
  CHECK(count_selected(&f, (const char *[]){"device=h100", NULL},
                       (const char *[]){"workload=w1", NULL}) == 2);
  CHECK(count_selected(&f, (const char *[]){"system!=fast", NULL}, NULL) == 2);
  CHECK(count_selected(&f, NULL, (const char *[]){"device=h100,workload!=w1", NULL}) == 6);
  CHECK(count_selected(&f, (const char *[]){"device!=h100,system=fast", NULL}, NULL) == 3);
  /* a typo in an exclusion is an error naming the option, as for --only */
  filter flt;
  CHECK(exclude_parse("workload=nope", &flt, &err) == 0 && flt.exclude == 1);
  cellset cs;
  CHECK(expand(&f, NULL, &flt, 1, &cs, &err) == -1 && err &&
        strstr(err, "--exclude: no experiment in ") && strstr(err, "has workload=nope"));
  free(err);
  err = NULL;
  filter_free(&flt);
  CHECK(filter_parse("system!=", &flt, &err) == -1 && strstr(err, "key!=value"));
  free(err);
  err = NULL;
  CHECK(exclude_parse("!=fast", &flt, &err) == -1 && strstr(err, "--exclude '!=fast'"));
  free(err);
  err = NULL;

  /* --set: over the cluster's vars and the params */
  clusterfile c;
  CHECK(cluster_load_buffer("c.yaml", cluster_yaml, strlen(cluster_yaml), &c, &err) == 0);
  paramlist sets = {0};
  strvec store = {0};
  CHECK(set_parse("extra=z z", &sets, &store, &err) == 0);
  CHECK(set_parse("seqlen=128", &sets, &store, &err) == 0);
  f.sets = &sets;
  CHECK(expand(&f, &c, NULL, 0, &cs, &err) == 0);
  runtime_vars rt = {.bin = "/b", .root = "/r", .run_dir = "/x"};
  cell_env env = {&cs, &cs.cells[1], cluster_device(&c, "h100"), &rt};
  sbuf cmd = {0};
  CHECK(cell_command(&env, &cmd, &err) == 0);
  CHECK_STR(cmd.s, "/bin/echo slow w1 'z z'");
  sb_clear(&cmd);
  env.c = &cs.cells[0];
  CHECK(cell_command(&env, &cmd, &err) == 0);
  CHECK_STR(cmd.s, "/bin/echo w1 7 128");
  sb_free(&cmd);
  cellset_free(&cs);
  /* a coordinate, or a name that is no param, is refused */
  CHECK(set_parse("workload=w9", &sets, &store, &err) == 0);
  CHECK(expand(&f, &c, NULL, 0, &cs, &err) == -1 && err &&
        strstr(err, "--set workload: workload is an axis"));
  free(err);
  err = NULL;
  free(sets.v);
  sets = (paramlist){0};
  CHECK(set_parse("n2=1", &sets, &store, &err) == 0);
  CHECK(expand(&f, &c, NULL, 0, &cs, &err) == -1 && err &&
        strstr(err, "--set n2: expected a param"));
  free(err);
  err = NULL;
  /* malformed: not NAME=VALUE, a bad name, a control character */
  CHECK(set_parse("warmup", &sets, &store, &err) == -1 && strstr(err, "expected NAME=VALUE"));
  free(err);
  err = NULL;
  CHECK(set_parse("Warm=1", &sets, &store, &err) == -1);
  free(err);
  err = NULL;
  CHECK(set_parse("extra=a\nb", &sets, &store, &err) == -1 && strstr(err, "control character"));
  free(err);
  free(sets.v);
  sv_free(&store);
  f.sets = NULL;
  cluster_free(&c);
  expfile_free(&f);
}

/* A ranged axis ({values: [...], range: [LO, HI]}): the loader's errors with positions, the
 * values its range allows, ad-hoc values joining it (in numeric order, after the listed ones,
 * only where a range holds them), their cells after the listed cells with the same tasks, and
 * a filter's claim on them. */
#define RANGE_HEAD                                                                              \
  "systems:\n  s: {command: \"run {k}\"}\nexperiments:\n  e:\n    log: \"{device}.k{k}.log\"\n" \
  "    time_limit: 10\n"

static void test_ranged_axis(void) {
  expect_yaml_error(RANGE_HEAD "    axes: {device: [d], system: [s], k: {values: [1, 40], range: "
                               "[0, 31]}}\n",
                    "e.yaml:7:54", "axis 'k': value '40' is not an integer in its range [0, 31]",
                    0);
  expect_yaml_error(RANGE_HEAD "    axes: {device: [d], system: [s], k: {values: [01], range: "
                               "[0, 31]}}\n",
                    "e.yaml:7:51", "value '01' is not an integer in its range", 0);
  expect_yaml_error(RANGE_HEAD "    axes: {device: [d], system: [s], k: {values: [1], range: "
                               "[31, 0]}}\n",
                    "e.yaml:7:62", "range [31, 0]: expected LO <= HI", 0);
  expect_yaml_error(RANGE_HEAD "    axes: {device: [d], system: [s], k: {values: [1], range: "
                               "[0]}}\n",
                    "e.yaml:7:62", "range: expected [LO, HI], two integers", 0);
  expect_yaml_error(RANGE_HEAD "    axes: {device: [d], system: [s], k: {values: [1], range: "
                               "[0, many]}}\n",
                    "e.yaml:7:66",
                    "range: expected an integer in [-1000000000, 1000000000], found "
                    "'many'",
                    0);
  expect_yaml_error(RANGE_HEAD "    axes: {device: [d], system: [s], k: {range: [0, 31]}}\n",
                    "e.yaml:7:41", "axis 'k': missing 'values'", 0);
  expect_yaml_error(RANGE_HEAD "    axes: {device: [d], system: [s], k: {values: [1], step: 2}}\n",
                    "e.yaml:7:55", "unknown key 'step' in an axis", 0);
  expect_yaml_error(RANGE_HEAD "    axes: {device: {values: [d], range: [0, 9]}, system: [s], "
                               "k: [1]}\n",
                    "e.yaml:7:41", "axis 'device': range: the device and system axes take names",
                    0);

  const char *yaml = RANGE_HEAD "    axes: {device: [d], system: [s], k: {values: [1, 4], range: "
                                "[0, 31]}}\n    exclude: [{k: 9}]\n"
                                "  f:\n    log: \"f.{device}.k{k}.log\"\n    time_limit: 10\n"
                                "    axes: {device: [d], system: [s], k: [1, 2]}\n";
  expfile f;
  char *err = NULL;
  CHECK(expfile_load_buffer("r.yaml", yaml, strlen(yaml), &f, &err) == 0);
  if (err) {
    fprintf(stderr, "%s\n", err);
    free(err);
    return;
  }
  const axis *k = &f.exps[0].axes[2];
  CHECK(k->ranged && k->lo == 0 && k->hi == 31 && k->nlisted == 2);
  CHECK(axis_in_range(k, "0") && axis_in_range(k, "31") && axis_in_range(k, "3"));
  CHECK(!axis_in_range(k, "32") && !axis_in_range(k, "-1") && !axis_in_range(k, "03") &&
        !axis_in_range(k, "+3") && !axis_in_range(k, "3x") && !axis_in_range(k, "") &&
        !axis_in_range(&f.exps[1].axes[2], "3"));
  /* e takes them (in numeric order after its list); f has no range */
  CHECK(expfile_add_value(&f, "k", "7") == 1);
  CHECK(expfile_add_value(&f, "k", "3") == 1);
  CHECK(expfile_add_value(&f, "k", "3") == 1); /* once */
  CHECK(expfile_add_value(&f, "k", "1") == 2); /* listed in both */
  CHECK(expfile_add_value(&f, "k", "32") == 0);
  CHECK(expfile_add_value(&f, "k", "9") == 1); /* excluded in e: no cell */
  CHECK(k->values.n == 5 && strcmp(k->values.v[2], "3") == 0 && strcmp(k->values.v[3], "7") == 0 &&
        strcmp(k->values.v[4], "9") == 0);
  CHECK(f.exps[1].axes[2].values.n == 2);
  cellset cs;
  CHECK(expand(&f, NULL, NULL, 0, &cs, &err) == 0);
  /* e: k1 k4 (their tasks as without ad-hoc values), then k3 k7; f: k1 k2 */
  CHECK(cs.ncells == 6);
  const char *want[] = {"d.k1.log", "d.k4.log", "d.k3.log", "d.k7.log", "f.d.k1.log", "f.d.k2.log"};
  for (int i = 0; i < 6 && i < cs.ncells; i++) CHECK_STR(cs.cells[i].log, want[i]);
  CHECK(cs.cells[1].task == 1 && cs.cells[2].task == 2 && cs.cells[3].task == 3);
  CHECK(experiment_adhoc_axis(&f.exps[0], cs.cells[1].vals) == -1);
  CHECK(experiment_adhoc_axis(&f.exps[0], cs.cells[2].vals) == 2);
  /* without an --only every cell passes; an --only passes an ad-hoc cell when it names it */
  CHECK(cs.cells[2].sel == CELL_SELECTED);
  filter flt[2];
  CHECK(filter_parse("k=3", &flt[0], &err) == 0);
  CHECK(filter_parse("experiment=e", &flt[1], &err) == 0);
  CHECK(filters_name_adhoc(&cs, &cs.cells[2], &flt[0], 1));
  CHECK(!filters_name_adhoc(&cs, &cs.cells[3], &flt[0], 1));
  CHECK(!filters_name_adhoc(&cs, &cs.cells[2], &flt[1], 1));
  CHECK(filters_name_adhoc(&cs, &cs.cells[0], &flt[1], 1)); /* no ad-hoc value */
  cellset_free(&cs);
  CHECK(expand(&f, NULL, flt, 2, &cs, &err) == 0);
  int sel = 0;
  for (int i = 0; i < cs.ncells; i++) sel += cs.cells[i].sel == CELL_SELECTED;
  CHECK(sel == 3); /* d.k1, d.k4 (experiment=e), d.k3 (k=3); not d.k7 */
  CHECK(cs.cells[3].sel == CELL_FILTERED);
  cellset_free(&cs);
  filter_free(&flt[0]);
  filter_free(&flt[1]);
  expfile_free(&f);

  /* filters_add_values: the positive --only pairs alone */
  CHECK(expfile_load_buffer("r.yaml", yaml, strlen(yaml), &f, &err) == 0);
  CHECK(filter_parse("k=5", &flt[0], &err) == 0);
  CHECK(exclude_parse("k=6", &flt[1], &err) == 0);
  filters_add_values(&f, flt, 2);
  CHECK(f.exps[0].axes[2].values.n == 3 && strcmp(f.exps[0].axes[2].values.v[2], "5") == 0);
  /* k!=8 names no ad-hoc value: k1 k4 and f's k1 k2, not k5 */
  CHECK(count_selected(&f, (const char *[]){"k!=8", NULL}, NULL) == 4);
  /* no --only: every cell (k1 k4 k5; f's k1 k2); an --exclude the range allows is no typo */
  CHECK(count_selected(&f, NULL, (const char *[]){"k=8", NULL}) == 5);
  CHECK(count_selected(&f, (const char *[]){"k=5", NULL}, NULL) == 1);
  CHECK(count_selected(&f, (const char *[]){"k=8", NULL}, NULL) == -1); /* not added: refused */
  CHECK(count_selected(&f, NULL, (const char *[]){"k=32", NULL}) == -1);
  filter_free(&flt[0]);
  filter_free(&flt[1]);
  CHECK(filter_parse("k=32", &flt[0], &err) == 0);
  cellset cs2;
  CHECK(expand(&f, NULL, flt, 1, &cs2, &err) == -1 && err &&
        strstr(err, "--only: no experiment in ") &&
        strstr(err, "has k=32 (axis k takes its listed values or, as an ad-hoc value, a plain "
                    "integer (no + or leading 0) in [0, 31] in experiments e)"));
  free(err);
  filter_free(&flt[0]);
  expfile_free(&f);
}

/* The progress line: no ETA until a cell finished under this runner (cells done before it
 * started say nothing about its pace). */
static void test_progress(void) {
  sbuf b = {0};
  progress p = {.total = 10, .ok = 4, .failed = 1, .pending = 5};
  progress_format(&b, "figx", &p, 100.0, 5); /* a resume: 5 were done before, none since */
  CHECK(strstr(b.s, "eta unknown") != NULL);
  sb_clear(&b);
  p = (progress){.total = 10, .pending = 10};
  progress_format(&b, "figx", &p, 3.0, 0);
  CHECK(strstr(b.s, "eta unknown") != NULL);
  sb_clear(&b);
  p = (progress){.total = 10, .ok = 6, .pending = 4};
  progress_format(&b, "figx", &p, 10.0, 5); /* one cell in 10 s, 4 to go */
  CHECK(strstr(b.s, "eta 0:40") != NULL);
  CHECK(strstr(b.s, "done 6/10 (ok 6, failed 0)") != NULL);
  sb_clear(&b);
  p = (progress){.total = 10, .ok = 10};
  progress_format(&b, "figx", &p, 10.0, 10);
  CHECK(strstr(b.s, "eta 0:00") != NULL);
  sb_free(&b);
}

/* The rendered array script of a fixed matrix must equal tests/runner/golden/<name>. */
static void test_golden(void) {
  expfile f;
  clusterfile c;
  cellset cs;
  char *err = NULL;
  CHECK(expfile_load_buffer("m.yaml", matrix_yaml, strlen(matrix_yaml), &f, &err) == 0);
  CHECK(cluster_load_buffer("c.yaml", cluster_yaml, strlen(cluster_yaml), &c, &err) == 0);
  CHECK(expand(&f, &c, NULL, 0, &cs, &err) == 0);
  int cells[16], tasks[16], n = 0;
  for (int i = 0; i < cs.ncells; i++)
    if (cs.cells[i].sel == CELL_SELECTED) {
      cells[n] = i;
      tasks[n] = cs.cells[i].task;
      n++;
    }
  runtime_vars rt = {
      .bin = "/opt/kit/build/bin", .root = "/opt/kit", .run_dir = "/opt/kit/fig/runs/T"};
  jobscript_spec spec = {.run_dir = "/opt/kit/fig/runs/T",
                         .runner = "/opt/kit/build/bin/repro-run",
                         .jobname = "repro-T-1",
                         .dev = cluster_device(&c, "h100"),
                         .time_limit_s = 90,
                         .ncells = n,
                         .cells = cells,
                         .tasks = tasks};
  sbuf text = {0};
  CHECK(jobscript_render(&spec, &cs, &rt, &text, &err) == 0);
  char *golden = xasprintf("%s/tests/runner/golden/kernel.h100.sbatch", src_dir);
  if (getenv("REPRO_UPDATE_GOLDEN")) write_text(golden, text.s);
  char *want = read_text(golden);
  CHECK(want != NULL);
  if (want && strcmp(want, text.s) != 0) {
    fprintf(stderr, "golden mismatch: %s\n--- rendered:\n%s", golden, text.s);
    CHECK(0);
  }
  sbuf r = {0};
  int t[] = {0, 1, 2, 5, 7, 8, 9};
  jobscript_ranges(&r, t, 7);
  CHECK_STR(r.s, "0-2,5,7-9");
  sb_free(&r);
  free(want);
  free(golden);
  sb_free(&text);
  cellset_free(&cs);
  cluster_free(&c);
  expfile_free(&f);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: test_runner SOURCE_DIR WORK_DIR\n");
    return 2;
  }
  src_dir = argv[1];
  work_dir = argv[2];
  mkdir_p(work_dir, 0755);
  test_quoting();
  test_names();
  test_templates();
  test_yaml_errors();
  test_expansion();
  test_exclusion_and_set();
  test_ranged_axis();
  test_families();
  test_registered_axes();
  test_cases();
  test_case_replaces_param();
  test_cellog();
  test_journal();
  test_progress();
  test_golden();
  return check_report();
}
