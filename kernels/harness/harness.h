/* harness.h: the host half of the kernel harness that every program of kernels/ links
 * (attnvar, llama_e2e, kronlayer, gemmbench). Plain C, no CUDA: the log lines of the log
 * contract (README "Log contract"), the exit codes, option parsing helpers, run statistics, a
 * fatal-error path that still ends the log with a result line, and array comparison for the
 * check lines. The context and status codes of code that must not exit: hx_ctx.h; the device
 * half (allocator, timing, fills): harness_gpu.h; the CUDA checks: cuda_check.h. */
#ifndef HARNESS_H
#define HARNESS_H

#include "exitcode.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Exit codes: common/exitcode.h (REPRO_EXIT_*), shared with the runner, plot and peers. */

/* ---- the log ----------------------------------------------------------------------- */

/* Where the log goes (stdout unless changed) and whether its header is out yet: a fatal
 * error after the header ends the log with a `result status=...` line. */
void hx_log_open(FILE *out);
FILE *hx_log(void);
/* Makes the log's writes checked, as gnulib's close_stdout does for stdout: every record's
 * flush (hx_log_flush) and, at exit, the last flush and the fclose of the log's stream. A
 * failed write, flush or close ends the program with REPRO_EXIT_ERROR and
 * "PROG: writing the log to WHERE failed: REASON" on stderr, whatever it was going to exit
 * with: a cell whose log is cut has no answer. WHERE names the stream ("stdout"). */
void hx_log_exit_check(const char *prog, const char *where);
/* Flushes the log after a record: 0, or -1 on a write error (after hx_log_exit_check the
 * program ends there instead, as above). */
int hx_log_flush(void);

typedef struct {
  char gpu[256];   /* "NVIDIA H100 80GB HBM3", or "none" on the CPU path (cudaDeviceProp.name) */
  char cc[16];     /* "9.0" */
  char driver[48]; /* kernel driver version, "580.159.04" */
  char cuda[16];   /* CUDA runtime version, "13.0" */
  char cpu[128];   /* host CPU model, informative */
  int sms;         /* streaming multiprocessors (132 on an H100 SXM, 114 on a PCIe one); 0: CPU */
  int clock_mhz;   /* peak SM clock (cudaDevAttrClockRate); 0: CPU */
  char uuid[48];   /* "GPU-8f...": the device's own UUID (cudaDeviceProp.uuid); "" on the CPU */
  char index[16];  /* nvidia-smi's index of the GPU the runner pinned ($REPRO_GPU_INDEX), or "" */
} hx_device_info;

/* Host-only fields (cpu model, gpu=none ...); harness_gpu fills the GPU ones. */
void hx_device_info_cpu(hx_device_info *info);

/* "# repro-log 1" then "meta gpu=... cc=... driver=... cuda=... commit=... date=... host=...
 * cpu=..." and, on a GPU, "sms=... clock_mhz=..." (the GPU model in numbers). */
void hx_print_header(const hx_device_info *info);
/* The git commit the binary was built from ("unknown" outside a git checkout). */
const char *hx_commit(void);

/* "check output=NAME rel_l2=.. max_abs=.. ok=0|1" (+ extra pairs set in the struct:
 * nonfinite, mismatches/ambiguous for booleans, sampled). */
typedef struct {
  double rel_l2;     /* ||got - want||_2 / ||want||_2 (or the absolute norm when want is 0) */
  double max_abs;    /* max |got - want| */
  double tol_rel_l2; /* limits the check was held to */
  double tol_max_abs;
  size_t n;           /* elements compared */
  size_t n_nonfinite; /* got NaN/inf where want is finite (poison left unwritten) */
  size_t mismatches;  /* boolean outputs: decided elements that differ */
  size_t ambiguous;   /* boolean outputs: elements too close to call (not compared) */
  size_t sampled;     /* > 0: the n elements compared are a sample of a larger output (gemm) */
  int is_bool;
  int ok;
} hx_check;
void hx_print_check(const char *output, const hx_check *c);

/* How a cell's runs were timed, for the result line's `timing=` (and `calls_per_run=` when a
 * run is more than one call): the method names are peer.py's, so the C and Python peers'
 * logs say the same thing the same way. */
typedef enum {
  HX_TIMING_UNSAID = 0, /* the result line carries no timing= */
  HX_TIMING_WALL,       /* the host's clock around one call (the CPU paths) */
  HX_TIMING_EVENTS,     /* a pair of CUDA events around one call */
  HX_TIMING_GRAPH,      /* a CUDA graph of calls_per_run calls replayed between two events */
  HX_TIMING_LOOP        /* calls_per_run back-to-back calls between two events (no graph) */
} hx_timing_method;
typedef struct {
  hx_timing_method method;
  int calls_per_run; /* calls per timed run: ms per run is the sample divided by this */
} hx_timing;
const char *hx_timing_name(hx_timing_method m);
/* A timed run lasts at least HX_SAMPLE_MS (peer.py's SAMPLE_MS): the calls per run for a call
 * of one_call_ms, from 1 (a call that long or longer) to HX_MAX_CALLS_PER_SAMPLE. */
#define HX_SAMPLE_MS            2.0
#define HX_MAX_CALLS_PER_SAMPLE 256
int hx_calls_per_sample(double one_call_ms);

typedef struct {
  double avg_ms, median_ms, min_ms, max_ms;
  hx_timing timing;
} hx_stats;
/* Statistics of n per-call times; timing says how they were taken. */
hx_stats hx_stats_of(const float *ms, int n, hx_timing timing);

/* The most per-run times a result line lists (samples_ms=); a run of more lists none. */
#define HX_MAX_LISTED_SAMPLES 1000
/* How a result line writes its times (avg_ms .. max_ms, samples_ms): 6 significant digits, so a
 * microsecond cell keeps its digits (3.2e-05, never 0.0000); peer.py's fmt writes the same. */
#define HX_MS_FMT "%.6g"
/* "result status=ok avg_ms=.. median_ms=.. min_ms=.. max_ms=.. runs=.. warmup=..
 *  [gflops_s=..] peak_mib=.. [timing=.. [calls_per_run=..]] [samples_ms=t1,t2,..]" ; gflop < 0
 *  leaves gflops_s out (e2e); samples: the runs' per-call times in the order they ran (NULL, or
 *  more than HX_MAX_LISTED_SAMPLES: not listed), so a slow run shows where it fell. */
void hx_print_result_ok(const hx_stats *s, const float *samples, int runs, int warmup, double gflop,
                        double peak_bytes);
/* "result status=STATUS reason=\"...\"" */
void hx_print_result_status(const char *status, const char *reason);

/* Fatal error: message to stderr; when the log header is out, also the result line with
 * status (error|oom|unsupported) and the message as reason. Exits with exit_code. */
void hx_die(int exit_code, const char *status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));

/* ---- options ------------------------------------------------------------------------ */

/* Parse a whole decimal integer in [lo, hi] for option `opt`. On error prints
 * "PROG: --opt: expected an integer in [lo, hi], got 'x'" to stderr and returns -1. */
int hx_parse_int(const char *prog, const char *opt, const char *text, long lo, long hi, long *out);
/* Parse a whole finite decimal number in (lo, hi] for option `opt`. On error prints
 * "PROG: --opt: expected a number in (lo, hi], got 'x'" to stderr and returns -1. */
int hx_parse_double(const char *prog, const char *opt, const char *text, double lo, double hi,
                    double *out);
/* An option taking an integer in [lo, hi]. */
typedef struct {
  const char *opt;
  long lo, hi;
} hx_int_opt;
/* Look opt up in opts[0..n) and parse its value text: the option's index with the value in
 * *out; -1 when opt is not in the table (nothing printed); -2 after printing the parse error
 * (hx_parse_int's message). */
int hx_parse_int_opt(const char *prog, const char *opt, const char *text, const hx_int_opt *opts,
                     int n, long *out);
/* Index of text in names[0..n), or -1 after printing "PROG: --opt: unknown 'x' (expected
 * a|b|c)" to stderr. */
int hx_parse_choice(const char *prog, const char *opt, const char *text, const char *const *names,
                    int n);
/* Where the options every benchmark binary takes (attnvar, kronlayer, gemmbench) go:
 * --check / --no-check, --device gpu|cpu, --warmup N, --runs N, --seed N. */
typedef struct {
  int *check, *device_cpu, *warmup, *runs;
  uint64_t *seed;
} hx_run_opts;
/* If opt is one of them: store it through r and return the arguments it took (1 or 2, the
 * value being val); 0 when it is none of them; -1 after printing the error. */
int hx_parse_run_opt(const char *prog, const char *opt, const char *val, const hx_run_opts *r);

/* ---- comparison --------------------------------------------------------------------- */

/* Compare n values against a double reference; tolerances set by the caller.
 * got_f16 holds IEEE fp16 bits. */
hx_check hx_compare_f16(const uint16_t *got_f16, const double *want, size_t n, double tol_rel_l2,
                        double tol_max_abs);
/* got_bf16 holds bfloat16 bits. */
hx_check hx_compare_bf16(const uint16_t *got_bf16, const double *want, size_t n, double tol_rel_l2,
                         double tol_max_abs);
hx_check hx_compare_f32(const float *got, const double *want, size_t n, double tol_rel_l2,
                        double tol_max_abs);
hx_check hx_compare_f64(const double *got, const double *want, size_t n, double tol_rel_l2,
                        double tol_max_abs);
/* max |x| over n values (for tolerances scaled to an output's magnitude) */
double hx_max_abs_f64(const double *x, size_t n);
/* Boolean output: want_margin[i] > +margin means want 1, < -margin want 0, otherwise the
 * element is ambiguous (too close to the threshold to call) and skipped. Any got value
 * other than 0 or 1 (poison) is a mismatch. */
hx_check hx_compare_bool(const uint8_t *got, const double *want_margin, size_t n, double margin);

/* ---- small host things --------------------------------------------------------------- */

/* Host allocation that dies (status=oom, exit 3) on failure and counts the bytes, so the
 * CPU path can report peak_mib of its buffers. The block remembers its size: free with
 * hx_host_free(p) (NULL is fine), never free(). */
void *hx_host_alloc(size_t bytes, const char *what);
void hx_host_free(void *p);
size_t hx_host_peak_bytes(void);

/* Wall clock in milliseconds (CLOCK_MONOTONIC), for the CPU path's timing. Inline: kron's
 * embedded library (kernels/kron/kron_api_harness.c) reads the same clock. */
static inline double hx_wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

#ifdef __cplusplus
}
#endif
#endif
