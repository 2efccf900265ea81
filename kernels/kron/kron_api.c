/* kron_api.c: v3 as a library (kron_api.h): plans per shape, dtype and device, and the forward
 * and backward on caller-owned buffers through kron_algo.c's call sequences, on the CPU backend
 * (kron_cpu.c) or, built with KRON_API_CUDA, v3's launches on the caller's stream
 * (kron_launch.cu). Every call runs inside a frame that a failure in the kernels' code unwinds
 * to (kron_api_harness.c), so the caller gets -1 and the reason instead of an exit. */
#include "kron_api.h"

#include <setjmp.h>
#include <string.h>

#ifdef KRON_API_CUDA
#include "kron_launch.h"
#endif

struct kron_api_frame {
  jmp_buf env;
  char *why;
  size_t why_len;
};

static _Thread_local kron_api_frame *current;

kron_api_frame *kron_api_current(void) { return current; }

void kron_api_unwind(kron_api_frame *f, const char *msg) {
  if (f->why && f->why_len) snprintf(f->why, f->why_len, "%s", msg);
  longjmp(f->env, 1);
}

/* fn(arg) inside a frame: 0, or -1 with why when it failed through the harness */
typedef void (*guarded_fn)(void *arg);
static int guarded(guarded_fn fn, void *arg, char *why, size_t why_len) {
  kron_api_frame f;
  f.why = why;
  f.why_len = why_len;
  kron_api_frame *const outer = current;
  current = &f;
  if (setjmp(f.env)) {
    current = outer;
    return -1;
  }
  fn(arg);
  current = outer;
  return 0;
}

static int fail(char *why, size_t why_len, const char *msg) {
  snprintf(why, why_len, "%s", msg);
  return -1;
}

int kron_api_has_cuda(void) {
#ifdef KRON_API_CUDA
  return 1;
#else
  return 0;
#endif
}

/* ---- plans --------------------------------------------------------------------------------- */
typedef struct {
  kron_api_plan *p;
  kron_plan_cfg cfg;
  int rc;
  char *why;
  size_t why_len;
} make_args;

/* the device's limits into the plan config (CUDA plans: the current device must be p->device) */
static void device_limits(void *arg) {
  make_args *a = arg;
  kron_api_plan *p = a->p;
  if (p->device == KRON_API_CPU) {
    kron_plan_cfg cfg = {
        KRON_CPU_SMEM_BLOCK, KRON_CPU_SMEM_SM, KRON_CPU_NSM, KRON_FUSE_AUTO, KRON_TC_AUTO, 0, 0,
        KRON_ROUTE_STAGES}; /* the library launches v3's kernels only: no cuBLAS */
    a->cfg = cfg;
    return;
  }
#ifdef KRON_API_CUDA
  kron_launch_limits lim;
  kron_launch_setup(&lim);
  if (lim.device != p->device) {
    snprintf(a->why, a->why_len, "the plan is for CUDA device %d but device %d is current",
             p->device, lim.device);
    a->rc = -1;
    return;
  }
  kron_plan_cfg cfg = {lim.smem_optin, lim.smem_sm, lim.nsm, KRON_FUSE_AUTO,
                       KRON_TC_AUTO,   0,           0,       KRON_ROUTE_STAGES};
  a->cfg = cfg;
  p->pdl = lim.cc_major >= 9;
  p->smem_optin = lim.smem_optin;
#endif
}

#ifdef KRON_API_CUDA
static void check_plans(void *arg) {
  make_args *a = arg;
  for (int i = 0; i < 2 && !a->rc; i++)
    a->rc = kron_launch_check_plan(&a->p->s, &a->p->plan[i], a->p->es, a->p->smem_optin, a->why,
                                   a->why_len);
}
#endif

int kron_api_plan_make(kron_api_plan *p, long long batch, int m, const int *f, int es, int device,
                       char *why, size_t why_len) {
  memset(p, 0, sizeof *p);
  if (es != 4 && es != 8)
    return fail(why, why_len, "the element size must be 4 (fp32) or 8 (fp64)");
  if (device < KRON_API_CPU) return fail(why, why_len, "device must be KRON_API_CPU or >= 0");
#ifndef KRON_API_CUDA
  if (device != KRON_API_CPU)
    return fail(why, why_len, "this build has no CUDA (built without KRON_API_CUDA)");
#endif
  if (kron_shape_init(&p->s, batch, m, f, why, why_len)) return -1;
  p->es = es;
  p->device = device;
  make_args a = {p, {0}, 0, why, why_len};
  if (guarded(device_limits, &a, why, why_len) || a.rc) return -1;
  for (int pass = 0; pass < 2; pass++)
    if (kron_plan_make(&p->s, es, (kron_pass)pass, &a.cfg, &p->plan[pass], why, why_len)) return -1;
#ifdef KRON_API_CUDA
  if (device != KRON_API_CPU && (guarded(check_plans, &a, why, why_len) || a.rc)) return -1;
#endif
  return 0;
}

long long kron_api_saved_elems(const kron_api_plan *p) {
  long long saved, scratch, part;
  kron_ws_elems(&p->s, KRON_V3, &p->plan[0], &p->plan[1], &saved, &scratch, &part);
  return saved;
}

long long kron_api_scratch_elems(const kron_api_plan *p) {
  long long saved, scratch, part;
  kron_ws_elems(&p->s, KRON_V3, &p->plan[0], &p->plan[1], &saved, &scratch, &part);
  return scratch;
}

void kron_api_describe(const kron_api_plan *p, kron_pass pass, char *dst, size_t cap) {
  kron_plan_describe(&p->s, &p->plan[pass], dst, cap);
}

/* ---- runs ---------------------------------------------------------------------------------- */
typedef struct {
  const kron_api_plan *p;
  void *stream;
  kron_pass pass;
  kron_bufs b;
} run_args;

static void run_on(kron_be *be, const run_args *a) {
  const kron_api_plan *p = a->p;
  if (a->pass == KRON_FWD)
    kron_run_fwd(be, KRON_V3, &p->s, &p->plan[0], &a->b);
  else
    kron_run_bwd(be, KRON_V3, &p->s, &p->plan[0], &p->plan[1], &a->b);
}

static void run_v3(void *arg) {
  const run_args *a = arg;
  const kron_api_plan *p = a->p;
  kron_be be;
  if (p->device == KRON_API_CPU) {
    kron_cpu_backend(&be, p->es);
    run_on(&be, a);
    return;
  }
#ifdef KRON_API_CUDA
  kron_launcher L;
  memset(&L, 0, sizeof L);
  L.stream = a->stream;
  L.pdl = p->pdl;
  L.smem_optin = p->smem_optin;
  L.fits_checked = 1; /* kron_api_plan_make checked every kernel of both plans */
  memset(&be, 0, sizeof be);
  be.es = p->es;
  kron_launch_backend(&be, &L);
  run_on(&be, a);
#endif
}

/* the buffers a pass needs, each named when missing */
static int check_bufs(const kron_api_plan *p, const kron_bufs *b, kron_pass pass, char *why,
                      size_t why_len) {
  const char *missing = !b->x ? "x" : NULL;
  for (int k = 0; k < p->s.m && !missing; k++)
    if (!b->Ak[k]) {
      snprintf(why, why_len, "kron_api_%s: the buffer A[%d] (factor %d) is NULL",
               pass == KRON_FWD ? "fwd" : "bwd", k, k + 1);
      return -1;
    }
  if (!missing && pass == KRON_FWD && !b->y) missing = "y";
  if (!missing && pass == KRON_BWD) missing = !b->gy ? "gy" : !b->gx ? "gx" : !b->gA ? "gA" : NULL;
  if (!missing && !b->saved && kron_api_saved_elems(p)) missing = "saved";
  if (!missing && pass == KRON_BWD && !b->scratch && kron_api_scratch_elems(p)) missing = "scratch";
  if (!missing) return 0;
  snprintf(why, why_len, "kron_api_%s: the buffer %s is NULL", pass == KRON_FWD ? "fwd" : "bwd",
           missing);
  return -1;
}

/* one pass of v3 on the buffers b, after checking that the pass has every buffer it needs */
static int run_pass(const kron_api_plan *p, void *stream, kron_pass pass, const kron_bufs *b,
                    char *why, size_t why_len) {
  if (check_bufs(p, b, pass, why, why_len)) return -1;
  run_args a = {p, stream, pass, *b};
  return guarded(run_v3, &a, why, why_len);
}

/* the factors' pointers into b (none when A is NULL: check_bufs names A[0]) */
static void set_factors(const kron_api_plan *p, kron_bufs *b, const void *const *A) {
  for (int k = 0; A && k < p->s.m; k++) b->Ak[k] = A[k];
}

int kron_api_fwd(const kron_api_plan *p, void *stream, const void *x, const void *const *A, void *y,
                 void *saved, char *why, size_t why_len) {
  kron_bufs b;
  memset(&b, 0, sizeof b);
  b.x = (void *)x;
  set_factors(p, &b, A);
  b.y = y;
  b.saved = saved;
  return run_pass(p, stream, KRON_FWD, &b, why, why_len);
}

int kron_api_bwd(const kron_api_plan *p, void *stream, const void *x, const void *const *A,
                 const void *saved, const void *gy, void *gx, void *gA, void *scratch, char *why,
                 size_t why_len) {
  kron_bufs b;
  memset(&b, 0, sizeof b);
  b.x = (void *)x;
  set_factors(p, &b, A);
  b.saved = (void *)saved;
  b.gy = (void *)gy;
  b.gx = gx;
  b.gA = gA;
  b.scratch = scratch;
  return run_pass(p, stream, KRON_BWD, &b, why, why_len);
}
