/* gen_fixtures: writes a full set of FIXTURE logs for Figures 12, 13 and 14, in our log
 * contract or in the FlashTensor-AE artifact's format, for the plot tests and benchmarks.
 *
 * EVERY NUMBER WRITTEN HERE IS SYNTHETIC TEST DATA, NOT A MEASUREMENT. Each file says so in
 * its text ("FIXTURE"). The values follow a simple made-up model (a base time per workload
 * times a factor per system and device) so figures have bars of varied heights, cut bars,
 * NS/OOM/TLE/ERR cells and megabytes of tuner chatter with \r progress bars.
 *
 *   gen_fixtures --format ae|ours --out DIR [--noise-kb N]     writes DIR/fig12 fig13 fig14 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *workloads[] = {"h2o", "roco", "kf", "snapkv", "corm", "attn", "gemma2"};
static const double base_ms[] = {8.0, 9.0, 26.0, 8.5, 9.5, 4.0, 4.4};

static double dev_factor(const char *dev) {
  return !strcmp(dev, "a100") ? 1.0 : !strcmp(dev, "h100") ? 0.6 : 0.5;
}

static double sys_factor(const char *sys) {
  static const struct {
    const char *name;
    double f;
  } t[] = {{"torch", 1.0},      {"dynamo", 0.8},      {"inductor", 0.8},   {"tensorrt", 0.7},
           {"tvm", 1.4},        {"korch", 0.9},       {"einnet", 1.1},     {"flex", 0.6},
           {"unfused", 0.9},    {"our", 0.28},        {"fused", 0.28},     {"flashattn", 0.3},
           {"sdpa-flash", 0.3}, {"sdpa-cudnn", 0.27}, {"flashinfer", 0.31}};
  for (size_t i = 0; i < sizeof t / sizeof *t; i++)
    if (!strcmp(t[i].name, sys)) return t[i].f;
  return 1.0;
}

static double gflop(int seqlen) { return 4.0 * 32 * (double)seqlen * seqlen * 128 / 2 / 1e9; }

static FILE *open_log(const char *dir, const char *name) {
  char path[1024];
  int n = snprintf(path, sizeof path, "%s/%s", dir, name);
  if (n < 0 || (size_t)n >= sizeof path) {
    fprintf(stderr, "gen_fixtures: %s/%s: path longer than %zu bytes\n", dir, name,
            sizeof path - 1);
    exit(1);
  }
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "%s: %s\n", path, strerror(errno));
    exit(1);
  }
  return f;
}

/* Tuner chatter and \r progress bars, like TVM/TensorRT logs: about kb KiB. */
static void noise(FILE *f, int kb, unsigned seed) {
  long bytes = 0, target = (long)kb * 1024;
  unsigned x = seed * 2654435761u + 1;
  while (bytes < target) {
    x = x * 1103515245u + 12345u;
    if (x % 7 == 0) {
      for (int p = 0; p <= 100; p += 5)
        bytes += fprintf(f, "\r%3d%%|%.*s%*s| %d/%d [00:%02d<00:10, 9.5it/s]", p, p / 5,
                         "####################", 20 - p / 5, "", p, 100, p % 60);
      bytes += fprintf(f, "\n");
    } else {
      bytes += fprintf(
          f, "[Task %3u/%3u] Current/Best: %8.2f/%8.2f GFLOPS | Progress: (%u/%u) | %.2f s\n",
          x % 97, 97u, (x % 10000) / 7.0, (x % 20000) / 9.0, x % 512, 512u, (x % 3000) / 100.0);
    }
  }
}

static void ae_time(FILE *f, const char *sys, double ms, int seqlen, int with_gflops) {
  fprintf(f, "[%s] avg %.4f ms, min %.4f ms, max %.4f ms", sys, ms, ms * 0.97, ms * 1.05);
  if (with_gflops) fprintf(f, ", %.6f gflops/s", gflop(seqlen) / (ms / 1000.0));
  fprintf(f, " (10 runs, 4 warmups, profiled)\n");
}

static void ae_fig12(const char *dir, int noise_kb) {
  static const char *devs[] = {"a100", "h100"};
  static const char *syss[] = {"torch", "dynamo", "tensorrt", "tvm", "korch", "einnet", "our"};
  static const char *exps[] = {"kernel", "e2e"};
  unsigned seed = 1;
  for (int e = 0; e < 2; e++)
    for (int d = 0; d < 2; d++)
      for (int w = 0; w < 7; w++)
        for (int s = 0; s < 7; s++) {
          const char *sys = syss[s], *wl = workloads[w];
          if (!strcmp(sys, "korch") || !strcmp(sys, "einnet")) continue; /* not in the artifact */
          char name[256];
          snprintf(name, sizeof name, "%s.%s.%s.%s.log", exps[e], devs[d], wl, sys);
          FILE *f = open_log(dir, name);
          fprintf(f, "FIXTURE: synthetic test log for repro-plot, not a measurement\n");
          fprintf(f, "model_name='%s'\n", wl);
          if (!strcmp(sys, "tvm") || !strcmp(sys, "tensorrt")) noise(f, noise_kb, seed++);
          double ms = base_ms[w] * dev_factor(devs[d]) * sys_factor(sys) * (e ? 38.0 : 1.0);
          if (!strcmp(sys, "torch") && !strcmp(wl, "kf")) ms *= 1.8; /* above the 30 ms range */
          if (!strcmp(sys, "tvm") && !strcmp(wl, "corm")) {
            fprintf(f, "tvm: corm's any() reduction is not supported\n");
          } else if (!strcmp(sys, "tensorrt") && !strcmp(wl, "kf") && e == 1) {
            fprintf(
                f, "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n");
          } else if (!strcmp(sys, "tvm") && !strcmp(wl, "snapkv") && e == 1) {
            fprintf(f, "slurmstepd: error: *** STEP 123.0 ON node1 CANCELLED AT "
                       "2024-08-01T10:00:00 DUE TO TIME LIMIT ***\n");
          } else {
            ae_time(f, sys, ms, 4096, e == 0);
          }
          fclose(f);
        }
}

static void ae_fig13(const char *dir, int noise_kb) {
  static const char *devs[] = {"h100"};
  static const char *syss[] = {"torch", "dynamo", "tensorrt", "our"};
  static const int lens[] = {1024, 2048, 4096, 8192};
  for (int s = 0; s < 4; s++)
    for (int l = 0; l < 4; l++) {
      char name[256];
      snprintf(name, sizeof name, "%s.%s.%d.log", devs[0], syss[s], lens[l]);
      FILE *f = open_log(dir, name);
      fprintf(f, "FIXTURE: synthetic test log for repro-plot, not a measurement\n");
      double scale = (double)lens[l] * lens[l] / (4096.0 * 4096.0);
      double ms = base_ms[0] * 0.6 * sys_factor(syss[s]) * scale;
      double mib = !strcmp(syss[s], "our") ? 64.0 * lens[l] / 1024
                                           : 2.0 * 32 * (double)lens[l] * lens[l] * 4 / (1 << 20);
      if (!strcmp(syss[s], "torch") && lens[l] == 8192) {
        fprintf(f, "torch.cuda.OutOfMemoryError: CUDA out of memory.\n");
        fclose(f);
        continue;
      }
      if (!strcmp(syss[s], "tensorrt")) {
        noise(f, noise_kb / 4, (unsigned)l + 7);
        fprintf(f, "[08/01/2024-10:00:00] [TRT] [I] Total Activation Memory: %.0f bytes\n",
                mib * 0.8 * (1 << 20));
        fprintf(f, "[08/01/2024-10:00:00] [TRT] [I] Total Weights Memory: %.0f bytes\n",
                mib * 0.2 * (1 << 20));
      } else {
        fprintf(f, "mib=%.3f\n", mib);
      }
      ae_time(f, syss[s], ms, lens[l], 1);
      fclose(f);
    }
}

static void ae_fig14(const char *dir) {
  static const char *devs[] = {"a100", "h100"};
  static const char *syss[] = {"torch", "dynamo", "flashattn", "flashinfer", "our"};
  for (int d = 0; d < 2; d++)
    for (int w = 5; w < 7; w++)
      for (int s = 0; s < 5; s++) {
        char name[256];
        snprintf(name, sizeof name, "%s.%s.%s.log", devs[d], workloads[w], syss[s]);
        FILE *f = open_log(dir, name);
        fprintf(f, "FIXTURE: synthetic test log for repro-plot, not a measurement\n");
        if (!strcmp(syss[s], "flashattn") && w == 6)
          fprintf(f, "flash-attn has no logit soft-capping for this shape\n");
        else
          ae_time(f, syss[s], base_ms[w] * dev_factor(devs[d]) * sys_factor(syss[s]), 4096, 1);
        fclose(f);
      }
}

/* ---- our log contract ---- */

static void ours_log(const char *dir, const char *name, const char *exp, const char *dev,
                     const char *wl, const char *sys, int seqlen, const char *status, double ms,
                     double mib, const char *runner_line) {
  FILE *f = open_log(dir, name);
  fprintf(f, "# repro-log 1\n# FIXTURE: synthetic test log for repro-plot, not a measurement\n");
  fprintf(f,
          "meta gpu=\"NVIDIA %s (fixture)\" cc=9.0 driver=0 cuda=13.0 commit=fixture "
          "date=2026-01-01T00:00:00Z host=fixture\n",
          dev);
  fprintf(f,
          "config workload=%s system=%s batch=1 heads=32 dim=128 seqlen=%d dtype=fp16 device=gpu "
          "impl=fixture%s\n",
          wl, sys, seqlen, !strcmp(exp, "e2e") ? " experiment=e2e layers=32" : "");
  if (!strcmp(status, "ok")) {
    fprintf(f, "check output=out rel_l2=3.1e-04 max_abs=1.9e-03 ok=1\n");
    fprintf(
        f, "result status=ok avg_ms=%.4f median_ms=%.4f min_ms=%.4f max_ms=%.4f runs=10 warmup=100",
        ms, ms, ms * 0.98, ms * 1.04);
    if (strcmp(exp, "e2e")) fprintf(f, " gflops_s=%.1f", gflop(seqlen) / (ms / 1000.0));
    fprintf(f, " peak_mib=%.1f\n", mib);
  } else {
    fprintf(f, "result status=%s reason=\"fixture: %s\"\n", status, status);
  }
  if (runner_line) fprintf(f, "%s\n", runner_line);
  fclose(f);
}

static void ours_fig12(const char *dir) {
  static const char *devs[] = {"h100", "h200"};
  static const char *syss[] = {"torch", "inductor", "flex", "unfused", "fused"};
  static const char *exps[] = {"kernel", "e2e"};
  for (int e = 0; e < 2; e++)
    for (int d = 0; d < 2; d++)
      for (int w = 0; w < 7; w++)
        for (int s = 0; s < 5; s++) {
          const char *sys = syss[s], *wl = workloads[w];
          char name[256];
          snprintf(name, sizeof name, "%s.%s.%s.%s.log", exps[e], devs[d], wl, sys);
          double ms = base_ms[w] * dev_factor(devs[d]) * sys_factor(sys) * (e ? 38.0 : 1.0);
          const char *status = "ok", *runner = NULL;
          if (!strcmp(sys, "flex") && (!strcmp(wl, "corm") || !strcmp(wl, "kf")))
            status = "unsupported";
          if (!strcmp(sys, "torch") && !strcmp(wl, "kf") && e == 1) status = "oom";
          if (!strcmp(sys, "inductor") && !strcmp(wl, "snapkv") && e == 1)
            runner =
                "result status=timeout source=runner state=TIMEOUT exit=0:15 reason=\"time limit\"";
          ours_log(dir, name, exps[e], devs[d], wl, sys, 4096, status, ms, 420.0, runner);
        }
}

static void ours_fig13(const char *dir) {
  static const char *syss[] = {"torch", "inductor", "flex", "unfused", "fused"};
  static const int lens[] = {1024, 2048, 4096, 8192};
  for (int s = 0; s < 5; s++)
    for (int l = 0; l < 4; l++) {
      char name[256];
      snprintf(name, sizeof name, "h100.%s.%d.log", syss[s], lens[l]);
      double scale = (double)lens[l] * lens[l] / (4096.0 * 4096.0);
      double mib = !strcmp(syss[s], "fused") ? 64.0 * lens[l] / 1024
                                             : 2.0 * 32 * (double)lens[l] * lens[l] * 4 / (1 << 20);
      ours_log(dir, name, "h2o", "h100", "h2o", syss[s], lens[l], "ok",
               base_ms[0] * 0.6 * sys_factor(syss[s]) * scale, mib, NULL);
    }
}

static void ours_fig14(const char *dir) {
  static const char *syss[] = {"torch", "inductor", "sdpa-flash", "sdpa-cudnn",
                               "flex",  "unfused",  "fused"};
  for (int w = 5; w < 7; w++)
    for (int s = 0; s < 7; s++) {
      char name[256];
      snprintf(name, sizeof name, "h100.%s.%s.log", workloads[w], syss[s]);
      const char *status = (w == 6 && !strncmp(syss[s], "sdpa", 4)) ? "unsupported" : "ok";
      ours_log(dir, name, "kernel", "h100", workloads[w], syss[s], 4096, status,
               base_ms[w] * 0.6 * sys_factor(syss[s]), 300.0, NULL);
    }
}

static void make_dir(const char *path) {
  char tmp[1024];
  snprintf(tmp, sizeof tmp, "%s", path);
  for (char *p = tmp + 1; *p; p++)
    if (*p == '/') {
      *p = '\0';
      mkdir(tmp, 0777);
      *p = '/';
    }
  if (mkdir(path, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "%s: %s\n", path, strerror(errno));
    exit(1);
  }
}

int main(int argc, char **argv) {
  const char *format = NULL, *out = NULL;
  int noise_kb = 2048;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--format"))
      format = argv[i + 1];
    else if (!strcmp(argv[i], "--out"))
      out = argv[i + 1];
    else if (!strcmp(argv[i], "--noise-kb"))
      noise_kb = atoi(argv[i + 1]);
  }
  if (!format || !out || (strcmp(format, "ae") && strcmp(format, "ours"))) {
    fprintf(stderr, "usage: gen_fixtures --format ae|ours --out DIR [--noise-kb N]\n");
    return 2;
  }
  char d12[1024], d13[1024], d14[1024];
  make_dir(out);
  snprintf(d12, sizeof d12, "%s/fig12", out);
  snprintf(d13, sizeof d13, "%s/fig13", out);
  snprintf(d14, sizeof d14, "%s/fig14", out);
  make_dir(d12);
  make_dir(d13);
  make_dir(d14);
  if (!strcmp(format, "ae")) {
    ae_fig12(d12, noise_kb);
    ae_fig13(d13, noise_kb);
    ae_fig14(d14);
  } else {
    ours_fig12(d12);
    ours_fig13(d13);
    ours_fig14(d14);
  }
  return 0;
}
