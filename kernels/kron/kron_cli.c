/* kron_cli.c: kronlayer's options (every value validated, the option named, exit 2). */
#include "kron.h"

#include "harness.h"
#include "kvline.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f, const char *prog) {
  fprintf(
      f,
      "usage: %s [options] check|profile|bench\n"
      "       %s --dtype f 32 128 128 bench        (the seed's form: batch, then factors)\n"
      "Runs the Kronecker-factored layer y = x.(A1 x ... x Am)^T and its backward and prints\n"
      "one log (kvline records) on stdout.\n"
      "Modes (each also times every implementation's forward and backward):\n"
      "  check                 every output against the CPU double reference and the other\n"
      "                        implementations\n"
      "  profile               one line per kernel (one --impl; --trace FILE.json)\n"
      "  bench                 the sizes, the arithmetic intensity and the seed's table\n"
      "Options (defaults in parentheses):\n"
      "  --dtype f|d           fp32 or fp64 (f)\n"
      "  --batch B             rows of x (16)\n"
      "  --factors f1,f2,...   the factor sizes (32,32)\n"
      "  --shape BxF1xF2...    batch and factors in one\n"
      "  --impl v1|v2|v3|all   v1: per factor a GEMM and a transpose (cuBLAS), v2: per\n"
      "                        factor one strided-batched GEMM (cuBLAS), v3: our stage and\n"
      "                        gradient kernels; all: each in turn (all)\n"
      "  --pass fwd|bwd        the pass the result line times (fwd; with all: the fastest)\n"
      "  --warmup N --runs N   1/3 on the CPU and in check mode, 20/50 for GPU bench and\n"
      "                        profile\n"
      "  --seed N              the inputs' seed (1)\n"
      "  --device gpu|cpu      cpu runs every implementation's call sequence on the CPU\n"
      "                        (no CUDA; v3's kernels emulated thread by thread) (gpu)\n"
      "  --check|--no-check    also check in bench and profile mode (check mode always\n"
      "                        checks)\n"
      "  --trace FILE.json     profile: a Chrome trace of the kernels\n"
      "  --v3-smem-kib K       v3's shared memory per block (the device's opt-in maximum)\n"
      "  --v3-fuse auto|on|off auto fuses the whole row into one v3 stage for small shapes\n"
      "                        and the last two axes into one tensor-core stage where that\n"
      "                        fits, on fuses the longest trailing range of axes that fits,\n"
      "                        off runs one stage per axis (auto)\n"
      "  --v3-tc auto|off      auto runs single-axis stages, that pair stage and gradient\n"
      "                        steps whose sizes fit on the tensor cores (3xTF32 mma for f,\n"
      "                        DMMA for d), off keeps them on FMA (auto)\n"
      "  --v3-route auto|stages|gemm\n"
      "                        auto runs v2's strided-batched cuBLAS GEMMs where they are\n"
      "                        faster than v3's stages (every factor >= 128; the fp64\n"
      "                        forward from factors of 32) and the stages elsewhere or when\n"
      "                        --v3-fuse or --v3-tc forces a plan; stages, gemm: always (auto)\n"
      "Exit: 0 ok, 1 error, 2 usage, 3 oom, 4 unsupported, 5 check failed.\n",
      prog, prog);
}

/* "32,128,128" (sep ',') or "16x32x32" (sep 'x') into out[]; count, or -1. */
static int parse_list(const char *text, char sep, long *out, int cap, long lo, long hi) {
  if (!text || !*text) return -1;
  int n = 0;
  const char *p = text;
  for (;;) {
    char *end = NULL;
    errno = 0;
    if (*p < '0' || *p > '9') return -1;
    long v = strtol(p, &end, 10);
    if (errno == ERANGE || v < lo || v > hi || n == cap) return -1;
    out[n++] = v;
    if (*end == '\0') return n;
    if (*end != sep) return -1;
    p = end + 1;
  }
}

static const char *const dtype_names[] = {"f", "d"};
static const char *const impl_names[] = {"v1", "v2", "v3", "all"};

/* The shape as the command line gives it, before kron_shape_init: named (--batch, --factors,
 * --shape) or positional (the seed's form: batch, then factors). */
typedef struct {
  long batch, factors[KRON_MAX_FACTORS];
  int nf;
  int named;    /* --batch, --factors or --shape given */
  int by_shape; /* --shape given */
  long pos[KRON_MAX_FACTORS + 1];
  int npos;
} shape_words;

/* The parsers of one word of the command line below return the words they took (1 or 2), 0
 * when the word is none of theirs, -1 after printing the error. */

/* --dtype, --impl, --v3-fuse, --v3-tc, --v3-route, --pass: one of a list of names; --trace: a
 * file name. */
static int parse_choice_opt(const char *prog, const char *opt, const char *val, kron_args *a) {
  int idx;
  if (!strcmp(opt, "--dtype")) {
    if ((idx = hx_parse_choice(prog, opt, val, dtype_names, 2)) < 0) return -1;
    a->dtype_size = idx ? 8 : 4;
  } else if (!strcmp(opt, "--impl") || !strcmp(opt, "--implementation")) {
    if ((idx = hx_parse_choice(prog, "--impl", val, impl_names, 4)) < 0) return -1;
    a->impl = idx == 3 ? -1 : idx;
  } else if (!strcmp(opt, "--v3-fuse")) {
    if ((idx = hx_parse_choice(prog, opt, val, kron_fuse_names, 3)) < 0) return -1;
    a->v3_fuse = idx;
  } else if (!strcmp(opt, "--v3-tc")) {
    if ((idx = hx_parse_choice(prog, opt, val, kron_tc_names, 2)) < 0) return -1;
    a->v3_tc = idx;
  } else if (!strcmp(opt, "--v3-route")) {
    if ((idx = hx_parse_choice(prog, opt, val, kron_route_names, 3)) < 0) return -1;
    a->v3_route = idx;
  } else if (!strcmp(opt, "--pass")) {
    if ((idx = hx_parse_choice(prog, opt, val, kron_pass_names, 2)) < 0) return -1;
    a->pass = idx;
  } else if (!strcmp(opt, "--trace")) {
    if (!val || !*val) {
      fprintf(stderr, "%s: --trace: expected a file name\n", prog);
      return -1;
    }
    a->trace = val;
  } else {
    return 0;
  }
  return 2;
}

/* --factors f1,f2,... and --shape BxF1xF2... */
static int parse_shape_opt(const char *prog, const char *opt, const char *val, shape_words *s) {
  if (!strcmp(opt, "--factors")) {
    s->nf = parse_list(val, ',', s->factors, KRON_MAX_FACTORS, 0, KRON_MAX_FACTOR);
    if (s->nf < 0) {
      fprintf(stderr,
              "%s: --factors: expected 1 to %d integers in [1, %d] separated by ',', got '%s'\n",
              prog, KRON_MAX_FACTORS, KRON_MAX_FACTOR, val ? val : "(missing)");
      return -1;
    }
    s->named = 1;
    return 2;
  }
  if (!strcmp(opt, "--shape")) {
    long l[KRON_MAX_FACTORS + 1];
    int c = parse_list(val, 'x', l, KRON_MAX_FACTORS + 1, 0, KRON_MAX_BATCH);
    if (c < 2) {
      fprintf(stderr, "%s: --shape: expected BATCHxF1[xF2...] (e.g. 16x32x32), got '%s'\n", prog,
              val ? val : "(missing)");
      return -1;
    }
    s->batch = l[0];
    s->nf = c - 1;
    for (int k = 0; k < s->nf; k++) s->factors[k] = l[k + 1];
    s->named = s->by_shape = 1;
    return 2;
  }
  return 0;
}

/* check|profile|bench: one of them, once. */
static int parse_mode_word(const char *prog, const char *opt, kron_args *a) {
  if (strcmp(opt, "check") && strcmp(opt, "profile") && strcmp(opt, "bench")) return 0;
  if ((int)a->mode >= 0) {
    fprintf(stderr, "%s: one mode only (got '%s' after '%s')\n", prog, opt,
            kron_mode_names[a->mode]);
    return -1;
  }
  a->mode = !strcmp(opt, "check")     ? KRON_CHECK
            : !strcmp(opt, "profile") ? KRON_PROFILE
                                      : KRON_BENCH;
  return 1;
}

/* A word that starts with a digit: the next number of the positional shape. */
static int parse_positional(const char *prog, const char *opt, shape_words *s) {
  long n = 0;
  if (opt[0] < '0' || opt[0] > '9') return 0;
  if (s->npos == KRON_MAX_FACTORS + 1) {
    fprintf(stderr, "%s: positional shape: at most a batch and %d factors\n", prog,
            KRON_MAX_FACTORS);
    return -1;
  }
  if (hx_parse_int(prog, "positional shape", opt, 0, KRON_MAX_BATCH, &n) < 0) return -1;
  s->pos[s->npos++] = n;
  return 1;
}

/* --batch B and --v3-smem-kib K; any other word is an unknown option (never 0). */
static int parse_int_opt(const char *prog, const char *opt, const char *val, kron_args *a,
                         shape_words *s) {
  static const hx_int_opt ints[] = {{"--batch", 0, KRON_MAX_BATCH}, {"--v3-smem-kib", 1, 1 << 20}};
  long n = 0;
  int k = hx_parse_int_opt(prog, opt, val, ints, (int)(sizeof ints / sizeof *ints), &n);
  if (k == -1) fprintf(stderr, "%s: unknown option '%s'\n", prog, opt);
  if (k < 0) return -1;
  if (k == 0) {
    s->batch = n;
    s->named = 1;
  } else {
    a->v3_smem_kib = n;
  }
  return 2;
}

/* One word of the command line (and its value val, or NULL), as the parsers above take it. */
static int parse_word(const char *prog, const char *opt, const char *val, const hx_run_opts *run,
                      kron_args *a, shape_words *s) {
  int used = hx_parse_run_opt(prog, opt, val, run);
  if (used == 0) used = parse_choice_opt(prog, opt, val, a);
  if (used == 0) used = parse_shape_opt(prog, opt, val, s);
  if (used == 0) used = parse_mode_word(prog, opt, a);
  if (used == 0) used = parse_positional(prog, opt, s);
  if (used == 0) used = parse_int_opt(prog, opt, val, a, s);
  return used;
}

/* a->shape from the words given: the positional shape, else the named one (defaults 16 and
 * 32,32); 0, or -1 after printing the error. */
static int make_shape(const char *prog, kron_args *a, shape_words *s) {
  if (s->npos) {
    if (s->named) {
      fprintf(stderr, "%s: the shape is given twice (positional and --batch/--factors/--shape)\n",
              prog);
      return -1;
    }
    if (s->npos < 2) {
      fprintf(stderr, "%s: positional shape: expected a batch and at least one factor\n", prog);
      return -1;
    }
    s->batch = s->pos[0];
    s->nf = s->npos - 1;
    for (int k = 0; k < s->nf; k++) s->factors[k] = s->pos[k + 1];
  }
  int fi[KRON_MAX_FACTORS];
  for (int k = 0; k < s->nf; k++) fi[k] = (int)s->factors[k];
  char why[256];
  if (kron_shape_init(&a->shape, s->batch, s->nf, fi, why, sizeof why) != 0) {
    const char *opt = s->npos                     ? "positional shape"
                      : s->by_shape               ? "--shape"
                      : !strncmp(why, "batch", 5) ? "--batch"
                                                  : "--factors";
    fprintf(stderr, "%s: %s: %s\n", prog, opt, why);
    return -1;
  }
  return 0;
}

/* What the mode requires and allows, then the defaults that depend on it. */
static int finish_mode(const char *prog, kron_args *a) {
  if (a->mode == KRON_PROFILE && a->impl < 0) {
    fprintf(stderr, "%s: profile: --impl v1|v2|v3 is required (one version per trace)\n", prog);
    return -1;
  }
  if (a->trace && a->mode != KRON_PROFILE) {
    fprintf(stderr, "%s: --trace: only in profile mode\n", prog);
    return -1;
  }
  int light = a->device_cpu || a->mode == KRON_CHECK;
  if (a->warmup < 0) a->warmup = light ? 1 : 20;
  if (a->runs < 0) a->runs = light ? 3 : 50;
  if (a->mode == KRON_CHECK) a->check = 1;
  return 0;
}

int kron_parse(int argc, char **argv, kron_args *a) {
  const char *prog = argc > 0 ? argv[0] : "kronlayer";
  memset(a, 0, sizeof *a);
  a->dtype_size = 4;
  a->impl = -1;
  a->pass = KRON_FWD;
  a->mode = (kron_mode)-1;
  a->warmup = a->runs = -1;
  a->seed = 1;
  shape_words s = {.batch = 16, .factors = {32, 32}, .nf = 2};
  const hx_run_opts run = {&a->check, &a->device_cpu, &a->warmup, &a->runs, &a->seed};
  for (int i = 1; i < argc; i++) {
    const char *opt = argv[i];
    if (!strcmp(opt, "--help") || !strcmp(opt, "-h")) {
      usage(stdout, prog);
      return 1;
    }
    int used = parse_word(prog, opt, i + 1 < argc ? argv[i + 1] : NULL, &run, a, &s);
    if (used < 0) goto bad;
    i += used - 1;
  }
  if ((int)a->mode < 0) {
    fprintf(stderr, "%s: a mode is required: check|profile|bench\n", prog);
    goto bad;
  }
  if (make_shape(prog, a, &s) < 0 || finish_mode(prog, a) < 0) goto bad;
  return 0;
bad:
  usage(stderr, prog);
  return -1;
}

void kron_print_config(const kron_args *a, const char *device) {
  FILE *out = hx_log();
  char shape[128], factors[128];
  kron_shape_name(&a->shape, shape, sizeof shape);
  size_t len = 0;
  factors[0] = '\0';
  for (int k = 0; k < a->shape.m; k++)
    len +=
        (size_t)snprintf(factors + len, sizeof factors - len, "%s%d", k ? "," : "", a->shape.f[k]);
  fputs("config", out);
  /* workload/system as the plot reads them: the shape and the version */
  kv_put(out, "workload", shape);
  kv_put(out, "system", a->impl < 0 ? "all" : kron_version_names[a->impl]);
  kv_put(out, "mode", kron_mode_names[a->mode]);
  kv_put(out, "pass", kron_pass_names[a->pass]);
  kv_putf(out, "batch", "%lld", a->shape.batch);
  kv_put(out, "factors", factors);
  kv_putf(out, "n", "%lld", a->shape.n);
  kv_put(out, "dtype", a->dtype_size == 8 ? "fp64" : "fp32");
  kv_put(out, "device", device);
  kv_putf(out, "seed", "%llu", (unsigned long long)a->seed);
  fputc('\n', out);
  hx_log_flush();
}
