/* attnvar_gpu.c: attnvar's GPU path (built only with CUDA).
 *
 *   init (stream, cuBLAS + counted workspace) -> header, config -> supports? -> allocate
 *   inputs, outputs, workspace -> fill inputs (seeded, on the device)
 *   -> check: poison outputs, run once, copy back, compare with the reference:
 *        small cells: the CPU double reference on the very inputs the GPU used (copied back),
 *        plus an exact comparison of those inputs with the host generator's;
 *        large cells: the naive fp32 GPU reference
 *   -> peak := what is live now -> warmup + timed runs (CUDA events) -> result line. */
#include "attnvar_gpu.h"
#include "check/attn_check.h"
#include "check/check_sample.h"
#include "cost.h"
#include "gpuref/gpuref.h"
#include "harness.h"
#include "harness_gpu.h"
#include "kvline.h"
#include "ref/ref.h"
#include "rng.h"

#include <stdio.h>
#include <string.h>

/* Cells up to this many multiply-adds of q.k (workload_macs: B*H*S*S*D, or the attended keys'
 * for selected blocks) are checked against the CPU double reference (about a second); larger
 * ones against the fp32 GPU reference. */
#define CHECK_CPU_MAX_MACS (1ull << 28)

typedef struct {
  const attn_system *sys;
  const attn_ctx *ctx;
  workload_id wl;
  const attn_shape *shape;
  const attn_io *io;
  void *workspace;
} run_closure;

static int run_once(void *arg) {
  const run_closure *c = arg;
  return c->sys->run(c->ctx, c->wl, c->shape, c->io, c->workspace);
}

typedef struct {
  const run_closure *run;
  int phase;
} phase_closure;

static int run_phase_once(void *arg) {
  const phase_closure *p = arg;
  const run_closure *c = p->run;
  return c->sys->run_phase(c->ctx, c->wl, c->shape, c->io, c->workspace, p->phase);
}

/* --phase-times: after the timed runs (so every phase's inputs exist), each phase alone, timed
 * like the whole: "phase name=p1 avg_ms=.. median_ms=.. min_ms=.. max_ms=.. runs=..". A phase
 * the system or workload lacks is noted on stderr and left out. */
static void print_phase_times(const attnvar_args *a, const run_closure *run) {
  static const char *const names[ATTN_PHASE_COUNT] = ATTN_PHASE_NAMES;
  if (!run->sys->run_phase) {
    fprintf(stderr, "attnvar: %s has no phases to time\n", run->sys->name);
    return;
  }
  float *ms = hx_host_alloc((size_t)a->runs * sizeof *ms, "phase timings");
  for (int ph = 0; ph < ATTN_PHASE_COUNT; ph++) {
    phase_closure pc = {run, ph};
    int rc = run_phase_once(&pc);
    if (rc == HX_UNSUPPORTED) {
      fprintf(stderr, "attnvar: no phase %s: %s\n", names[ph], run->ctx->err);
      continue;
    }
    if (rc != HX_OK) hx_die_system(&run->ctx->hx, run->sys->name, rc);
    hx_timing how;
    rc = hx_time_runs(run->ctx->stream, run_phase_once, &pc, a->warmup, a->runs, ms, &how);
    if (rc != HX_OK) hx_die_system(&run->ctx->hx, run->sys->name, rc);
    hx_stats st = hx_stats_of(ms, a->runs, how);
    FILE *out = hx_log();
    fputs("phase", out);
    kv_put(out, "name", names[ph]);
    kv_putf(out, "avg_ms", HX_MS_FMT, st.avg_ms);
    kv_putf(out, "median_ms", HX_MS_FMT, st.median_ms);
    kv_putf(out, "min_ms", HX_MS_FMT, st.min_ms);
    kv_putf(out, "max_ms", HX_MS_FMT, st.max_ms);
    kv_putf(out, "runs", "%d", a->runs);
    fputc('\n', out);
    hx_log_flush();
  }
  hx_host_free(ms);
}

/* Device buffers of the cell: the inputs of inputs.def (NULL where the workload lacks one)
 * and the outputs. */
typedef struct {
  attn_io io;
  void *in[ATTN_INPUT_COUNT];
  void *out;
  float *score, *score2;
  uint8_t *flags;
  size_t nq, ns;
} cell_buffers;

/* The inputs of wl that every workload has (common) or only some have (!common). */
static void alloc_inputs(workload_id wl, const attn_shape *s, int common, cell_buffers *c) {
  for (int id = 0; id < ATTN_INPUT_COUNT; id++)
    if (attn_input_needed((attn_input_id)id, wl) && attn_input_common((attn_input_id)id) == common)
      c->in[id] = hx_dev_alloc(attn_input_bytes((attn_input_id)id, s), attn_input_table[id].name);
}

/* attn_io's input fields from the table's buffers. */
static void io_set_inputs(const cell_buffers *c, attn_io *io) {
#define ATTN_INPUT(name, ...) io->name = c->in[ATTN_IN_##name];
#include "inputs.def"
#undef ATTN_INPUT
}

/* Allocation order: the buffers every workload has (q, k, v, out), then the workload's own
 * inputs, then its own outputs. */
static void cell_alloc(workload_id wl, const attn_shape *s, cell_buffers *c) {
  const workload_info *w = &workload_table[wl];
  memset(c, 0, sizeof *c);
  c->nq = shape_q_elems(s);
  c->ns = shape_score_elems(s);
  alloc_inputs(wl, s, 1, c);
  c->out = hx_dev_alloc(c->nq * 2, "out");
  alloc_inputs(wl, s, 0, c);
  if (w->score_name) c->score = hx_dev_alloc(c->ns * sizeof(float), "score");
  if (w->score2_name) c->score2 = hx_dev_alloc(c->ns * sizeof(float), "score2");
  if (w->flags_name) c->flags = hx_dev_alloc(c->ns, "flags");
  io_set_inputs(c, &c->io);
  c->io.out = c->out;
  c->io.score = c->score;
  c->io.score2 = c->score2;
  c->io.flags = c->flags;
}

static void cell_free(cell_buffers *c) {
  for (int id = 0; id < ATTN_INPUT_COUNT; id++) hx_dev_free(c->in[id]);
  void *outs[] = {c->out, c->score, c->score2, c->flags};
  for (size_t i = 0; i < sizeof outs / sizeof *outs; i++) hx_dev_free(outs[i]);
  memset(c, 0, sizeof *c);
}

/* How each input is drawn on the device: a FILL_NORMAL stream, a FILL_GEN generator, or
 * neither (FILL_GEN with no device generator): then the host draws it and the device gets a
 * copy. */
typedef struct {
  uint32_t stream; /* nonzero: FILL_NORMAL from this stream */
  gpuref_fill_fn gen;
} dev_fill;

static const dev_fill dev_fills[ATTN_INPUT_COUNT] = {
#define FILL_NORMAL(stream) \
  { stream, NULL }
#define FILL_GEN(host_fn, dev_fn) \
  { 0, dev_fn }
#define ATTN_INPUT(name, elem, elems, needed, host, fill, ...) fill,
#include "inputs.def"
#undef ATTN_INPUT
#undef FILL_GEN
#undef FILL_NORMAL
};

static void fill_input(attn_input_id id, const attn_shape *s, uint64_t seed, const attn_ctx *ctx,
                       void *dst) {
  const dev_fill *f = &dev_fills[id];
  size_t n = attn_input_elems(id, s), bytes = attn_input_bytes(id, s);
  if (f->stream) {
    hx_dev_fill_normal(dst, n, seed, f->stream, s->dtype == DTYPE_BF16, ctx->stream);
  } else if (f->gen) {
    f->gen(dst, n, s, seed, ctx->stream);
  } else { /* drawn on the host, one copy read by every system */
    char what[64];
    snprintf(what, sizeof what, "%s (host)", attn_input_table[id].name);
    void *h = hx_host_alloc(bytes, what);
    ref_input_fill(id, s, seed, h);
    hx_host_to_dev(dst, h, bytes);
    hx_host_free(h);
  }
}

static void cell_fill(const attn_shape *s, uint64_t seed, const attn_ctx *ctx, cell_buffers *c) {
  for (int id = 0; id < ATTN_INPUT_COUNT; id++)
    if (c->in[id]) fill_input((attn_input_id)id, s, seed, ctx, c->in[id]);
  HX_CUDA(cudaStreamSynchronize(ctx->stream));
}

static void cell_poison(const cell_buffers *c, const attn_ctx *ctx) {
  hx_dev_poison(c->out, c->nq * 2, ctx->stream);
  hx_dev_poison(c->score, c->ns * sizeof(float), ctx->stream);
  hx_dev_poison(c->score2, c->ns * sizeof(float), ctx->stream);
  hx_dev_poison(c->flags, c->ns, ctx->stream);
}

/* Host copy of a device buffer (NULL stays NULL), counted as host memory. */
static void *host_copy(const void *dev, size_t bytes) {
  if (!dev) return NULL;
  void *h = hx_host_alloc(bytes, "host copy");
  hx_dev_to_host(h, dev, bytes);
  return h;
}

/* Elements of a and b (n of elem_bytes each) whose bits differ. */
static size_t elems_differing(const void *a, const void *b, size_t n, size_t elem_bytes) {
  const unsigned char *x = a, *y = b;
  size_t differ = 0;
  for (size_t e = 0; e < n; e++)
    differ += memcmp(x + e * elem_bytes, y + e * elem_bytes, elem_bytes) != 0;
  return differ;
}

/* Copies of the device inputs the CPU references read, and one check line saying whether the
 * host generator reproduces them bit for bit (the promise of rng.h). */
static int inputs_from_device(workload_id wl, const attn_shape *s, uint64_t seed,
                              const cell_buffers *c, ref_host_inputs *dev_in) {
#define ATTN_INPUT(name, ...)                                                                \
  dev_in->name = attn_input_table[ATTN_IN_##name].host                                       \
                     ? host_copy(c->in[ATTN_IN_##name], attn_input_bytes(ATTN_IN_##name, s)) \
                     : NULL;
#include "inputs.def"
#undef ATTN_INPUT
  ref_host_inputs host_in;
  ref_inputs_generate(wl, s, seed, &host_in);
  size_t differ = 0, n = 0;
  for (int id = 0; id < ATTN_INPUT_COUNT; id++) {
    const void *got = ref_host_input(dev_in, (attn_input_id)id);
    if (!got) continue;
    size_t elems = attn_input_elems((attn_input_id)id, s);
    differ += elems_differing(got, ref_host_input(&host_in, (attn_input_id)id), elems,
                              attn_input_table[id].elem_bytes);
    n += elems;
  }
  ref_inputs_free(&host_in);
  hx_check chk;
  memset(&chk, 0, sizeof chk);
  chk.is_bool = 1;
  chk.n = n;
  chk.mismatches = differ;
  chk.max_abs = differ ? 1 : 0;
  chk.ok = differ == 0;
  hx_print_check("inputs_host_vs_device", &chk);
  return chk.ok;
}

/* A device-to-device 2-D copy on the cell's stream (attn_sample_gather's copy). */
static void copy2d_device(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                          size_t height, void *arg) {
  const attn_ctx *ctx = arg;
  HX_CUDA(cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height, cudaMemcpyDeviceToDevice,
                            ctx->stream));
}

/* The sampled groups' part of every input of the cell, in device buffers of the compact cell
 * (a shared input: the cell's own buffer). */
static void sample_inputs(const attn_shape *s, const attn_sample *smp, const cell_buffers *c,
                          const attn_ctx *ctx, cell_buffers *cc) {
  memset(cc, 0, sizeof *cc);
  for (int id = 0; id < ATTN_INPUT_COUNT; id++) {
    if (!c->in[id]) continue;
    attn_slice sl = attn_input_slice((attn_input_id)id, s);
    if (sl.shared) {
      cc->in[id] = c->in[id];
      continue;
    }
    size_t es = attn_input_table[id].elem_bytes;
    cc->in[id] = hx_dev_alloc(attn_slice_elems(sl) * es * (size_t)smp->n, "check sample");
    attn_sample_gather(smp, sl, es, c->in[id], cc->in[id], copy2d_device, (void *)ctx);
  }
  io_set_inputs(cc, &cc->io);
  HX_CUDA(cudaStreamSynchronize(ctx->stream));
}

/* One host output's sampled part (NULL stays NULL). */
static void *sample_host(const attn_sample *smp, attn_slice sl, size_t es, const void *full) {
  if (!full) return NULL;
  void *part = hx_host_alloc(attn_slice_elems(sl) * es * (size_t)smp->n, "check sample");
  attn_sample_gather(smp, sl, es, full, part, attn_copy2d_host, NULL);
  return part;
}

/* The GPU reference's form for the system's check (--gpuref). */
static gpuref_impl gpuref_form(const attnvar_args *a) {
  return a->gpuref == GPUREF_ONLY_NAIVE ? GPUREF_NAIVE : GPUREF_TILED;
}
/* The reference's outputs for inputs io of shape s into want (ref_outputs_alloc'ed here); its
 * wall time in ms. */
static double run_gpuref(const attnvar_args *a, const attn_ctx *ctx, const attn_shape *s,
                         const attn_io *io, ref_outputs *want, gpuref_impl form) {
  ref_outputs_alloc(a->workload, s, want);
  const double t0 = hx_wall_ms();
  gpuref_run(ctx, a->workload, s, io, want, form);
  return hx_wall_ms() - t0;
}
/* After the system's check against want (the form gpuref_form picks, ms its time): with --gpuref
 * both, the naive form's outputs on the same inputs against want (check lines gpuref.*); then
 * the check_ref line: the form, its time, and the naive one's. */
static int check_gpuref_forms(const attnvar_args *a, const attn_ctx *ctx, const attn_shape *s,
                              const attn_io *io, const ref_outputs *want, double ms) {
  int ok = 1;
  double naive_ms = 0.0;
  if (a->gpuref == GPUREF_BOTH) {
    ref_outputs naive;
    naive_ms = run_gpuref(a, ctx, s, io, &naive, GPUREF_NAIVE);
    ok = attn_check_ref_pair(a->workload, s, &naive, want, &ATTN_TOL_GPUREF, "gpuref.");
    ref_outputs_free(&naive);
  }
  FILE *out = hx_log();
  fputs("check_ref", out);
  kv_put(out, "reference", gpuref_form(a) == GPUREF_NAIVE ? "gpu-naive" : "gpu-tiled");
  kv_putf(out, "ms", "%.1f", ms);
  if (a->gpuref == GPUREF_BOTH) {
    kv_put(out, "against", "gpu-naive");
    kv_putf(out, "against_ms", "%.1f", naive_ms);
  }
  fputc('\n', out);
  hx_log_flush();
  return ok;
}

/* The GPU reference against got: on every group, or (--check-pairs N) on N sampled ones. */
static int check_gpuref(const attnvar_args *a, const attn_ctx *ctx, const cell_buffers *c,
                        const attn_host_outputs *got, const attn_tolerance *tol) {
  const attn_shape *s = &a->shape;
  attn_sample smp;
  attn_sample_draw(s, a->check_pairs, a->seed, &smp);
  ref_outputs want;
  if (smp.n == 0) {
    const double ms = run_gpuref(a, ctx, s, &c->io, &want, gpuref_form(a));
    int ok = attn_check_outputs(a->workload, s, &want, got, tol);
    ok &= check_gpuref_forms(a, ctx, s, &c->io, &want, ms);
    ref_outputs_free(&want);
    return ok;
  }
  attn_sample_print(&smp, s);
  attn_shape cs = attn_sample_shape(s, &smp);
  cell_buffers cc;
  sample_inputs(s, &smp, c, ctx, &cc);
  const double ms = run_gpuref(a, ctx, &cs, &cc.io, &want, gpuref_form(a));
  attn_slice so = attn_out_slice(s), sc = attn_score_slice(s);
  attn_host_outputs part = {
      sample_host(&smp, so, 2, got->out), sample_host(&smp, sc, 4, got->score),
      sample_host(&smp, sc, 4, got->score2), sample_host(&smp, sc, 1, got->flags)};
  int ok = attn_check_outputs(a->workload, &cs, &want, &part, tol);
  ok &= check_gpuref_forms(a, ctx, &cs, &cc.io, &want, ms);
  hx_host_free((void *)part.out);
  hx_host_free((void *)part.score);
  hx_host_free((void *)part.score2);
  hx_host_free((void *)part.flags);
  ref_outputs_free(&want);
  for (int id = 0; id < ATTN_INPUT_COUNT; id++)
    if (cc.in[id] != c->in[id]) hx_dev_free(cc.in[id]);
  attn_sample_free(&smp);
  return ok;
}

/* Run the system once on poisoned outputs and compare every output; returns 1 when all pass. */
static int check_cell(const attnvar_args *a, const attn_ctx *ctx, const run_closure *run,
                      const cell_buffers *c) {
  const attn_shape *s = &a->shape;
  cell_poison(c, ctx);
  int rc = run_once((void *)run);
  if (rc != HX_OK) hx_die_system(&ctx->hx, run->sys->name, rc);
  HX_CUDA(cudaStreamSynchronize(ctx->stream));
  HX_CUDA_LAUNCH();

  attn_host_outputs got = {host_copy(c->out, c->nq * 2), host_copy(c->score, c->ns * 4),
                           host_copy(c->score2, c->ns * 4), host_copy(c->flags, c->ns)};
  const attn_tolerance tol = attn_tol_gpu(a->workload, s->dtype);
  int ok = 1;
  if (a->gpuref == GPUREF_AUTO && workload_macs(a->workload, s) <= (double)CHECK_CPU_MAX_MACS) {
    ref_outputs want;
    ref_outputs_alloc(a->workload, s, &want);
    ref_host_inputs dev_in;
    ok &= inputs_from_device(a->workload, s, a->seed, c, &dev_in);
    ref_inputs in = ref_inputs_of(&dev_in);
    ref_run(a->workload, s, &in, &want);
    ref_inputs_free(&dev_in);
    ok &= attn_check_outputs(a->workload, s, &want, &got, &tol);
    ref_outputs_free(&want);
  } else {
    if (!gpuref_supports(s))
      hx_die(REPRO_EXIT_UNSUPPORTED, "unsupported",
             "no reference for this shape (the GPU reference needs dim <= 256); use --no-check");
    ok &= check_gpuref(a, ctx, c, &got, &tol);
  }
  hx_host_free((void *)got.out);
  hx_host_free((void *)got.score);
  hx_host_free((void *)got.score2);
  hx_host_free((void *)got.flags);
  return ok;
}

int attnvar_run_gpu(const attnvar_args *a) {
  attn_ctx ctx;
  hx_device_info info;
  char why[256] = "";
  if (!hx_gpu_available(why, sizeof why)) { /* still a complete log: header, config, result */
    hx_device_info_cpu(&info);
    hx_print_header(&info);
    attnvar_print_config(a, "gpu", system_table[a->system].name, NULL);
    hx_die(REPRO_EXIT_ERROR, "error", "%s", why);
  }
  memset(&ctx, 0, sizeof ctx);
  hx_gpu_init(&ctx.hx, &info);
  ctx.force_sm80 = a->force_sm80;
  ctx.sm90_fwd = a->sm90_fwd;
  ctx.sm90_rows = a->sm90_rows;
  ctx.opt.diag_k = a->diag_k;
  ctx.opt.cache_fp16 = a->cache_fp16;
  hx_print_header(&info);
  const attn_system *sys = system_table[a->system].gpu;
  if (!sys)
    hx_die(REPRO_EXIT_UNSUPPORTED, "unsupported", "%s has no GPU implementation in this build",
           system_table[a->system].name);
  const attn_shape *s = &a->shape;
  const char *impl = sys->impl ? sys->impl(&ctx, a->workload, s) : sys->name;
  attnvar_print_config(a, "gpu", impl, &ctx);

  if (sys->supports(&ctx, a->workload, s, why, sizeof why) != HX_OK)
    hx_die(REPRO_EXIT_UNSUPPORTED, "unsupported", "%s: %s", sys->name,
           why[0] ? why : "unsupported");

  cell_buffers c;
  cell_alloc(a->workload, s, &c);
  size_t ws_bytes = sys->workspace_bytes(&ctx, a->workload, s);
  void *ws = ws_bytes ? hx_dev_alloc(ws_bytes, "system workspace") : NULL;
  cell_fill(s, a->seed, &ctx, &c);
  run_closure run = {sys, &ctx, a->workload, s, &c.io, ws};

  if (a->check && !check_cell(a, &ctx, &run, &c)) {
    hx_print_result_status("error", "check failed: see the check lines with ok=0");
    return REPRO_EXIT_CHECK_FAILED;
  }

  /* peak_mib: inputs, outputs, workspace, cuBLAS workspace (the check's buffers are gone) */
  hx_dev_reset_peak();
  float *ms = hx_host_alloc((size_t)a->runs * sizeof *ms, "timings");
  hx_timing how;
  int rc = hx_time_runs(ctx.stream, run_once, &run, a->warmup, a->runs, ms, &how);
  if (rc != HX_OK) hx_die_system(&ctx.hx, sys->name, rc);
  hx_stats st = hx_stats_of(ms, a->runs, how);
  if (a->phase_times) print_phase_times(a, &run);
  hx_print_result_ok(&st, ms, a->runs, a->warmup, workload_gflop(a->workload, s),
                     (double)hx_dev_peak_bytes());

  hx_host_free(ms);
  hx_dev_free(ws);
  cell_free(&c);
  hx_gpu_shutdown(&ctx.hx);
  return REPRO_EXIT_OK;
}
