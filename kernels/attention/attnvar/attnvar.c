/* attnvar: one attention-variant cell -> one log (README "Log contract").
 *
 *   parse -> header (meta) -> config -> [check: poison, run once, compare] -> time -> result
 *
 * The CPU path (--device cpu, or --system ref) runs the double reference and checks it
 * against the independent online formulation; it makes no CUDA call at all, so it runs on
 * machines without a GPU and is the only path when CUDA is absent at build time. The GPU
 * path is attnvar_gpu.c. */
#include "attnvar_cli.h"
#include "attnvar_gpu.h"
#include "check/attn_check.h"
#include "cost.h"
#include "harness.h"
#include "kvline.h"
#include "ref/ref.h"

#include <math.h>
#include <stdio.h>

static void poison_ref_outputs(workload_id wl, const attn_shape *s, const ref_outputs *o) {
  size_t nq = shape_q_elems(s), ns = shape_score_elems(s);
  for (size_t e = 0; e < nq; e++) o->out[e] = NAN;
  for (size_t e = 0; o->score && e < ns; e++) o->score[e] = NAN;
  for (size_t e = 0; o->score2 && e < ns; e++) o->score2[e] = NAN;
  for (size_t e = 0; o->flags && e < ns; e++) o->flags[e] = 0xff;
  (void)wl;
}

static int run_cpu(const attnvar_args *a) {
  hx_device_info info;
  hx_device_info_cpu(&info);
  hx_print_header(&info);
  attnvar_print_config(a, "cpu", "ref", NULL);
  const attn_shape *s = &a->shape;
  double macs = workload_macs(a->workload, s);
  if (macs > (double)ATTNVAR_CPU_MAX_MACS)
    hx_die(REPRO_EXIT_UNSUPPORTED, "unsupported",
           "--device cpu runs the double reference only up to 2^32 multiply-adds of q.k "
           "(B*H*S*S*D, or the attended keys' for selected blocks; %.3g asked); "
           "use a smaller --seqlen/--heads or the GPU",
           macs);

  ref_host_inputs hin;
  ref_inputs_generate(a->workload, s, a->seed, &hin);
  ref_inputs in = ref_inputs_of(&hin);
  ref_outputs got;
  ref_outputs_alloc(a->workload, s, &got);

  int ok = 1;
  if (a->check) {
    ref_outputs want;
    ref_outputs_alloc(a->workload, s, &want);
    poison_ref_outputs(a->workload, s, &got);
    ref_run(a->workload, s, &in, &got);
    ref_online_run(a->workload, s, &in, &want);
    ok = attn_check_ref_outputs(a->workload, s, &want, &got, &ATTN_TOL_CPU);
    ref_outputs_free(&want);
  }
  if (!ok) {
    hx_print_result_status("error", "check failed: ref and the online formulation disagree");
    return REPRO_EXIT_CHECK_FAILED;
  }

  float *ms = hx_host_alloc((size_t)a->runs * sizeof *ms, "timings");
  for (int i = 0; i < a->warmup + a->runs; i++) {
    double t0 = hx_wall_ms();
    ref_run(a->workload, s, &in, &got);
    if (i >= a->warmup) ms[i - a->warmup] = (float)(hx_wall_ms() - t0);
  }
  hx_stats st = hx_stats_of(ms, a->runs, (hx_timing){HX_TIMING_WALL, 1});
  /* host bytes of inputs, outputs, scratch (and the checker's second copy when checked) */
  hx_print_result_ok(&st, ms, a->runs, a->warmup, workload_gflop(a->workload, s),
                     (double)hx_host_peak_bytes());
  hx_host_free(ms);
  ref_outputs_free(&got);
  ref_inputs_free(&hin);
  return REPRO_EXIT_OK;
}

int main(int argc, char **argv) {
  attnvar_args args;
  int rc = attnvar_parse(argc, argv, &args);
  if (rc != 0) return rc > 0 ? REPRO_EXIT_OK : REPRO_EXIT_USAGE;
  hx_log_open(stdout);
  hx_log_exit_check("attnvar", "stdout");
  if (args.device_cpu) return run_cpu(&args);
#ifdef REPRO_HAVE_CUDA
  return attnvar_run_gpu(&args);
#else
  hx_device_info info;
  hx_device_info_cpu(&info);
  hx_print_header(&info);
  attnvar_print_config(&args, "gpu", system_table[args.system].name, NULL);
  hx_die(REPRO_EXIT_UNSUPPORTED, "unsupported",
         "this attnvar was built without CUDA; only --device cpu runs");
#endif
}
