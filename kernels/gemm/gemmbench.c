/* gemmbench: one GEMM C = A·B per run, one log in the kit's contract (gemm.h):
 *
 *   # repro-log 1 / meta / config workload=gemm system=.. m= n= k= dtype= device= impl= seed=
 *   plan kernel=.. tile=.. stages=.. smem_bytes=.. ..      (ours: the launch, checked on the host)
 *   check output=inputs_host_vs_device ..                  (GPU: the device's A and B, bit for bit)
 *   check output=c rel_l2=.. max_abs=.. [sampled=N] ok=..  (C against the double reference)
 *   result status=ok avg_ms=.. gflops_s=.. peak_mib=..
 *
 * The CPU path (--system ref) makes no CUDA call; the GPU path is gemm_gpu.cu. */
#include "gemm.h"
#include "gemm_gpu.h"
#include "gemm_plan.h"

#include "harness.h"
#ifdef REPRO_HAVE_CUDA
#include "harness_gpu.h"
#endif

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Test hook: GEMM_TEST_FAULT=1 spoils the last element of C (a sampled entry: the edges are
 * always in the sample) after the first run, so a failing check is seen end to end (exit 5,
 * ok=0) without a broken kernel: tests/gemm/test_cli.sh on the CPU, gpu_check.sh on a GPU. */
static int test_fault(void) {
  const char *f = getenv("GEMM_TEST_FAULT");
  return f && !strcmp(f, "1");
}

/* ---- the CPU path: ref -------------------------------------------------------------------- */
static double *host_input(const gemm_problem *p, uint64_t seed, uint32_t stream, size_t n,
                          const char *what) {
  double *x = hx_host_alloc(n * sizeof *x, what);
  for (size_t e = 0; e < n; e++) x[e] = gemm_input(seed, stream, e, p->dtype);
  return x;
}

static int run_cpu(const gemm_args *a) {
  hx_device_info info;
  hx_device_info_cpu(&info);
  hx_print_header(&info);
  const gemm_problem *p = &a->p;
  if (a->system != GEMM_SYS_REF) {
    gemm_print_config(a, gemm_systems[a->system].name);
    hx_die(REPRO_EXIT_UNSUPPORTED, "unsupported",
           "--system %s runs on the GPU; --device cpu runs --system ref only",
           gemm_systems[a->system].name);
  }
  gemm_plan pl;
  char why[512];
  gemm_plan_make(GEMM_SYS_REF, p, 0, 0, NULL, &pl, why, sizeof why);
  gemm_print_config(a, pl.impl);
  if (!gemm_ref_fits(p, why, sizeof why)) hx_die(REPRO_EXIT_UNSUPPORTED, "unsupported", "%s", why);

  size_t mk = (size_t)p->m * p->k, kn = (size_t)p->k * p->n, mn = (size_t)p->m * p->n;
  double *A = host_input(p, a->seed, GEMM_STREAM_A, mk, "A");
  double *B = host_input(p, a->seed, GEMM_STREAM_B, kn, "B");
  double *C = hx_host_alloc(mn * sizeof *C, "C");
  int code = REPRO_EXIT_OK;
  if (a->check) { /* ref (i-k-j) against the dot-product formulation, both in double */
    double *want = hx_host_alloc(mn * sizeof *want, "C (dot formulation)");
    for (size_t e = 0; e < mn; e++) C[e] = NAN;
    gemm_ref(A, B, C, p->m, p->n, p->k);
    if (test_fault()) C[mn - 1] += 1;
    gemm_ref_dot(A, B, want, p->m, p->n, p->k);
    double maxw = hx_max_abs_f64(want, mn);
    hx_check c = hx_compare_f64(C, want, mn, 1e-12, 1e-12 * sqrt((double)p->k) * (maxw + 1));
    hx_print_check("c", &c);
    hx_host_free(want);
    if (!c.ok) {
      hx_print_result_status("error", "check failed: ref and the dot formulation disagree");
      code = REPRO_EXIT_CHECK_FAILED;
    }
  }
  if (code == REPRO_EXIT_OK) {
    float *ms = hx_host_alloc((size_t)a->runs * sizeof *ms, "timings");
    for (int i = 0; i < a->warmup + a->runs; i++) {
      double t0 = hx_wall_ms();
      gemm_ref(A, B, C, p->m, p->n, p->k);
      if (i >= a->warmup) ms[i - a->warmup] = (float)(hx_wall_ms() - t0);
    }
    hx_stats st = hx_stats_of(ms, a->runs, (hx_timing){HX_TIMING_WALL, 1});
    hx_print_result_ok(&st, ms, a->runs, a->warmup, gemm_flops(p) * 1e-9,
                       (double)hx_host_peak_bytes());
    hx_host_free(ms);
  }
  hx_host_free(A);
  hx_host_free(B);
  hx_host_free(C);
  return code;
}

/* ---- the GPU path ------------------------------------------------------------------------- */
#ifdef REPRO_HAVE_CUDA
/* Rows rows[0..nr) (each len elements, of a matrix with len columns) of a device buffer. */
static void *download_rows(gemm_buf which, const long *rows, int nr, long len, size_t es,
                           const char *what) {
  unsigned char *h = hx_host_alloc((size_t)nr * len * es, what);
  for (int r = 0; r < nr; r++)
    gemm_gpu_download(which, (size_t)rows[r] * len, (size_t)len, h + (size_t)r * len * es);
  return h;
}

/* Host-drawn values of rows rows[0..nr) of an input with len columns, and the device's. */
static void compare_rows(const gemm_problem *p, uint64_t seed, uint32_t stream, gemm_buf which,
                         const long *rows, int nr, long len, double *want, double *got) {
  size_t es = gemm_elem_bytes(p->dtype);
  void *dev = download_rows(which, rows, nr, len, es, "device input rows");
  for (int r = 0; r < nr; r++)
    for (long c = 0; c < len; c++) {
      size_t i = (size_t)r * len + c;
      want[i] = gemm_input(seed, stream, (uint64_t)rows[r] * len + c, p->dtype);
      got[i] = gemm_load(dev, i, p->dtype);
    }
  hx_host_free(dev);
}

/* The inputs the device drew against the host generator, bit for bit (values compared with
 * tolerance 0): all of A and B for a full check, else 64 stratified rows of each. */
static int check_inputs(const gemm_args *a, int full) {
  const gemm_problem *p = &a->p;
  gemm_sample sa, sb;
  gemm_sample_draw(&sa, p->m, 1, a->seed);
  gemm_sample_draw(&sb, p->k, 1, a->seed);
  long *ra = sa.rows, *rb = sb.rows, *fa = NULL, *fb = NULL;
  int na = sa.nr, nb = sb.nr;
  if (full) { /* every row */
    fa = hx_host_alloc((size_t)p->m * sizeof *fa, "row list");
    fb = hx_host_alloc((size_t)p->k * sizeof *fb, "row list");
    for (long i = 0; i < p->m; i++) fa[i] = i;
    for (long i = 0; i < p->k; i++) fb[i] = i;
    ra = fa, rb = fb, na = (int)p->m, nb = (int)p->k;
  }
  size_t n = (size_t)na * p->k + (size_t)nb * p->n;
  double *want = hx_host_alloc(n * sizeof *want, "host inputs");
  double *got = hx_host_alloc(n * sizeof *got, "device inputs");
  compare_rows(p, a->seed, GEMM_STREAM_A, GEMM_BUF_A, ra, na, p->k, want, got);
  size_t off = (size_t)na * p->k;
  compare_rows(p, a->seed, GEMM_STREAM_B, GEMM_BUF_B, rb, nb, p->n, want + off, got + off);
  hx_check c = hx_compare_f64(got, want, n, 0, 0);
  hx_print_check("inputs_host_vs_device", &c);
  hx_host_free(want);
  hx_host_free(got);
  hx_host_free(fa);
  hx_host_free(fb);
  return c.ok;
}

/* Run once on a NaN-poisoned C and compare with the double reference (gemm.h: full or
 * sampled). */
static int check_gpu(const gemm_args *a, const gemm_plan *pl) {
  const gemm_problem *p = &a->p;
  size_t es = gemm_elem_bytes(p->dtype);
  int full = (double)p->m * p->n * p->k <= (double)GEMM_FULL_CHECK_MACS;
  gemm_gpu_poison_c();
  int rc = gemm_gpu_run(pl);
  if (rc) hx_die_system(gemm_gpu_ctx(), pl->impl, rc);
  int ok = check_inputs(a, full);
  int spoil = test_fault();
  hx_check c;
  if (full) {
    size_t mk = (size_t)p->m * p->k, kn = (size_t)p->k * p->n, mn = (size_t)p->m * p->n;
    double *A = host_input(p, a->seed, GEMM_STREAM_A, mk, "A (reference)");
    double *B = host_input(p, a->seed, GEMM_STREAM_B, kn, "B (reference)");
    double *want = hx_host_alloc(mn * sizeof *want, "C (reference)");
    gemm_ref(A, B, want, p->m, p->n, p->k);
    unsigned char *got = hx_host_alloc(mn * es, "C");
    gemm_gpu_download(GEMM_BUF_C, 0, mn, got);
    if (spoil) memset(got + (mn - 1) * es, 0x3c, es); /* 1.06 (fp16), 0.0115 (bf16, fp32) */
    c = gemm_compare(p->dtype, got, want, mn, p->k);
    hx_host_free(A);
    hx_host_free(B);
    hx_host_free(want);
    hx_host_free(got);
  } else {
    gemm_sample s;
    gemm_sample_draw(&s, p->m, p->n, a->seed);
    unsigned char *rows = download_rows(GEMM_BUF_C, s.rows, s.nr, p->n, es, "sampled rows of C");
    if (spoil) memset(rows + ((size_t)s.nr * p->n - 1) * es, 0x3c, es);
    c = gemm_check_sampled(p, a->seed, &s, rows);
    hx_host_free(rows);
  }
  hx_print_check("c", &c);
  return ok && c.ok;
}

static int run_gpu(const gemm_args *a) {
  char why[512] = "";
  hx_device_info info;
  gemm_device dev;
  if (!gemm_gpu_open(&info, &dev, why, sizeof why)) {
    hx_device_info_cpu(&info);
    hx_print_header(&info);
    gemm_print_config(a, gemm_systems[a->system].name);
    hx_die(REPRO_EXIT_ERROR, "error", "%s", why);
  }
  hx_print_header(&info);
  gemm_plan pl;
  int rc = gemm_plan_make(a->system, &a->p, a->tile_n, a->cluster, &dev, &pl, why, sizeof why);
  gemm_print_config(a, rc ? gemm_systems[a->system].name : pl.impl);
  if (rc) hx_die(REPRO_EXIT_UNSUPPORTED, "unsupported", "%s", why);
  gemm_gpu_setup(&a->p, a->seed);
  if ((rc = gemm_gpu_prepare(&pl))) hx_die_system(gemm_gpu_ctx(), pl.impl, rc);
  gemm_plan_print(&pl);
  if (a->check && !check_gpu(a, &pl)) {
    hx_print_result_status("error", "check failed: see the check lines with ok=0");
    gemm_gpu_close();
    return REPRO_EXIT_CHECK_FAILED;
  }
  float *ms = hx_host_alloc((size_t)a->runs * sizeof *ms, "timings");
  hx_timing how;
  if ((rc = gemm_gpu_time(&pl, a->warmup, a->runs, ms, &how)))
    hx_die_system(gemm_gpu_ctx(), pl.impl, rc);
  hx_stats st = hx_stats_of(ms, a->runs, how);
  hx_print_result_ok(&st, ms, a->runs, a->warmup, gemm_flops(&a->p) * 1e-9,
                     (double)hx_dev_peak_bytes());
  hx_host_free(ms);
  gemm_gpu_close();
  return REPRO_EXIT_OK;
}
#else
static int run_gpu(const gemm_args *a) {
  hx_device_info info;
  hx_device_info_cpu(&info);
  hx_print_header(&info);
  gemm_print_config(a, gemm_systems[a->system].name);
  hx_die(REPRO_EXIT_UNSUPPORTED, "unsupported",
         "this gemmbench was built without CUDA; only --system ref (--device cpu) runs");
}
#endif

int main(int argc, char **argv) {
  gemm_args a;
  int rc = gemm_parse(argc, argv, &a);
  if (rc != 0) return rc > 0 ? REPRO_EXIT_OK : REPRO_EXIT_USAGE;
  hx_log_open(stdout);
  hx_log_exit_check("gemmbench", "stdout");
  return a.device_cpu ? run_cpu(&a) : run_gpu(&a);
}
