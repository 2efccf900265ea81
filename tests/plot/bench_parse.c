/* Parse throughput benchmark: writes multi-MB logs like the artifact's (tuner chatter, \r
 * progress bars, one time line at the end: SYNTHETIC, not measurements) and our-format logs
 * to a temporary folder, then times rd_read_path over them on one core.
 *   bench_parse [--mb 64] [--min-mbps 0]      prints MB/s per format; exit 1 below --min-mbps */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "reader.h"
#include "table.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static long write_ae(const char *path, long bytes, int i) {
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    exit(1);
  }
  long n = fprintf(f, "SYNTHETIC benchmark log, not a measurement\n");
  unsigned x = 12345u + (unsigned)i;
  while (n < bytes) {
    x = x * 1103515245u + 12345u;
    if (x % 5 == 0) {
      for (int p = 0; p <= 100; p += 10)
        n += fprintf(f, "\r%3d%%|%-10.*s| %d/100 [00:%02d<00:10]", p, p / 10, "##########", p,
                     p % 60);
      n += fprintf(f, "\n");
    } else {
      n += fprintf(
          f, "[Task %2u/64] Current/Best: %8.2f/%8.2f GFLOPS | Progress: (%u/512) | %.2f s Done.\n",
          x % 64, (x % 10000) / 7.0, (x % 20000) / 9.0, x % 512, (x % 3000) / 100.0);
    }
  }
  n += fprintf(f, "mib=512.0\n[tvm] avg 11.2000 ms, min 10.8640 ms, max 11.7600 ms, 12271.335 "
                  "gflops/s (10 runs, 4 warmups, profiled)\n");
  fclose(f);
  return n;
}

static long write_ours(const char *path, int i) {
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    exit(1);
  }
  long n = fprintf(f,
                   "# repro-log 1\n# SYNTHETIC benchmark log, not a measurement\n"
                   "meta gpu=\"NVIDIA H100 80GB HBM3\" cc=9.0 driver=580.159.04 cuda=13.0 "
                   "commit=1a2b3c4 date=2026-11-21T10:00:00Z host=node7\n"
                   "config workload=w%d system=fused batch=1 heads=32 dim=128 seqlen=4096 "
                   "dtype=fp16 device=gpu impl=fused-sm90\n",
                   i);
  for (int i = 0; i < 8; i++)
    n += fprintf(f, "check output=out%d rel_l2=3.1e-04 max_abs=1.9e-03 ok=1\n", i);
  n += fprintf(f, "result status=ok avg_ms=1.2997 median_ms=1.2950 min_ms=1.2891 max_ms=1.3592 "
                  "runs=10 warmup=100 gflops_s=105749.3 peak_mib=417.0\n");
  fclose(f);
  return n;
}

static double bench(const char *dir, long bytes, const char *tmpl, int expect) {
  static const pt_kv length = {.key = "seqlen", .val = "4096"};
  rd_opts o = {.figure = "bench",
               .log_name = tmpl,
               .default_keys = &length,
               .ndefault_keys = 1,
               .default_experiment = "kernel"};
  double best = INFINITY;
  for (int rep = 0; rep < 3; rep++) {
    pt_table t = {0};
    rd_issues is = {0};
    double t0 = now();
    int n = rd_read_path(&o, dir, &t, &is);
    double dt = now() - t0;
    if (n != expect || is.n) {
      fprintf(stderr, "bench: read %d of %d logs, %zu issues\n", n, expect, is.n);
      exit(1);
    }
    if (dt < best) best = dt;
    pt_free(&t);
    rd_issues_free(&is);
  }
  return bytes / 1e6 / best;
}

int main(int argc, char **argv) {
  long mb = 64;
  double min_mbps = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--mb"))
      mb = atol(argv[i + 1]);
    else if (!strcmp(argv[i], "--min-mbps"))
      min_mbps = atof(argv[i + 1]);
  }
  if (rd_init()) return 1;
  char dir[] = "/tmp/bench_parse_XXXXXX";
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  char ae[512], ours[512], path[1024];
  snprintf(ae, sizeof ae, "%s/ae", dir);
  snprintf(ours, sizeof ours, "%s/ours", dir);
  mkdir(ae, 0777);
  mkdir(ours, 0777);
  int nfiles = (int)(mb / 4 > 0 ? mb / 4 : 1);
  long ae_bytes = 0, ours_bytes = 0;
  for (int i = 0; i < nfiles; i++) {
    snprintf(path, sizeof path, "%s/kernel.h100.w%d.tvm.log", ae, i);
    ae_bytes += write_ae(path, 4L << 20, i);
  }
  int nours = 2000;
  for (int i = 0; i < nours; i++) {
    snprintf(path, sizeof path, "%s/kernel.h100.w%d.fused.log", ours, i);
    ours_bytes += write_ours(path, i);
  }
  const char *tmpl = "{experiment}.{device}.{workload}.{system}.log";
  double ae_mbps = bench(ae, ae_bytes, tmpl, nfiles);
  double ours_mbps = bench(ours, ours_bytes, tmpl, nours);
  printf("parse throughput, one core (files in the page cache):\n");
  printf("  AE format:   %8.1f MB/s  (%d files of 4 MiB, %.1f MB)\n", ae_mbps, nfiles,
         ae_bytes / 1e6);
  printf("  our format:  %8.1f MB/s  (%d files of %.0f bytes, %.2f MB; per-file open/read "
         "dominates)\n",
         ours_mbps, nours, (double)ours_bytes / nours, ours_bytes / 1e6);
  snprintf(path, sizeof path, "rm -rf '%s'", dir);
  if (system(path) != 0) fprintf(stderr, "bench: could not remove %s\n", dir);
  rd_cleanup();
  int ok = ae_mbps >= min_mbps;
  printf("%d passed, %d failed (AE-format throughput >= %.0f MB/s)\n", ok, !ok, min_mbps);
  return ok ? 0 : 1;
}
