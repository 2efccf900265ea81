/* Unit tests of plot/: both log readers (exact numbers), file name templates, the pattern
 * table's edge cases, the csv (and json) round trip and the plot: config loader.
 * Fixture logs live in tests/plot/fixtures/ (hand-written test data, not measurements). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "figure.h"
#include "reader.h"
#include "table.h"

#ifndef SRC_DIR
#define SRC_DIR "."
#endif

static int passed, failed;

#define CHECK(cond, ...)                                              \
  do {                                                                \
    if (cond)                                                         \
      passed++;                                                       \
    else {                                                            \
      failed++;                                                       \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                   \
      fputc('\n', stderr);                                            \
    }                                                                 \
  } while (0)

static int near(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(1, fabs(b)); }

/* Parses a string; returns rd_parse_buffer's result and leaves the row and issues. */
static int parse(const char *text, pt_row *row, rd_issues *is) {
  pt_row_init(row);
  return rd_parse_buffer(text, strlen(text), "test.log", row, is);
}

static void test_ae_time_lines(void) {
  pt_row r;
  rd_issues is = {0};
  int rc = parse(
      "noise\n 50%|#####| 5/10\r[our] avg 1.2500 ms, min 1.2000 ms, max 1.3100 ms, "
      "109951.16277760 gflops/s (10 runs, 4 warmups, profiled)\n"
      "[our] avg 9.0 ms, min 9.0 ms, max 9.0 ms, 1.0 gflops/s (1 runs, 1 warmups, profiled)\n",
      &r, &is);
  CHECK(rc == 0 && r.status == ST_OK, "rc=%d status=%d", rc, r.status);
  CHECK(near(r.avg_ms, 1.25) && near(r.min_ms, 1.2) && near(r.max_ms, 1.31), "avg=%g min=%g max=%g",
        r.avg_ms, r.min_ms, r.max_ms);
  CHECK(near(r.gflops_s, 109951.1627776), "gflops=%.8f (the first time line wins)", r.gflops_s);
  CHECK(!strcmp(r.format, "ae"), "format=%s", r.format);

  rc = parse(
      "[torch] avg 312.5000 ms, min 310.0000 ms, max 320.0000 ms (5 runs, 2 warmups, profiled)\n",
      &r, &is);
  CHECK(rc == 0 && near(r.avg_ms, 312.5) && isnan(r.gflops_s), "e2e: avg=%g gflops=%g", r.avg_ms,
        r.gflops_s);

  rc = parse(
      "[d] avg 4 ms, min 3.9 ms, max 4.2 ms, 3.4e+04 gflops/s, 12.5 gb/s (10 runs, 4 warmups)\n",
      &r, &is);
  CHECK(rc == 0 && near(r.avg_ms, 4) && near(r.gflops_s, 34000),
        "gb/s, no profiled, exponent: avg=%g gflops=%g", r.avg_ms, r.gflops_s);
  CHECK(is.n == 0, "%zu unexpected issues", is.n);
  rd_issues_free(&is);
}

static void test_ae_status_and_memory(void) {
  pt_row r;
  rd_issues is = {0};
  CHECK(parse("building...\nValueError: no\n", &r, &is) == 0 && r.status == ST_UNSUPPORTED,
        "no time line -> NS, status=%d", r.status);
  CHECK(parse("torch.cuda.OutOfMemoryError: CUDA out of memory.\n", &r, &is) == 0 &&
            r.status == ST_OOM,
        "oom status=%d", r.status);
  CHECK(parse("*** STEP 1.0 CANCELLED AT x DUE TO TIME LIMIT ***\n", &r, &is) == 0 &&
            r.status == ST_TIMEOUT,
        "timeout status=%d", r.status);
  CHECK(
      parse("CUDA out of memory (retried)\n[a] avg 1 ms, min 1 ms, max 1 ms (1 runs, 1 warmups)\n",
            &r, &is) == 0 &&
          r.status == ST_OK,
      "a time line beats an out-of-memory message, status=%d", r.status);
  parse("[I] Total Activation Memory: 1073741824 bytes\n[I] Total Weights Memory: 536870912 bytes\n"
        "[t] avg 2 ms, min 1.9 ms, max 2.1 ms, 1 gflops/s (10 runs, 4 warmups, profiled)\n",
        &r, &is);
  CHECK(near(r.peak_mib, 1536.0), "TensorRT activation+weights = %g MiB", r.peak_mib);
  parse("peak_mib=99999 xmib=88888\nmib=256.5\nmib=300.25\nmib=12.0\n", &r, &is);
  CHECK(near(r.peak_mib, 300.25), "mib= takes the largest, ignores peak_mib=/xmib=: %g",
        r.peak_mib);
  CHECK(is.n == 0, "%zu unexpected issues", is.n);
  rd_issues_free(&is);
}

static void test_ae_broken(void) {
  pt_row r;
  rd_issues is = {0};
  CHECK(parse("x\n[our] avg 1.2500 ms, min 1.2000 ms, max\n", &r, &is) == -1,
        "a malformed (complete) time line is skipped");
  CHECK(is.n == 1 && is.v[0].line == 2 && is.v[0].kind == ISSUE_SKIPPED,
        "issue at line 2: n=%zu line=%d", is.n, is.n ? is.v[0].line : -1);
  rd_issues_free(&is);
  /* cut without its newline: a torn log, the cell is ERR */
  CHECK(parse("x\n[our] avg 1.2500 ms, min 1.2000 ms, max", &r, &is) == 0 && r.status == ST_ERROR &&
            strstr(r.reason, "torn log"),
        "a cut last time line is ERR: status=%d", r.status);
  CHECK(is.n == 1 && is.v[0].line == 2 && is.v[0].kind == ISSUE_WARNING,
        "torn: warning at line 2: n=%zu line=%d", is.n, is.n ? is.v[0].line : -1);
  rd_issues_free(&is);
  CHECK(parse("", &r, &is) == -1 && is.n == 1 && strstr(is.v[0].msg, "empty"), "empty file");
  rd_issues_free(&is);
  char bin[64] = "[our] avg 1 ms";
  bin[20] = '\0';
  memset(bin + 21, 0x01, 40);
  pt_row_init(&r);
  CHECK(rd_parse_buffer(bin, sizeof bin, "bin", &r, &is) == -1 && is.n == 1 &&
            strstr(is.v[0].msg, "binary"),
        "binary file");
  rd_issues_free(&is);
}

static void test_ours(void) {
  pt_row r;
  rd_issues is = {0};
  const char *ok = "# repro-log 1\nmeta gpu=\"NVIDIA H100 80GB HBM3\" cc=9.0\n"
                   "config workload=h2o system=fused batch=1 seqlen=4096 experiment=e2e\n"
                   "check output=out rel_l2=3.1e-04 max_abs=1.9e-03 ok=1\n"
                   "result status=ok avg_ms=1.2997 median_ms=1.2950 min_ms=1.2891 max_ms=1.3592 "
                   "gflops_s=105749.3 peak_mib=417.0\n";
  CHECK(parse(ok, &r, &is) == 0 && r.status == ST_OK, "ok log");
  CHECK(near(r.avg_ms, 1.2997) && near(r.min_ms, 1.2891) && near(r.max_ms, 1.3592) &&
            near(r.gflops_s, 105749.3) && near(r.peak_mib, 417.0),
        "numbers %g %g %g %g %g", r.avg_ms, r.min_ms, r.max_ms, r.gflops_s, r.peak_mib);
  /* the config line's other keys (seqlen) are cell keys only where the plot's defaults name
   * them: rd_read_path (test_default_keys) */
  CHECK(!strcmp(r.workload, "h2o") && !strcmp(r.system, "fused") && r.nkeys == 0 &&
            !strcmp(r.experiment, "e2e") && !strcmp(r.format, "ours"),
        "keys %s %s %d %s", r.workload, r.system, r.nkeys, r.experiment);
  const char *runner =
      "# repro-log 1\nresult status=ok avg_ms=3.5\n"
      "result status=timeout source=runner state=TIMEOUT exit=0:15 reason=\"time limit\"\n";
  CHECK(parse(runner, &r, &is) == 0 && r.status == ST_TIMEOUT && isnan(r.avg_ms) &&
            !strcmp(r.reason, "time limit"),
        "the runner's last line wins: status=%d avg=%g", r.status, r.avg_ms);
  CHECK(parse("result status=error source=runner reason=\"never started\"\n", &r, &is) == 0 &&
            r.status == ST_ERROR,
        "a runner-only log");
  CHECK(is.n == 0, "%zu unexpected issues", is.n);
  CHECK(parse("# repro-log 1\nconfig workload=attn\nresult status=ok avg_", &r, &is) == 0 &&
            r.status == ST_ERROR && !strcmp(r.workload, "attn"),
        "cut result line: a torn log, ERR");
  CHECK(is.n == 1 && is.v[0].kind == ISSUE_WARNING && is.v[0].line == 3, "warning at line 3: n=%zu",
        is.n);
  rd_issues_free(&is);
  CHECK(parse("# repro-log 1\nresult status=ok\n", &r, &is) == -1, "ok without avg_ms is skipped");
  CHECK(parse("# repro-log 1\nresult status=fine avg_ms=1\n", &r, &is) == -1,
        "unknown status is skipped");
  rd_issues_free(&is);
}

static void test_names(void) {
  pt_row r;
  pt_row_init(&r);
  CHECK(rd_match_name("{experiment}.{device}.{workload}.{system}.log", "kernel.H100.kf.our.log",
                      &r) == 0 &&
            !strcmp(r.experiment, "kernel") && !strcmp(r.device, "h100") &&
            !strcmp(r.workload, "kf") && !strcmp(r.system, "our"),
        "fig12 name: %s %s %s %s", r.experiment, r.device, r.workload, r.system);
  pt_row_init(&r);
  CHECK(rd_match_name("{device}.{system}.{seqlen}.log", "a100.sdpa-flash.8192.log", &r) == 0 &&
            !strcmp(r.system, "sdpa-flash") && !strcmp(pt_length(&r), "8192") && r.keys[0].in_name,
        "fig13 name: %s %s", r.system, pt_length(&r));
  pt_row_init(&r);
  CHECK(rd_match_name("{device}.{system}.{seqlen}.log", "a100.torch.big.log", &r) == 0 &&
            !strcmp(pt_key_value(&r, "seqlen"), "big"),
        "seqlen is a case key like any other: a name, not checked as a number");
  CHECK(rd_match_name("{device}.{workload}.{system}.log", "h100.attn.log", &r) == -1,
        "too few parts");
  CHECK(rd_match_name("{device}.{workload}.{system}.log", "h100.attn.a.b.log", &r) == -1,
        "too many parts");
  CHECK(rd_match_name("{device}.{workload}.{system}.log", "h$1.attn.x.log", &r) == -1,
        "unsafe characters");
  /* case keys: any other placeholder goes to the row's keys, in the template's order */
  pt_row_init(&r);
  CHECK(rd_match_name("{experiment}.{device}.{dtype}.{m}x{n}x{k}.{system}.log",
                      "gemm.h100.bf16.4096x1024x512.wgmma.log", &r) == 0 &&
            r.nkeys == 4 && !strcmp(r.keys[0].key, "dtype") && !strcmp(r.keys[0].val, "bf16") &&
            !strcmp(r.keys[1].val, "4096") && !strcmp(r.keys[2].val, "1024") &&
            !strcmp(r.keys[3].key, "k") && !strcmp(r.keys[3].val, "512") &&
            !strcmp(r.system, "wgmma") && !strcmp(pt_key_value(&r, "n"), "1024"),
        "case keys from the name: %d keys", r.nkeys);
  pt_row_init(&r);
  CHECK(rd_match_name("{experiment}.{device}.b{batch}.s{seqlen}.{system}.log",
                      "mha.h100.b8.s4096.fused.log", &r) == 0 &&
            r.nkeys == 2 && !strcmp(r.keys[1].key, "seqlen") && r.keys[1].in_name &&
            !strcmp(pt_length(&r), "4096") && !strcmp(pt_key_value(&r, "batch"), "8"),
        "seqlen is a case key, shown in the length column");
  pt_row_init(&r);
  CHECK(rd_match_name("{experiment}.{device}.{m}x{n}.{system}.log", "gemm.h100.1024.cublas.log",
                      &r) == -1,
        "a case key missing from the name");
  CHECK(rd_match_name("{experiment}.{device}.{Bad}.{system}.log", "gemm.h100.x.cublas.log", &r) ==
            -1,
        "a placeholder that is no key name");
}

static void test_csv_roundtrip(void) {
  pt_table t = {0}, back = {0};
  pt_row r;
  pt_row_init(&r);
  strcpy(r.figure, "fig12");
  strcpy(r.experiment, "kernel");
  strcpy(r.device, "h100");
  strcpy(r.workload, "h2o");
  strcpy(r.system, "fused");
  pt_set_key(&r, "seqlen", "4096", 0);
  r.status = ST_OK;
  r.avg_ms = 1.2997;
  r.gflops_s = 105749.3;
  strcpy(r.source, "dir,with \"quotes\"/x.log");
  strcpy(r.format, "ours");
  pt_append(&t, &r);
  r.status = ST_OOM;
  r.avg_ms = NAN;
  strcpy(r.system, "torch");
  strcpy(r.reason, "CUDA out of memory, twice");
  pt_append(&t, &r);
  char path[] = "/tmp/test_plot_csv_XXXXXX";
  int fd = mkstemp(path);
  FILE *f = fdopen(fd, "w");
  pt_write_csv(f, &t);
  fclose(f);
  CHECK(pt_read_csv(path, &back, NULL, NULL) == 0 && back.n == 2, "read back %zu rows", back.n);
  if (back.n == 2) {
    CHECK(near(back.rows[0].avg_ms, 1.2997) && near(back.rows[0].gflops_s, 105749.3) &&
              isnan(back.rows[0].peak_mib),
          "numbers survive");
    CHECK(!strcmp(back.rows[0].source, r.source) && !strcmp(back.rows[1].reason, r.reason) &&
              back.rows[1].status == ST_OOM && isnan(back.rows[1].avg_ms),
          "quoted fields and statuses survive: %s | %s", back.rows[0].source, back.rows[1].reason);
  }
  /* GPU, compute capability, compile time and case keys survive too; the cell is its keys,
   * and one GPU's (merge keeps two GPUs' rows of one cell) */
  pt_table tk = {0}, kback = {0};
  pt_row k = r;
  pt_set_key(&k, "m", "4096", 1);
  pt_set_key(&k, "dtype", "fp16", 1);
  snprintf(k.gpu, sizeof k.gpu, "NVIDIA H100 80GB HBM3, \"SXM\"");
  strcpy(k.cc, "9.0");
  k.compile_s = 2.15;
  pt_append(&tk, &k);
  char kpath[] = "/tmp/test_plot_csvk_XXXXXX";
  FILE *kf = fdopen(mkstemp(kpath), "w");
  pt_write_csv(kf, &tk);
  fclose(kf);
  CHECK(pt_read_csv(kpath, &kback, NULL, NULL) == 0 && kback.n == 1, "keys csv read back");
  if (kback.n == 1) {
    const pt_row *b = &kback.rows[0];
    char arch[16];
    CHECK(pt_same_cell_gpu(b, &k) && !strcmp(b->gpu, k.gpu) && !strcmp(b->cc, "9.0") &&
              near(b->compile_s, 2.15) && b->nkeys == 3 && !strcmp(b->keys[1].key, "dtype") &&
              !strcmp(b->keys[2].key, "seqlen") && !b->keys[2].in_name &&
              !strcmp(pt_arch(b, arch, sizeof arch), "sm_90"),
          "gpu %s, cc %s, keys %d survive", b->gpu, b->cc, b->nkeys);
    pt_row other = *b;
    pt_set_key(&other, "m", "8192", 1);
    CHECK(!pt_same_cell(&other, b), "another case is another cell");
    other = *b;
    strcpy(other.gpu, "NVIDIA A100-SXM4-80GB");
    CHECK(pt_same_cell(&other, b) && !pt_same_cell_gpu(&other, b),
          "another GPU: same cell, not merged");
    other.gpu[0] = '\0';
    CHECK(pt_same_cell_gpu(&other, b), "an unknown GPU (the artifact's logs) matches");
  }
  unlink(kpath);
  pt_free(&tk);
  pt_free(&kback);
  FILE *bad = fopen(path, "a");
  fputs("fig12,kernel,h100,h2o,x;rm,1,ok,,,,,,ours,,,,,,\n", bad); /* 19 fields: the name fails */
  fclose(bad);
  pt_table t3 = {0};
  CHECK(pt_read_csv(path, &t3, NULL, NULL) == -1, "an unsafe name in a csv is rejected");
  unlink(path);
  pt_free(&t);
  pt_free(&back);
  pt_free(&t3);
}

/* The fixture folders through the real fig12/fig13 configs: aliases, defaults, statuses. */
static void test_fixture_dirs(void) {
  pc_config cfg;
  CHECK(pc_load(SRC_DIR "/fig12/experiment.yaml", &cfg) == 0, "fig12 config loads");
  rd_opts o = pc_reader_opts(&cfg);
  pt_table t = {0};
  rd_issues is = {0};
  int n = rd_read_path(&o, SRC_DIR "/tests/plot/fixtures/ae/fig12", &t, &is);
  CHECK(n == 6 && is.n == 0, "6 AE logs, no issues: n=%d issues=%zu", n, is.n);
  int seen = 0;
  for (size_t i = 0; i < t.n; i++) {
    const pt_row *r = &t.rows[i];
    if (!strcmp(r->system, "flashtensor") && !strcmp(r->workload, "h2o")) {
      seen++;
      CHECK(near(r->avg_ms, 1.25) && !strcmp(pt_length(r), "4096") &&
                !strcmp(r->experiment, "kernel"),
            "our -> flashtensor");
    }
    if (!strcmp(r->system, "torch") && !strcmp(r->experiment, "e2e")) {
      seen++;
      CHECK(!strcmp(r->device, "h100") && near(r->avg_ms, 312.5), "H100 -> h100, e2e time");
    }
    if (!strcmp(r->system, "inductor")) seen++; /* dynamo -> inductor */
    if (!strcmp(r->system, "tensorrt")) {
      seen++;
      CHECK(r->status == ST_OOM, "tensorrt kf OOM");
    }
  }
  CHECK(seen == 4, "aliases applied: %d of 4", seen);

  /* the grid model: the artifact's logs alone make FlashTensor (artifact) ours (the last
   * `ours: true` bar with a log): its speedup (1.25 ms) over the best other (inductor 4.0 ms) */
  fg_model m;
  CHECK(fg_build(&m, &cfg, &cfg.figures[0], &t) == 0 && m.ndev == 1,
        "only the h100 row is drawn: %d", m.ndev);
  CHECK(near(fg_speedup(&m, 0, 0), 4.0 / 1.25), "h2o speedup %g", fg_speedup(&m, 0, 0));
  CHECK(isnan(fg_speedup(&m, 0, 1)), "no speedup without ours");
  CHECK(fg_at(&m, 0, 4, 3)->status == ST_UNSUPPORTED && fg_at(&m, 0, 3, 3)->status == ST_TIMEOUT,
        "tvm corm NS, tvm snapkv TLE");
  CHECK(fg_at(&m, 0, 6, 0)->status == ST_MISSING, "no log -> missing");
  fg_free(&m);
  pt_free(&t);
  rd_issues_free(&is);

  n = rd_read_path(&o, SRC_DIR "/tests/plot/fixtures/broken/fig12", &t, &is);
  int skipped = 0;
  for (size_t i = 0; i < is.n; i++) skipped += is.v[i].kind == ISSUE_SKIPPED;
  CHECK(n == 3 && skipped == 2,
        "broken folder: 1 good log, 2 torn (cut AE, cut ours: ERR rows), 2 unknown skipped: n=%d "
        "skipped=%d",
        n, skipped);
  pt_free(&t);
  rd_issues_free(&is);

  pc_config c13;
  CHECK(pc_load(SRC_DIR "/fig13/experiment.yaml", &c13) == 0, "fig13 config loads");
  o = pc_reader_opts(&c13);
  n = rd_read_path(&o, SRC_DIR "/tests/plot/fixtures/ae/fig13", &t, &is);
  CHECK(n == 2 && is.n == 0, "fig13 fixtures: n=%d issues=%zu", n, is.n);
  for (size_t i = 0; i < t.n; i++) {
    const pt_row *r = &t.rows[i];
    CHECK(!strcmp(r->workload, "h2o") && !strcmp(r->experiment, "h2o") &&
              !strcmp(pt_length(r), "4096"),
          "fig13 defaults");
    if (!strcmp(r->system, "tensorrt")) CHECK(near(r->peak_mib, 1536), "trt mib %g", r->peak_mib);
    if (!strcmp(r->system, "flashtensor"))
      CHECK(near(r->peak_mib, 300.25) && near(r->gflops_s, 274877.906944), "our mib");
  }
  pt_free(&t);
  rd_issues_free(&is);
}

/* ---- a parser that never lies ---- */

static int has_issue(const rd_issues *is, const char *needle) {
  for (size_t i = 0; i < is->n; i++)
    if (strstr(is->v[i].msg, needle)) return 1;
  return 0;
}

/* 1 when s[0..n) is well-formed UTF-8 (no overlongs, no surrogates, <= U+10FFFF). */
static int valid_utf8(const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s, *e = p + n;
  while (p < e) {
    unsigned c = *p;
    int k = c < 0x80             ? 0
            : (c & 0xE0) == 0xC0 ? 1
            : (c & 0xF0) == 0xE0 ? 2
            : (c & 0xF8) == 0xF0 ? 3
                                 : -1;
    if (k < 0 || (k == 1 && c < 0xC2) || e - p <= k) return 0;
    unsigned cp = k == 0 ? c : k == 1 ? c & 0x1F : k == 2 ? c & 0x0F : c & 0x07;
    for (int i = 1; i <= k; i++) {
      if ((p[i] & 0xC0) != 0x80) return 0;
      cp = cp << 6 | (p[i] & 0x3F);
    }
    if ((k == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (k == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
      return 0;
    p += k + 1;
  }
  return 1;
}

/* The artifact's rule for TensorRT: activation + weights bytes, even when a mib= line
 * is there too (its fig13/plot.py overrides mib for tensorrt). Excerpted from the shape
 * of the artifact's h100.tensorrt.1024.log; the numbers are the fixture's. */
static void test_ae_trt_and_mib_anchor(void) {
  pt_row r;
  rd_issues is = {0};
  parse("[TRT] [I] Total Activation Memory: 226492416 bytes\n"
        "[TRT] [I] Total Weights Memory: 2097536 bytes\n"
        "start_peak_mem_mib=56.0\nend_peak_mem_mib=64.125\nmib=64.125\n"
        "[tensorrt] avg 0.5978 ms, min 0.5867 ms, max 0.6447 ms, 14368.4 gflops/s (10 runs, 100 "
        "warmups, profiled)\n",
        &r, &is);
  CHECK(fabs(r.peak_mib - 218.0) < 0.01, "TensorRT bytes win over mib=: %g MiB (want 218)",
        r.peak_mib);
  CHECK(is.n == 0, "no issue for start_/end_peak_mem_mib lines: %zu (%s)", is.n,
        is.n ? is.v[0].msg : "");
  rd_issues_free(&is);
  /* a start_peak_mem_mib= line alone (a tvm run that crashed) is no malformed mib= line */
  parse("start_peak_mem_mib=168.125\nTraceback (most recent call last):\n", &r, &is);
  CHECK(is.n == 0 && isnan(r.peak_mib), "start_peak_mem_mib= is not mib=: %zu issues, %g", is.n,
        r.peak_mib);
  rd_issues_free(&is);
  parse("mib=12x\n", &r, &is);
  CHECK(is.n == 1 && is.v[0].kind == ISSUE_WARNING, "a real mib= line of a bad shape warns: %zu",
        is.n);
  rd_issues_free(&is);
}

static void test_ae_nonfinite(void) {
  pt_row r;
  rd_issues is = {0};
  int rc = parse("[a] avg nan ms, min nan ms, max nan ms (1 runs, 1 warmups)\n"
                 "[a] avg 2 ms, min 1 ms, max 3 ms (1 runs, 1 warmups)\n",
                 &r, &is);
  CHECK(rc == 0 && r.status == ST_OK && near(r.avg_ms, 2), "avg nan never wins: status=%d avg=%g",
        r.status, r.avg_ms);
  CHECK(has_issue(&is, "finite"), "the nan time line is reported");
  rd_issues_free(&is);
  rc = parse("[a] avg inf ms, min 1 ms, max inf ms (1 runs, 1 warmups)\n", &r, &is);
  CHECK(rc == 0 && r.status == ST_ERROR && strstr(r.reason, "finite"),
        "only a non-finite time line: ERR, not ok with an empty time: status=%d reason=%s",
        r.status, r.reason);
  rd_issues_free(&is);
  parse("mib=300.25\nmib=nan\nmib=12\n", &r, &is);
  CHECK(near(r.peak_mib, 300.25), "mib=nan does not hide the largest valid mib=: %g", r.peak_mib);
  parse("mib=inf\nmib=5\n", &r, &is);
  CHECK(near(r.peak_mib, 5), "mib=inf never wins: %g", r.peak_mib);
  rd_issues_free(&is);
}

static void test_torn(void) {
  pt_row r;
  rd_issues is = {0};
  const char *ok = "# repro-log 1\nresult status=ok avg_ms=0.7214\n";
  char buf[256];
  snprintf(buf, sizeof buf, "%sresult status=erro", ok);
  int rc = parse(buf, &r, &is);
  CHECK(rc == 0 && r.status == ST_ERROR && strstr(r.reason, "torn log"),
        "a torn `result status=erro` is ERR, not the earlier ok: rc=%d status=%d reason=%s", rc,
        r.status, r.reason);
  rd_issues_free(&is);
  rc = parse("# repro-log 1\nresult status=ok avg_ms=0.7", &r, &is);
  CHECK(rc == 0 && r.status == ST_ERROR && isnan(r.avg_ms) && strstr(r.reason, "torn log"),
        "a cut number is not read: status=%d avg=%g", r.status, r.avg_ms);
  CHECK(has_issue(&is, "last line is cut"), "the cut line is reported");
  rd_issues_free(&is);
  /* the runner's complete line after a killed cell still wins */
  rc = parse("# repro-log 1\nresult status=ok avg_ms=3.5\n"
             "result status=timeout source=runner reason=\"time limit\"\n",
             &r, &is);
  CHECK(rc == 0 && r.status == ST_TIMEOUT, "runner line wins: %d", r.status);
  /* AE: a cut last line that could be a record */
  rc = parse("[a] avg 2 ms, min 1 ms, max 3 ms (1 runs, 1 warmups)\nmib=12", &r, &is);
  CHECK(rc == 0 && r.status == ST_ERROR && strstr(r.reason, "torn log"),
        "AE torn mib= line: status=%d reason=%s", r.status, r.reason);
  rc = parse("[a] avg 2 ms, min 1 ms, max 3 ms (1 runs, 1 warmups)\n 50%|####", &r, &is);
  CHECK(rc == 0 && r.status == ST_OK, "AE: a cut progress bar at the end is chatter: %d", r.status);
  rd_issues_free(&is);
}

static void test_ours_nonpositive(void) {
  pt_row r;
  rd_issues is = {0};
  const char *bad[] = {"# repro-log 1\nresult status=ok avg_ms=-5\n",
                       "# repro-log 1\nresult status=ok avg_ms=0\n",
                       "# repro-log 1\nresult status=ok avg_ms=inf\n"};
  for (int i = 0; i < 3; i++) {
    int rc = parse(bad[i], &r, &is);
    CHECK(rc == 0 && r.status == ST_ERROR && !strcmp(r.reason, "avg_ms must be a positive number"),
          "log %d: status=%d reason=%s", i, r.status, r.reason);
    CHECK(has_issue(&is, "avg_ms must be a positive number"), "log %d reported", i);
    rd_issues_free(&is);
  }
}

static void test_utf8(void) {
  pt_row r;
  rd_issues is = {0};
  /* a reason of 200 two-byte characters (400 bytes) is cut at the limit, not mid-character */
  char buf[1024] = "# repro-log 1\nresult status=error reason=\"";
  for (int i = 0; i < 200; i++) strcat(buf, "\xc3\xa9");
  strcat(buf, "\"\n");
  parse(buf, &r, &is);
  CHECK(r.status == ST_ERROR && strlen(r.reason) > 100 && valid_utf8(r.reason, strlen(r.reason)),
        "reason cut at a character boundary (%zu bytes)", strlen(r.reason));
  /* invalid bytes from a log become U+FFFD */
  parse("# repro-log 1\nresult status=error reason=\"bad \xff\xfe bytes \xe2\x82\"\n", &r, &is);
  CHECK(valid_utf8(r.reason, strlen(r.reason)) && strstr(r.reason, "\xef\xbf\xbd"),
        "invalid bytes replaced: %s", r.reason);
  /* and the writers never emit invalid UTF-8, whatever the row holds */
  pt_table t = {0};
  pt_row_init(&r);
  strcpy(r.device, "h100");
  strcpy(r.system, "s");
  strcpy(r.source, "dir\xff/x.log");
  memset(r.reason, 'a', sizeof r.reason - 2);
  r.reason[sizeof r.reason - 3] = '\xe2'; /* a character cut by someone else */
  r.reason[sizeof r.reason - 2] = '\0';
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
    CHECK(valid_utf8(out, n), "%s output is valid UTF-8", fmt ? "json" : "csv");
    free(out);
  }
  pt_free(&t);
  rd_issues_free(&is);
}

static void test_csv_nasty_roundtrip(void) {
  const char *reasons[] = {
      "a, b", "say \"no\"", "line1\nline2\r\nline3\n", "naïve — ünïcode ✓", "\"", ",",
      "",     "trailing\n"};
  int nr = (int)(sizeof reasons / sizeof *reasons);
  pt_table t = {0}, back = {0};
  for (int i = 0; i < nr; i++) {
    pt_row r;
    pt_row_init(&r);
    strcpy(r.figure, "fig12");
    strcpy(r.device, "h100");
    snprintf(r.system, sizeof r.system, "s%d", i);
    r.status = ST_ERROR;
    snprintf(r.source, sizeof r.source, "dir,\"x\"\n/%d.log", i);
    snprintf(r.reason, sizeof r.reason, "%s", reasons[i]);
    pt_append(&t, &r);
  }
  char path[] = "/tmp/test_plot_csv_XXXXXX";
  FILE *f = fdopen(mkstemp(path), "w");
  pt_write_csv(f, &t);
  fclose(f);
  CHECK(pt_read_csv(path, &back, NULL, NULL) == 0 && back.n == (size_t)nr,
        "nasty csv read back: %zu rows", back.n);
  /* control characters (line breaks too) are written as \xNN: a row reads back as it shows */
  for (size_t i = 0; i < back.n && i < t.n; i++) {
    char reason[PT_REASON * 4], source[PT_PATH * 4];
    pt_safe_copy(reason, sizeof reason, t.rows[i].reason);
    pt_safe_copy(source, sizeof source, t.rows[i].source);
    CHECK(!strcmp(back.rows[i].reason, reason) && !strcmp(back.rows[i].source, source),
          "row %zu survives as shown: [%s]", i, back.rows[i].reason);
  }
  char *first = NULL, *again = NULL;
  size_t nfirst = 0, nagain = 0;
  FILE *m1 = open_memstream(&first, &nfirst), *m2 = open_memstream(&again, &nagain);
  pt_write_csv(m1, &t);
  pt_write_csv(m2, &back);
  fclose(m1);
  fclose(m2);
  CHECK(nfirst == nagain && !memcmp(first, again, nfirst), "written again: the same bytes");
  free(first);
  free(again);
  unlink(path);
  pt_free(&t);
  pt_free(&back);
}

/* Folders with odd entries: empty, a FIFO, directory links to ., a dangling link. */
/* Writes text to dir/name. */
static void write_file(const char *dir, const char *name, const char *text) {
  char p[600];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  FILE *f = fopen(p, "w");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

/* The row of file name base in t, or NULL. */
static const pt_row *row_of(const pt_table *t, const char *base) {
  for (size_t i = 0; i < t->n; i++) {
    const char *s = strrchr(t->rows[i].source, '/');
    if (s && !strcmp(s + 1, base)) return &t->rows[i];
  }
  return NULL;
}

/* The plot's defaults name cell keys (seqlen: 4096): a log named without one takes it from its
 * config line, else the default; a name that holds it wins, and a config line that says
 * otherwise is a warning. Any key can be one (dtype here), as seqlen is. */
static void test_default_keys(void) {
  static const pt_kv defs[] = {{.key = "seqlen", .val = "4096"}, {.key = "dtype", .val = "fp16"}};
  rd_opts o = {.figure = "t",
               .log_name = "{experiment}.{device}.{system}.log",
               .default_keys = defs,
               .ndefault_keys = 2,
               .default_workload = "attn"};
  char dir[] = "/tmp/test_plot_defaults_XXXXXX";
  CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  write_file(dir, "e.h100.a.log", "# repro-log 1\nconfig seqlen=2048\nresult status=ok avg_ms=1\n");
  write_file(dir, "e.h100.b.log", "# repro-log 1\nresult status=ok avg_ms=1\n");
  write_file(dir, "e.h100.c.log",
             "# repro-log 1\nconfig seqlen=\"a b\" dtype=bf16\nresult status=ok avg_ms=1\n");
  pt_table t = {0};
  rd_issues is = {0};
  CHECK(rd_read_path(&o, dir, &t, &is) == 3, "3 logs");
  const pt_row *a = row_of(&t, "e.h100.a.log"), *b = row_of(&t, "e.h100.b.log"),
               *c = row_of(&t, "e.h100.c.log");
  CHECK(a && !strcmp(pt_length(a), "2048") && !strcmp(pt_key_value(a, "dtype"), "fp16") &&
            a->nkeys == 2 && !a->keys[0].in_name && pt_case_keys(a) == 0,
        "the config line's length, the default dtype");
  CHECK(b && !strcmp(pt_length(b), "4096") && !strcmp(pt_key_value(b, "dtype"), "fp16"),
        "the defaults");
  CHECK(c && !strcmp(pt_length(c), "4096") && !strcmp(pt_key_value(c, "dtype"), "bf16") &&
            has_issue(&is, "config seqlen=\"a b\" is not a name"),
        "a config value that is no name: a warning, the default");
  CHECK(a && b && !pt_same_cell(a, b), "two lengths, two cells");
  pt_free(&t);
  rd_issues_free(&is);

  o.log_name = "{experiment}.{device}.{system}.{seqlen}.log";
  write_file(dir, "e.h100.d.1024.log",
             "# repro-log 1\nconfig seqlen=2048\nresult status=ok avg_ms=1\n");
  CHECK(rd_read_path(&o, dir, &t, &is) == 1, "1 log of the second template");
  const pt_row *d = row_of(&t, "e.h100.d.1024.log");
  CHECK(d && !strcmp(pt_length(d), "1024") && d->keys[0].in_name && pt_case_keys(d) == 1 &&
            has_issue(&is, "file name says seqlen=1024 but the log says 2048"),
        "the name's length wins, the config line's is a warning");
  const char *names[] = {"e.h100.a.log", "e.h100.b.log", "e.h100.c.log", "e.h100.d.1024.log"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    char p[600];
    snprintf(p, sizeof p, "%s/%s", dir, names[i]);
    unlink(p);
  }
  rmdir(dir);
  pt_free(&t);
  rd_issues_free(&is);
}

static void test_walk(void) {
  pc_config cfg;
  pc_load(SRC_DIR "/fig12/experiment.yaml", &cfg);
  rd_opts o = pc_reader_opts(&cfg);
  char dir[] = "/tmp/test_plot_walk_XXXXXX";
  CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  pt_table t = {0};
  rd_issues is = {0};
  CHECK(rd_read_path(&o, dir, &t, &is) == 0 && t.n == 0 && is.n == 0, "empty folder");

  char p[600], q[600];
  snprintf(p, sizeof p, "%s/kernel.h100.h2o.fused.log", dir);
  FILE *f = fopen(p, "w");
  fputs("# repro-log 1\nresult status=ok avg_ms=1.5\n", f);
  fclose(f);
  snprintf(p, sizeof p, "%s/kernel.h100.h2o.torch.log", dir);
  CHECK(mkfifo(p, 0600) == 0, "mkfifo");
  snprintf(p, sizeof p, "%s/kernel.h100.roco.fused.log", dir);
  CHECK(symlink("nowhere.log", p) == 0, "dangling symlink");
  snprintf(p, sizeof p, "%s/a", dir);
  CHECK(symlink(".", p) == 0, "link a");
  snprintf(p, sizeof p, "%s/b", dir);
  CHECK(symlink(".", p) == 0, "link b");
  snprintf(p, sizeof p, "%s/kernel.h100.kf.fused.log", dir);
  snprintf(q, sizeof q, "%s/kernel.h100.h2o.fused.log", dir);
  CHECK(link(q, p) == 0, "hard link");
  alarm(20); /* a FIFO opened for reading blocks forever: fail loudly instead */
  int n = rd_read_path(&o, dir, &t, &is);
  alarm(0);
  CHECK(n == 1 && t.n == 1, "every file read once: n=%d rows=%zu", n, t.n);
  CHECK(has_issue(&is, "not a regular file"), "the FIFO is listed");
  CHECK(has_issue(&is, "dangling symlink"), "the dangling link is listed");
  CHECK(has_issue(&is, "already read"), "the directory loop / second name is listed");
  for (size_t i = 0; i < is.n; i++) fprintf(stderr, "  (walk) %s: %s\n", is.v[i].path, is.v[i].msg);
  pt_free(&t);
  rd_issues_free(&is);
  const char *names[] = {"kernel.h100.h2o.fused.log",
                         "kernel.h100.h2o.torch.log",
                         "kernel.h100.roco.fused.log",
                         "kernel.h100.kf.fused.log",
                         "a",
                         "b"};
  for (int i = 0; i < 6; i++) {
    snprintf(p, sizeof p, "%s/%s", dir, names[i]);
    unlink(p);
  }
  rmdir(dir);
}

#define EXPS "experiments: {k: {log: \"{device}.log\"}, e: {log: \"e.{device}.log\"}}\n"
/* a plot of one grid figure (experiment k) whose ours system s has the paper's times; its
 * workloads w and kf (whose alias keyformer common/registry.yaml gives); line 8 follows */
#define PAPER_PLOT                                                \
  "systems: {s: {command: \"run {system}\", ours: true}}\n"       \
  "plot:\n  devices: [a]\n  workloads: [w, kf]\n  systems: [s]\n" \
  "  figures: [{name: f, kind: grid, experiment: k}]\n"
static void test_config_errors(void) {
  /* each bad file and the start of the message it must give ("file:" is cut off) */
  const char *bad[][2] = {
      /* the plot: section names its rows, columns and bars; how they look is the registry's */
      {EXPS "plot:\n  devices: [a]\n  systems: [{name: s, label: S}]\n  figures: "
            "[{name: f, kind: grid, experiment: k}]\n",
       "4:13: systems: expected a name: how it is shown (label, aliases, colour) is its row in "
       "common/registry.yaml"},
      {EXPS "plot:\n  devices: [\"a;rm -rf\"]\n  systems: [s]\n  figures: [{name: "
            "f, kind: grid, experiment: k}]\n",
       "3:13: expected devices: a name"},
      {EXPS "plot:\n  devices: [a, b, a]\n  systems: [s]\n  "
            "figures: [{name: f, kind: grid, experiment: k}]\n",
       "3:19: devices: \"a\" is listed twice"},
      /* two names of one registry row (kf, and its alias keyformer) */
      {EXPS "plot:\n  devices: [a]\n  workloads: [kf, keyformer]\n  systems: [s]\n  "
            "figures: [{name: f, kind: grid, experiment: k}]\n",
       "3:3: kf and keyformer are one row of common/registry.yaml (keyformer is an alias)"},
      /* ours and expected are the file's systems: row's */
      {EXPS "systems: {s: {command: \"x {system}\", ours: yes}}\nplot:\n  devices: [a]\n  "
            "figures: [{name: f, kind: grid, experiment: k}]\n",
       "2:44: ours: expected true or false"},
      {EXPS "systems: {s: {absent: \"no GPU\", expected: true}}\nplot:\n  devices: [a]\n  "
            "figures: [{name: f, kind: grid, experiment: k}]\n",
       "2:43: system 's': an absent system is never expected"},
      /* no bars: neither the plot nor the file lists a system */
      {EXPS "plot:\n  devices: [a]\n  figures: [{name: f, kind: grid, experiment: k}]\n",
       "3:3: plot needs devices, systems (its own lists, else the file's devices: and systems:) "
       "and figures"},
      {"plot: [1, 2\n", "2:1: YAML syntax error"},
      {"runner: {}\n", "1:1: no top-level plot: section"},
      {"a: 1\na: 2\nplot: {}\n", "2:1: duplicate key 'a'"},
      {"a: &x 1\nplot: {}\n", "1:4: anchors (&name) are not supported"},
      /* the log name comes from the experiment; a leftover copy is refused */
      {EXPS "plot:\n  log_name: \"{device}.log\"\n  devices: [a]\n  systems: [s]\n "
            " figures: [{name: f, kind: grid}]\n",
       "3:3: plot: log_name is not read"},
      /* two drawn experiments whose logs could not be told apart by one pattern */
      {EXPS "plot:\n  devices: [a]\n  systems: [s]\n  figures: [{name: f, kind: "
            "grid, experiment: k}, {name: g, kind: grid, experiment: e}]\n",
       "1:50: experiments 'e' and 'k' (line 1) have different log templates"},
      {EXPS "plot:\n  devices: [a]\n  systems: [s]\n  figures: [{name: f, kind: "
            "grid, experiment: nope}]\n",
       "5:47: experiment 'nope' is not under experiments:"},
      {"experiments: {k: {log: \"x.log\"}}\nplot:\n  devices: [a]\n  systems: [s]\n  "
       "figures: [{name: f, kind: grid}]\n",
       "1:24: log: the plot needs {device}"},
      {"plot:\n  devices: [a]\n  systems: [s]\n  figures: [{name: f, kind: "
       "grid}]\n",
       "1:1: expected an 'experiments:' mapping"},
      /* plot: paper: the paper's times of ours, EXPERIMENT: DEVICE: WORKLOAD: ms */
      {EXPS PAPER_PLOT "  paper: {k: {a: {w: abc}}}\n",
       "8:22: paper: expected the paper's time of w in ms, a positive decimal number"},
      {EXPS PAPER_PLOT "  paper: {k: {a: {w: 0x10}}}\n", "8:22: paper: expected the paper's time"},
      {EXPS PAPER_PLOT "  paper: {k: {a: {w: 0}}}\n", "8:22: paper: expected the paper's time"},
      {EXPS PAPER_PLOT "  paper: {k: {a: {w: 1e999}}}\n", "8:22: paper: expected the paper's time"},
      {EXPS PAPER_PLOT "  paper: {k: {b: {w: 1.3}}}\n",
       "8:15: paper: device \"b\" is not in plot: devices"},
      {EXPS PAPER_PLOT "  paper: {k: {a: {v: 1.3}}}\n",
       "8:19: paper: workload \"v\" is not in plot: workloads"},
      {EXPS PAPER_PLOT "  paper: {e: {a: {w: 1.3}}}\n",
       "8:11: paper: experiment \"e\" is drawn by no grid figure"},
      {EXPS PAPER_PLOT "  paper: {k: [1.3]}\n", "8:14: expected paper devices"},
      {EXPS "plot:\n  devices: [a]\n  workloads: [w]\n  systems: [s]\n"
            "  figures: [{name: f, kind: grid, experiment: k}]\n  paper: {k: {a: {w: 1.3}}}\n",
       "7:10: paper: the paper's times are the ours system's"},
      /* a grid figure's one workload column: a plot workload, and not with x: columns */
      {EXPS "plot:\n  devices: [a]\n  workloads: [w]\n  systems: [s]\n"
            "  figures: [{name: f, kind: grid, experiment: k, workload: v}]\n",
       "6:60: workload \"v\" is not in plot: workloads"},
      {EXPS "plot:\n  devices: [a]\n  workloads: [w]\n  systems: [s]\n"
            "  figures: [{name: f, kind: grid, experiment: k, workload: w, x: \"{seqlen}\"}]\n",
       "6:60: workload: only a grid or comparison figure of workload columns (no x:)"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char path[] = "/tmp/test_plot_yaml_XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    fputs(bad[i][0], f);
    fclose(f);
    pc_config c;
    char *msg = NULL;
    CHECK(pc_load_msg(path, &c, &msg) == -1, "bad config %zu is rejected", i);
    size_t n = strlen(path);
    int named = msg && !strncmp(msg, path, n) && msg[n] == ':' &&
                !strncmp(msg + n + 1, bad[i][1], strlen(bad[i][1]));
    CHECK(named, "bad config %zu: expected '%s', got '%s'", i, bad[i][1], msg ? msg : "(none)");
    free(msg);
    unlink(path);
  }
  /* one log template shared by two drawn experiments is fine */
  char path[] = "/tmp/test_plot_yaml_XXXXXX";
  FILE *f = fdopen(mkstemp(path), "w");
  fputs("experiments: {k: {log: \"{experiment}.{device}.log\"}, e: {log: "
        "\"{experiment}.{device}.log\"}}\n"
        "plot:\n  devices: [a]\n  systems: [s]\n"
        "  figures: [{name: f, kind: grid, experiment: k}, {name: g, kind: grid, experiment: e}]\n",
        f);
  fclose(f);
  pc_config c;
  char *msg = NULL;
  CHECK(pc_load_msg(path, &c, &msg) == 0 && !strcmp(c.log_name, "{experiment}.{device}.log"),
        "shared log template: %s", msg ? msg : c.log_name);
  free(msg);
  unlink(path);
  /* different templates that each hold {experiment}: a log is read with its experiment's */
  char path2[] = "/tmp/test_plot_yaml_XXXXXX";
  f = fdopen(mkstemp(path2), "w");
  fputs("experiments: {k: {log: \"{experiment}.{device}.{m}.log\"}, e: {log: "
        "\"{experiment}.{device}.s{seqlen}.log\"}}\n"
        "plot:\n  devices: [a]\n  systems: [s]\n"
        "  figures: [{name: f, kind: grid, experiment: k}, {name: g, kind: grid, experiment: e}]\n",
        f);
  fclose(f);
  msg = NULL;
  CHECK(pc_load_msg(path2, &c, &msg) == 0 && c.nlog_names == 2 &&
            !strcmp(pc_log_name(&c, "e"), "{experiment}.{device}.s{seqlen}.log"),
        "one template per experiment: %s", msg ? msg : "");
  free(msg);
  unlink(path2);
  /* the paper's times: a workload by its alias, digits after the point as written */
  char path3[] = "/tmp/test_plot_yaml_XXXXXX";
  f = fdopen(mkstemp(path3), "w");
  fputs(EXPS PAPER_PLOT "  paper: {k: {a: {w: 193.4, keyformer: 1.300}}}\n", f);
  fclose(f);
  msg = NULL;
  int dw = 0, dx = 0;
  CHECK(pc_load_msg(path3, &c, &msg) == 0 && c.npaper == 1, "paper: loads: %s", msg ? msg : "");
  CHECK(pc_paper_ms(&c, "k", 0, 0, &dw) == 193.4 && dw == 1 &&
            pc_paper_ms(&c, "k", 0, 1, &dx) == 1.3 && dx == 3,
        "paper: w 193.4 (1 digit), kf (as keyformer) 1.300 (3 digits): %d %d", dw, dx);
  CHECK(isnan(pc_paper_ms(&c, "e", 0, 0, NULL)) && isnan(pc_paper_ms(&c, "k", 1, 0, NULL)),
        "paper: none for another experiment or device");
  free(msg);
  unlink(path3);
}

/* The softmax scale from the config line (the seed's problem_size has it), through csv and
 * json; the seed's key names. */
static void test_scale_and_seed_keys(void) {
  pt_row r;
  rd_issues is = {0};
  int rc = parse("# repro-log 1\nconfig workload=nsa causal=1 scale=0.125\n"
                 "result status=ok avg_ms=2\n",
                 &r, &is);
  CHECK(rc == 0 && r.scale == 0.125 && is.n == 0, "rc=%d scale=%g issues=%zu", rc, r.scale, is.n);
  rc = parse("# repro-log 1\nconfig workload=nsa scale=big\nresult status=ok avg_ms=2\n", &r, &is);
  CHECK(rc == 0 && isnan(r.scale) && is.n == 1 && strstr(is.v[0].msg, "scale=\"big\" is not"),
        "a scale that is no number: a warning, no scale (%zu issues)", is.n);
  rd_issues_free(&is);
  CHECK(!strcmp(pt_seed_key("seqlen", 1), "seq_len") &&
            !strcmp(pt_seed_key("causal", 1), "is_causal") &&
            !strcmp(pt_seed_key("is_causal", 0), "causal") && !strcmp(pt_seed_key("m", 1), "m") &&
            !strcmp(pt_seed_key("seq_len", 1), "seq_len"),
        "seed key names");

  pt_table t = {0}, back = {0}, jback = {0};
  pt_row_init(&r);
  strcpy(r.experiment, "nsa");
  strcpy(r.device, "h100");
  strcpy(r.system, "fused");
  r.status = ST_OK;
  r.avg_ms = 0.5;
  pt_set_key(&r, "seqlen", "512", 1);
  pt_set_key(&r, "causal", "1", 1);
  r.scale = 0.1;
  pt_append(&t, &r);
  char path[] = "/tmp/test_plot_scale_XXXXXX", jpath[] = "/tmp/test_plot_scalej_XXXXXX";
  int fd = mkstemp(path), jfd = mkstemp(jpath);
  FILE *f = fdopen(fd, "w"), *jf = fdopen(jfd, "w");
  pt_write_csv(f, &t);
  pt_write_json(jf, &t);
  fclose(f);
  fclose(jf);
  CHECK(pt_read_table(path, &back, NULL, NULL) == 0 && back.n == 1 && back.rows[0].scale == 0.1 &&
            back.rows[0].nkeys == 2 && pt_same_cell(&back.rows[0], &r),
        "csv: scale read back, not a case key");
  CHECK(pt_read_table(jpath, &jback, NULL, NULL) == 0 && jback.n == 1 &&
            jback.rows[0].scale == 0.1 && jback.rows[0].nkeys == 2 &&
            !strcmp(jback.rows[0].keys[1].val, "1") && pt_same_cell(&jback.rows[0], &r) &&
            !strcmp(jback.rows[0].figure, ""),
        "json: scale, causal true -> 1, our (empty) figure kept");
  unlink(path);
  unlink(jpath);
  pt_free(&t);
  pt_free(&back);
  pt_free(&jback);
}

int main(void) {
  if (rd_init()) return 1;
  test_ae_time_lines();
  test_ae_status_and_memory();
  test_ae_broken();
  test_ours();
  test_names();
  test_csv_roundtrip();
  test_fixture_dirs();
  test_config_errors();
  test_ae_trt_and_mib_anchor();
  test_ae_nonfinite();
  test_torn();
  test_ours_nonpositive();
  test_utf8();
  test_csv_nasty_roundtrip();
  test_walk();
  test_default_keys();
  test_scale_and_seed_keys();
  rd_cleanup();
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
