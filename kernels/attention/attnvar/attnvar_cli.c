/* attnvar_cli.c: parse attnvar's options (every value validated, clear messages, exit 2). */
#include "attnvar_cli.h"

#include "harness.h"
#include "kvline.h"

#include <stdio.h>
#include <string.h>

static const char *const dtype_names[] = {"fp16", "bf16"};            /* attn_dtype order */
static const char *const sm90_fwd_names[] = {"ws", "ws1"};            /* attn_sm90_fwd order */
static const char *const sm90_rows_names[] = {"auto", "128", "192"};  /* attn_sm90_rows order */
static const char *const cache_dtype_names[] = {"fp32", "fp16"};      /* cache_fp16 = index */
static const char *const gpuref_names[] = {"tiled", "naive", "both"}; /* attnvar_gpuref - 1 */
static const char *const corm_mask_names[] = {"rows", "varied"};      /* shape.corm_varied */

/* "nsa" (the selected-block workloads joined with '|'), for messages; static storage. */
static const char *selected_block_workloads(void) {
  static char buf[256];
  const char *names[WL_COUNT];
  int n = 0;
  for (int w = 0; w < WL_COUNT; w++)
    if (workload_selected_blocks((workload_id)w)) names[n++] = workload_names[w];
  return n ? names_join(names, n, buf, sizeof buf) : "none";
}

static void usage(FILE *f, const char *prog) {
  fprintf(f,
          "usage: %s --workload %s --system %s\n"
          "          [--seqlen 4096] [--batch 1] [--heads 32] [--dim 128] [--warmup 100]\n"
          "          [--runs 10] [--seed 1] [--check|--no-check] [--check-pairs 0]\n"
          "          [--gpuref tiled|naive|both] [--corm-mask rows|varied]  (corm)\n"
          "          [--device gpu|cpu]\n"
          "          [--causal 1|0] [--dtype fp16|bf16] [--force-sm80] [--sm90-fwd ws|ws1]\n"
          "          [--sm90-rows auto|128|192]\n"
          "          [--diag-k 0] [--cache-dtype fp32|fp16] [--phase-times]   (fused-diag)\n"
          "          [--scale 1/sqrt(D)] [--groups 1]\n"
          "          [--block-size 32] [--selected-blocks 8]  (selected-block workloads: %s)\n"
          "       %s --list-workloads | --list-systems\n"
          "Runs one attention-variant cell and prints its log (kvline records) on stdout.\n"
          "--device cpu (or --system ref) runs the CPU double reference without CUDA; there\n"
          "the defaults are --warmup 1 --runs 3 and the work B*H*S*S*D is capped at 2^32.\n"
          "--diag-k K caches the K score tiles nearest the diagonal of each query block between\n"
          "fused-diag's two passes (0: none, the fused kernels); --phase-times adds the times of\n"
          "its forward (p1) and column pass (p4) alone. Other systems refuse these options.\n"
          "--sm90-fwd picks how fused's Hopper kernels are launched: ws (a persistent grid,\n"
          "default) or ws1 (one tile per CTA); --sm90-rows the Hopper forward's query rows\n"
          "per tile (auto: 192 for attn at D=64 with 4+ waves of tiles, 16+ under the causal\n"
          "mask; else 128).\n"
          "--groups G (every workload): query heads per K/V head, as the tile-benchmark seed's\n"
          "and TileLang's groups (G divides --heads; H/G K/V heads: G = 1 is MHA, G = --heads\n"
          "one K/V head); query head h attends with K/V head h/G, and the column statistics\n"
          "(scores, flags) are per K/V head, summed (any, for flags) over its G query heads.\n"
          "Selected-block workloads: each query attends to the keys of --selected-blocks\n"
          "blocks of --block-size keys, drawn from --seed "
          "(kernels/attention/registry/selected_blocks.h);\n"
          "other workloads refuse these two options.\n"
          "--scale: the softmax scale (every workload, as SDPA's scale argument).\n"
          "--check-pairs N: where the check runs the GPU reference (cells too large for the\n"
          "CPU's), it checks N (batch, K/V head) groups drawn from --seed, named in the log's\n"
          "check_sample line (0, default: every group).\n"
          "--gpuref: check against the fp32 GPU reference at any size (default: the CPU\n"
          "double reference up to 2^28 multiply-adds, the GPU one above), in its tiled form\n"
          "(the default's), its naive one (a query row or key column a block), or both: the\n"
          "system against the tiled form, then the tiled form against the naive one (check\n"
          "lines output=gpuref.<output>). A check_ref line names the form and its ms.\n"
          "--corm-mask: corm's threshold input, CoRM's 1/(i+1) constant along each row\n"
          "(rows, default), or varied: odd keys' 2^-10 higher, so no row is constant (a test\n"
          "of the kernels' general path; the config line says corm_mask=varied).\n"
          "Exit: 0 ok, 1 error, 2 usage, 3 oom, 4 unsupported, 5 check failed.\n",
          prog, workload_choices(), system_choices(), selected_block_workloads(), prog);
}

/* --groups (every workload; 0: not given) and the selected-block options into a->shape
 * (defaults for what was not given; 0: not given): groups is the query heads per K/V head,
 * kv_heads = heads / groups (a dense workload keeps kv_heads 0, MHA, at G = 1); block size and
 * selected blocks for a workload with selected blocks, refused (first_opt named) for any other.
 * -1 after a message. */
static int set_groups_and_blocks(const char *prog, attnvar_args *a, const char *first_opt,
                                 int groups, const attn_shape *given) {
  attn_shape *s = &a->shape;
  const int selected = workload_selected_blocks(a->workload);
  if (!selected && first_opt) {
    fprintf(stderr,
            "%s: %s is an option of the selected-block workloads (%s), not of --workload %s\n",
            prog, first_opt, selected_block_workloads(), workload_names[a->workload]);
    return -1;
  }
  if (!groups) groups = ATTNVAR_DEFAULT_GROUPS;
  if (s->heads % groups != 0) {
    fprintf(stderr,
            "%s: --groups %d must divide --heads %d (--groups is the query heads per K/V "
            "head: H/G K/V heads)\n",
            prog, groups, s->heads);
    return -1;
  }
  if (selected || groups > 1) s->kv_heads = s->heads / groups;
  if (!selected) return 0;
  s->block_size = given->block_size ? given->block_size : ATTNVAR_DEFAULT_BLOCK_SIZE;
  s->selected_blocks =
      given->selected_blocks ? given->selected_blocks : ATTNVAR_DEFAULT_SELECTED_BLOCKS;
  return 0;
}

int attnvar_parse(int argc, char **argv, attnvar_args *a) {
  const char *prog = argc > 0 ? argv[0] : "attnvar";
  memset(a, 0, sizeof *a);
  a->workload = WL_COUNT;
  a->system = -1;
  a->shape = (attn_shape){1, 32, 128, 4096, 4096, MASK_CAUSAL, DTYPE_FP16, ATTN_DENSE};
  a->warmup = -1; /* defaults depend on the device, set below */
  a->runs = -1;
  a->seed = 1;
  a->check = 1;
  const char *diag_opt = NULL;  /* the first fused-diag option given, for the message */
  const char *block_opt = NULL; /* the first selected-block option given (not --groups) */
  const char *corm_opt = NULL;  /* --corm-mask, when given */
  attn_shape blocks = {0};      /* its values: block_size, selected_blocks */
  int groups = 0;               /* --groups: query heads per K/V head (0: not given) */
  const hx_run_opts run = {&a->check, &a->device_cpu, &a->warmup, &a->runs, &a->seed};
  for (int i = 1; i < argc; i++) {
    const char *opt = argv[i];
    const char *val = i + 1 < argc ? argv[i + 1] : NULL;
    long n = 0;
    int idx = -1, used;
    if (!strcmp(opt, "--help") || !strcmp(opt, "-h")) {
      usage(stdout, prog);
      return 1;
    } else if (!strcmp(opt, "--list-workloads")) {
      workload_list(stdout);
      return 1;
    } else if (!strcmp(opt, "--list-systems")) {
      system_list(stdout);
      return 1;
    } else if ((used = hx_parse_run_opt(prog, opt, val, &run)) != 0) {
      if (used < 0) goto bad;
      i += used - 1;
    } else if (!strcmp(opt, "--force-sm80")) {
      a->force_sm80 = 1;
    } else if (!strcmp(opt, "--phase-times")) {
      a->phase_times = 1;
      diag_opt = diag_opt ? diag_opt : opt;
    } else if (!strcmp(opt, "--cache-dtype")) {
      if ((idx = hx_parse_choice(prog, opt, val, cache_dtype_names, 2)) < 0) goto bad;
      a->cache_fp16 = idx, i++;
      diag_opt = diag_opt ? diag_opt : opt;
    } else if (!strcmp(opt, "--workload")) {
      if ((idx = hx_parse_choice(prog, opt, val, workload_names, WL_COUNT)) < 0) goto bad;
      a->workload = (workload_id)idx, i++;
    } else if (!strcmp(opt, "--system")) {
      if ((idx = hx_parse_choice(prog, opt, val, system_names(), system_count)) < 0) goto bad;
      a->system = idx, i++;
    } else if (!strcmp(opt, "--sm90-fwd")) {
      if ((idx = hx_parse_choice(prog, opt, val, sm90_fwd_names, 2)) < 0) goto bad;
      a->sm90_fwd = (attn_sm90_fwd)idx, i++;
    } else if (!strcmp(opt, "--sm90-rows")) {
      if ((idx = hx_parse_choice(prog, opt, val, sm90_rows_names, 3)) < 0) goto bad;
      a->sm90_rows = (attn_sm90_rows)idx, i++;
    } else if (!strcmp(opt, "--corm-mask")) {
      if ((idx = hx_parse_choice(prog, opt, val, corm_mask_names, 2)) < 0) goto bad;
      a->shape.corm_varied = idx, i++;
      corm_opt = opt;
    } else if (!strcmp(opt, "--gpuref")) {
      if ((idx = hx_parse_choice(prog, opt, val, gpuref_names, 3)) < 0) goto bad;
      a->gpuref = (attnvar_gpuref)(idx + 1), i++;
    } else if (!strcmp(opt, "--dtype")) {
      if ((idx = hx_parse_choice(prog, opt, val, dtype_names, 2)) < 0) goto bad;
      a->shape.dtype = (attn_dtype)idx, i++;
    } else if (!strcmp(opt, "--scale")) { /* every workload: SDPA's scale argument */
      if (hx_parse_double(prog, opt, val, 0.0, 1e6, &a->shape.scale) < 0) goto bad;
      i++;
    } else {
      static const hx_int_opt ints[] = {{"--seqlen", 1, 1 << 20},
                                        {"--batch", 1, 4096},
                                        {"--heads", 1, 4096},
                                        {"--dim", 1, 256},
                                        {"--causal", 0, 1},
                                        {"--diag-k", 0, ATTNVAR_MAX_DIAG_K},
                                        {"--groups", 1, 4096},
                                        {"--block-size", 1, 65536},
                                        {"--selected-blocks", 1, 4096},
                                        {"--check-pairs", 0, 1 << 20}};
      int k = hx_parse_int_opt(prog, opt, val, ints, (int)(sizeof ints / sizeof *ints), &n);
      if (k == -1) fprintf(stderr, "%s: unknown option '%s'\n", prog, opt);
      if (k < 0) goto bad;
      i++;
      switch (k) {
      case 0: a->shape.q_len = a->shape.kv_len = (int)n; break;
      case 1: a->shape.batch = (int)n; break;
      case 2: a->shape.heads = (int)n; break;
      case 3: a->shape.dim = (int)n; break;
      case 4: a->shape.mask = n ? MASK_CAUSAL : MASK_NONE; break;
      case 5:
        a->diag_k = (int)n;
        diag_opt = diag_opt ? diag_opt : opt;
        break;
      case 6: groups = (int)n; break;
      case 9: a->check_pairs = (int)n; break;
      default:
        if (k == 7) blocks.block_size = (int)n;
        if (k == 8) blocks.selected_blocks = (int)n;
        block_opt = block_opt ? block_opt : opt;
        break;
      }
    }
  }
  if (a->workload == WL_COUNT || a->system < 0) {
    fprintf(stderr, "%s: --workload and --system are required\n", prog);
    goto bad;
  }
  if (diag_opt && !(system_table[a->system].options & SYS_OPT_DIAG)) {
    fprintf(stderr,
            "%s: %s is an option of --system fused-diag (--diag-k, --cache-dtype, "
            "--phase-times), not of --system %s\n",
            prog, diag_opt, system_table[a->system].name);
    goto bad;
  }
  if (corm_opt && workload_table[a->workload].column != COL_ANY_GE_MASK) {
    fprintf(stderr, "%s: --corm-mask is an option of --workload corm, not of --workload %s\n", prog,
            workload_names[a->workload]);
    goto bad;
  }
  if (set_groups_and_blocks(prog, a, block_opt, groups, &blocks) < 0) goto bad;
  if (system_table[a->system].on_cpu) a->device_cpu = 1;
  if (a->warmup < 0) a->warmup = a->device_cpu ? 1 : 100;
  if (a->runs < 0) a->runs = a->device_cpu ? 3 : 10;
  return 0;
bad:
  usage(stderr, prog);
  return -1;
}

void attnvar_print_config(const attnvar_args *a, const char *device, const char *impl,
                          const attn_ctx *ctx) {
  const system_entry *sys = &system_table[a->system];
  FILE *out = hx_log();
  fputs("config", out);
  kv_put(out, "workload", workload_table[a->workload].name);
  kv_put(out, "system", sys->name);
  kv_putf(out, "batch", "%d", a->shape.batch);
  kv_putf(out, "heads", "%d", a->shape.heads);
  kv_putf(out, "dim", "%d", a->shape.dim);
  kv_putf(out, "seqlen", "%d", a->shape.q_len);
  kv_put(out, "dtype", dtype_name(a->shape.dtype));
  kv_putf(out, "causal", "%d", a->shape.mask == MASK_CAUSAL);
  kv_put(out, "device", device);
  kv_put(out, "impl", impl);
  kv_putf(out, "seed", "%llu", (unsigned long long)a->seed);
  if (workload_selected_blocks(a->workload) || shape_groups(&a->shape) > 1) { /* GQA, or nsa */
    kv_putf(out, "groups", "%d", shape_groups(&a->shape));
    kv_putf(out, "kv_heads", "%d", shape_kv_heads(&a->shape));
  }
  if (workload_selected_blocks(a->workload)) {
    kv_putf(out, "block_size", "%d", a->shape.block_size);
    kv_putf(out, "selected_blocks", "%d", a->shape.selected_blocks);
  }
  if (workload_selected_blocks(a->workload) || a->shape.scale > 0)
    kv_putf(out, "scale", "%.6g", shape_scale(&a->shape));
  if (a->shape.corm_varied) kv_put(out, "corm_mask", "varied");
  if (sys->options & SYS_OPT_DIAG) {
    kv_putf(out, "diag_k", "%d", a->diag_k);
    kv_put(out, "cache_dtype", cache_dtype_names[a->cache_fp16 ? 1 : 0]);
  }
  if (ctx && sys->gpu && sys->gpu->config_kv) sys->gpu->config_kv(ctx, a->workload, &a->shape, out);
  fputc('\n', out);
  hx_log_flush();
}
