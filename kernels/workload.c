/* workload.c: the workload table and buffer sizes (see workload.h). */
#include "workload.h"

const workload_info workload_table[WL_COUNT] = {
    [WL_ATTN] = {"attn", NULL, NULL, NULL, 0, 0},
    [WL_H2O] = {"h2o", "h2o_score", NULL, NULL, 0, 0},
    [WL_ROCO] = {"roco", "roco_score", "roco_sq_score", NULL, 0, 0},
    [WL_KF] = {"kf", "kf_score", NULL, NULL, 1, 0},
    [WL_SNAPKV] = {"snapkv", "snapkv_score", NULL, NULL, 0, 0},
    [WL_CORM] = {"corm", NULL, NULL, "corm_score", 0, 1},
    [WL_GEMMA2] = {"gemma2", NULL, NULL, NULL, 0, 0},
};

const char *const workload_names[WL_COUNT] = {"attn", "h2o", "roco", "kf",
                                              "snapkv", "corm", "gemma2"};

size_t shape_q_elems(const attn_shape *s) {
  return (size_t)s->batch * s->q_len * s->heads * s->dim;
}
size_t shape_kv_elems(const attn_shape *s) {
  return (size_t)s->batch * s->kv_len * s->heads * s->dim;
}
size_t shape_score_elems(const attn_shape *s) {
  return (size_t)s->batch * s->heads * s->kv_len;
}
size_t shape_exp_rand_elems(const attn_shape *s) {
  return (size_t)s->batch * s->heads * s->q_len * s->kv_len;
}
size_t shape_corm_mask_elems(const attn_shape *s) { return (size_t)s->q_len * s->kv_len; }

double workload_gflop(const attn_shape *s) {
  return 4.0 * s->batch * s->heads * (double)s->q_len * s->kv_len * s->dim / 2.0 / 1e9;
}
