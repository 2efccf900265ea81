/* kronlayer: the Kronecker-factored layer y = x·(A_1 ⊗ ... ⊗ A_m)^T, its backward, three
 * versions (kron.h), one log per run in the kit's contract:
 *
 *   # repro-log 1 / meta / config
 *   plan impl=v3 pass=fwd|bwd stages=.. s1=.. gA1=..  v3's stages, tiles, micro-tiles
 *   kernel_attr name=.. regs=.. local_bytes=..      (GPU) v3's kernels: registers, spills
 *   norm impl=vN y=.. gx=.. gA=..                  (check) L2 norms, like the seed's output
 *   check output=y.vN ... / output=gA2.vN_vs_ref   (check) every output against the double
 *                                                  reference and every pair of versions
 *   kernel impl=vN pass=.. name=.. us=..           (profile) one line per kernel
 *   time impl=vN pass=fwd|bwd avg_us=.. ... timing=..   one per version and pass
 *   bench n=.. ai_mac_per_elem=.. ai_flop_per_byte=.. ...   (and the seed's table as comments)
 *   result status=ok avg_ms=..                     the --pass of --impl (all: the fastest)
 *
 * --device cpu runs the same call sequences on the CPU backend (kron_cpu.c). */
#include "kron.h"
#include "kron_dev.h"

#include "fileio.h"
#include "harness.h"
#include "kvline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* --device cpu: the versions' call sequences emulated in plain loops: capped work */
#define KRON_CPU_MAX_MACS (1LL << 31)

/* ---- the CPU device ------------------------------------------------------------------------ */
static void *cpu_alloc(size_t bytes, const char *what) { return hx_host_alloc(bytes, what); }
static void cpu_copy(void *dst, const void *src, size_t bytes) {
  if (bytes) memcpy(dst, src, bytes);
}
static void cpu_poison(void *p, size_t bytes) {
  if (p && bytes) memset(p, 0xff, bytes);
}
static void cpu_sync(void) {}
static void cpu_time_runs(kron_fn fn, void *arg, int warmup, int runs, float *ms, hx_timing *how) {
  for (int i = 0; i < warmup + runs; i++) {
    double t0 = hx_wall_ms();
    fn(arg);
    if (i >= warmup) ms[i - warmup] = (float)(hx_wall_ms() - t0);
  }
  *how = (hx_timing){HX_TIMING_WALL, 1};
}
static void cpu_prof_start(kron_be *be, kron_prof *p) { kron_cpu_set_prof(be, p); }
static void cpu_prof_stop(kron_be *be) { kron_cpu_set_prof(be, NULL); }
static size_t cpu_peak(void) { return hx_host_peak_bytes(); }

static void cpu_device(kron_dev *d) {
  memset(d, 0, sizeof *d);
  d->alloc = cpu_alloc;
  d->free = hx_host_free;
  d->upload = d->download = cpu_copy;
  d->poison = cpu_poison;
  d->sync = cpu_sync;
  d->time_runs = cpu_time_runs;
  d->prof_start = cpu_prof_start;
  d->prof_stop = cpu_prof_stop;
  d->peak_bytes = cpu_peak;
  d->smem_optin = KRON_CPU_SMEM_BLOCK;
  d->smem_sm = KRON_CPU_SMEM_SM;
  d->nsm = KRON_CPU_NSM;
}

/* ---- one run's state ------------------------------------------------------------------------ */
typedef struct {
  const kron_args *a;
  const kron_shape *s;
  kron_dev *dev;
  kron_be *be;
  kron_bufs b;
  kron_plan plan[2]; /* v3: fwd, bwd */
  int nver, ver[KRON_NVER];
  int es;
} run_state;

typedef struct {
  run_state *rs;
  kron_version v;
  kron_pass pass;
} call;

static int call_once(void *arg) {
  call *c = arg;
  run_state *rs = c->rs;
  if (c->pass == KRON_FWD)
    kron_run_fwd(rs->be, c->v, rs->s, &rs->plan[0], &rs->b);
  else
    kron_run_bwd(rs->be, c->v, rs->s, &rs->plan[0], &rs->plan[1], &rs->b);
  return 0;
}

/* ---- check ---------------------------------------------------------------------------------- */

/* Host double copy of a device buffer of n elements. */
static double *fetch(run_state *rs, const void *dev, long long n, const char *what) {
  size_t bytes = (size_t)n * (size_t)rs->es;
  void *raw = hx_host_alloc(bytes, what);
  rs->dev->download(raw, dev, bytes);
  double *d = hx_host_alloc((size_t)n * sizeof *d, what);
  for (long long i = 0; i < n; i++)
    d[i] = rs->es == 8 ? ((double *)raw)[i] : (double)((float *)raw)[i];
  hx_host_free(raw);
  return d;
}

static double l2(const double *x, long long n) {
  double s = 0;
  for (long long i = 0; i < n; i++) s += x[i] * x[i];
  return sqrt(s);
}

/* Tolerance of an output whose values come out of reductions of total length L: the floor
 * of the task (1e-5 fp32, 1e-12 fp64) or, where L is long enough that rounding grows past
 * it, 4·eps·sqrt(L) (a sum of L roundings of relative size eps grows like sqrt(L)). */
static double tol_for(int es, double L) {
  double eps = es == 8 ? 1.1102230246251565e-16 : 5.9604644775390625e-08;
  double base = es == 8 ? 1e-12 : 1e-5, t = 4 * eps * sqrt(L);
  return t > base ? t : base;
}

typedef struct {
  double *y, *gx, *gA;
} outs;

static int check_one(const char *name, const double *got, const double *want, long long n,
                     double tol) {
  double maxw = hx_max_abs_f64(want, (size_t)n);
  /* elementwise: generous (100x the L2 bound at the largest value): catches a wrong
   * element that the L2 norm of a large output would hide */
  hx_check c = hx_compare_f64(got, want, (size_t)n, tol, 100 * tol * (maxw > 0 ? maxw : 1));
  hx_print_check(name, &c);
  return c.ok;
}

/* every output of got against want; label "v1" or "v1_vs_v2" */
static int check_outs(const run_state *rs, const outs *got, const outs *want, const char *label,
                      double scale) {
  const kron_shape *s = rs->s;
  long long bn = s->batch * s->n;
  double sumf = 0;
  for (int k = 0; k < s->m; k++) sumf += s->f[k];
  char name[96];
  int ok = 1;
  snprintf(name, sizeof name, "y.%s", label);
  ok &= check_one(name, got->y, want->y, bn, scale * tol_for(rs->es, sumf));
  snprintf(name, sizeof name, "gx.%s", label);
  ok &= check_one(name, got->gx, want->gx, bn, scale * tol_for(rs->es, sumf));
  for (int k = 0; k < s->m; k++) {
    long long ff = (long long)s->f[k] * s->f[k];
    snprintf(name, sizeof name, "gA%d.%s", k + 1, label);
    ok &= check_one(name, got->gA + s->aoff[k], want->gA + s->aoff[k], ff,
                    scale * tol_for(rs->es, (double)bn / s->f[k] + sumf));
  }
  return ok;
}

static int run_checks(run_state *rs, const float *xf, const float *Af, const float *gyf) {
  const kron_shape *s = rs->s;
  long long bn = s->batch * s->n, na = s->aoff[s->m];
  double *xd = hx_host_alloc((size_t)bn * sizeof *xd, "reference x");
  double *gyd = hx_host_alloc((size_t)bn * sizeof *gyd, "reference gy");
  double *Ad = hx_host_alloc((size_t)na * sizeof *Ad, "reference A");
  for (long long i = 0; i < bn; i++) xd[i] = xf[i], gyd[i] = gyf[i];
  for (long long i = 0; i < na; i++) Ad[i] = Af[i];
  outs ref;
  ref.y = hx_host_alloc((size_t)bn * sizeof(double), "reference y");
  ref.gx = hx_host_alloc((size_t)bn * sizeof(double), "reference gx");
  ref.gA = hx_host_alloc((size_t)na * sizeof(double), "reference gA");
  kron_ref_fwd(s, xd, Ad, ref.y);
  kron_ref_bwd(s, xd, Ad, gyd, ref.gx, ref.gA);
  FILE *out = hx_log();
  fputs("norm impl=ref", out);
  kv_putf(out, "y", "%.15g", l2(ref.y, bn));
  kv_putf(out, "gx", "%.15g", l2(ref.gx, bn));
  kv_putf(out, "gA", "%.15g", l2(ref.gA, na));
  fputc('\n', out);

  outs got[KRON_NVER];
  int ok = 1;
  for (int vi = 0; vi < rs->nver; vi++) {
    kron_version v = (kron_version)rs->ver[vi];
    size_t es = (size_t)rs->es;
    rs->dev->poison(rs->b.y, (size_t)bn * es);
    rs->dev->poison(rs->b.gx, (size_t)bn * es);
    rs->dev->poison(rs->b.gA, (size_t)na * es);
    call c = {rs, v, KRON_FWD};
    call_once(&c);
    c.pass = KRON_BWD;
    call_once(&c);
    rs->dev->sync();
    got[vi].y = fetch(rs, rs->b.y, bn, "y");
    got[vi].gx = fetch(rs, rs->b.gx, bn, "gx");
    got[vi].gA = fetch(rs, rs->b.gA, na, "gA");
    /* test hook: KRON_TEST_FAULT=vN spoils one element of vN's gA, so the tests see a check
     * fail end to end (exit 5, ok=0) */
    const char *fault = getenv("KRON_TEST_FAULT");
    if (fault && !strcmp(fault, kron_version_names[v])) got[vi].gA[na - 1] += 1;
    fprintf(out, "norm impl=%s", kron_version_names[v]);
    kv_putf(out, "y", "%.15g", l2(got[vi].y, bn));
    kv_putf(out, "gx", "%.15g", l2(got[vi].gx, bn));
    kv_putf(out, "gA", "%.15g", l2(got[vi].gA, na));
    fputc('\n', out);
    hx_log_flush();
    char label[32];
    snprintf(label, sizeof label, "%s", kron_version_names[v]);
    ok &= check_outs(rs, &got[vi], &ref, label, 1);
  }
  /* pairs: both sides carry rounding, so twice the tolerance */
  for (int i = 0; i < rs->nver; i++)
    for (int j = i + 1; j < rs->nver; j++) {
      char label[32];
      snprintf(label, sizeof label, "%s_vs_%s", kron_version_names[rs->ver[j]],
               kron_version_names[rs->ver[i]]);
      ok &= check_outs(rs, &got[j], &got[i], label, 2);
    }
  for (int vi = 0; vi < rs->nver; vi++) {
    hx_host_free(got[vi].y);
    hx_host_free(got[vi].gx);
    hx_host_free(got[vi].gA);
  }
  hx_host_free(ref.y);
  hx_host_free(ref.gx);
  hx_host_free(ref.gA);
  hx_host_free(xd);
  hx_host_free(gyd);
  hx_host_free(Ad);
  return ok;
}

/* ---- profile ------------------------------------------------------------------------------- */
static void run_profile(run_state *rs) {
  kron_version v = (kron_version)rs->ver[0];
  kron_prof p = {0};
  call c = {rs, v, KRON_FWD};
  call_once(&c); /* saved activations and a warm start */
  rs->dev->sync();
  rs->dev->prof_start(rs->be, &p);
  call_once(&c);
  int nfwd = -1;
  rs->dev->sync();
  c.pass = KRON_BWD;
  call_once(&c);
  rs->dev->prof_stop(rs->be);
  (void)nfwd;
  FILE *out = hx_log();
  double tot[2] = {0, 0};
  for (int i = 0; i < p.n; i++) {
    const kron_step *st = &p.steps[i];
    /* bwd steps are the ones named after the backward's kernels */
    int bwd = strstr(st->name, "gA") || strstr(st->name, "gx") || strstr(st->name, "unpermute") ||
              strstr(st->name, "bwd") || strstr(st->name, "recompute");
    tot[bwd] += st->dur_us;
    fputs("kernel", out);
    kv_put(out, "impl", kron_version_names[v]);
    kv_put(out, "pass", kron_pass_names[bwd]);
    kv_put(out, "name", st->name);
    kv_putf(out, "start_us", "%.3f", st->start_us);
    kv_putf(out, "us", "%.3f", st->dur_us);
    fputc('\n', out);
  }
  fprintf(out, "profile impl=%s fwd_kernel_us=%.3f bwd_kernel_us=%.3f kernels=%d",
          kron_version_names[v], tot[0], tot[1], p.n);
  if (rs->a->trace) {
    char proc[160], shape[96];
    kron_shape_name(rs->s, shape, sizeof shape);
    snprintf(proc, sizeof proc, "kronlayer %s %s %s", kron_version_names[v], shape,
             rs->es == 8 ? "fp64" : "fp32");
    /* written whole through a unique temporary beside it (fileio.h), then renamed */
    afile trace;
    char why[256];
    if (afile_open(&trace, rs->a->trace, 0644, 0, why, sizeof why) != 0)
      hx_die(REPRO_EXIT_ERROR, "error", "--trace %s: %s", rs->a->trace, why);
    if (kron_prof_write_trace(&p, trace.f, proc) != 0) {
      afile_abort(&trace);
      hx_die(REPRO_EXIT_ERROR, "error", "--trace %s: writing the trace failed", rs->a->trace);
    }
    if (afile_commit(&trace, why, sizeof why) != 0)
      hx_die(REPRO_EXIT_ERROR, "error", "--trace %s: %s", rs->a->trace, why);
    kv_put(out, "trace", rs->a->trace);
  }
  fputc('\n', out);
  hx_log_flush();
  kron_prof_free(&p);
}

/* ---- bench ---------------------------------------------------------------------------------- */
static void print_bench_summary(const run_state *rs, hx_stats st[KRON_NVER][2],
                                int have[KRON_NVER]) {
  const kron_shape *s = rs->s;
  double bn = (double)s->batch * (double)s->n, sumf = 0, sumf2 = 0;
  for (int k = 0; k < s->m; k++) sumf += s->f[k], sumf2 += (double)s->f[k] * s->f[k];
  double macs = bn * sumf, elems = 2 * bn + sumf2, es = rs->es;
  FILE *out = hx_log();
  fputs("bench", out);
  kv_putf(out, "n", "%lld", s->n);
  kv_putf(out, "macs_fwd", "%.0f", macs);
  /* the seed's "AI": multiply-adds per element of x, y and the factors moved once */
  kv_putf(out, "ai_mac_per_elem", "%.4g", macs / elems);
  kv_putf(out, "ai_flop_per_byte", "%.4g", 2 * macs / (elems * es));
  /* floors: everything moved once, and the per-factor-pass model (x read and y written once
   * per factor: m·2·B·N elements) */
  kv_putf(out, "bytes_once", "%.0f", elems * es);
  kv_putf(out, "bytes_per_pass_model", "%.0f", s->m * 2 * bn * es + sumf2 * es);
  fputc('\n', out);
  char shape[96];
  kron_shape_name(s, shape, sizeof shape);
  for (char *c = shape; *c; c++)
    if (*c == 'x') *c = ' ';
  fprintf(out, "# state size : %lld\n# AI         : %.1e\n", s->n, macs / elems);
  fprintf(out, "# times in microseconds (median of %d runs)\n# %-28s", rs->a->runs, "shape (MACs)");
  for (int vi = 0; vi < rs->nver; vi++) fprintf(out, " | %8s", kron_version_names[rs->ver[vi]]);
  fputc('\n', out);
  for (int p = 0; p < 2; p++) {
    char label[128];
    snprintf(label, sizeof label, "%s (%.3e) %s", shape, macs, kron_pass_names[p]);
    fprintf(out, "# %-28s", label);
    for (int vi = 0; vi < rs->nver; vi++) {
      if (have[vi])
        fprintf(out, " | %8.1f", st[vi][p].median_ms * 1e3);
      else
        fprintf(out, " | %8s", "-");
    }
    fputc('\n', out);
  }
  hx_log_flush();
}

static double gflop_of(const kron_shape *s, kron_pass p) {
  return (p == KRON_FWD ? 2 : 4) * kron_fwd_macs(s) * 1e-9; /* bwd: gx and gA, each as fwd */
}

/* ---- main ------------------------------------------------------------------------------------ */
/* REPRO_KRON_TC_TILE=WMxWN: every tensor-core stage's warp tile where it divides the tile (a
 * measurement switch; the plan line shows what ran); 0 when unset or not of that form */
static int tc_tile_switch(void) {
  const char *v = getenv("REPRO_KRON_TC_TILE");
  int wm = 0, wn = 0;
  char end;
  if (!v || sscanf(v, "%dx%d%c", &wm, &wn, &end) != 2 || wm < 1 || wm > 7 || wn < 1 || wn > 7)
    return 0;
  return wm * 8 + wn;
}

/* REPRO_KRON_GA_SPLIT=N: the gradient kernel's blocks along each factor's rows (a measurement
 * switch; the plan line's ksplit shows what ran); 0 when unset or not a positive number */
static int ga_split_switch(void) {
  const char *v = getenv("REPRO_KRON_GA_SPLIT");
  int n = 0;
  char end;
  if (!v || sscanf(v, "%d%c", &n, &end) != 1 || n < 1 || n > 65535) return 0;
  return n;
}

/* The device the run asks for (the CPU backend, or the GPU when built with CUDA): its device,
 * backend and info; a GPU that cannot be opened ends the log with why. */
static void open_device(const kron_args *a, kron_dev *dev, kron_be *be, hx_device_info *info) {
  int es = a->dtype_size;
  if (a->device_cpu) {
    cpu_device(dev);
    kron_cpu_backend(be, es);
    hx_device_info_cpu(info);
  } else {
#ifdef REPRO_HAVE_CUDA
    char why[256] = "";
    if (!kron_gpu_open(dev, be, es, info, why, sizeof why)) {
      hx_device_info_cpu(info);
      hx_print_header(info);
      kron_print_config(a, "gpu");
      hx_die(REPRO_EXIT_ERROR, "error", "%s", why);
    }
#else
    hx_device_info_cpu(info);
    hx_print_header(info);
    kron_print_config(a, "gpu");
    hx_die(REPRO_EXIT_UNSUPPORTED, "unsupported",
           "this kronlayer was built without CUDA; only --device cpu runs");
#endif
  }
}

/* The versions this run times into rs->ver (--impl, or every one), v3's plans for both passes
 * made and printed as plan lines; a v3 without a plan is skipped with why (or ends the run when
 * --impl v3 asked for it). */
static void plan_versions(run_state *rs, const kron_dev *dev, size_t budget) {
  const kron_args *ap = rs->a;
  const kron_args a = *ap;
  const kron_shape *s = rs->s;
  int es = rs->es;
  FILE *out = hx_log();
  for (int v = 0; v < KRON_NVER; v++) {
    if (a.impl >= 0 && a.impl != v) continue;
    if (v == KRON_V3) {
      char why[512];
      int bad = 0;
      kron_plan_cfg cfg = {budget,  dev->smem_sm,     dev->nsm,          a.v3_fuse,
                           a.v3_tc, tc_tile_switch(), ga_split_switch(), a.v3_route};
      for (int p = 0; p < 2 && !bad; p++) {
        if (kron_plan_make(s, es, (kron_pass)p, &cfg, &rs->plan[p], why, sizeof why) != 0) {
          bad = 1;
          break;
        }
        char desc[2048];
        kron_plan_describe(s, &rs->plan[p], desc, sizeof desc);
        fprintf(out, "plan impl=v3 pass=%s fuse=%s tc=%s route=%s budget_kib=%.1f %s\n",
                kron_pass_names[p], kron_fuse_names[a.v3_fuse], kron_tc_names[a.v3_tc],
                kron_route_names[a.v3_route], budget / 1024.0, desc);
      }
      if (bad) {
        if (a.impl == KRON_V3) hx_die(REPRO_EXIT_UNSUPPORTED, "unsupported", "%s", why);
        fputs("skip impl=v3", out);
        kv_put(out, "reason", why);
        fputc('\n', out);
        continue;
      }
    }
    rs->ver[rs->nver++] = v;
    if (v == KRON_V3 && dev->describe) dev->describe(out);
  }
}

/* The device buffers of every version to run (the largest workspace any of them needs), the
 * inputs uploaded in the run's dtype. */
static void alloc_buffers(run_state *rs, const kron_dev *dev, const float *xf, const float *gyf,
                          const float *Af) {
  const kron_shape *s = rs->s;
  int es = rs->es;
  long long bn = s->batch * s->n, na = s->aoff[s->m];
  long long saved = 0, scratch = 0, part = 0;
  for (int vi = 0; vi < rs->nver; vi++) {
    long long sv, sc, pt;
    kron_ws_elems(s, (kron_version)rs->ver[vi], &rs->plan[0], &rs->plan[1], &sv, &sc, &pt);
    saved = sv > saved ? sv : saved;
    scratch = sc > scratch ? sc : scratch;
    part = pt > part ? pt : part;
  }
  size_t e = (size_t)es;
  kron_bufs *b = &rs->b;
  b->x = dev->alloc((size_t)bn * e, "x");
  b->gy = dev->alloc((size_t)bn * e, "gy");
  b->A = dev->alloc((size_t)na * e, "A");
  b->y = dev->alloc((size_t)bn * e, "y");
  b->gx = dev->alloc((size_t)bn * e, "gx");
  b->gA = dev->alloc((size_t)na * e, "gA");
  b->saved = saved ? dev->alloc((size_t)saved * e, "saved activations") : NULL;
  b->scratch = scratch ? dev->alloc((size_t)scratch * e, "scratch") : NULL;
  b->part = part ? dev->alloc((size_t)part * e, "gA partials") : NULL;
  if (es == 4) {
    dev->upload(b->x, xf, (size_t)bn * e);
    dev->upload(b->gy, gyf, (size_t)bn * e);
    dev->upload(b->A, Af, (size_t)na * e);
  } else {
    const float *src[3] = {xf, gyf, Af};
    void *dst[3] = {b->x, b->gy, b->A};
    long long cnt[3] = {bn, bn, na};
    for (int t = 0; t < 3; t++) {
      double *tmp = hx_host_alloc((size_t)cnt[t] * sizeof *tmp, "upload");
      for (long long i = 0; i < cnt[t]; i++) tmp[i] = src[t][i];
      dev->upload(dst[t], tmp, (size_t)cnt[t] * e);
      hx_host_free(tmp);
    }
  }
}

/* Every version's forward and backward timed (the backward after one forward, for v1/v2's
 * saved activations), a time line each; their runs into ms, their stats into st. */
static void time_versions(run_state *rs, const kron_dev *dev, float *ms, hx_stats st[KRON_NVER][2],
                          int *have) {
  const kron_args a = *rs->a;
  FILE *out = hx_log();
  for (int vi = 0; vi < rs->nver; vi++) {
    for (int p = 0; p < 2; p++) {
      call c = {rs, (kron_version)rs->ver[vi], (kron_pass)p};
      if (p == KRON_BWD) { /* the saved activations of v1/v2 */
        c.pass = KRON_FWD;
        call_once(&c);
        c.pass = KRON_BWD;
      }
      hx_timing how;
      float *runs_ms = ms + ((size_t)vi * 2 + (size_t)p) * (size_t)a.runs;
      dev->time_runs(call_once, &c, a.warmup, a.runs, runs_ms, &how);
      st[vi][p] = hx_stats_of(runs_ms, a.runs, how);
      fprintf(out,
              "time impl=%s pass=%s avg_us=%.3f median_us=%.3f min_us=%.3f max_us=%.3f runs=%d "
              "timing=%s calls_per_run=%d\n",
              kron_version_names[rs->ver[vi]], kron_pass_names[p], st[vi][p].avg_ms * 1e3,
              st[vi][p].median_ms * 1e3, st[vi][p].min_ms * 1e3, st[vi][p].max_ms * 1e3, a.runs,
              hx_timing_name(how.method), how.calls_per_run);
    }
    have[vi] = 1;
  }
}

int main(int argc, char **argv) {
  kron_args a;
  int rc = kron_parse(argc, argv, &a);
  if (rc != 0) return rc > 0 ? REPRO_EXIT_OK : REPRO_EXIT_USAGE;
  hx_log_open(stdout);
  hx_log_exit_check("kronlayer", "stdout");
  const kron_shape *s = &a.shape;
  int es = a.dtype_size;
  kron_dev dev;
  kron_be be;
  hx_device_info info;
  open_device(&a, &dev, &be, &info);
  hx_print_header(&info);
  kron_print_config(&a, a.device_cpu ? "cpu" : "gpu");

  long long bn = s->batch * s->n;
  double sumf = 0;
  for (int k = 0; k < s->m; k++) sumf += s->f[k];
  if (a.device_cpu && (double)bn * sumf > (double)KRON_CPU_MAX_MACS)
    hx_die(REPRO_EXIT_UNSUPPORTED, "unsupported",
           "--device cpu emulates the versions in plain loops only up to B*N*sum(f) = 2^31 "
           "multiply-adds (%.3g asked); use the GPU",
           (double)bn * sumf);

  run_state rs;
  memset(&rs, 0, sizeof rs);
  rs.a = &a;
  rs.s = s;
  rs.dev = &dev;
  rs.be = &be;
  rs.es = es;
  size_t budget = a.v3_smem_kib ? (size_t)a.v3_smem_kib * 1024 : dev.smem_optin;
  if (budget > dev.smem_optin)
    hx_die(REPRO_EXIT_UNSUPPORTED, "unsupported",
           "--v3-smem-kib %ld is beyond this device's %zu KiB of shared memory per block",
           a.v3_smem_kib, dev.smem_optin / 1024);
  plan_versions(&rs, &dev, budget);
  /* inputs: drawn on the host (float, exact in double), the same for every dtype */
  long long na = s->aoff[s->m];
  float *xf = hx_host_alloc((size_t)bn * sizeof *xf, "x");
  float *gyf = hx_host_alloc((size_t)bn * sizeof *gyf, "gy");
  float *Af = hx_host_alloc((size_t)na * sizeof *Af, "A");
  kron_fill_inputs(s, a.seed, xf, Af, gyf);

  alloc_buffers(&rs, &dev, xf, gyf, Af);
  kron_bufs *b = &rs.b;
  int code = REPRO_EXIT_OK;
  float *ms = NULL;
  if (a.check && !run_checks(&rs, xf, Af, gyf)) {
    hx_print_result_status("error", "check failed: see the check lines with ok=0");
    code = REPRO_EXIT_CHECK_FAILED;
    goto done;
  }
  if (a.mode == KRON_PROFILE) run_profile(&rs);

  hx_stats st[KRON_NVER][2];
  int have[KRON_NVER] = {0};
  /* every version's and pass's runs, kept so the result line lists the best one's */
  ms = hx_host_alloc((size_t)KRON_NVER * 2 * a.runs * sizeof *ms, "timings");
  time_versions(&rs, &dev, ms, st, have);
  if (a.mode == KRON_BENCH) print_bench_summary(&rs, st, have);
  if (!rs.nver) hx_die(REPRO_EXIT_UNSUPPORTED, "unsupported", "no version can run this shape");
  int best = 0;
  for (int vi = 1; vi < rs.nver; vi++)
    if (st[vi][a.pass].median_ms < st[best][a.pass].median_ms) best = vi;
  if (a.impl < 0)
    fprintf(hx_log(), "best impl=%s pass=%s\n", kron_version_names[rs.ver[best]],
            kron_pass_names[a.pass]);
  hx_print_result_ok(&st[best][a.pass], ms + ((size_t)best * 2 + (size_t)a.pass) * (size_t)a.runs,
                     a.runs, a.warmup, gflop_of(s, (kron_pass)a.pass), (double)dev.peak_bytes());
done:
  hx_host_free(ms);
  void *bufs[] = {b->x, b->gy, b->A, b->y, b->gx, b->gA, b->saved, b->scratch, b->part};
  for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
    if (bufs[i]) dev.free(bufs[i]);
  hx_host_free(xf);
  hx_host_free(gyf);
  hx_host_free(Af);
#ifdef REPRO_HAVE_CUDA
  if (!a.device_cpu) kron_gpu_close();
#endif
  return code;
}
