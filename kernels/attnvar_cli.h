/* attnvar_cli.h: attnvar's command line (CONTRACTS.md "attnvar CLI"). */
#ifndef ATTNVAR_CLI_H
#define ATTNVAR_CLI_H

#include "attnvar.h"

#include <stdint.h>

typedef enum { SYS_REF, SYS_UNFUSED, SYS_FUSED, SYS_COUNT } system_id;
extern const char *const system_names[SYS_COUNT];

typedef struct {
  workload_id workload;
  system_id system;
  attn_shape shape; /* q_len == kv_len == --seqlen */
  int warmup, runs;
  uint64_t seed;
  int check;      /* --check (default) | --no-check */
  int device_cpu; /* --device cpu, or --system ref */
  int force_sm80;
} attnvar_args;

/* Fill args from argv; on a usage error print why (and the usage) to stderr and return -1;
 * return 1 after printing the usage for --help. */
int attnvar_parse(int argc, char **argv, attnvar_args *args);

/* --device cpu refuses work beyond this many B*H*Lq*Lkv*D multiply-adds (about 4e9: a few
 * seconds per run of the double reference). */
#define ATTNVAR_CPU_MAX_MACS (1ull << 32)

#endif
