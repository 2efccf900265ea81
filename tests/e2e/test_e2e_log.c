/* test_e2e_log: llama_e2e --device cpu writes a well-formed log for every workload (each line
 * parses as a kvline record; header, meta, config with experiment=e2e and layers, a final
 * result line with status=ok and timing fields, no gflops_s), and bad command lines fail with
 * the contract's exit codes and a message that names the problem.
 * Usage: test_e2e_log path/to/llama_e2e */
#include "kvline.h"

#include "../check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *bin;
static char out_path[] = "/tmp/e2e_logXXXXXX", err_path[] = "/tmp/e2e_errXXXXXX";

/* Run bin with args (already shell-safe words); stdout and stderr into the temp files. */
static int run(const char *args) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "'%s' %s >%s 2>%s", bin, args, out_path, err_path);
  int st = system(cmd);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return strdup("");
  static char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  return strdup(buf);
}

/* Every line parses; returns the last record with tag `tag` copied into *last (or 0). */
static int find_last(const char *text, const char *tag, kv_record *last) {
  int found = 0;
  const char *line = text;
  while (*line) {
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    if (len && line[0] != '#') {
      kv_record rec = {0};
      const char *why = NULL;
      int rc = kv_parse(&rec, line, len, &why);
      CHECKF(rc == 0, "unparsable line '%.*s': %s", (int)len, line, why ? why : "");
      if (rc == 0 && strcmp(rec.tag, tag) == 0) {
        kv_record_free(last);
        kv_parse(last, line, len, &why);
        found = 1;
      }
      kv_record_free(&rec);
    }
    line = end ? end + 1 : line + len;
  }
  return found;
}

#define TINY                                                                                     \
  "--layers 2 --hidden 256 --heads 4 --mlp 688 --vocab 1000 --seqlen 64 --keep 16 --keep-std 8 " \
  "--corm-cap 16"

static void check_log(const char *workload) {
  char args[512];
  snprintf(args, sizeof args, "--workload %s --system fused --device cpu --runs 2 --warmup 1 " TINY,
           workload);
  int rc = run(args);
  char *log = slurp(out_path);
  CHECKF(rc == 0, "%s: exit %d", workload, rc);
  CHECKF(strncmp(log, "# repro-log 1\n", 14) == 0, "%s: header", workload);
  kv_record meta = {0}, cfg = {0}, res = {0};
  CHECK(find_last(log, "meta", &meta) && kv_get(&meta, "gpu") && kv_get(&meta, "commit") &&
        kv_get(&meta, "date"));
  CHECK(find_last(log, "config", &cfg));
  const char *v;
  CHECK((v = kv_get(&cfg, "experiment")) && !strcmp(v, "e2e"));
  CHECK((v = kv_get(&cfg, "workload")) && !strcmp(v, workload));
  CHECK((v = kv_get(&cfg, "layers")) && !strcmp(v, "2"));
  CHECK((v = kv_get(&cfg, "device")) && !strcmp(v, "cpu"));
  CHECK((v = kv_get(&cfg, "impl")) && !strcmp(v, "ref"));
  CHECK(find_last(log, "result", &res));
  CHECK((v = kv_get(&res, "status")) && !strcmp(v, "ok"));
  CHECK((v = kv_get(&res, "runs")) && !strcmp(v, "2"));
  CHECK((v = kv_get(&res, "warmup")) && !strcmp(v, "1"));
  const char *fields[] = {"avg_ms", "median_ms", "min_ms", "max_ms", "peak_mib"};
  for (int i = 0; i < 5; i++)
    CHECKF((v = kv_get(&res, fields[i])) && atof(v) > 0, "%s: %s", workload, fields[i]);
  CHECKF(kv_get(&res, "gflops_s") == NULL, "%s: e2e result has no gflops_s", workload);
  kv_record_free(&meta), kv_record_free(&cfg), kv_record_free(&res);
  free(log);
}

static void check_error(const char *args, int want_rc, const char *want_stderr,
                        const char *want_status) {
  int rc = run(args);
  char *err = slurp(err_path), *log = slurp(out_path);
  CHECKF(rc == want_rc, "'%s': exit %d, want %d", args, rc, want_rc);
  CHECKF(strstr(err, want_stderr) != NULL, "'%s': stderr lacks '%s': %s", args, want_stderr, err);
  if (want_status) {
    kv_record res = {0};
    CHECKF(find_last(log, "result", &res) && kv_get(&res, "status") &&
               !strcmp(kv_get(&res, "status"), want_status) && kv_get(&res, "reason"),
           "'%s': want result status=%s with a reason", args, want_status);
    kv_record_free(&res);
  }
  free(err), free(log);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s path/to/llama_e2e\n", argv[0]);
    return 2;
  }
  bin = argv[1];
  int fd1 = mkstemp(out_path), fd2 = mkstemp(err_path);
  if (fd1 < 0 || fd2 < 0) {
    perror("mkstemp");
    return 1;
  }
  close(fd1), close(fd2);
  const char *workloads[] = {"attn", "h2o", "roco", "kf", "snapkv", "corm", "gemma2"};
  for (int i = 0; i < 7; i++) check_log(workloads[i]);

  check_error("--system fused --device cpu", 2, "--workload is required", NULL);
  check_error("--workload h2o --device cpu", 2, "--system is required", NULL);
  check_error("--workload nope --system fused", 2, "nope", NULL);
  check_error("--workload h2o --system fast", 2, "fast", NULL);
  check_error("--workload h2o --system fused --seqlen 12x", 2, "--seqlen", NULL);
  check_error("--workload h2o --system fused --layers 0", 2, "--layers", NULL);
  check_error("--workload h2o --system fused --hidden 250 --heads 4", 2, "not a multiple", NULL);
  check_error("--workload h2o --system fused --frobnicate 1", 2, "unknown option '--frobnicate'",
              NULL);
  check_error("--workload h2o --system fused --runs", 2, "--runs needs a value", NULL);
  /* default (7B) sizes are far beyond the CPU reference: unsupported, exit 4, log complete */
  check_error("--workload h2o --system ref", 4, "CPU reference", "unsupported");
  check_error("--workload h2o --system ref " TINY " --weights /nonexistent/w.safetensors", 1,
              "/nonexistent/w.safetensors", "error");
  unlink(out_path), unlink(err_path);
  return check_report();
}
