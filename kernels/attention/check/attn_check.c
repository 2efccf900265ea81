/* attn_check.c: one check line per output of a workload (see attn_check.h). */
#include "attn_check.h"

#include "harness.h"
#include "workload.h"

#include <math.h>
#include <stdio.h>

const attn_tolerance ATTN_TOL_CPU = {1e-9, 1e-9, 1e-9};
const attn_tolerance ATTN_TOL_GPUREF = {1e-5, 1e-5, 1e-5};

attn_tolerance attn_tol_gpu(workload_id wl, attn_dtype dtype) {
  const workload_info *w = &workload_table[wl];
  /* bf16 keeps 8 mantissa bits to fp16's 11: its roundings of P and out are 8x coarser */
  double scale = dtype == DTYPE_BF16 ? ATTN_BF16_TOL_SCALE : 1.0;
  attn_tolerance t = {w->tol_rel_l2 * scale, w->tol_max_abs * scale, ATTN_FLAG_MARGIN_GPU * scale};
  return t;
}

typedef enum { GOT_F16, GOT_BF16, GOT_F32, GOT_F64 } got_kind;

static int check_one(const char *prefix, const char *output, got_kind kind, const void *got,
                     const double *want, size_t n, const attn_tolerance *tol) {
  char name[128];
  snprintf(name, sizeof name, "%s%s", prefix, output);
  double lim = tol->max_abs_scale * fmax(1.0, hx_max_abs_f64(want, n));
  hx_check c = kind == GOT_F16    ? hx_compare_f16(got, want, n, tol->rel_l2, lim)
               : kind == GOT_BF16 ? hx_compare_bf16(got, want, n, tol->rel_l2, lim)
               : kind == GOT_F32  ? hx_compare_f32(got, want, n, tol->rel_l2, lim)
                                  : hx_compare_f64(got, want, n, tol->rel_l2, lim);
  hx_print_check(name, &c);
  return c.ok;
}

/* out first, then the workload's scores and flags, in the order of workload_table. */
static int check_all(const char *prefix, workload_id wl, const attn_shape *s,
                     const ref_outputs *want, got_kind out_kind, const void *out,
                     got_kind score_kind, const void *score, const void *score2,
                     const uint8_t *flags, const attn_tolerance *tol) {
  const workload_info *w = &workload_table[wl];
  size_t ns = shape_score_elems(s);
  int ok = check_one(prefix, "out", out_kind, out, want->out, shape_q_elems(s), tol);
  if (w->score_name)
    ok &= check_one(prefix, w->score_name, score_kind, score, want->score, ns, tol);
  if (w->score2_name)
    ok &= check_one(prefix, w->score2_name, score_kind, score2, want->score2, ns, tol);
  if (w->flags_name) {
    char name[128];
    snprintf(name, sizeof name, "%s%s", prefix, w->flags_name);
    hx_check c = hx_compare_bool(flags, want->corm_margin, ns, tol->corm_margin);
    hx_print_check(name, &c);
    ok &= c.ok;
  }
  return ok;
}

int attn_check_outputs(workload_id wl, const attn_shape *s, const ref_outputs *want,
                       const attn_host_outputs *got, const attn_tolerance *tol) {
  return check_all("", wl, s, want, s->dtype == DTYPE_BF16 ? GOT_BF16 : GOT_F16, got->out, GOT_F32,
                   got->score, got->score2, got->flags, tol);
}

int attn_check_ref_outputs(workload_id wl, const attn_shape *s, const ref_outputs *want,
                           const ref_outputs *got, const attn_tolerance *tol) {
  return attn_check_ref_pair(wl, s, want, got, tol, "");
}

int attn_check_ref_pair(workload_id wl, const attn_shape *s, const ref_outputs *want,
                        const ref_outputs *got, const attn_tolerance *tol, const char *prefix) {
  return check_all(prefix, wl, s, want, GOT_F64, got->out, GOT_F64, got->score, got->score2,
                   got->flags, tol);
}
