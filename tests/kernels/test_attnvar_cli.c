/* attnvar as a program: the --device cpu log of every workload is well formed (parsed with
 * kvline: header, meta, config, one passing check line per output, a final ok result), and
 * bad command lines fail with exit 2 and a message naming the option. No GPU needed.
 *   test_attnvar_cli PATH/TO/attnvar */
#include "../check.h"
#include "kvline.h"
#include "workload.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *attnvar;
static char dir[64];

typedef struct {
  int exit_code;
  char *out, *err; /* whole stdout / stderr */
} run_result;

static char *slurp(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return strdup("");
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&buf, &len);
  char chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) fwrite(chunk, 1, n, mem);
  fclose(mem);
  fclose(f);
  return buf;
}

/* Run attnvar with args (a string of safe words), capturing stdout and stderr. */
static run_result run(const char *args) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "'%s' %s >'%s/out' 2>'%s/err'", attnvar, args, dir, dir);
  int st = system(cmd);
  run_result r = {WIFEXITED(st) ? WEXITSTATUS(st) : -1, NULL, NULL};
  char path[128];
  snprintf(path, sizeof path, "%s/out", dir);
  r.out = slurp(path);
  snprintf(path, sizeof path, "%s/err", dir);
  r.err = slurp(path);
  return r;
}

static void run_free(run_result *r) {
  free(r->out);
  free(r->err);
}

static int has_keys(const kv_record *rec, const char *const *keys) {
  for (; *keys; keys++)
    if (!kv_get(rec, *keys)) {
      fprintf(stderr, "record '%s' lacks key '%s'\n", rec->tag, *keys);
      return 0;
    }
  return 1;
}

/* Parse the log of one workload run and check its shape and contents. */
static void check_log(workload_id wl, const char *log) {
  static const char *const meta_keys[] = {"gpu",    "cc",   "driver", "cuda",
                                          "commit", "date", "host",   NULL};
  static const char *const config_keys[] = {"workload", "system", "batch",  "heads", "dim",
                                            "seqlen",   "dtype",  "device", "impl",  NULL};
  static const char *const result_keys[] = {"status", "avg_ms", "median_ms", "min_ms",   "max_ms",
                                            "runs",   "warmup", "gflops_s",  "peak_mib", NULL};
  const workload_info *w = &workload_table[wl];
  /* the outputs the workload has, in the order attnvar checks them */
  const char *all[4] = {"out", w->score_name, w->score2_name, w->flags_name}, *want_checks[4];
  int n_want = 0;
  for (int i = 0; i < 4; i++)
    if (all[i]) want_checks[n_want++] = all[i];

  kv_record rec = {0};
  const char *err = NULL;
  int lineno = 0, n_meta = 0, n_config = 0, n_checks = 0, n_result = 0, result_last = 0;
  const char *p = log;
  CHECKF(strncmp(log, "# repro-log 1\n", 14) == 0, "%s: first line is not the header", w->name);
  while (*p) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    lineno++;
    if (len > 0 && p[0] != '#') {
      int ok = kv_parse(&rec, p, len, &err) == 0;
      CHECKF(ok, "%s: line %d does not parse: %s", w->name, lineno, err);
      result_last = 0;
      if (ok && !strcmp(rec.tag, "meta")) {
        n_meta++;
        CHECK(has_keys(&rec, meta_keys));
        CHECK(!strcmp(kv_get(&rec, "gpu"), "none"));
      } else if (ok && !strcmp(rec.tag, "config")) {
        n_config++;
        CHECK(has_keys(&rec, config_keys));
        CHECKF(!strcmp(kv_get(&rec, "workload"), w->name), "config workload=%s",
               kv_get(&rec, "workload"));
        CHECK(!strcmp(kv_get(&rec, "device"), "cpu") && !strcmp(kv_get(&rec, "impl"), "ref"));
        CHECK(!strcmp(kv_get(&rec, "seqlen"), "19") && !strcmp(kv_get(&rec, "dtype"), "fp16"));
      } else if (ok && !strcmp(rec.tag, "check")) {
        const char *out = kv_get(&rec, "output");
        CHECKF(n_checks < n_want && out && !strcmp(out, want_checks[n_checks]),
               "%s: check line %d is for '%s'", w->name, n_checks, out ? out : "(none)");
        CHECKF(kv_get(&rec, "ok") && !strcmp(kv_get(&rec, "ok"), "1"), "%s: %s not ok", w->name,
               out);
        CHECK(kv_get(&rec, "rel_l2") && kv_get(&rec, "max_abs"));
        n_checks++;
      } else if (ok && !strcmp(rec.tag, "result")) {
        n_result++;
        result_last = 1;
        CHECK(has_keys(&rec, result_keys));
        CHECK(!strcmp(kv_get(&rec, "status"), "ok"));
        CHECK(atof(kv_get(&rec, "avg_ms")) > 0 &&
              atof(kv_get(&rec, "min_ms")) <= atof(kv_get(&rec, "max_ms")));
        CHECK(!strcmp(kv_get(&rec, "runs"), "2") && !strcmp(kv_get(&rec, "warmup"), "1"));
        CHECK(kv_get(&rec, "timing") && !strcmp(kv_get(&rec, "timing"), "wall"));
      }
    }
    p = nl ? nl + 1 : p + len;
  }
  CHECKF(n_meta == 1 && n_config == 1 && n_result == 1 && result_last,
         "%s: meta %d config %d result %d (last %d)", w->name, n_meta, n_config, n_result,
         result_last);
  CHECKF(n_checks == n_want, "%s: %d check lines, want %d", w->name, n_checks, n_want);
  kv_record_free(&rec);
}

static void test_logs(void) {
  for (int w = 0; w < WL_COUNT; w++) {
    char args[256];
    snprintf(args, sizeof args,
             "--workload %s --system fused --device cpu --seqlen 19 --heads 3 --dim 16 "
             "--batch 2 --warmup 1 --runs 2",
             workload_names[w]);
    run_result r = run(args);
    CHECKF(r.exit_code == 0, "%s: exit %d, stderr: %s", workload_names[w], r.exit_code, r.err);
    check_log((workload_id)w, r.out);
    run_free(&r);
  }
}

/* --causal 0 and --dtype bf16 reach the config line and the CPU check passes; the GFLOP/s
 * count doubles without the mask (same work per key, twice the keys). */
static void test_mask_and_dtype(void) {
  const char *base = "--workload roco --system ref --seqlen 24 --heads 2 --dim 16 --runs 1";
  const char *variants[] = {"--causal 1 --dtype fp16", "--causal 0 --dtype fp16",
                            "--causal 1 --dtype bf16", "--causal 0 --dtype bf16"};
  for (int v = 0; v < 4; v++) {
    char args[512];
    snprintf(args, sizeof args, "%s %s", base, variants[v]);
    run_result r = run(args);
    CHECKF(r.exit_code == 0, "%s: exit %d, stderr %s", variants[v], r.exit_code, r.err);
    char want[64];
    snprintf(want, sizeof want, "dtype=%s causal=%d", v >= 2 ? "bf16" : "fp16", !(v & 1));
    CHECKF(strstr(r.out, want) != NULL, "%s: config lacks '%s': %s", variants[v], want, r.out);
    CHECKF(strstr(r.out, "ok=0") == NULL, "%s: a check failed: %s", variants[v], r.out);
    run_free(&r);
  }
}

/* nsa on the CPU: the command passes its check (ref against ref_online), the config
 * line carries the selection, and the defaults fill what is not given. --groups is the query
 * heads per K/V head (the tile-benchmark seed's and TileLang's groups: head_kv = heads /
 * groups): H16 G16 is one K/V head, G4 four, G1 (the default) MHA. */
static void test_nsa(void) {
  static const struct {
    const char *groups, *want;
  } cases[] = {{"16", "groups=16 kv_heads=1 block_size=32 selected_blocks=2 scale=0.1\n"},
               {"4", "groups=4 kv_heads=4 block_size=32 selected_blocks=2 scale=0.1\n"},
               {"1", "groups=1 kv_heads=16 block_size=32 selected_blocks=2 scale=0.1\n"}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char args[512];
    snprintf(args, sizeof args,
             "--workload nsa --system ref --device cpu --batch 2 --heads 16 --seqlen 256 --dim 32 "
             "--block-size 32 --groups %s --selected-blocks 2 --causal 1 --scale 0.1 --check "
             "--runs 1",
             cases[i].groups);
    run_result r = run(args);
    CHECKF(r.exit_code == 0, "nsa --groups %s: exit %d, stderr %s", cases[i].groups, r.exit_code,
           r.err);
    CHECKF(strstr(r.out, cases[i].want) != NULL, "nsa --groups %s config, want '%s': %s",
           cases[i].groups, cases[i].want, r.out);
    CHECKF(strstr(r.out, "check output=out ") && !strstr(r.out, "ok=0"),
           "nsa --groups %s check: %s", cases[i].groups, r.out);
    run_free(&r);
  }
  run_result r = run("--workload nsa --system ref --seqlen 40 --heads 4 --dim 16 --runs 1");
  CHECKF(r.exit_code == 0 &&
             strstr(r.out, "groups=1 kv_heads=4 block_size=32 selected_blocks=8 scale=0.25\n"),
         "nsa defaults: exit %d: %s", r.exit_code, r.out);
  run_free(&r);
}

/* The config line of a log (from "config " to its newline), malloc'd; "" when absent. */
static char *config_line(const char *log) {
  const char *c = strstr(log, "\nconfig ");
  if (!c) return strdup("");
  c++;
  const char *nl = strchr(c, '\n');
  return strndup(c, nl ? (size_t)(nl - c) : strlen(c));
}

/* GQA on the dense workloads: --groups G (query heads per K/V head) is accepted for every
 * workload; the CPU check (ref against ref_online) passes at G = 2 and 4, each score output
 * has B * (H/G) * S elements (n= on its check line), and the config line carries groups= and
 * kv_heads=. --groups 1 is MHA: the config line is the one without --groups (no groups=). */
static void test_dense_groups(void) {
  for (int w = 0; w < WL_COUNT; w++) {
    if (workload_selected_blocks((workload_id)w)) continue;
    const workload_info *wi = &workload_table[w];
    for (int g = 2; g <= 4; g += 2) {
      char args[512], want[64], n_score[32];
      snprintf(args, sizeof args,
               "--workload %s --system ref --device cpu --batch 2 --heads 8 --seqlen 21 --dim 16 "
               "--groups %d --check --runs 1",
               wi->name, g);
      run_result r = run(args);
      CHECKF(r.exit_code == 0, "%s --groups %d: exit %d, stderr %s", wi->name, g, r.exit_code,
             r.err);
      snprintf(want, sizeof want, " groups=%d kv_heads=%d", g, 8 / g);
      char *config = config_line(r.out);
      CHECKF(strstr(config, want) != NULL, "%s --groups %d: config lacks '%s': %s", wi->name, g,
             want, config);
      free(config);
      CHECKF(strstr(r.out, "check output=out ") && !strstr(r.out, "ok=0"),
             "%s --groups %d check: %s", wi->name, g, r.out);
      /* the score outputs per K/V head: 2 * (8 / g) * 21 elements */
      snprintf(n_score, sizeof n_score, " n=%d ", 2 * (8 / g) * 21);
      const char *names[] = {wi->score_name, wi->score2_name, wi->flags_name};
      for (int k = 0; k < 3; k++) {
        if (!names[k]) continue;
        char key[96];
        snprintf(key, sizeof key, "check output=%s ", names[k]);
        const char *line = strstr(r.out, key);
        const char *nl = line ? strchr(line, '\n') : NULL;
        const char *n = line ? strstr(line, n_score) : NULL;
        CHECKF(n && (!nl || n < nl), "%s --groups %d: %s check is not over%s: %s", wi->name, g,
               names[k], n_score, r.out);
      }
      run_free(&r);
    }
    /* G = 1: exactly the MHA log's config line */
    char args[512];
    snprintf(args, sizeof args,
             "--workload %s --system ref --device cpu --heads 4 --seqlen 12 --dim 16 --runs 1",
             wi->name);
    run_result plain = run(args);
    strncat(args, " --groups 1", sizeof args - strlen(args) - 1);
    run_result one = run(args);
    char *c_plain = config_line(plain.out), *c_one = config_line(one.out);
    CHECKF(one.exit_code == 0 && c_plain[0] && !strcmp(c_plain, c_one) && !strstr(c_one, "groups="),
           "%s --groups 1: config '%s', without --groups '%s'", wi->name, c_one, c_plain);
    free(c_plain);
    free(c_one);
    run_free(&plain);
    run_free(&one);
  }
  /* the GPU path takes it too (a complete log whatever the machine; see below) */
  run_result r = run("--workload h2o --system unfused --seqlen 8 --heads 4 --groups 2 --dim 16 "
                     "--warmup 0 --runs 1");
  CHECKF(r.exit_code != 2 && strstr(r.out, " groups=2 kv_heads=2") && strstr(r.out, "\nresult "),
         "h2o unfused --groups 2: exit %d: %s %s", r.exit_code, r.out, r.err);
  run_free(&r);
}

/* --scale on a dense workload (every workload takes it): accepted, the config line carries it,
 * and the check of ref against ref_online passes with it (that both apply it: test_ref's
 * test_scale_by_hand). Omitted, the config line has no scale. */
static void test_dense_scale(void) {
  run_result r = run("--workload h2o --system ref --device cpu --seqlen 96 --heads 2 --dim 32 "
                     "--scale 1.5 --check --runs 1");
  CHECKF(r.exit_code == 0, "h2o --scale: exit %d, stderr %s", r.exit_code, r.err);
  CHECKF(strstr(r.out, " scale=1.5") != NULL, "h2o --scale config: %s", r.out);
  CHECKF(strstr(r.out, "check output=") && !strstr(r.out, "ok=0"), "h2o --scale check: %s", r.out);
  run_free(&r);
  r = run("--workload attn --system ref --device cpu --seqlen 32 --heads 1 --dim 16 --runs 1");
  CHECKF(r.exit_code == 0 && !strstr(r.out, "scale="), "attn without --scale: exit %d: %s",
         r.exit_code, r.out);
  run_free(&r);
}

/* A bad command line: exit 2, nothing on stdout, stderr names the problem. */
static void expect_usage_error(const char *args, const char *msg) {
  run_result r = run(args);
  CHECKF(r.exit_code == 2, "'%s': exit %d, want 2", args, r.exit_code);
  CHECKF(strstr(r.err, msg) != NULL, "'%s': stderr lacks '%s': %s", args, msg, r.err);
  CHECKF(r.out[0] == '\0', "'%s': wrote to stdout: %s", args, r.out);
  run_free(&r);
}

static void test_cli_errors(void) {
  expect_usage_error("--workload nope --system ref",
                     "--workload: unknown 'nope' (expected attn|h2o");
  expect_usage_error("--workload h2o --system best", "--system: unknown 'best'");
  expect_usage_error("--workload h2o --system ref --seqlen 0",
                     "--seqlen: expected an integer in [1, 1048576], got '0'");
  expect_usage_error("--workload h2o --system ref --seqlen 12x", "got '12x'");
  expect_usage_error("--workload h2o --system ref --check-pairs -1",
                     "--check-pairs: expected an integer in [0, 1048576], got '-1'");
  expect_usage_error("--workload h2o --system ref --dim 1000",
                     "--dim: expected an integer in [1, 256]");
  expect_usage_error("--workload h2o --system ref --heads", "--heads: expected an integer");
  expect_usage_error("--workload h2o --system ref --device tpu", "--device: unknown 'tpu'");
  expect_usage_error("--workload h2o --system ref --frobnicate", "unknown option '--frobnicate'");
  expect_usage_error("--workload h2o", "--workload and --system are required");
  expect_usage_error("--workload h2o --system ref --causal 2", "--causal: expected an integer");
  expect_usage_error("--workload h2o --system ref --dtype fp32", "--dtype: unknown 'fp32'");
  expect_usage_error("--workload attn --system fused --sm90-rows 256",
                     "--sm90-rows: unknown '256' (expected auto|128|192)");
  expect_usage_error("--workload h2o --system fused --gpuref fast",
                     "--gpuref: unknown 'fast' (expected tiled|naive|both)");
  expect_usage_error("--workload h2o --system fused --gpuref", "--gpuref");
  expect_usage_error("--workload corm --system fused --corm-mask cols",
                     "--corm-mask: unknown 'cols' (expected rows|varied)");
  expect_usage_error("--workload h2o --system fused --corm-mask varied",
                     "--corm-mask is an option of --workload corm, not of --workload h2o");
  /* --groups: every workload, dividing --heads; the block options: nsa's only, validated */
  expect_usage_error("--workload h2o --system ref --block-size 16",
                     "--block-size is an option of the selected-block workloads (nsa), not of "
                     "--workload h2o");
  expect_usage_error("--workload roco --system ref --groups 2 --selected-blocks 4",
                     "--selected-blocks is an option of the selected-block workloads (nsa), not "
                     "of --workload roco");
  expect_usage_error("--workload h2o --system ref --heads 6 --groups 4",
                     "--groups 4 must divide --heads 6 (--groups is the query heads per K/V head");
  expect_usage_error("--workload attn --system unfused --heads 8 --groups 16",
                     "--groups 16 must divide --heads 8");
  expect_usage_error("--workload kf --system ref --groups 0",
                     "--groups: expected an integer in [1, 4096]");
  expect_usage_error("--workload nsa --system ref --heads 16 --groups 3",
                     "--groups 3 must divide --heads 16 (--groups is the query heads per K/V head");
  expect_usage_error("--workload nsa --system ref --heads 16 --groups 32",
                     "--groups 32 must divide --heads 16");
  expect_usage_error("--workload nsa --system ref --scale 0", "--scale: expected a number in (0,");
  expect_usage_error("--workload nsa --system ref --scale nan", "--scale: expected a number");
  expect_usage_error("--workload nsa --system ref --block-size 0",
                     "--block-size: expected an integer in [1, 65536]");
  expect_usage_error("--workload nsa --system ref --selected-blocks x",
                     "--selected-blocks: expected an integer");

  run_result r = run("--help");
  CHECKF(r.exit_code == 0 && strstr(r.out, "usage:"), "--help: exit %d", r.exit_code);
  run_free(&r);
  /* too big for the CPU reference: a complete log ending in status=unsupported, exit 4 */
  r = run("--workload attn --system ref --seqlen 65536");
  CHECKF(r.exit_code == 4, "oversized cpu cell: exit %d", r.exit_code);
  CHECKF(strstr(r.out, "result status=unsupported reason=") != NULL, "oversized: %s", r.out);
  run_free(&r);
}

/* A GPU cell: without a GPU (CI) or without CUDA in the build, still a complete log whose
 * final result status matches the exit code; with a GPU it simply runs. */
static void test_gpu_cell_log_complete(void) {
  run_result r = run("--workload attn --system unfused --seqlen 8 --heads 1 --dim 16 "
                     "--warmup 0 --runs 1");
  CHECKF(strncmp(r.out, "# repro-log 1\nmeta ", 19) == 0, "gpu cell: no header: %s", r.out);
  const char *res = strstr(r.out, "\nresult status=");
  CHECKF(res != NULL, "gpu cell: no result line: %s", r.out);
  if (res) {
    res += strlen("\nresult status=");
    int want = !strncmp(res, "ok ", 3)             ? 0
               : !strncmp(res, "error ", 6)        ? 1
               : !strncmp(res, "unsupported ", 12) ? 4
                                                   : -1;
    CHECKF(want == r.exit_code, "gpu cell: status '%.20s' but exit %d", res, r.exit_code);
  }
  run_free(&r);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s PATH/TO/attnvar\n", argv[0]);
    return 2;
  }
  attnvar = argv[1];
  snprintf(dir, sizeof dir, "/tmp/test_attnvar.XXXXXX");
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  test_logs();
  test_mask_and_dtype();
  test_nsa();
  test_dense_groups();
  test_dense_scale();
  test_cli_errors();
  test_gpu_cell_log_complete();
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", dir);
  return check_report();
}
