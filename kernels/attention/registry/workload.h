/* workload.h: the workload registry (workloads.def) as C: the ids, one row of features per
 * workload, the shape of a cell and buffer sizes (a cell's flop count: cost.h). Host C and
 * CUDA C alike; the math of each feature is in the implementations (ref/, gpuref/, unfused/,
 * fused/).
 *
 * The inputs (q, k, v and those of the features: exp_rand, corm_mask, block_idx) are the rows
 * of inputs.def: element type, layout, size, which workloads have them, how they are drawn.
 * The outputs' layouts (row-major):
 *   out           fp16 [B, Lq,  H, D]      (the cell's dtype, like q)
 *   score         fp32 [B, Hkv, Lkv]       the column statistic (pooled when pool > 0)
 *   score2        fp32 [B, Hkv, Lkv]       the second statistic (COL_SUM_SQ)
 *   flags         uint8 [B, Hkv, Lkv]      0 or 1 (COL_ANY_GE_MASK)
 * GQA (Hkv = shape_kv_heads < H, attnvar --groups G = H / Hkv): query head h attends with K/V
 * head h / G, and the column statistics are per K/V head (one KV cache per K/V head): the
 * sum over the G query heads of its group (and every query) of the per-head statistic, the
 * any over them for flags; the pool applies to that sum. Hkv = H (G = 1) is MHA.
 * Causal mask: element (i, j) is masked when j > i + (Lkv - Lq). Scale 1/sqrt(D) unless the
 * cell sets another (attnvar --scale: shape_scale). */
#ifndef WORKLOAD_H
#define WORKLOAD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
#define WORKLOAD(id, ...) WL_##id,
#include "workloads.def"
#undef WORKLOAD
  WL_COUNT
} workload_id;

/* Feature values of workloads.def (its header says what each computes). */
typedef enum { LOGITS_SCALED, LOGITS_SOFTCAP } logits_kind;
typedef enum { KEYS_DENSE, KEYS_SELECTED_BLOCKS } keys_kind;
typedef enum { COL_NONE, COL_SUM, COL_SUM_SQ, COL_KEYFORMER, COL_ANY_GE_MASK } column_kind;
typedef enum { SEL_NONE, SEL_TOPK, SEL_TOPK_STD, SEL_FLAGS } select_kind;

#define KF_TAU         1.5f
#define GEMMA2_SOFTCAP 50.0f

typedef struct {
  const char *name; /* CLI and log name */
  logits_kind logits;
  keys_kind keys;
  column_kind column;
  int pool; /* 0, or the width of the average pool applied to score */
  select_kind select;
  const char *score_name, *score2_name, *flags_name; /* NULL when the output is absent */
  double tol_rel_l2, tol_max_abs;
} workload_info;

#ifdef __cplusplus
#define WORKLOAD_TABLE_CONST constexpr /* usable in templates and `if constexpr` */
#else
#define WORKLOAD_TABLE_CONST const
#endif
/* The registry, indexed by workload_id. */
static WORKLOAD_TABLE_CONST workload_info workload_table[WL_COUNT] = {
#define WORKLOAD(id, name, logits, keys, column, pool, select, score, score2, flags, rel, mx) \
  {name, logits, keys, column, pool, select, score, score2, flags, rel, mx},
#include "workloads.def"
#undef WORKLOAD
};

/* Each query attends to its selected key blocks (block_idx input, GQA, --scale). */
static inline int workload_selected_blocks(workload_id wl) {
  return workload_table[wl].keys == KEYS_SELECTED_BLOCKS;
}
/* A column statistic needs a second pass over the keys and the row log-sum-exp. */
static inline int workload_has_column_pass(workload_id wl) {
  return workload_table[wl].column != COL_NONE;
}

/* The names alone, in registry order (for option parsing). */
static const char *const workload_names[WL_COUNT] = {
#define WORKLOAD(id, name, ...) name,
#include "workloads.def"
#undef WORKLOAD
};

/* Index of name, or -1. */
int workload_find(const char *name);
/* 1 when the row is consistent and uses only logits kinds in logits_set, key sets in keys_set
 * and column statistics in column_set (bit sets, FEATURE_BIT(x)): what an implementation that
 * knows those features can run. ~0u means "every feature workload.h defines". */
#define FEATURE_BIT(x) (1u << (unsigned)(x))
int workload_features_within(const workload_info *w, unsigned logits_set, unsigned keys_set,
                             unsigned column_set);
/* NULL when the row is consistent (its features have the outputs they write, its selection
 * the statistic it reads), else why not; static storage. */
const char *workload_row_problem(const workload_info *w);
/* names joined with '|' into buf (cap bytes, truncated to fit); returns buf. */
const char *names_join(const char *const *names, int n, char *buf, size_t cap);
/* "attn|h2o|..." for usage strings; static storage. */
const char *workload_choices(void);
/* One name per line (--list-workloads). */
void workload_list(FILE *out);

/* The mask: zero is the paper's causal mask, so a zero-initialised shape is causal. */
typedef enum { MASK_CAUSAL = 0, MASK_NONE } attn_mask;
/* The element type of q, k, v and out (16-bit storage; softmax and accumulation in fp32). */
typedef enum { DTYPE_FP16 = 0, DTYPE_BF16 } attn_dtype;

/* One cell's problem: sizes, mask, element type, softmax scale, K/V heads (GQA), and
 * (KEYS_SELECTED_BLOCKS cells only; zero elsewhere) the block selection. */
typedef struct {
  int batch, heads, dim;
  int q_len, kv_len; /* prefill: q_len == kv_len == seqlen */
  attn_mask mask;
  attn_dtype dtype;
  int kv_heads;        /* K/V heads, dividing H; H / kv_heads query heads share one (0: H, MHA).
                          attnvar's --groups G is the query heads per K/V head: kv_heads = H/G
                          (every workload: GQA for the dense ones too) */
  int block_size;      /* BS: keys per block */
  int selected_blocks; /* T: entries of each query's block list */
  double scale;        /* softmax scale (0: 1/sqrt(D)) */
  int corm_varied;     /* corm_mask varies along each row (attnvar --corm-mask varied: a test of
                          the kernels' general path; 0: CoRM's 1/(i+1), constant along a row) */
} attn_shape;
/* The selected-block fields, scale and corm_varied of a dense cell, for positional initialisers:
 * {B, H, D, Lq, Lkv, mask, dtype, ATTN_DENSE}. */
#define ATTN_DENSE 0, 0, 0, 0.0, 0

/* "fp16" | "bf16" (log and CLI names). */
const char *dtype_name(attn_dtype dtype);
/* Query row i sees key j when j <= i + mask_offset: Lkv - Lq for the causal mask (the
 * bottom-right aligned diagonal), Lkv (every key) without a mask. Every implementation masks
 * through this one number. */
static inline int mask_offset(const attn_shape *s) {
  return s->mask == MASK_NONE ? s->kv_len : s->kv_len - s->q_len;
}

/* K/V heads: kv_heads, or H when kv_heads is 0. */
static inline int shape_kv_heads(const attn_shape *s) {
  return s->kv_heads > 0 ? s->kv_heads : s->heads;
}
/* G, the query heads per K/V head (attnvar's --groups): H / Hkv, 1 for MHA. Query head h
 * attends with K/V head h / G. */
static inline int shape_groups(const attn_shape *s) { return s->heads / shape_kv_heads(s); }
/* The softmax scale: scale, or 1/sqrt(D) when it is 0 (the default of every workload). */
double shape_scale(const attn_shape *s);

/* Element counts of buffers (the inputs': attn_input_elems). */
size_t shape_q_elems(const attn_shape *s);     /* q and out: B * Lq * H * D */
size_t shape_kv_elems(const attn_shape *s);    /* k and v:   B * Lkv * Hkv * D */
size_t shape_score_elems(const attn_shape *s); /* B * Hkv * Lkv: per K/V head */

/* (i, j) is masked when j > i + mask_offset (never, without a mask). */
static inline int causal_masked(const attn_shape *s, int i, int j) {
  return j > i + mask_offset(s);
}

/* ---- the inputs of a cell (inputs.def) ------------------------------------------------- */

/* The RNG streams (rng.h) of the inputs drawn from one: inputs.def's FILL_NORMAL rows, kf's
 * noise (kf_exp_rand, kf_draw.h) and nsa's block lists (selected_blocks.c). One per tensor, all
 * below RNG_STREAM_USER, where other programs' own tensors start. */
enum {
  RNG_STREAM_Q = 1,
  RNG_STREAM_K = 2,
  RNG_STREAM_V = 3,
  RNG_STREAM_EXP_RAND = 4,
  RNG_STREAM_BLOCK_IDX = 5,
  RNG_STREAM_CHECK_SAMPLE = 6 /* the groups a check of sampled groups draws (check_sample.h) */
};

/* Element types of the inputs (inputs.def's elem column). */
typedef enum { ELEM_DTYPE, ELEM_F32, ELEM_I32 } attn_elem;
/* An element's C type on the host (ref_inputs: attn_host_##elem) and in attn_io
 * (attn_io_##elem), where the 16-bit elements are void: the cell's dtype says fp16 or bf16,
 * and each system casts to its own type. */
typedef uint16_t attn_host_ELEM_DTYPE;
typedef float attn_host_ELEM_F32;
typedef int32_t attn_host_ELEM_I32;
typedef void attn_io_ELEM_DTYPE;
typedef float attn_io_ELEM_F32;
typedef int32_t attn_io_ELEM_I32;

typedef enum {
#define ATTN_INPUT(name, ...) ATTN_IN_##name,
#include "inputs.def"
#undef ATTN_INPUT
  ATTN_INPUT_COUNT
} attn_input_id;

typedef struct {
  const char *name; /* the field of attn_io and ref_inputs, the allocation's name */
  attn_elem elem;
  size_t elem_bytes;
  int host; /* the CPU references read it: the host draws it too */
} attn_input_info;

/* How one (batch b, K/V head g) group's part is cut from a buffer read as [B, A, C, E]
 * (inputs.def's slice column; check/check_sample.h): the indices [g n, g n + n) of dimension
 * dim (1: A, 2: C) for every index of the other two; shared: a buffer without a batch
 * dimension, whole for every group. */
typedef struct {
  int shared, dim;
  long long A, C, E, n;
} attn_slice;
static inline attn_slice attn_slice_make(int shared, int dim, long long A, long long C, long long E,
                                         long long n) {
  attn_slice sl = {shared, dim, A, C, E, n};
  return sl;
}
#define SLICE(dim, A, C, E, n) attn_slice_make(0, (dim), (A), (C), (E), (n))
#define SLICE_SHARED           attn_slice_make(1, 0, 0, 0, 0, 0)

/* The inputs, indexed by attn_input_id. */
static WORKLOAD_TABLE_CONST attn_input_info attn_input_table[ATTN_INPUT_COUNT] = {
#define ATTN_INPUT(name, elem, elems, needed, host, fill, ...) \
  {#name, elem, sizeof(attn_host_##elem), host},
#include "inputs.def"
#undef ATTN_INPUT
};

/* 1 when workload wl has input id (inputs.def's needed column). */
static inline int attn_input_needed(attn_input_id id, workload_id wl) {
  const workload_info *w = &workload_table[wl];
  (void)w;
  switch (id) {
#define ATTN_INPUT(name, elem, elems, needed, ...) \
  case ATTN_IN_##name:                             \
    return (needed) ? 1 : 0;
#include "inputs.def"
#undef ATTN_INPUT
  default: return 0;
  }
}
/* 1 when every workload of the registry has input id. */
static inline int attn_input_common(attn_input_id id) {
  for (int wl = 0; wl < WL_COUNT; wl++)
    if (!attn_input_needed(id, (workload_id)wl)) return 0;
  return 1;
}
/* Elements of input id in a cell of shape s (inputs.def's elems column). */
static inline size_t attn_input_elems(attn_input_id id, const attn_shape *s) {
  (void)s;
  switch (id) {
#define ATTN_INPUT(name, elem, elems, ...) \
  case ATTN_IN_##name:                     \
    return (size_t)(elems);
#include "inputs.def"
#undef ATTN_INPUT
  default: return 0;
  }
}
/* The slice of input id in a cell of shape s (inputs.def's slice column). */
static inline attn_slice attn_input_slice(attn_input_id id, const attn_shape *s) {
  (void)s;
  switch (id) {
#define ATTN_INPUT(name, elem, elems, needed, host, fill, slice) \
  case ATTN_IN_##name:                                           \
    return slice;
#include "inputs.def"
#undef ATTN_INPUT
  default: return SLICE_SHARED;
  }
}
static inline size_t attn_input_bytes(attn_input_id id, const attn_shape *s) {
  return attn_input_elems(id, s) * attn_input_table[id].elem_bytes;
}

/* The feature inputs by name, for the code that reads one of them. */
static inline int workload_needs_exp_rand(workload_id wl) {
  return attn_input_needed(ATTN_IN_exp_rand, wl);
}
static inline int workload_needs_corm_mask(workload_id wl) {
  return attn_input_needed(ATTN_IN_corm_mask, wl);
}

#ifdef __cplusplus
}

/* Compile-time features of workload WL, for kernels templated on it. */
template <int WL> struct wl_traits {
  static constexpr logits_kind logits = workload_table[WL].logits;
  static constexpr bool selected_blocks = workload_table[WL].keys == KEYS_SELECTED_BLOCKS;
  static constexpr column_kind column = workload_table[WL].column;
  static constexpr int pool = workload_table[WL].pool;
  static constexpr bool softcap = logits == LOGITS_SOFTCAP;
  static constexpr bool keyformer = column == COL_KEYFORMER;
  static constexpr bool any_ge_mask = column == COL_ANY_GE_MASK;
  static constexpr bool sum_sq = column == COL_SUM_SQ;
  static constexpr bool column_pass = column != COL_NONE;
};

/* The one place a runtime workload id becomes a template argument: f(std::integral_constant<int,
 * WL>()) for WL == wl, and its result; `none` for an id outside the registry. */
#include <type_traits>
template <typename R, typename F> R with_workload(workload_id wl, R none, F &&f) {
  switch (wl) {
#define WORKLOAD(id, ...) \
  case WL_##id:           \
    return f(std::integral_constant<int, WL_##id>());
#include "workloads.def"
#undef WORKLOAD
  default: return none;
  }
}
#endif
#endif
