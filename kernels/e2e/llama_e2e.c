/* llama_e2e: the prefill of a Llama-2-7B-shaped decoder with one attention variant, timed,
 * printed as one log (README "Log contract").
 *
 *   llama_e2e --workload W --system unfused|fused|ref [--seqlen 4096] [--layers 32]
 *             [--hidden 4096] [--heads 32] [--mlp 11008] [--vocab 32000] [--warmup 2]
 *             [--runs 5] [--seed 1] [--check|--no-check] [--device gpu|cpu]
 *             [--keep 512] [--keep-std 256] [--corm-cap 512] [--weights a.safetensors[,b...]]
 *             [--breakdown] [--gemm-bench] [--force-sm80] [--dump hidden.f32]
 *
 * --device cpu (or --system ref) runs the CPU double reference at small sizes. */
#include "e2e.h"
#include "e2e_run.h"
#include "fileio.h"
#include "harness.h"
#include "kvline.h"
#include "ref_model.h"
#include "safetensors.h"
#include "workload.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const device_names[] = {"gpu", "cpu"};

static void usage(FILE *out) {
  fprintf(out, "usage: llama_e2e --workload %s --system %s\n", workload_choices(),
          system_choices());
  fputs("         [--seqlen 4096] [--layers 32] [--hidden 4096] [--heads 32] [--mlp 11008]\n"
        "         [--vocab 32000] [--warmup 2] [--runs 5] [--seed 1] [--check|--no-check]\n"
        "         [--device gpu|cpu] [--keep 512] [--keep-std 256] [--corm-cap 512]\n"
        "         [--weights FILE[,FILE...]] [--breakdown] [--gemm-bench] [--force-sm80]\n"
        "         [--dump FILE]\n"
        "       llama_e2e --list-workloads | --list-systems\n",
        out);
}

static void usage_error(const char *fmt, const char *arg) {
  fprintf(stderr, "llama_e2e: ");
  fprintf(stderr, fmt, arg);
  fputc('\n', stderr);
  usage(stderr);
  exit(REPRO_EXIT_USAGE);
}

/* Integer option into *dst, within [lo, hi]. */
static void int_opt(const char *opt, const char *text, long lo, long hi, int *dst) {
  long v;
  if (hx_parse_int("llama_e2e", opt, text, lo, hi, &v) != 0) {
    usage(stderr);
    exit(REPRO_EXIT_USAGE);
  }
  *dst = (int)v;
}

static void parse_args(int argc, char **argv, e2e_options *o) {
  memset(o, 0, sizeof *o);
  e2e_config_default(&o->cfg);
  o->warmup = 2, o->runs = 5, o->check = 1;
  int have_workload = 0, have_system = 0, device = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      exit(REPRO_EXIT_OK);
    }
    if (!strcmp(a, "--list-workloads")) {
      workload_list(stdout);
      exit(REPRO_EXIT_OK);
    }
    if (!strcmp(a, "--list-systems")) {
      system_list(stdout);
      exit(REPRO_EXIT_OK);
    }
    if (!strcmp(a, "--check")) {
      o->check = 1;
      continue;
    }
    if (!strcmp(a, "--no-check")) {
      o->check = 0;
      continue;
    }
    if (!strcmp(a, "--breakdown")) {
      o->breakdown = 1;
      continue;
    }
    if (!strcmp(a, "--gemm-bench")) {
      o->gemm_bench = 1;
      continue;
    }
    if (!strcmp(a, "--force-sm80")) {
      o->force_sm80 = 1;
      continue;
    }
    if (strncmp(a, "--", 2) != 0) usage_error("unexpected argument '%s'", a);
    if (i + 1 >= argc) usage_error("%s needs a value", a);
    const char *v = argv[++i];
    int k;
    long seed;
    if (!strcmp(a, "--workload")) {
      if ((k = hx_parse_choice("llama_e2e", a, v, workload_names, WL_COUNT)) < 0)
        exit(REPRO_EXIT_USAGE);
      o->cfg.workload = (workload_id)k, have_workload = 1;
    } else if (!strcmp(a, "--system")) {
      if ((k = hx_parse_choice("llama_e2e", a, v, system_names(), system_count)) < 0)
        exit(REPRO_EXIT_USAGE);
      o->system = k, have_system = 1;
    } else if (!strcmp(a, "--device")) {
      if ((device = hx_parse_choice("llama_e2e", a, v, device_names, 2)) < 0)
        exit(REPRO_EXIT_USAGE);
    } else if (!strcmp(a, "--seqlen"))
      int_opt(a, v, 1, 1 << 17, &o->cfg.seqlen);
    else if (!strcmp(a, "--layers"))
      int_opt(a, v, 1, 1024, &o->cfg.layers);
    else if (!strcmp(a, "--hidden"))
      int_opt(a, v, 8, 1 << 16, &o->cfg.hidden);
    else if (!strcmp(a, "--heads"))
      int_opt(a, v, 1, 1024, &o->cfg.heads);
    else if (!strcmp(a, "--mlp"))
      int_opt(a, v, 8, 1 << 18, &o->cfg.mlp);
    else if (!strcmp(a, "--vocab"))
      int_opt(a, v, 1, 1 << 22, &o->cfg.vocab);
    else if (!strcmp(a, "--warmup"))
      int_opt(a, v, 0, 100000, &o->warmup);
    else if (!strcmp(a, "--runs"))
      int_opt(a, v, 1, 100000, &o->runs);
    else if (!strcmp(a, "--keep"))
      int_opt(a, v, 0, 1 << 20, &o->cfg.keep);
    else if (!strcmp(a, "--keep-std"))
      int_opt(a, v, 0, 1 << 20, &o->cfg.keep_std);
    else if (!strcmp(a, "--corm-cap"))
      int_opt(a, v, 1, 1 << 20, &o->cfg.corm_cap);
    else if (!strcmp(a, "--seed")) {
      if (hx_parse_int("llama_e2e", a, v, 0, 0x7fffffffL, &seed) != 0) exit(REPRO_EXIT_USAGE);
      o->cfg.seed = (uint64_t)seed;
    } else if (!strcmp(a, "--weights"))
      o->weights = v;
    else if (!strcmp(a, "--dump"))
      o->dump = v;
    else
      usage_error("unknown option '%s'", a);
  }
  if (!have_workload) usage_error("%s", "--workload is required");
  if (!have_system) usage_error("%s", "--system is required");
  o->device_cpu = device == 1 || system_table[o->system].on_cpu;
  o->cfg.head_dim = o->cfg.hidden / o->cfg.heads;
  const char *bad = e2e_config_invalid(&o->cfg);
  if (bad) usage_error("%s", bad);
}

void e2e_print_config(const e2e_options *o, const char *impl) {
  const e2e_config *c = &o->cfg;
  FILE *out = hx_log();
  fputs("config", out);
  kv_put(out, "experiment", "e2e");
  kv_put(out, "workload", workload_names[c->workload]);
  kv_put(out, "system", system_table[o->system].name);
  kv_put(out, "batch", "1");
  kv_putf(out, "heads", "%d", c->heads);
  kv_putf(out, "dim", "%d", c->head_dim);
  kv_putf(out, "seqlen", "%d", c->seqlen);
  kv_putf(out, "layers", "%d", c->layers);
  kv_putf(out, "hidden", "%d", c->hidden);
  kv_putf(out, "mlp", "%d", c->mlp);
  kv_putf(out, "vocab", "%d", c->vocab);
  kv_put(out, "dtype", "fp16");
  kv_put(out, "device", o->device_cpu ? "cpu" : "gpu");
  kv_put(out, "impl", impl);
  kv_putf(out, "cache_cap", "%d", e2e_cache_cap(c));
  kv_putf(out, "seed", "%llu", (unsigned long long)c->seed);
  kv_put(out, "weights", o->weights ? o->weights : "random");
  kv_putf(out, "gemm_gflop", "%.1f", e2e_gemm_flops(c) / 1e9);
  kv_putf(out, "attn_gflop", "%.1f", e2e_attn_flops(c) / 1e9);
  fputc('\n', out);
  hx_log_flush();
}

int e2e_dump_floats(const char *path, const float *v, size_t n, char *why, size_t why_cap) {
  return repro_write_file(path, v, n * sizeof *v, 0644, 0, why, why_cap);
}

/* ---- the CPU path: the double reference, timed with the wall clock ---------------------- */

static void run_cpu(const e2e_options *o) {
  const e2e_config *c = &o->cfg;
  hx_device_info info;
  hx_device_info_cpu(&info);
  hx_print_header(&info);
  e2e_print_config(o, "ref");
  if (e2e_workload_unsupported(c))
    hx_die(REPRO_EXIT_UNSUPPORTED, "unsupported", "%s", e2e_workload_unsupported(c));
  if (e2e_ref_flops(c) > E2E_REF_MAX_FLOPS)
    hx_die(REPRO_EXIT_UNSUPPORTED, "unsupported",
           "the CPU reference is for small configurations: this one needs %.1f GFLOP (limit %.0f)",
           e2e_ref_flops(c) / 1e9, E2E_REF_MAX_FLOPS / 1e9);
  e2e_ref_model m;
  e2e_ref_model_alloc(&m, c);
  if (o->weights) {
    char err[512];
    if (st_load_weights(c, o->weights, e2e_ref_model_put, &m, err, sizeof err))
      hx_die(REPRO_EXIT_ERROR, "error", "%s", err);
  } else {
    e2e_ref_model_draw(&m);
  }
  const size_t n_out = (size_t)c->seqlen * c->hidden;
  int32_t *tokens = hx_host_alloc((size_t)c->seqlen * sizeof *tokens, "tokens");
  double *out = hx_host_alloc(n_out * sizeof *out, "hidden out");
  e2e_ref_tokens(c, tokens);
  e2e_ref_trace trace;
  e2e_ref_trace_alloc(&trace, c);
  if (o->check) fputs("# check: none, the CPU path is the reference itself\n", hx_log());

  float *ms = hx_host_alloc((size_t)o->runs * sizeof *ms, "timings");
  for (int i = 0; i < o->warmup + o->runs; i++) {
    double t0 = hx_wall_ms();
    e2e_ref_forward(&m, tokens, out, &trace);
    if (i >= o->warmup) ms[i - o->warmup] = (float)(hx_wall_ms() - t0);
  }
  if (o->dump) {
    float *f = hx_host_alloc(n_out * sizeof *f, "dump");
    for (size_t i = 0; i < n_out; i++) f[i] = (float)out[i];
    char why[256];
    if (e2e_dump_floats(o->dump, f, n_out, why, sizeof why))
      hx_die(REPRO_EXIT_ERROR, "error", "--dump %s: cannot write: %s", o->dump, why);
    hx_host_free(f);
  }
  hx_stats st = hx_stats_of(ms, o->runs, (hx_timing){HX_TIMING_WALL, 1});
  hx_print_result_ok(&st, ms, o->runs, o->warmup, -1.0, (double)hx_host_peak_bytes());
  hx_host_free(ms);
  e2e_ref_trace_free(&trace);
  hx_host_free(out);
  hx_host_free(tokens);
  e2e_ref_model_free(&m);
  exit(REPRO_EXIT_OK);
}

int main(int argc, char **argv) {
  e2e_options o;
  parse_args(argc, argv, &o);
  hx_log_exit_check("llama_e2e", "stdout");
  if (o.device_cpu) run_cpu(&o);
  e2e_run_gpu(&o);
}
