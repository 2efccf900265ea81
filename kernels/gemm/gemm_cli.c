/* gemm_cli.c: gemmbench's options, its system table and the config line. Every value is
 * validated and a bad one names its option (exit 2). */
#include "gemm.h"

#include "kvline.h"

#include <stdio.h>
#include <string.h>

const gemm_system_row gemm_systems[GEMM_NSYS] = {
    {"ref", 1, "CPU double reference (i-k-j loops), up to M*N*K = 2^30"},
    {"cublas", 0, "cublasGemmEx, fp32 compute, default algorithm (tensor ops for fp16/bf16)"},
    {"wgmma", 0, "ours, sm_90a: TMA ring + mbarriers, producer + 2 wgmma consumer warpgroups"},
    {"mma", 0, "ours, sm_80: cp.async ring, ldmatrix, mma.sync (runs on Hopper too)"},
};

static void usage(FILE *f, const char *prog) {
  fprintf(f,
          "usage: %s --system ref|cublas|wgmma|mma --m M --n N --k K [--dtype fp16|bf16|fp32]\n"
          "          [--warmup N] [--runs N] [--seed N] [--device gpu|cpu] [--check|--no-check]\n"
          "          [--tile-n 128|256] [--cluster 1|2]   (wgmma only: the tile width,\n"
          "          default automatic; CTAs per cluster sharing B by TMA multicast, default 1)\n"
          "       %s --list-systems\n"
          "Runs C = A.B once per run (A [M,K], B [K,N], C [M,N], row-major; fp32 accumulate;\n"
          "C in the input dtype) and prints one log (kvline records) on stdout. M, N, K in\n"
          "[1, %ld]. Defaults: --dtype fp16 --seed 1 --check; --warmup/--runs 10/20 on the GPU,\n"
          "0/1 for ref (which runs on the CPU: --device cpu is implied). The check compares C\n"
          "with a double reference from inputs drawn on the host: all of C up to M*N*K = 2^27,\n"
          "else a 64x64 grid of sampled entries.\n"
          "Exit: 0 ok, 1 error, 2 usage, 3 oom, 4 unsupported, 5 check failed.\n",
          prog, prog, GEMM_MAX_DIM);
}

static void list_systems(void) {
  for (int s = 0; s < GEMM_NSYS; s++)
    printf("%s\t%s\t%s\n", gemm_systems[s].name, gemm_systems[s].on_cpu ? "cpu" : "gpu",
           gemm_systems[s].about);
}

int gemm_parse(int argc, char **argv, gemm_args *a) {
  const char *prog = argc > 0 ? argv[0] : "gemmbench";
  const char *sys_names[GEMM_NSYS];
  for (int s = 0; s < GEMM_NSYS; s++) sys_names[s] = gemm_systems[s].name;
  memset(a, 0, sizeof *a);
  a->system = -1;
  a->p.m = a->p.n = a->p.k = -1;
  a->p.dtype = GEMM_FP16;
  a->warmup = a->runs = -1;
  a->seed = 1;
  a->check = 1;
  const hx_run_opts run = {&a->check, &a->device_cpu, &a->warmup, &a->runs, &a->seed};
  for (int i = 1; i < argc; i++) {
    const char *opt = argv[i];
    const char *val = i + 1 < argc ? argv[i + 1] : NULL;
    long n = 0;
    int idx, used;
    if (!strcmp(opt, "--help") || !strcmp(opt, "-h")) {
      usage(stdout, prog);
      return 1;
    } else if (!strcmp(opt, "--list-systems")) {
      list_systems();
      return 1;
    } else if ((used = hx_parse_run_opt(prog, opt, val, &run)) != 0) {
      if (used < 0) goto bad;
      i += used - 1;
    } else if (!strcmp(opt, "--system")) {
      if ((idx = hx_parse_choice(prog, opt, val, sys_names, GEMM_NSYS)) < 0) goto bad;
      a->system = idx, i++;
    } else if (!strcmp(opt, "--dtype")) {
      if ((idx = hx_parse_choice(prog, opt, val, gemm_dtype_names, GEMM_NDTYPES)) < 0) goto bad;
      a->p.dtype = (gemm_dtype)idx, i++;
    } else {
      static const hx_int_opt ints[] = {{"--m", 1, GEMM_MAX_DIM},
                                        {"--n", 1, GEMM_MAX_DIM},
                                        {"--k", 1, GEMM_MAX_DIM},
                                        {"--tile-n", 128, 256},
                                        {"--cluster", 1, 2}};
      int k = hx_parse_int_opt(prog, opt, val, ints, (int)(sizeof ints / sizeof *ints), &n);
      if (k == -1) fprintf(stderr, "%s: unknown option '%s'\n", prog, opt);
      if (k < 0) goto bad;
      i++;
      switch (k) {
      case 0: a->p.m = n; break;
      case 1: a->p.n = n; break;
      case 2: a->p.k = n; break;
      case 4: a->cluster = (int)n; break;
      default:
        if (n != 128 && n != 256) {
          fprintf(stderr, "%s: --tile-n: expected 128 or 256, got '%s'\n", prog, val);
          goto bad;
        }
        a->tile_n = (int)n;
        break;
      }
    }
  }
  if (a->system < 0) {
    fprintf(stderr, "%s: --system is required (ref|cublas|wgmma|mma)\n", prog);
    goto bad;
  }
  const char *need[3] = {"--m", "--n", "--k"};
  long *dims[3] = {&a->p.m, &a->p.n, &a->p.k};
  for (int d = 0; d < 3; d++)
    if (*dims[d] < 0) {
      fprintf(stderr, "%s: %s is required (the problem is --m M --n N --k K)\n", prog, need[d]);
      goto bad;
    }
  if ((a->tile_n || a->cluster) && a->system != GEMM_SYS_WGMMA) {
    fprintf(stderr, "%s: %s: only --system wgmma takes it\n", prog,
            a->tile_n ? "--tile-n" : "--cluster");
    goto bad;
  }
  if (gemm_systems[a->system].on_cpu) a->device_cpu = 1; /* as attnvar: ref is the CPU path */
  if (a->warmup < 0) a->warmup = a->device_cpu ? 0 : 10;
  if (a->runs < 0) a->runs = a->device_cpu ? 1 : 20;
  return 0;
bad:
  usage(stderr, prog);
  return -1;
}

void gemm_print_config(const gemm_args *a, const char *impl) {
  FILE *out = hx_log();
  fputs("config", out);
  kv_put(out, "workload", "gemm");
  kv_put(out, "system", gemm_systems[a->system].name);
  kv_putf(out, "m", "%ld", a->p.m);
  kv_putf(out, "n", "%ld", a->p.n);
  kv_putf(out, "k", "%ld", a->p.k);
  kv_put(out, "dtype", gemm_dtype_names[a->p.dtype]);
  kv_put(out, "device", a->device_cpu ? "cpu" : "gpu");
  kv_put(out, "impl", impl);
  kv_putf(out, "seed", "%llu", (unsigned long long)a->seed);
  fputc('\n', out);
  hx_log_flush();
}
