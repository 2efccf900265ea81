/* harness.c: log lines, exit path, option parsing, statistics and comparison, and hx_fail
 * (host only). */
#include "harness.h"

#include "hx_ctx.h"
#include "kvline.h"
#include "rng.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "repro_commit.h" /* generated at build time: #define REPRO_COMMIT "1a2b3c4[-dirty]" */

static FILE *log_out;
static int log_header_done;

void hx_log_open(FILE *out) { log_out = out; }
FILE *hx_log(void) { return log_out ? log_out : stdout; }

/* hx_log_exit_check's state: who writes the log and where, whether the check is on and
 * whether a failed write was already reported (the program is ending with REPRO_EXIT_ERROR). */
static const char *log_prog, *log_where;
static int log_checked, log_failed;

/* The message for a failed write whose errno is err (0: the stream's error flag, no errno). */
static void log_report(int err) {
  log_failed = 1;
  fprintf(stderr, "%s: writing the log to %s failed: %s\n", log_prog, log_where,
          err ? strerror(err) : "a write error");
}

/* 0 when every write to out worked and a flush now works; else the errno (-1: unknown). */
static int log_flush_error(FILE *out) {
  errno = 0;
  if (fflush(out) != 0) return errno ? errno : -1;
  return ferror(out) ? -1 : 0;
}

static void log_check_at_exit(void) {
  if (log_failed) return; /* reported: the program is already ending with the error code */
  FILE *out = hx_log();
  int err = log_flush_error(out);
  errno = 0;
  if (fclose(out) != 0 && !err) err = errno ? errno : -1;
  if (!err) return;
  log_report(err > 0 ? err : 0);
  _exit(REPRO_EXIT_ERROR); /* from an atexit handler: exit() again is undefined */
}

void hx_log_exit_check(const char *prog, const char *where) {
  log_prog = prog;
  log_where = where;
  if (!log_checked && atexit(log_check_at_exit) != 0) {
    fprintf(stderr, "%s: cannot register the check of the log's writes at exit\n", prog);
    exit(REPRO_EXIT_ERROR);
  }
  log_checked = 1;
}

int hx_log_flush(void) {
  int err = log_flush_error(hx_log());
  if (!err) return 0;
  if (!log_checked) return -1;
  if (!log_failed) log_report(err > 0 ? err : 0);
  exit(REPRO_EXIT_ERROR);
}

const char *hx_commit(void) { return REPRO_COMMIT; }

static void read_cpu_model(char *dst, size_t cap) {
  snprintf(dst, cap, "unknown");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "model name", 10) != 0) continue;
    char *colon = strchr(line, ':');
    if (!colon) continue;
    colon++;
    while (*colon == ' ' || *colon == '\t') colon++;
    colon[strcspn(colon, "\n")] = '\0';
    snprintf(dst, cap, "%s", colon);
    break;
  }
  fclose(f);
}

void hx_device_info_cpu(hx_device_info *info) {
  memset(info, 0, sizeof *info);
  snprintf(info->gpu, sizeof info->gpu, "none");
  snprintf(info->cc, sizeof info->cc, "none");
  snprintf(info->driver, sizeof info->driver, "none");
  snprintf(info->cuda, sizeof info->cuda, "none");
  read_cpu_model(info->cpu, sizeof info->cpu);
}

void hx_print_header(const hx_device_info *info) {
  FILE *out = hx_log();
  char date[32], host[256];
  time_t now = time(NULL);
  struct tm tm_utc;
  gmtime_r(&now, &tm_utc);
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm_utc);
  if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "unknown");
  host[sizeof host - 1] = '\0';
  fputs("# repro-log 1\nmeta", out);
  kv_put(out, "gpu", info->gpu);
  kv_put(out, "cc", info->cc);
  kv_put(out, "driver", info->driver);
  kv_put(out, "cuda", info->cuda);
  kv_put(out, "commit", hx_commit());
  kv_put(out, "date", date);
  kv_put(out, "host", host);
  kv_put(out, "cpu", info->cpu);
  if (info->sms > 0) kv_putf(out, "sms", "%d", info->sms);
  if (info->clock_mhz > 0) kv_putf(out, "clock_mhz", "%d", info->clock_mhz);
  if (info->index[0]) kv_put(out, "gpu_index", info->index);
  if (info->uuid[0]) kv_put(out, "gpu_uuid", info->uuid);
  fputc('\n', out);
  hx_log_flush();
  log_header_done = 1;
}

void hx_print_check(const char *output, const hx_check *c) {
  FILE *out = hx_log();
  fputs("check", out);
  kv_put(out, "output", output);
  kv_putf(out, "rel_l2", "%.3e", c->rel_l2);
  kv_putf(out, "max_abs", "%.3e", c->max_abs);
  kv_putf(out, "tol_rel_l2", "%.1e", c->tol_rel_l2);
  kv_putf(out, "tol_max_abs", "%.1e", c->tol_max_abs);
  kv_putf(out, "n", "%zu", c->n);
  if (c->n_nonfinite) kv_putf(out, "nonfinite", "%zu", c->n_nonfinite);
  if (c->sampled) kv_putf(out, "sampled", "%zu", c->sampled);
  if (c->is_bool) {
    kv_putf(out, "mismatches", "%zu", c->mismatches);
    kv_putf(out, "ambiguous", "%zu", c->ambiguous);
  }
  kv_putf(out, "ok", "%d", c->ok);
  fputc('\n', out);
  hx_log_flush();
}

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

const char *hx_timing_name(hx_timing_method m) {
  switch (m) {
  case HX_TIMING_WALL: return "wall";
  case HX_TIMING_EVENTS: return "events";
  case HX_TIMING_GRAPH: return "graph";
  case HX_TIMING_LOOP: return "loop";
  default: return NULL;
  }
}

int hx_calls_per_sample(double one_call_ms) {
  if (!(one_call_ms < HX_SAMPLE_MS)) return 1; /* NaN too */
  double calls = HX_SAMPLE_MS / (one_call_ms > 1e-3 ? one_call_ms : 1e-3) + 1;
  return calls < HX_MAX_CALLS_PER_SAMPLE ? (int)calls : HX_MAX_CALLS_PER_SAMPLE;
}

hx_stats hx_stats_of(const float *ms, int n, hx_timing timing) {
  hx_stats s = {0, 0, 0, 0, timing};
  if (n <= 0) return s;
  float *sorted = malloc((size_t)n * sizeof *sorted);
  if (!sorted) hx_die(REPRO_EXIT_OOM, "oom", "out of host memory sorting %d timings", n);
  memcpy(sorted, ms, (size_t)n * sizeof *sorted);
  qsort(sorted, (size_t)n, sizeof *sorted, cmp_float);
  double sum = 0;
  for (int i = 0; i < n; i++) sum += sorted[i];
  s.avg_ms = sum / n;
  s.median_ms = n % 2 ? sorted[n / 2] : 0.5 * ((double)sorted[n / 2 - 1] + sorted[n / 2]);
  s.min_ms = sorted[0];
  s.max_ms = sorted[n - 1];
  free(sorted);
  return s;
}

void hx_print_result_ok(const hx_stats *s, const float *samples, int runs, int warmup, double gflop,
                        double peak_bytes) {
  FILE *out = hx_log();
  fputs("result", out);
  kv_put(out, "status", "ok");
  kv_putf(out, "avg_ms", HX_MS_FMT, s->avg_ms);
  kv_putf(out, "median_ms", HX_MS_FMT, s->median_ms);
  kv_putf(out, "min_ms", HX_MS_FMT, s->min_ms);
  kv_putf(out, "max_ms", HX_MS_FMT, s->max_ms);
  kv_putf(out, "runs", "%d", runs);
  kv_putf(out, "warmup", "%d", warmup);
  if (gflop >= 0 && s->avg_ms > 0) kv_putf(out, "gflops_s", "%.1f", gflop / (s->avg_ms * 1e-3));
  kv_putf(out, "peak_mib", "%.1f", peak_bytes / (1024.0 * 1024.0));
  const char *timing = hx_timing_name(s->timing.method);
  if (timing) kv_put(out, "timing", timing);
  if (timing && s->timing.calls_per_run > 1)
    kv_putf(out, "calls_per_run", "%d", s->timing.calls_per_run);
  if (samples && runs > 0 && runs <= HX_MAX_LISTED_SAMPLES) {
    fputs(" samples_ms=", out);
    for (int i = 0; i < runs; i++) fprintf(out, "%s" HX_MS_FMT, i ? "," : "", samples[i]);
  }
  fputc('\n', out);
  hx_log_flush();
}

void hx_print_result_status(const char *status, const char *reason) {
  FILE *out = hx_log();
  fputs("result", out);
  kv_put(out, "status", status);
  if (reason && *reason) kv_put(out, "reason", reason);
  fputc('\n', out);
  hx_log_flush();
}

void hx_die(int exit_code, const char *status, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "error: %s\n", msg);
  if (log_header_done) hx_print_result_status(status, msg);
  exit(exit_code);
}

int hx_parse_int(const char *prog, const char *opt, const char *text, long lo, long hi, long *out) {
  char *end = NULL;
  errno = 0;
  long v = text ? strtol(text, &end, 10) : 0;
  if (!text || !*text || *end != '\0' || errno == ERANGE || v < lo || v > hi) {
    fprintf(stderr, "%s: %s: expected an integer in [%ld, %ld], got '%s'\n", prog, opt, lo, hi,
            text ? text : "(missing)");
    return -1;
  }
  *out = v;
  return 0;
}

int hx_parse_double(const char *prog, const char *opt, const char *text, double lo, double hi,
                    double *out) {
  char *end = NULL;
  errno = 0;
  double v = text ? strtod(text, &end) : 0;
  if (!text || !*text || *end != '\0' || errno == ERANGE || !isfinite(v) || !(v > lo) ||
      !(v <= hi)) {
    fprintf(stderr, "%s: %s: expected a number in (%g, %g], got '%s'\n", prog, opt, lo, hi,
            text ? text : "(missing)");
    return -1;
  }
  *out = v;
  return 0;
}

int hx_parse_int_opt(const char *prog, const char *opt, const char *text, const hx_int_opt *opts,
                     int n, long *out) {
  for (int k = 0; k < n; k++)
    if (strcmp(opt, opts[k].opt) == 0)
      return hx_parse_int(prog, opt, text, opts[k].lo, opts[k].hi, out) < 0 ? -2 : k;
  return -1;
}

int hx_parse_choice(const char *prog, const char *opt, const char *text, const char *const *names,
                    int n) {
  for (int i = 0; text && i < n; i++)
    if (strcmp(text, names[i]) == 0) return i;
  fprintf(stderr, "%s: %s: unknown '%s' (expected ", prog, opt, text ? text : "(missing)");
  for (int i = 0; i < n; i++) fprintf(stderr, "%s%s", i ? "|" : "", names[i]);
  fprintf(stderr, ")\n");
  return -1;
}

int hx_parse_run_opt(const char *prog, const char *opt, const char *val, const hx_run_opts *r) {
  static const char *const device_names[] = {"gpu", "cpu"};
  static const hx_int_opt ints[] = {
      {"--warmup", 0, 1000000}, {"--runs", 1, 1000000}, {"--seed", 0, 2147483647L}};
  if (!strcmp(opt, "--check") || !strcmp(opt, "--no-check")) {
    *r->check = !strcmp(opt, "--check");
    return 1;
  }
  if (!strcmp(opt, "--device")) {
    int idx = hx_parse_choice(prog, opt, val, device_names, 2);
    if (idx < 0) return -1;
    *r->device_cpu = idx == 1;
    return 2;
  }
  long n = 0;
  int k = hx_parse_int_opt(prog, opt, val, ints, 3, &n);
  if (k == -1) return 0;
  if (k < 0) return -1;
  if (k == 0) *r->warmup = (int)n;
  if (k == 1) *r->runs = (int)n;
  if (k == 2) *r->seed = (uint64_t)n;
  return 2;
}

/* Shared tail of the numeric comparisons: sums are over finite reference elements. */
typedef struct {
  double diff2, want2, max_abs;
  size_t nonfinite;
} diff_acc;

static void acc_add(diff_acc *a, double got, double want) {
  if (!isfinite(got)) {
    a->nonfinite++;
    return;
  }
  double d = got - want;
  a->diff2 += d * d;
  a->want2 += want * want;
  if (fabs(d) > a->max_abs) a->max_abs = fabs(d);
}

static hx_check acc_finish(const diff_acc *a, size_t n, double tol_rel_l2, double tol_max_abs) {
  hx_check c;
  memset(&c, 0, sizeof c);
  c.n = n;
  c.n_nonfinite = a->nonfinite;
  c.rel_l2 = a->want2 > 0 ? sqrt(a->diff2 / a->want2) : sqrt(a->diff2);
  c.max_abs = a->nonfinite ? INFINITY : a->max_abs;
  if (a->nonfinite) c.rel_l2 = INFINITY;
  c.tol_rel_l2 = tol_rel_l2;
  c.tol_max_abs = tol_max_abs;
  c.ok = a->nonfinite == 0 && c.rel_l2 <= tol_rel_l2 && c.max_abs <= tol_max_abs;
  return c;
}

hx_check hx_compare_f16(const uint16_t *got_f16, const double *want, size_t n, double tol_rel_l2,
                        double tol_max_abs) {
  diff_acc a = {0, 0, 0, 0};
  for (size_t i = 0; i < n; i++) acc_add(&a, rng_half_to_float(got_f16[i]), want[i]);
  return acc_finish(&a, n, tol_rel_l2, tol_max_abs);
}

hx_check hx_compare_bf16(const uint16_t *got_bf16, const double *want, size_t n, double tol_rel_l2,
                         double tol_max_abs) {
  diff_acc a = {0, 0, 0, 0};
  for (size_t i = 0; i < n; i++) acc_add(&a, rng_bf16_to_float(got_bf16[i]), want[i]);
  return acc_finish(&a, n, tol_rel_l2, tol_max_abs);
}

hx_check hx_compare_f32(const float *got, const double *want, size_t n, double tol_rel_l2,
                        double tol_max_abs) {
  diff_acc a = {0, 0, 0, 0};
  for (size_t i = 0; i < n; i++) acc_add(&a, got[i], want[i]);
  return acc_finish(&a, n, tol_rel_l2, tol_max_abs);
}

hx_check hx_compare_f64(const double *got, const double *want, size_t n, double tol_rel_l2,
                        double tol_max_abs) {
  diff_acc a = {0, 0, 0, 0};
  for (size_t i = 0; i < n; i++) acc_add(&a, got[i], want[i]);
  return acc_finish(&a, n, tol_rel_l2, tol_max_abs);
}

double hx_max_abs_f64(const double *x, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; i++) m = fabs(x[i]) > m ? fabs(x[i]) : m;
  return m;
}

hx_check hx_compare_bool(const uint8_t *got, const double *want_margin, size_t n, double margin) {
  hx_check c;
  memset(&c, 0, sizeof c);
  c.is_bool = 1;
  c.n = n;
  size_t ones = 0;
  for (size_t i = 0; i < n; i++) {
    int want = want_margin[i] > margin ? 1 : want_margin[i] < -margin ? 0 : -1;
    if (got[i] > 1) {
      c.mismatches++;
      c.n_nonfinite++;
      continue;
    }
    if (want < 0) {
      c.ambiguous++;
      continue;
    }
    ones += (size_t)want;
    if (got[i] != want) c.mismatches++;
  }
  /* as 0/1 vectors: ||got - want||^2 is the mismatch count */
  c.rel_l2 = ones ? sqrt((double)c.mismatches / (double)ones) : sqrt((double)c.mismatches);
  c.max_abs = c.mismatches ? 1.0 : 0.0;
  c.tol_rel_l2 = 0;
  c.tol_max_abs = 0;
  c.ok = c.mismatches == 0;
  return c;
}

/* Host allocations of the CPU path, counted like the device ones. */
static size_t host_current, host_peak;

/* Each block carries its size in a header, so hx_host_free needs only the pointer. The
 * header is max_align_t wide to keep the caller's pointer aligned for any type. */
typedef union {
  size_t bytes;
  max_align_t align;
} host_header;

void *hx_host_alloc(size_t bytes, const char *what) {
  if (bytes > SIZE_MAX - sizeof(host_header))
    hx_die(REPRO_EXIT_OOM, "oom", "host allocation of %zu bytes for %s is too large", bytes, what);
  host_header *h = malloc(sizeof *h + bytes);
  if (!h)
    hx_die(REPRO_EXIT_OOM, "oom", "out of host memory allocating %zu bytes for %s", bytes, what);
  h->bytes = bytes;
  host_current += bytes;
  if (host_current > host_peak) host_peak = host_current;
  return h + 1;
}

void hx_host_free(void *p) {
  if (!p) return;
  host_header *h = (host_header *)p - 1;
  host_current -= h->bytes;
  free(h);
}

size_t hx_host_peak_bytes(void) { return host_peak; }

int hx_vfail(const hx_ctx *ctx, int code, const char *fmt, va_list ap) {
  if (ctx && ctx->err && ctx->err_len) vsnprintf(ctx->err, ctx->err_len, fmt, ap);
  return code;
}

int hx_fail(const hx_ctx *ctx, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = hx_vfail(ctx, code, fmt, ap);
  va_end(ap);
  return rc;
}
