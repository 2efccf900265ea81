/* attnvar_cli.h: attnvar's command line, and its config log line. */
#ifndef ATTNVAR_CLI_H
#define ATTNVAR_CLI_H

#include "attn_system.h"

#include <stdint.h>

/* Which reference the check uses: auto (the CPU one up to CHECK_CPU_MAX_MACS, the tiled GPU one
 * above), or, at any size, the tiled or the naive GPU one, or both (the system against the tiled
 * one, then the tiled against the naive). */
typedef enum { GPUREF_AUTO, GPUREF_ONLY_TILED, GPUREF_ONLY_NAIVE, GPUREF_BOTH } attnvar_gpuref;

typedef struct {
  workload_id workload;
  int system;       /* index into system_table */
  attn_shape shape; /* q_len == kv_len == --seqlen; kv_heads = --heads / --groups (0 for a
                       dense workload at --groups 1: MHA); block_size, selected_blocks and
                       scale set (to their defaults or the options) for selected-block
                       workloads only */
  int warmup, runs;
  uint64_t seed;
  int check;             /* --check (default) | --no-check */
  int check_pairs;       /* --check-pairs N: the GPU reference checks N sampled groups (0: all) */
  attnvar_gpuref gpuref; /* --gpuref (default auto) */
  int device_cpu;        /* --device cpu, or a CPU system (ref) */
  int force_sm80;
  attn_sm90_fwd sm90_fwd;   /* --sm90-fwd (default ws) */
  attn_sm90_rows sm90_rows; /* --sm90-rows (default auto) */
  /* fused-diag's options (systems whose registry row has SYS_OPT_DIAG; others refuse them) */
  int diag_k;      /* --diag-k K: key blocks cached per query block, default 0 */
  int cache_fp16;  /* --cache-dtype fp32 (default) | fp16 */
  int phase_times; /* --phase-times: one `phase name=p1|p4 avg_ms=...` line each */
} attnvar_args;

/* Fill args from argv; on a usage error print why (and the usage) to stderr and return -1;
 * return 1 after printing what was asked (--help, --list-workloads, --list-systems). */
int attnvar_parse(int argc, char **argv, attnvar_args *args);

/* "config workload=.. system=.. batch=.. heads=.. dim=.. seqlen=.. dtype=fp16 device=.. impl=..",
 * then groups= kv_heads= for a selected-block workload or a GQA cell (--groups > 1),
 * block_size= selected_blocks= for a selected-block workload, scale=
 * for it or when --scale is given, diag_k= and cache_dtype= for a system taking them, then the
 * system's own keys (attn_system.config_kv) when ctx is given (the GPU path after init). */
void attnvar_print_config(const attnvar_args *a, const char *device, const char *impl,
                          const attn_ctx *ctx);

/* Defaults of --groups (every workload) and the selected-block workloads' options
 * (tilebench's NSA example, seeds/003); groups is query heads per K/V head, so 1 is MHA (as
 * many K/V heads as query heads). */
#define ATTNVAR_DEFAULT_GROUPS          1
#define ATTNVAR_DEFAULT_BLOCK_SIZE      32
#define ATTNVAR_DEFAULT_SELECTED_BLOCKS 8

/* The largest --diag-k (the band is clamped to the query blocks there are anyway). */
#define ATTNVAR_MAX_DIAG_K 65536

/* --device cpu refuses work beyond this many multiply-adds of q.k (workload_macs: B*H*Lq*Lkv*D,
 * or the attended keys' for selected blocks; about 4e9: a few seconds per run of the double
 * reference). */
#define ATTNVAR_CPU_MAX_MACS (1ull << 32)

#endif
