/* attn_system.h: what every attention system (unfused, fused, ...) implements and what it is
 * given, and the system registry that the binaries (attnvar, llama_e2e) choose from.
 * The workloads themselves: workload.h (registry: workloads.def). */
#ifndef ATTN_SYSTEM_H
#define ATTN_SYSTEM_H

#include "hx_ctx.h"
#include "kf_draw.h"
#include "workload.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A cell's device buffers. The inputs are one field per row of inputs.def (q, k, v, exp_rand,
 * corm_mask, block_idx: element type, layout, which workloads have them), NULL where the
 * workload lacks one; the 16-bit ones as const void *, fp16 or bf16 by the cell's dtype. */
typedef struct {
#define ATTN_INPUT(name, elem, ...) const attn_io_##elem *name;
#include "inputs.def"
#undef ATTN_INPUT
  void *out;      /* the cell's dtype, every workload */
  float *score;   /* workloads with score_name */
  float *score2;  /* workloads with score2_name */
  uint8_t *flags; /* workloads with flags_name */
  /* kf with exp_rand NULL: the noise is kf_draw.h's draw of exp_rand_draw, computed where it
   * is read. Only a system whose draws_exp_rand says so for the case is given this (llama_e2e
   * on fused's Hopper kernels); the others read exp_rand. */
  int exp_rand_drawn;
  kf_draw exp_rand_draw;
} attn_io;

/* Options of the systems that take any, set by the binary after hx_gpu_init (zero: the
 * defaults). Other systems ignore them. */
typedef struct {
  int diag_k;     /* fused-diag: key blocks cached per query block (0: no cache) */
  int cache_fp16; /* fused-diag: cache tiles in fp16 (0: fp32) */
} attn_options;

/* The launch of `fused`'s warp-specialized Hopper kernels (--sm90-fwd): a persistent grid
 * whose CTAs claim tiles (the default), or one CTA per tile, heaviest tiles first. */
typedef enum { SM90_FWD_WS = 0, SM90_FWD_WS1 = 1 } attn_sm90_fwd;

/* The warp-specialized forward's query rows per tile (--sm90-rows): the dispatcher's choice
 * (192 where built and measured faster, else 128), or one forced; 192 exists at head dim 64
 * for attn-like workloads only (others report unsupported). */
typedef enum { SM90_ROWS_AUTO = 0, SM90_ROWS_128 = 1, SM90_ROWS_192 = 2 } attn_sm90_rows;

/* What a system is given: the harness's context (hx_ctx.h: stream, cuBLAS handle, device, the
 * buffer of a failure's reason), made once by hx_gpu_init(&ctx.hx, ...), then the attention
 * options the binary sets. The harness's fields are also members by name (ctx->stream,
 * ctx->err), as the systems read them. */
typedef struct {
  union {
    hx_ctx hx;
    struct {
      HX_CTX_FIELDS
    };
  };
  int force_sm80;           /* run the sm_80 (mma.sync) path even on Hopper */
  attn_sm90_fwd sm90_fwd;   /* which Hopper forward (--sm90-fwd) */
  attn_sm90_rows sm90_rows; /* its rows per tile (--sm90-rows) */
  attn_options opt;
} attn_ctx;

/* The systems' return codes are the harness's (HX_OK, HX_ERR, HX_OOM, HX_UNSUPPORTED); the
 * kernels under fused/, fused_diag/, unfused/ and the peers' folders spell them ATTN_*, and fail
 * through attn_fail: hx_fail on the context's harness part. */
enum { ATTN_OK = HX_OK, ATTN_ERR = HX_ERR, ATTN_OOM = HX_OOM, ATTN_UNSUPPORTED = HX_UNSUPPORTED };
static inline int attn_fail(const attn_ctx *ctx, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline int attn_fail(const attn_ctx *ctx, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = hx_vfail(ctx ? &ctx->hx : NULL, code, fmt, ap);
  va_end(ap);
  return rc;
}

typedef struct {
  const char *name;
  /* HX_OK or HX_UNSUPPORTED with a reason written to why. ctx may be NULL: then only
   * the workload and the shape are judged (what --list-systems reports). */
  int (*supports)(const attn_ctx *ctx, workload_id wl, const attn_shape *shape, char *why,
                  size_t why_len);
  /* Device workspace the run needs, allocated (and counted in peak memory) by the caller. */
  size_t (*workspace_bytes)(const attn_ctx *ctx, workload_id wl, const attn_shape *shape);
  /* Enqueue the computation on ctx->stream; no allocation, no synchronisation. On failure
   * returns HX_ERR/HX_OOM/HX_UNSUPPORTED with the reason in ctx->err. */
  int (*run)(const attn_ctx *ctx, workload_id wl, const attn_shape *shape, const attn_io *io,
             void *workspace);
  /* Optional (NULL: use name): the implementation run() picks for this case, for the log's
   * config impl=... (e.g. "fused-sm90ws-persistent-colws", "fused-sm80"). */
  const char *(*impl)(const attn_ctx *ctx, workload_id wl, const attn_shape *shape);
  /* Optional: extra key=value pairs (kv_put) for the log's config line. */
  void (*config_kv)(const attn_ctx *ctx, workload_id wl, const attn_shape *shape, FILE *out);
  /* Optional (--phase-times): enqueue one phase of run() alone, ATTN_PHASE_P1 (the forward:
   * out and the row statistics) or ATTN_PHASE_P4 (the column pass). After one run(),
   * repeating a phase gives run()'s outputs again, so each can be timed on its own.
   * HX_UNSUPPORTED (with the reason) where the workload has no such phases. */
  int (*run_phase)(const attn_ctx *ctx, workload_id wl, const attn_shape *shape, const attn_io *io,
                   void *workspace, int phase);
  /* Optional (NULL: never): 1 where run() can draw kf's noise itself for this case
   * (attn_io.exp_rand_drawn), so the caller need not write the exp_rand tensor. */
  int (*draws_exp_rand)(const attn_ctx *ctx, workload_id wl, const attn_shape *shape);
} attn_system;

/* The phases of run_phase, as the log names them (phase name=p1 ...). */
enum { ATTN_PHASE_P1 = 0, ATTN_PHASE_P4 = 1, ATTN_PHASE_COUNT = 2 };
#define ATTN_PHASE_NAMES \
  { "p1", "p4" }

extern const attn_system attn_system_unfused;    /* kernels/attention/unfused/    */
extern const attn_system attn_system_fused;      /* kernels/attention/fused/      */
extern const attn_system attn_system_fused_diag; /* kernels/attention/fused_diag/ */
extern const attn_system attn_system_fa3; /* kernels/attention/fa3/: a peer (FlashAttention-3) */
extern const attn_system attn_system_fa2; /* kernels/attention/fa2/: a peer (FlashAttention-2) */
extern const attn_system attn_system_flashinfer; /* kernels/attention/flashinfer/: a peer */

/* ---- the system registry (systems.c) ------------------------------------------------- */

typedef struct {
  const char *name;          /* --system NAME, the log's system= */
  int on_cpu;                /* 1: the CPU double reference (no attn_system, no CUDA) */
  const attn_system *gpu;    /* the GPU implementation; NULL on_cpu or in a build without CUDA */
  const char *check_against; /* GPU system whose output checks this one where the CPU
                                reference is too slow (llama_e2e at full size) */
  const char *about;         /* one line for --list-systems */
  unsigned options;          /* SYS_OPT_* bits: the system-specific options it takes */
  int peer; /* 1: another project's kernels run as a peer (fa3): it serves the cells it computes
               and reports the others unsupported; ours serve every workload */
} system_entry;

/* --diag-k, --cache-dtype, --phase-times (attnvar_cli.c); other systems refuse them. */
#define SYS_OPT_DIAG 1u

extern const system_entry system_table[];
extern const int system_count;

/* Index of name in system_table, or -1. */
int system_find(const char *name);
/* The names alone, in registry order (for option parsing). */
const char *const *system_names(void);
/* "ref|unfused|fused" for usage strings; static storage. */
const char *system_choices(void);
/* One line per system: "NAME<TAB>cpu|gpu<TAB>about" (--list-systems). */
void system_list(FILE *out);

#ifdef __cplusplus
}
#endif
#endif
